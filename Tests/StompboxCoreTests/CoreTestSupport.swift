import Foundation
@testable import StompboxCore

/// A fresh folder under /tmp, removed when the value is released.
final class TemporaryFolder {
    let url: URL

    init(_ label: String = "stompbox-core") {
        url = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("\(label)-\(getpid())-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    func write(_ name: String, _ data: Data) {
        try! data.write(to: file(name))
    }

    func read(_ name: String) -> Data? { try? Data(contentsOf: file(name)) }

    func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    }
}

/// The repository's data/ as the app finds it from the test runner.
let repositoryData: DataFiles = try! DataFiles.locate(environment: [:])
let factoryBank: PresetBank = try! FactoryPresets.load(from: repositoryData)

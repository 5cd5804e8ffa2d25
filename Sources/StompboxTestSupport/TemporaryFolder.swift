import Foundation

/// A fresh folder under the system's temporary directory, removed when the value goes away.
public final class TemporaryFolder {
    public let url: URL
    public var path: String { url.path }

    public init(_ label: String = "stompbox-test") {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString)", isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The path of `name` inside the folder (nothing is created).
    public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// The names in the folder, hidden ones included, sorted.
    public func contents() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    @discardableResult
    public func write(_ text: String, to name: String) -> String {
        let p = file(name)
        try! Data(text.utf8).write(to: URL(fileURLWithPath: p))
        return p
    }
}

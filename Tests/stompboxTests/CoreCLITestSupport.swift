import Foundation
import Testing

/// Runs the built `stompbox` binary for the presets, store and licence end-to-end tests, in a
/// sandbox of its own (HOME, XDG_CONFIG_HOME and XDG_DATA_HOME in a fresh temporary folder).
final class CoreCLISandbox {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        var ok: Bool { status == 0 }
    }

    let root: URL
    var config: URL { root.appendingPathComponent("config/stompbox") }
    var data: URL { root.appendingPathComponent("data/stompbox") }
    var presetsFile: URL { config.appendingPathComponent("presets.json") }
    var licenceFile: URL { data.appendingPathComponent("licences.json") }

    init() {
        root = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("stompbox-cli-\(getpid())-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// The `stompbox` built beside the test bundle (`swift build --build-tests` builds both).
    static let binary: URL? = {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("stompbox")
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue,
               FileManager.default.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }()

    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env: [String: String] = [
            "HOME": root.path,
            "XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
            "XDG_DATA_HOME": root.appendingPathComponent("data").path,
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
        ]
        for (k, v) in extra { env[k] = v }
        return env
    }

    func process(_ arguments: [String], env extra: [String: String] = [:]) throws -> Process {
        let binary = try #require(CoreCLISandbox.binary, "the stompbox binary was not built beside the tests")
        let p = Process()
        p.executableURL = binary
        p.arguments = arguments
        p.environment = environment(extra)
        p.currentDirectoryURL = root
        return p
    }

    @discardableResult
    func run(_ arguments: String..., env extra: [String: String] = [:]) throws -> Result {
        try run(arguments, env: extra)
    }

    @discardableResult
    func run(_ arguments: [String], env extra: [String: String] = [:]) throws -> Result {
        let p = try process(arguments, env: extra)
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        // Read stderr on another thread while stdout is read here, so neither pipe can fill up.
        final class Box: @unchecked Sendable { var data = Data() }
        let errBox = Box()
        let done = DispatchSemaphore(value: 0)
        let errHandle = err.fileHandleForReading
        Thread { errBox.data = errHandle.readDataToEndOfFile(); done.signal() }.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        done.wait()
        let errData = errBox.data
        p.waitUntilExit()
        return Result(status: p.terminationStatus,
                      stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }

    func file(_ name: String) -> URL { root.appendingPathComponent(name) }

    static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    func write(_ name: String, _ text: String) -> URL {
        let url = file(name)
        try! Data(text.utf8).write(to: url)
        return url
    }

    func read(_ url: URL) -> Data? { try? Data(contentsOf: url) }

    /// Names in a folder.
    func names(_ dir: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted()
    }
}

/// The parts of a presets file the end-to-end tests check (the test target does not link StompboxCore).
struct PresetsFileView {
    let selected: Int
    let names: [String]
    let slots: [[String: Any]]

    init?(_ data: Data?) {
        guard let data, let top = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              top["format"] as? String == "stompbox-presets", top["version"] as? Int == 1,
              let selected = top["selected"] as? Int,
              let slots = top["slots"] as? [[String: Any]], slots.count == 3 else { return nil }
        var names: [String] = []
        for slot in slots {
            guard slot["format"] as? String == "stompbox-preset", let name = slot["name"] as? String,
                  slot["parameters"] is [String: Any] else { return nil }
            names.append(name)
        }
        self.selected = selected
        self.names = names
        self.slots = slots
    }
}

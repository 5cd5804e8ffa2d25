import Foundation

/// Finds the files of `Resources/` (pedal SVGs, icon, CSS, .desktop).
///
/// Looked up, in order: `$STOMPBOX_RESOURCES`; `Resources/` or `../share/stompbox/` beside the
/// executable (an installed copy); the source tree this binary was built from (`swift run`).
enum ResourceLocator {
    static let directory: String? = {
        var candidates: [String] = []
        if let env = ProcessInfo.processInfo.environment["STOMPBOX_RESOURCES"], !env.isEmpty {
            candidates.append(env)
        }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        candidates.append(exe.appendingPathComponent("Resources").path)
        candidates.append(exe.appendingPathComponent("../share/stompbox").standardized.path)
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Resources").standardized
        candidates.append(source.path)
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/stompbox.css") }
    }()

    static func path(_ name: String) -> String? {
        guard let dir = directory else { return nil }
        let p = dir + "/" + name
        return FileManager.default.fileExists(atPath: p) ? p : nil
    }
}

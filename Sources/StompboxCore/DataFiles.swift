import Foundation

/// Finds Stompbox's shipped files (`data/`: factory presets, store catalogue, public key;
/// `Resources/`: what the window shows) at run time. Every command and the window ask here.
///
/// `data/` is looked for, in order:
/// 1. `$STOMPBOX_DATA_DIR` (must be a folder holding the data files, or it is an error);
/// 2. a `data/` folder beside the executable or in any folder above it (a build in the
///    repository: `.build/debug/stompbox` finds the repository's `data/`);
/// 3. `<prefix>/share/stompbox/data` for an executable in `<prefix>/bin`, or in
///    `<prefix>/lib/stompbox/<level>` (the package's builds for each x86-64 level);
/// 4. `/usr/local/share/stompbox/data`, then `/usr/share/stompbox/data`.
/// `Resources/` is `$STOMPBOX_RESOURCES_DIR`, else the `Resources` folder beside the `data/` found.
public struct DataFiles: Sendable, Equatable {
    /// The file whose presence marks a folder as Stompbox's `data/`.
    public static let marker = "factory-presets.json"

    public let dataDirectory: URL
    public let resourcesDirectory: URL

    public init(dataDirectory: URL, resourcesDirectory: URL? = nil) {
        self.dataDirectory = dataDirectory.standardizedFileURL
        self.resourcesDirectory = (resourcesDirectory
            ?? dataDirectory.deletingLastPathComponent().appendingPathComponent("Resources")).standardizedFileURL
    }

    /// A file in `data/` ("factory-presets.json").
    public func data(_ name: String) -> URL { dataDirectory.appendingPathComponent(name) }
    /// A file in `Resources/`.
    public func resource(_ name: String) -> URL { resourcesDirectory.appendingPathComponent(name) }

    /// Finds the folders as described above.
    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment,
                              executable: URL? = DataFiles.executableURL()) throws(DataFilesError) -> DataFiles {
        let resources = environment["STOMPBOX_RESOURCES_DIR"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
        if let dir = environment["STOMPBOX_DATA_DIR"], !dir.isEmpty {
            let url = URL(fileURLWithPath: dir)
            guard isDataDirectory(url) else { throw .badOverride(dir) }
            return DataFiles(dataDirectory: url, resourcesDirectory: resources)
        }
        var tried: [String] = []
        for candidate in candidates(executable: executable) {
            tried.append(candidate.path)
            if isDataDirectory(candidate) { return DataFiles(dataDirectory: candidate, resourcesDirectory: resources) }
        }
        throw .notFound(tried: tried)
    }

    static func candidates(executable: URL?) -> [URL] {
        var list: [URL] = []
        if let exe = executable {
            var dir = exe.resolvingSymlinksInPath().deletingLastPathComponent()
            while true {
                list.append(dir.appendingPathComponent("data"))
                let parent = dir.deletingLastPathComponent()
                if parent.path == dir.path || dir.path == "/" { break }
                dir = parent
            }
            let folder = exe.resolvingSymlinksInPath().deletingLastPathComponent()
            let prefix = folder.deletingLastPathComponent()
            list.append(prefix.appendingPathComponent("share/stompbox/data"))
            // <prefix>/lib/stompbox/<level>/stompbox
            if prefix.lastPathComponent == "stompbox", prefix.deletingLastPathComponent().lastPathComponent == "lib" {
                list.append(prefix.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("share/stompbox/data"))
            }
        }
        list.append(URL(fileURLWithPath: "/usr/local/share/stompbox/data"))
        list.append(URL(fileURLWithPath: "/usr/share/stompbox/data"))
        return list
    }

    static func isDataDirectory(_ url: URL) -> Bool {
        FileManager.default.fileExists(atPath: url.appendingPathComponent(marker).path)
    }

    /// The running executable (the test runner when called from tests), symlinks resolved.
    public static func executableURL() -> URL? {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path)
        }
        return Bundle.main.executableURL
    }
}

public enum DataFilesError: Error, Equatable, CustomStringConvertible {
    case badOverride(String)
    case notFound(tried: [String])

    public var description: String {
        switch self {
        case .badOverride(let dir):
            "STOMPBOX_DATA_DIR is '\(dir)', but that folder holds no \(DataFiles.marker)"
        case .notFound(let tried):
            "cannot find Stompbox's data folder (looked in \(tried.prefix(3).joined(separator: ", "))… and /usr/share/stompbox/data); set STOMPBOX_DATA_DIR to it"
        }
    }
}

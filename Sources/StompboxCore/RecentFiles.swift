import Foundation

/// The files a person loaded last into a pedal (the Amp Model's models), newest first, kept in
/// `recent-<kind>.json` in the config folder so the window's menu offers them again. A list that
/// cannot be read is an empty one; one that cannot be written is not worth a message.
public struct RecentFiles: Sendable {
    public static let limit = 6
    public let url: URL

    public init(_ kind: String, in directories: UserDirectories = UserDirectories()) {
        url = directories.config.appendingPathComponent("recent-\(kind).json")
    }

    /// The files, newest first; files since removed are left out.
    public var paths: [String] {
        guard let data = try? SafeFile.read(url),
              let paths = try? JSONDecoder().decode([String].self, from: data) else { return [] }
        return paths.filter { FileManager.default.fileExists(atPath: $0) }
    }

    /// Puts `path` first (once), keeping at most `limit`.
    public func add(_ path: String) {
        var paths = paths.filter { $0 != path }
        paths.insert(path, at: 0)
        guard let data = try? JSONEncoder().encode(Array(paths.prefix(Self.limit))) else { return }
        try? SafeFile.makeDirectory(url.deletingLastPathComponent())
        try? SafeFile.write(data, to: url)
    }
}

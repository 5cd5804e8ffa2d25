import Foundation

/// Where Stompbox keeps a person's files, after the XDG base directory rules:
/// presets in `$XDG_CONFIG_HOME/stompbox` (default `~/.config/stompbox`), licences in
/// `$XDG_DATA_HOME/stompbox` (default `~/.local/share/stompbox`), amp models in its `models`
/// folder. Tests pass their own folders.
public struct UserDirectories: Sendable, Equatable {
    public let config: URL
    public let data: URL

    public init(config: URL, data: URL) {
        self.config = config
        self.data = data
    }

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        // The XDG rules say a relative path is invalid and must be ignored.
        func base(_ variable: String, _ fallback: String) -> URL {
            if let v = environment[variable], v.hasPrefix("/") { return URL(fileURLWithPath: v) }
            return URL(fileURLWithPath: home).appendingPathComponent(fallback)
        }
        config = base("XDG_CONFIG_HOME", ".config").appendingPathComponent("stompbox")
        data = base("XDG_DATA_HOME", ".local/share").appendingPathComponent("stompbox")
    }

    /// Where amp model files are looked for first (`stompbox models`, the window's "Load model…").
    public var models: URL { data.appendingPathComponent("models") }
}

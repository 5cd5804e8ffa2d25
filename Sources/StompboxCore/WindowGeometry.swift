import Foundation

/// Where the pedalboard window was and how big, kept in `window.json` beside the presets so the
/// next start opens it there. Logical pixels (what GTK calls them), root coordinates.
public struct WindowGeometry: Codable, Equatable, Sendable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int
    public var maximized: Bool

    public init(x: Int, y: Int, width: Int, height: Int, maximized: Bool = false) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.maximized = maximized
    }

    public static func file(in directories: UserDirectories) -> URL {
        directories.config.appendingPathComponent("window.json")
    }

    /// The geometry saved last, or nil (none yet). A file that cannot be read or is not a
    /// geometry is reported once in `problem`; one that is not a geometry is moved aside (as
    /// `window.json.unreadable-<date>`) so the next save does not overwrite it, and the window
    /// opens at its own size.
    public static func load(from url: URL) -> (geometry: WindowGeometry?, problem: String?) {
        let data: Data?
        do { data = try SafeFile.read(url) } catch { return (nil, error.description) }
        guard let data else { return (nil, nil) }
        guard let g = try? JSONDecoder().decode(WindowGeometry.self, from: data), g.width > 0, g.height > 0 else {
            let kept = (try? SafeFile.moveAside(url, tag: "unreadable")).map { "; kept as \($0.path)" } ?? ""
            return (nil, "\(url.path) is not a window geometry; the window opens at its own size\(kept)")
        }
        return (g, nil)
    }

    public func save(to url: URL) throws(FileError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { return }
        try SafeFile.write(data, to: url)
    }

    /// Where to open, given the screen's work areas (x, y, width, height) and the window's
    /// natural size: the saved place when most of it (the title bar's row included) lies on
    /// one of them, cut to that area; otherwise the natural size, and maximised (the area's
    /// whole size) on an area too small for it.
    public static func placement(saved: WindowGeometry?, natural: (width: Int, height: Int),
                                 workAreas: [(x: Int, y: Int, width: Int, height: Int)]) -> WindowGeometry? {
        guard let first = workAreas.first else { return saved }
        if let saved {
            for area in workAreas {
                let w = min(saved.width, area.width), h = min(saved.height, area.height)
                let x = min(max(saved.x, area.x), area.x + area.width - w)
                let y = min(max(saved.y, area.y), area.y + area.height - h)
                // The saved window's top-left must lie on this area (moved less than half a window).
                let inside = saved.x >= area.x - saved.width / 2 && saved.x < area.x + area.width - 40
                    && saved.y >= area.y - 10 && saved.y < area.y + area.height - 40
                if inside { return WindowGeometry(x: x, y: y, width: w, height: h, maximized: saved.maximized) }
            }
        }
        if natural.width > first.width || natural.height > first.height {
            return WindowGeometry(x: first.x, y: first.y, width: first.width, height: first.height, maximized: true)
        }
        return nil
    }
}

import Foundation
import StompboxTestSupport
import StompboxCore
import StompboxTestTags
import Testing

/// The window on common screens, from a 1280×720 laptop to a 4K monitor at 200 %: it fits, the
/// strip, presets, meters and status bar stay in view, every pedal can be brought into view from
/// the strip, and the rightmost pedal's knob turns with a drag. Screenshots land in
/// `.build/ui-tests/fit-<screen>.png`.
@Suite("The window fits the screen", .serialized, .tags(.window))
struct WindowFitTests {
    /// Every built-in pedal, the Reverb last (the Looper stays locked, so its strip entry would
    /// open the store rather than switch it on).
    static let board = ["gate", "overdrive", "eq", "flanger", "tremolo", "delay", "looper", "reverb"]
    static let presets: String = {
        let chain = #"["gate","overdrive","eq","flanger","tremolo","delay","looper","reverb"]"#
        let slot = { (name: String) in
            #"{"format":"stompbox-preset","version":2,"name":"\#(name)","chain":\#(chain),"parameters":{}}"#
        }
        return #"{"format":"stompbox-presets","version":1,"selected":0,"slots":[\#(slot("All")),\#(slot("All 2")),\#(slot("All 3"))]}"#
    }()

    /// "1366x768" or "3840x2160@2" (GDK_SCALE 2): width, height and scale.
    static func screen(_ text: String) -> (width: Int, height: Int, scale: Int) {
        let parts = text.split(separator: "@")
        let size = parts[0].split(separator: "x").compactMap { Int($0) }
        return (size[0], size[1], parts.count > 1 ? Int(parts[1]) ?? 1 : 1)
    }

    @Test("fits, everything reachable, the rightmost knob turns", arguments: ["1280x720", "1366x768", "1536x864", "1920x1080", "3840x2160@2"])
    func fits(_ screen: String) throws {
        let (width, height, scale) = Self.screen(screen)
        let session = try PedalboardSession(environment: ["GDK_SCALE": "\(scale)"], screen: (width, height), presets: Self.presets)
        defer { session.stop() }

        func layout() -> [String: Any] { session.state()?["layout"] as? [String: Any] ?? [:] }
        #expect(waitUntil(seconds: 10) { (layout()["board"] as? [String])?.count == 8 }, "board: \(String(describing: layout()["board"]))")
        _ = try session.settledPoint(["more"])
        let window = try #require(layout()["window"] as? [Int])
        #expect(window[0] >= 0 && window[1] >= 0 && window[0] + window[2] <= width && window[1] + window[3] <= height,
                "window \(window) on a \(width)×\(height) screen")
        func onScreen(_ p: [Int]) -> Bool { p.count == 2 && p[0] >= 0 && p[1] >= 0 && p[0] < width && p[1] < height }
        func within(_ p: [Int], _ r: [Int]) -> Bool { p[0] >= r[0] && p[1] >= r[1] && p[0] < r[0] + r[2] && p[1] < r[1] + r[3] }

        // What stays in view: the strip, "Add pedal…", "More…", the preset column, the board's view.
        var fixed: [String: [Int]] = [:]
        for (id, p) in layout()["strip"] as? [String: [Int]] ?? [:] { fixed["strip \(id)"] = p }
        fixed["more"] = layout()["more"] as? [Int]
        fixed["add_pedal"] = layout()["add_pedal"] as? [Int]
        for (id, p) in (layout()["presets"] as? [String: [Int]]) ?? [:] { fixed["presets \(id)"] = p }
        #expect(fixed.count >= 8 + 2 + 3, "\(fixed.keys.sorted())")
        for (name, p) in fixed { #expect(onScreen(p), "\(name) at \(p) is off the \(width)×\(height) screen") }
        // The built-in pedals' strip entries all show (none scrolled out of the strip).
        let strip = try #require(layout()["strip_view"] as? [Int])
        for (id, p) in layout()["strip"] as? [String: [Int]] ?? [:] {
            #expect(within(p, strip), "the strip's \(id) entry at \(p) is scrolled out of the strip \(strip)")
        }
        // The pedals' zoom: down to the readable minimum on the smallest screen (where the board
        // then scrolls), never so small a finger misses a knob (44 logical px).
        let zoom = try #require(layout()["zoom"] as? Double)
        if width == 1280 { #expect(zoom == 0.85, "zoom \(zoom) at 1280×720") }
        let knob = try #require(layout()["smallest_knob"] as? [Int])
        #expect(knob.count == 2 && knob.allSatisfy { $0 >= 44 }, "the smallest knob's control is \(knob) at zoom \(zoom)")
        let view = try #require(layout()["board_view"] as? [Int])
        #expect(within([view[0], view[1]], window) && view[0] + view[2] <= window[0] + window[2] && view[1] + view[3] <= window[1] + window[3],
                "the board's view \(view) lies in the window \(window)")

        // Every pedal comes into view from its strip entry (the Looper's beside the Reverb).
        func points(_ pedal: String) -> [[Int]] {
            guard let entry = layout()[pedal] as? [String: Any] else { return [] }
            return Array(((entry["controls"] as? [String: [Int]]) ?? [:]).values) + [entry["footswitch"] as? [Int] ?? [-1, -1]]
        }
        func inView(_ pedal: String) -> Bool {
            let p = points(pedal)
            return !p.isEmpty && p.allSatisfy { within($0, view) && onScreen($0) }
        }
        for pedal in ["gate", "overdrive", "eq", "flanger", "tremolo", "delay", "reverb"] {
            try session.click("strip", pedal)
            #expect(waitUntil(seconds: 3) { inView(pedal) }, "\(pedal) is not in view after its strip entry was clicked: \(points(pedal)) outside \(view)")
        }
        #expect(inView("looper"), "the Looper is not in view beside the Reverb: \(points("looper"))")

        // The rightmost pedal's knob turns.
        let before = try #require(session.parameter("reverb.mix"))
        let after = try session.dragKnob("reverb", "reverb.mix", pixels: before > 0.5 ? -60 * scale : 60 * scale)
        #expect(after != nil && abs(after! - before) > 0.05, "Reverb Mix \(before) → \(String(describing: after)) after a drag")

        let shot = try session.shot("fit-\(screen.replacingOccurrences(of: "@", with: "-scale")).png")
        let colours = Int(try shell(["identify", "-format", "%k", shot]).output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(colours > 2000, "screenshot \(shot) looks blank (\(colours) colours)")
    }

    /// Every built-in pedal, in the order of a new board.
    static let everyPedal = ["gate", "overdrive", "amp", "neural", "cab", "eq", "flanger", "tremolo", "delay", "reverb", "looper"]
    static let everyPedalPresets: String = {
        let chain = "[" + everyPedal.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        let slot = { (name: String) in
            #"{"format":"stompbox-preset","version":2,"name":"\#(name)","chain":\#(chain),"parameters":{"delay.sync":"1/8."}}"#
        }
        return #"{"format":"stompbox-presets","version":1,"selected":0,"slots":[\#(slot("Ten")),\#(slot("Ten 2")),\#(slot("Ten 3"))]}"#
    }()

    @Test("with every built-in pedal on the board, no two controls overlap and each lies on its pedal; a laptop shows them all",
          arguments: ["1280x720", "1366x768", "1920x1080", "3840x2160@2"])
    func facesKeepApart(_ screen: String) throws {
        let (width, height, scale) = Self.screen(screen)
        let session = try PedalboardSession(environment: ["GDK_SCALE": "\(scale)"], screen: (width, height), presets: Self.everyPedalPresets)
        defer { session.stop() }
        func layout() -> [String: Any] { session.state()?["layout"] as? [String: Any] ?? [:] }
        #expect(waitUntil(seconds: 10) { layout()["board"] as? [String] == Self.everyPedal }, "board: \(String(describing: layout()["board"]))")
        _ = try session.settledPoint(["more"])
        #expect(waitUntil(seconds: 5) { layout()["zoom_pending"] as? Bool == false })

        struct Box: CustomStringConvertible {
            let name: String, x: Int, y: Int, w: Int, h: Int
            func intersects(_ o: Box) -> Bool { x < o.x + o.w && o.x < x + w && y < o.y + o.h && o.y < y + h }
            func contains(_ o: Box) -> Bool { o.x >= x && o.y >= y && o.x + o.w <= x + w && o.y + o.h <= y + h }
            var description: String { "\(name) \(x),\(y) \(w)×\(h)" }
        }
        /// Every control of every pedal, and the pedals, read until a layout pass has placed them all.
        func read() -> (pedals: [Box], controls: [(pedal: String, box: Box)])? {
            let now = layout()
            var pedals: [Box] = [], controls: [(String, Box)] = []
            for id in Self.everyPedal {
                guard let entry = now[id] as? [String: Any], let origin = entry["origin"] as? [Int], let size = entry["size"] as? [Int],
                      let rects = entry["rects"] as? [String: [Int]], !rects.isEmpty else { return nil }
                let s = scale
                pedals.append(Box(name: id, x: origin[0], y: origin[1], w: size[0] * s, h: size[1] * s))
                for (name, r) in rects {
                    guard r.count == 4, r[2] > 0, r[3] > 0 else { return nil }
                    controls.append((id, Box(name: "\(id) \(name)", x: r[0], y: r[1], w: r[2], h: r[3])))
                }
            }
            return (pedals, controls)
        }
        var found: (pedals: [Box], controls: [(pedal: String, box: Box)])?
        #expect(waitUntil(seconds: 5) { found = read(); return found != nil }, "no complete layout: \(layout().keys.sorted())")
        let (pedals, controls) = try #require(found)
        // Eleven pedals, each with its footswitch and × at least, and every knob, toggle, menu and
        // fader (the Amp Model's: its menu, IN, OUT and NORMALIZE).
        #expect(controls.count >= 11 * 2 + 4 + 3 + 6 + 4 + 2 + 6 + 6 + 3 + 5 + 6 + 4, "\(controls.count) controls")
        for (i, a) in controls.enumerated() {
            let pedal = try #require(pedals.first { $0.name == a.pedal })
            #expect(pedal.contains(a.box), "\(a.box) leaves its pedal \(pedal) at \(screen)")
            for b in controls[(i + 1)...] where a.box.intersects(b.box) {
                Issue.record("\(a.box) overlaps \(b.box) at \(screen)")
            }
        }
        if width == 1366 {
            // A laptop: every control of the eleven pedals on screen and in the board's view, nothing to scroll.
            let view = try #require(layout()["board_view"] as? [Int])
            let viewBox = Box(name: "board view", x: view[0], y: view[1], w: view[2], h: view[3])
            let screenBox = Box(name: "screen", x: 0, y: 0, w: width, h: height)
            for (_, box) in controls {
                #expect(screenBox.contains(box) && viewBox.contains(box), "\(box) is not on the \(screen) screen without scrolling (view \(viewBox))")
            }
        }
        let shot = try session.shot("faces-\(screen.replacingOccurrences(of: "@", with: "-scale")).png")
        let colours = Int(try shell(["identify", "-format", "%k", shot]).output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(colours > 2000, "screenshot \(shot) looks blank (\(colours) colours)")
    }

    @Test("on a large screen the pedals are larger, follow the window's size, and lose nothing")
    func pedalsScaleWithTheWindow() throws {
        // A 4K screen at 100 %: 1920 logical pixels of pedals would be a strip across its middle.
        let (width, height) = (3840, 2160)
        let session = try PedalboardSession(screen: (width, height), presets: Self.presets)
        defer { session.stop() }
        func layout() -> [String: Any] { session.state()?["layout"] as? [String: Any] ?? [:] }
        #expect(waitUntil(seconds: 10) { (layout()["board"] as? [String])?.count == 8 })
        _ = try session.settledPoint(["more"])
        #expect(waitUntil(seconds: 5) { (layout()["zoom"] as? Double ?? 0) > 1 }, "zoom \(String(describing: layout()["zoom"]))")

        /// Every pedal whole in the board's view (no scrolling needed), and its size at `zoom`.
        func allInView() -> [String] {
            guard let view = layout()["board_view"] as? [Int], let zoom = layout()["zoom"] as? Double else { return ["no layout"] }
            var problems: [String] = []
            for pedal in Self.board {
                guard let entry = layout()[pedal] as? [String: Any], let origin = entry["origin"] as? [Int], let size = entry["size"] as? [Int] else {
                    problems.append("\(pedal): no layout"); continue
                }
                if origin[0] < view[0] || origin[0] + size[0] > view[0] + view[2] || origin[1] < view[1] || origin[1] + size[1] > view[1] + view[3] {
                    problems.append("\(pedal) \(origin)+\(size) outside the view \(view)")
                }
                if abs(Double(size[1]) - 340 * zoom) > 1 { problems.append("\(pedal) is \(size[1]) px tall at zoom \(zoom)") }
            }
            return problems
        }
        let window = try #require(layout()["window"] as? [Int])
        let zoom = try #require(layout()["zoom"] as? Double)
        #expect(window[2] > 3000 && window[0] >= 0 && window[0] + window[2] <= width && window[1] + window[3] <= height,
                "the window opened at \(window) on a \(width)×\(height) screen")
        #expect(zoom >= 1.5, "zoom \(zoom) in a \(window[2])×\(window[3]) window")
        // A resize re-allocates the pedals: a report taken between the two shows them unplaced
        // (GTK's -1,-1), so the layout is read until it has settled.
        #expect(waitUntil(seconds: 5) { allInView() == [] }, "\(allInView())")
        _ = try session.shot("scale-3840x2160.png")

        // Turned at this size: the knob is where the layout says and turns as far per pixel.
        let before = try #require(session.parameter("delay.time_ms"))
        let turned = try #require(try session.dragKnob("delay", "delay.time_ms", pixels: before > 500 ? -60 : 60))
        #expect(abs(turned - before) > 50, "Delay Time \(before) → \(turned) after a 60 px drag at zoom \(zoom)")

        // Made small: the pedals shrink to the minimum and scroll; the value and the board stay.
        let found = try shell(["xdotool", "search", "--onlyvisible", "--name", "^Stompbox$"], environment: ["DISPLAY": session.display.name]).output
        let id = try #require(found.split(separator: "\n").first.map(String.init), "no Stompbox window")
        try session.xdotool("windowsize", id, "1280", "720")
        #expect(waitUntil(seconds: 5) { layout()["zoom"] as? Double == BoardZoom.minimum }, "zoom \(String(describing: layout()["zoom"])) at 1280×720")
        #expect(session.parameter("delay.time_ms") == turned)
        #expect(layout()["board"] as? [String] == Self.board)
        try session.click("strip", "reverb")
        let mix = try #require(session.parameter("reverb.mix"))
        let after = try session.dragKnob("reverb", "reverb.mix", pixels: mix > 0.5 ? -60 : 60)
        #expect(after != nil && abs(after! - mix) > 0.05, "Reverb Mix \(mix) → \(String(describing: after)) at the minimum zoom")

        // And large again: all in view.
        try session.xdotool("windowsize", id, "3000", "1200")
        #expect(waitUntil(seconds: 5) { (layout()["zoom"] as? Double ?? 0) > 1.3 }, "zoom \(String(describing: layout()["zoom"])) at 3000×1200")
        _ = try session.settledPoint(["reverb", "controls", "reverb.mix"])
        #expect(waitUntil(seconds: 5) { allInView() == [] }, "\(allInView())")
    }

    @Test("the window opens where it was left, at the size it was left")
    func remembersItsPlace() throws {
        // A screen the window fits at its natural size (a maximised window keeps its place).
        var session: PedalboardSession? = try PedalboardSession(startFromDefaults: true, screen: (2560, 1440))
        let home = session!.home
        // Keep the home folder: the second window reads window.json from it.
        let keep = FileManager.default.temporaryDirectory.appendingPathComponent("stompbox-ui-keep-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: keep) }
        let found = try shell(["xdotool", "search", "--onlyvisible", "--name", "^Stompbox$"], environment: ["DISPLAY": session!.display.name]).output
        let id = try #require(found.split(separator: "\n").first.map(String.init), "no Stompbox window")
        try session!.xdotool("windowsize", id, "1500", "700")
        try session!.xdotool("windowmove", id, "120", "90")
        let geometryFile = home.appendingPathComponent("config/stompbox/window.json")
        func saved() -> [String: Any]? {
            FileManager.default.contents(atPath: geometryFile.path).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        }
        #expect(waitUntil(seconds: 5) { saved()?["width"] as? Int == 1500 && saved()?["x"] as? Int == 120 }, "window.json: \(String(describing: saved()))")
        try FileManager.default.copyItem(at: home.appendingPathComponent("config"), to: keep)
        session!.stop()
        session = nil

        let presets = try String(contentsOf: keep.appendingPathComponent("stompbox/presets.json"), encoding: .utf8)
        let again = try PedalboardSession(screen: (2560, 1440), presets: presets, geometry: try Data(contentsOf: keep.appendingPathComponent("stompbox/window.json")))
        defer { again.stop() }
        _ = try again.settledPoint(["more"])
        let window = try #require((again.state()?["layout"] as? [String: Any])?["window"] as? [Int])
        #expect(window == [120, 90, 1500, 700], "the window opened at \(window)")
    }
}

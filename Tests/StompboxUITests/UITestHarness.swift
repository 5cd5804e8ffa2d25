import Foundation
import StompboxAudio
import StompboxDSP
import StompboxTestSupport

/// Runs a command to completion; returns stdout and the exit status.
@discardableResult
func shell(_ arguments: [String], environment: [String: String] = [:]) throws -> (output: String, status: Int32) {
    try Subprocess.run(arguments, environment: environment)
}

enum Paths {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized
    static let stompbox = repository.appendingPathComponent(".build/debug/stompbox").path
    /// Screenshots of the test runs land here.
    static let artifacts = repository.appendingPathComponent(".build/ui-tests")
}

/// A private X server on a free display number, killed by its PID.
final class VirtualDisplay {
    let number: Int
    private let process: Subprocess

    let width: Int, height: Int

    init(width: Int = 1920, height: Int = 1080) throws {
        self.width = width
        self.height = height
        try TestTier.requireApart("a window under Xvfb")
        var n = 70 + Int.random(in: 0..<400)
        while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") || FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock") {
            n += 1
        }
        number = n
        process = try Subprocess(command: ["/usr/bin/Xvfb", ":\(n)", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp"])
        guard waitUntil(seconds: 10, { FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") }) else {
            stop()
            throw HarnessError("Xvfb :\(n) did not start")
        }
    }

    var name: String { ":\(number)" }

    func stop() { process.stop() }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// `stompbox` (the window) on a private display and PulseAudio server, watched through the
/// JSON state file it writes (STOMPBOX_STATE_FILE) — the engine's parameters and looper state.
final class PedalboardSession {
    let display: VirtualDisplay
    /// The shared test server (`PrivatePulseServer`): `amp_out` is where the window plays.
    let pulse: PrivatePulseServer?
    let process: Subprocess
    let stateFile: String
    let home: URL
    private var touchWriter: FileHandle?

    /// With `accessibility`, the window runs in its own D-Bus session with the AT-SPI bus
    /// (`dbus-run-session`), and `busAddress` lets a screen-reader client reach it.
    let accessibility: Bool

    /// With `startFromDefaults`, the presets file's selected slot holds every default, so the
    /// window (which opens playing the selected preset) starts with every parameter at its default.
    /// `screen` is the virtual screen's size in pixels; `presets` replaces presets.json.
    init(startFromDefaults: Bool = false, environment extra: [String: String] = [:], accessibility: Bool = false,
         startPulse: Bool = true, arguments: [String] = [], screen: (width: Int, height: Int) = (1920, 1080),
         presets: String? = nil, geometry: Data? = nil, touch: Bool = false, program: String = Paths.stompbox) throws {
        self.accessibility = accessibility
        display = try VirtualDisplay(width: screen.width, height: screen.height)
        if startPulse, let server = try? PrivatePulseServer(), (try? server.start()) != nil {
            pulse = server
        } else {
            pulse = nil
        }
        home = FileManager.default.temporaryDirectory.appendingPathComponent("stompbox-ui-home-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        stateFile = home.appendingPathComponent("state.json").path
        var env: [String: String] = [:]
        env["DISPLAY"] = display.name
        env["GDK_BACKEND"] = "x11"
        if !accessibility { env["NO_AT_BRIDGE"] = "1" }
        env["HOME"] = home.path
        env["XDG_CONFIG_HOME"] = home.appendingPathComponent("config").path
        env["XDG_DATA_HOME"] = home.appendingPathComponent("data").path
        env["STOMPBOX_STATE_FILE"] = stateFile
        if touch {
            let fifo = home.appendingPathComponent("touch").path
            guard mkfifo(fifo, 0o600) == 0 else { throw HarnessError("mkfifo \(fifo): errno \(errno)") }
            env["STOMPBOX_TEST_TOUCH"] = fifo
        }
        env["STOMPBOX_INPUT"] = "demo"
        env["STOMPBOX_OUTPUT"] = "amp_out"
        env["PULSE_SERVER"] = pulse?.address ?? "unix:/nonexistent"
        env.merge(extra) { $1 }
        if startFromDefaults {
            // Slot 1 holds the defaults (ids left out of a preset take their defaults).
            let folder = home.appendingPathComponent("config/stompbox")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let slot = { (name: String) in #"{"format":"stompbox-preset","version":1,"name":"\#(name)","parameters":{}}"# }
            let presets = #"{"format":"stompbox-presets","version":1,"selected":0,"slots":[\#(slot("Init")),\#(slot("Init 2")),\#(slot("Init 3"))]}"#
            try Data(presets.utf8).write(to: folder.appendingPathComponent("presets.json"))
        }
        if let presets {
            let folder = home.appendingPathComponent("config/stompbox")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(presets.utf8).write(to: folder.appendingPathComponent("presets.json"))
        }
        if let geometry {
            let folder = home.appendingPathComponent("config/stompbox")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try geometry.write(to: folder.appendingPathComponent("window.json"))
        }
        let stderr = home.appendingPathComponent("stderr.log").path
        if accessibility {
            let script = "echo \"$DBUS_SESSION_BUS_ADDRESS\" > '\(home.path)/bus'; exec '\(program)' \(arguments.map { "'\($0)'" }.joined(separator: " "))"
            process = try Subprocess(command: ["dbus-run-session", "--", "sh", "-c", script], environment: env, stderr: stderr)
        } else {
            process = try Subprocess(command: [program] + arguments, environment: env, stderr: stderr)
        }
        guard waitUntil(seconds: 30, { (state()?["layout"] as? [String: Any])?["looper"] != nil }) else {
            let log = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
            let running = process.isRunning
            // A window that hangs: where its threads are, when gdb is here.
            var stacks = ""
            if running, FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") {
                stacks = (try? shell(["/usr/bin/gdb", "-p", "\(process.pid)", "-batch", "-ex", "thread apply all bt 12"]).output) ?? ""
                stacks = "; its threads: " + stacks.split(separator: "\n").filter { $0.hasPrefix("#") || $0.hasPrefix("Thread") }.joined(separator: "\n")
            }
            stop()
            throw HarnessError("the window did not open (no layout in \(stateFile)); the process \(running ? "was still running" : "had ended"); its stderr: \(log.suffix(2000))\(stacks.prefix(6000))")
        }
        // The first layout can still move (the board rebuilt for the preset played at start, a
        // new zoom once the window's size settled): wait until no zoom check is pending and the
        // Looper's footswitch stays put.
        var last: [Int]?
        _ = waitUntil(seconds: 3) {
            Thread.sleep(forTimeInterval: 0.2)
            let layout = state()?["layout"] as? [String: Any]
            let now = (layout?["looper"] as? [String: Any])?["footswitch"] as? [Int]
            defer { last = now }
            return now != nil && now == last && layout?["zoom_pending"] as? Bool == false
        }
    }

    func state() -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: stateFile) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    func parameter(_ id: String) -> Double? {
        (state()?["parameters"] as? [String: Any])?[id] as? Double
    }

    var looperState: String? { (state()?["looper"] as? [String: Any])?["state"] as? String }
    var looperLength: Int? { (state()?["looper"] as? [String: Any])?["length"] as? Int }
    var statusText: String? { state()?["status_text"] as? String }
    var engineState: String? { (state()?["engine"] as? [String: Any])?["state"] as? String }

    /// A point from the state file's `layout`, e.g. ("overdrive", "footswitch") or ("delay", "controls", "delay.time_ms").
    func point(_ path: String...) throws -> (x: Int, y: Int) {
        var node: Any? = state()?["layout"]
        for key in path { node = (node as? [String: Any])?[key] }
        guard let xy = node as? [Int], xy.count == 2 else { throw HarnessError("no layout entry \(path)") }
        return (xy[0], xy[1])
    }

    /// Touch lines for the window's test touchscreen (`TestTouchFeed`): "down 1 X Y", "move 1 X Y",
    /// "up 1 X Y", in screen pixels. Needs a session started with `touch: true`.
    func touch(_ lines: String...) throws {
        if touchWriter == nil {
            touchWriter = FileHandle(forWritingAtPath: home.appendingPathComponent("touch").path)
        }
        guard let touchWriter else { throw HarnessError("no touch FIFO (start the session with touch: true)") }
        touchWriter.write(Data(lines.map { $0 + "\n" }.joined().utf8))
    }

    /// Runs xdotool. A "mousemove X Y" followed by more (a click) goes in two steps with a
    /// pause between: a click sent in the same instant as the move that brings the pointer can
    /// reach the window before GTK has seen the pointer arrive, and be lost or taken as part of
    /// the previous widget's press (as `click` says).
    func xdotool(_ arguments: String...) throws {
        if arguments.first == "mousemove", arguments.count > 3 {
            try shell(["xdotool"] + arguments.prefix(3), environment: ["DISPLAY": display.name])
            Thread.sleep(forTimeInterval: 0.15)
            try shell(["xdotool"] + arguments.dropFirst(3), environment: ["DISPLAY": display.name])
            return
        }
        try shell(["xdotool"] + arguments, environment: ["DISPLAY": display.name])
    }

    /// The window's X windows on screen: its main window, and a menu or popup while one is open.
    func visibleWindows() -> Set<String> {
        let found = (try? shell(["xdotool", "search", "--onlyvisible", "--pid", "\(process.pid)"], environment: ["DISPLAY": display.name]))?.output ?? ""
        return Set(found.split(separator: "\n").map(String.init))
    }

    /// Does `action` (a right-click, a click on a menu's button, a long press) and waits until
    /// a new window of the window's (the menu) is on screen, so keys sent next reach it.
    func openingPopup(_ action: () throws -> Void) throws {
        let before = visibleWindows()
        try action()
        _ = waitUntil(seconds: 3) { !visibleWindows().subtracting(before).isEmpty }
    }

    func screenshot(to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try shell(["import", "-window", "root", path], environment: ["DISPLAY": display.name])
    }

    /// The colour of one screen pixel (8-bit RGB), read from a fresh screenshot.
    func pixel(_ x: Int, _ y: Int) throws -> (r: Int, g: Int, b: Int) {
        let out = try shell(["import", "-window", "root", "-crop", "1x1+\(x)+\(y)", "-depth", "8", "txt:-"],
                            environment: ["DISPLAY": display.name]).output
        return try parsePixel(out)
    }

    /// The session bus of an `accessibility` session.
    var busAddress: String? {
        (try? String(contentsOfFile: home.appendingPathComponent("bus").path, encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Every named accessible of the window: (role, name, value or description, and for
    /// controls with AtkValue "minimum maximum increment current").
    func accessibleControls() throws -> [(role: String, name: String, value: String, range: String)] {
        guard let bus = busAddress else { throw HarnessError("not an accessibility session") }
        let out = try shell(["/usr/bin/python3", "-W", "ignore", Self.accessibilityScript], environment: ["DBUS_SESSION_BUS_ADDRESS": bus, "DISPLAY": display.name])
        return out.output.split(separator: "\n").compactMap { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return f.count == 4 ? (f[0], f[1], f[2], f[3]) : nil
        }
    }

    /// Sets a control's value through AtkValue, as a screen reader would; true when it took it.
    func setAccessibleValue(_ name: String, _ value: Double) throws -> Bool {
        guard let bus = busAddress else { throw HarnessError("not an accessibility session") }
        return try shell(["/usr/bin/python3", "-W", "ignore", Self.accessibilityScript, "--set", name, "\(value)"],
                         environment: ["DBUS_SESSION_BUS_ADDRESS": bus, "DISPLAY": display.name]).status == 0
    }

    static let accessibilityScript = Paths.repository.appendingPathComponent("Tests/StompboxUITests/Scripts/accessible-controls.py").path

    func stop() {
        try? touchWriter?.close()
        if accessibility, process.isRunning {
            // dbus-run-session ends with its child: close the window, then make sure.
            try? xdotool("key", "ctrl+q")
            _ = waitUntil(seconds: 5) { !process.isRunning }
        }
        process.stop()
        display.stop()
        pulse?.stop()
        try? FileManager.default.removeItem(at: home)
    }
}

/// Parses ImageMagick's `txt:` format ("0,0: (255,40,20)  #FF2814  srgb(255,40,20)").
func parsePixel(_ text: String) throws -> (r: Int, g: Int, b: Int) {
    guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0,0:") }),
          let hash = line.firstIndex(of: "#") else { throw HarnessError("no pixel in \(text)") }
    let hex = line[line.index(after: hash)...].prefix(6)
    guard hex.count == 6, let v = Int(hex, radix: 16) else { throw HarnessError("bad pixel \(line)") }
    return ((v >> 16) & 255, (v >> 8) & 255, v & 255)
}

func pixels(in png: String, at points: [(Int, Int)]) throws -> [(r: Int, g: Int, b: Int)] {
    try points.map { p in
        try parsePixel(try shell(["convert", png, "-crop", "1x1+\(p.0)+\(p.1)", "-depth", "8", "txt:-"]).output)
    }
}


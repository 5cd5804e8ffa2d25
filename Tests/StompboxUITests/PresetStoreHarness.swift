import Foundation
import StompboxTestSupport

/// A vendor key pair made with `stompbox licence keygen` in a temporary folder, and keys
/// issued with `stompbox licence issue` — what someone building their own Stompbox does.
struct TestKeyPair {
    let directory: URL
    var publicKey: String { directory.appendingPathComponent("store-public-key.txt").path }
    var privateKey: String { directory.appendingPathComponent("store-private-key.txt").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("stompbox-ui-keys-\(UUID().uuidString)")
        let made = try shell([Paths.stompbox, "licence", "keygen", "--out", directory.path])
        guard made.status == 0 else { throw HarnessError("keygen failed: \(made.output)") }
    }

    func issue(product: String = "looper", licensee: String) throws -> String {
        let issued = try shell([Paths.stompbox, "licence", "issue", "--private-key", privateKey,
                                "--product", product, "--licensee", licensee])
        let key = issued.output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard issued.status == 0, key.hasPrefix("STOMPBOX-") else { throw HarnessError("issue failed: \(issued.output)") }
        return key
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// The environment for a window whose Looper is already unlocked (a key of a test key pair
/// entered with `stompbox store unlock`), for tests of the Looper itself.
func unlockedLooperEnvironment() throws -> [String: String] {
    let keys = try TestKeyPair()
    let data = keys.directory.appendingPathComponent("xdg-data").path
    let key = try keys.issue(licensee: "Looper Tests")
    let env = ["XDG_DATA_HOME": data, "STOMPBOX_STORE_PUBLIC_KEY": keys.publicKey]
    let unlocked = try shell([Paths.stompbox, "store", "unlock", key], environment: env)
    guard unlocked.status == 0 else { throw HarnessError("store unlock failed: \(unlocked.output)") }
    return env
}

extension PedalboardSession {
    /// The preset panel's part of the state file: selected (0-based), names, modified.
    var presets: [String: Any] { state()?["presets"] as? [String: Any] ?? [:] }
    var selectedSlot: Int? { presets["selected"] as? Int }
    var presetModified: Bool? { presets["modified"] as? Bool }
    var store: [String: Any] { state()?["store"] as? [String: Any] ?? [:] }
    var looperLocked: Bool? { store["looper_locked"] as? Bool }
    var openDialogs: [String] { state()?["dialogs"] as? [String] ?? [] }
    var notice: String { state()?["notice"] as? String ?? "" }
    var parameters: [String: Double] { state()?["parameters"] as? [String: Double] ?? [:] }

    var presetsFile: URL { home.appendingPathComponent("config/stompbox/presets.json") }

    /// presets.json as written by the window.
    func savedPresets() -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: presetsFile.path) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    /// The numeric and on/off values of one slot in presets.json (choices left out).
    func savedValues(slot: Int) -> [String: Double]? {
        guard let slots = savedPresets()?["slots"] as? [[String: Any]], slots.indices.contains(slot),
              let parameters = slots[slot]["parameters"] as? [String: Any] else { return nil }
        var values: [String: Double] = [:]
        for (id, value) in parameters {
            if let b = value as? Bool { values[id] = b ? 1 : 0 } else if let n = value as? NSNumber { values[id] = n.doubleValue }
        }
        return values
    }

    func savedName(slot: Int) -> String? {
        ((savedPresets()?["slots"] as? [[String: Any]])?[slot])?["name"] as? String
    }

    /// X windows titled exactly `title` (the dialog is up when this is not empty).
    func windows(named title: String) -> [String] {
        let found = (try? shell(["xdotool", "search", "--name", "^\(title)$"], environment: ["DISPLAY": display.name]))?.output ?? ""
        return found.split(separator: "\n").map(String.init)
    }

    /// The newest window titled `title`, waiting up to 5 s for one. The id is the one the
    /// successful search found: a second search right after it could come back empty (a
    /// fresh-clone run failed so 4.7 s into the store test, the dialog having been found just before).
    func window(named title: String) throws -> String {
        var id: String?
        _ = waitUntil(seconds: 5) {
            id = windows(named: title).last
            return id != nil
        }
        guard let id else { throw HarnessError("no window named \(title)") }
        return id
    }

    /// Waits for the dialog, gives it the keyboard and sends it keys.
    func keys(to title: String, _ keys: String...) throws {
        let id = try window(named: title)
        try shell(["xdotool", "windowfocus", id], environment: ["DISPLAY": display.name])
        Thread.sleep(forTimeInterval: 0.2)
        try shell(["xdotool", "key", "--delay", "60"] + keys, environment: ["DISPLAY": display.name])
    }

    func type(to title: String, _ text: String) throws {
        let id = try window(named: title)
        try shell(["xdotool", "windowfocus", id], environment: ["DISPLAY": display.name])
        Thread.sleep(forTimeInterval: 0.2)
        try shell(["xdotool", "type", "--delay", "4", text], environment: ["DISPLAY": display.name])
    }

    /// Opens `path` in the file chooser titled `title` through its location bar, and waits for
    /// the chooser to close. A Return while the bar offers a completion takes the completion
    /// (the chooser stays open), so a second Return is sent then.
    func choose(_ path: String, in title: String) throws {
        try keys(to: title, "ctrl+l")
        try type(to: title, path)
        Thread.sleep(forTimeInterval: 0.5)   // the location bar's completion settles
        try keys(to: title, "Return")
        if !waitUntil(seconds: 3, { windows(named: title).isEmpty }) {
            try keys(to: title, "Return")
        }
        _ = waitUntil(seconds: 3) { windows(named: title).isEmpty }
    }

    /// Where a control is now: read until two readings 0.2 s apart agree (a notice appearing
    /// under the strip moves everything below it down).
    func settledPoint(_ path: [String]) throws -> [Int] {
        func read() -> [Int]? {
            var node: Any? = state()?["layout"]
            for key in path { node = (node as? [String: Any])?[key] }
            return node as? [Int]
        }
        var last = read()
        _ = waitUntil(seconds: 3) {
            Thread.sleep(forTimeInterval: 0.2)
            let now = read()
            defer { last = now }
            return now != nil && now == last
        }
        guard let xy = last, xy.count == 2 else { throw HarnessError("no layout entry \(path)") }
        return xy
    }

    func click(_ path: String...) throws {
        let xy = try settledPoint(path)
        // Move, let GTK see the pointer arrive, then click (a click landing with the move can be
        // taken as part of the previous widget's press).
        try xdotool("mousemove", "\(xy[0])", "\(xy[1])")
        Thread.sleep(forTimeInterval: 0.15)
        try xdotool("click", "1")
        Thread.sleep(forTimeInterval: 0.15)
    }

    /// Drags a knob straight up (positive `pixels`) or down, as a finger or mouse would, and
    /// returns the parameter's value once the engine's state has stopped changing: xdotool
    /// returns before GTK has handled the moves, so a value read at once can be mid-drag (a CI
    /// run read 901 ms while the drag went on to 2000).
    @discardableResult
    func dragKnob(_ pedal: String, _ id: String, pixels: Int) throws -> Double? {
        let xy = try settledPoint([pedal, "controls", id])
        let knob = (x: xy[0], y: xy[1])
        // As `click`: let GTK see the pointer arrive before the press.
        try xdotool("mousemove", "\(knob.x)", "\(knob.y)")
        Thread.sleep(forTimeInterval: 0.15)
        try xdotool("mousedown", "1")
        let step = pixels > 0 ? 10 : -10
        for dy in stride(from: step, through: pixels, by: step) {
            try xdotool("mousemove", "\(knob.x)", "\(knob.y - dy)")
        }
        try xdotool("mouseup", "1")
        var last = parameter(id)
        var same = 0
        _ = waitUntil(seconds: 5) {
            Thread.sleep(forTimeInterval: 0.2)
            let now = parameter(id)
            same = now == last ? same + 1 : 0
            last = now
            return same >= 3
        }
        return last
    }

    /// After Save: answers the overwrite question with Return when it is asked; returns once
    /// it was answered or the slot was saved without one.
    func confirmSave() throws {
        _ = waitUntil(seconds: 3) { openDialogs == ["Save Preset"] || presetModified == false }
        if openDialogs == ["Save Preset"] { try keys(to: "Save Preset", "Return") }
    }

    func shot(_ name: String) throws -> String {
        let path = Paths.artifacts.appendingPathComponent(name).path
        try screenshot(to: path)
        return path
    }
}

/// Every parameter of `live` equal to `saved` (within float rounding of the JSON).
func sameValues(_ live: [String: Double], _ saved: [String: Double]) -> [String] {
    saved.compactMap { id, value in
        guard let now = live[id] else { return "\(id) missing" }
        return abs(now - value) <= max(1e-4, abs(value) * 1e-5) ? nil : "\(id): live \(now), saved \(value)"
    }.sorted()
}

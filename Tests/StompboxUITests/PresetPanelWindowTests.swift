import Foundation
import StompboxTestSupport
import StompboxTestTags
import Testing

/// The preset column under Xvfb: clicks and keys with xdotool; checked through the engine's
/// parameters in the state file and through the presets.json the window writes in its
/// private XDG_CONFIG_HOME — never by asking the widgets.
@Suite("Preset panel in the window", .serialized, .tags(.window))
struct PresetPanelWindowTests {
    init() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Paths.stompbox), "build first: swift build --build-tests")
    }

    @Test("the window opens playing the selected preset (the factory's Clean Combo through the gate, amp and cabinet on a first start)")
    func opensWithTheSelectedPreset() throws {
        let session = try PedalboardSession()
        defer { session.stop() }
        #expect(session.selectedSlot == 0)
        #expect((session.presets["names"] as? [String])?.first == "Clean Combo")
        #expect(session.presets["modified"] as? Bool == false)
        // What data/factory-presets.json stores for Clean Combo, read by the engine's state.
        for id in ["gate.enabled", "amp.enabled", "cab.enabled", "eq.enabled", "delay.enabled", "reverb.enabled"] {
            #expect(session.parameter(id) == 1, "\(id)")
        }
        #expect(session.parameter("overdrive.enabled") == 0)
        #expect(session.parameter("amp.model") == 0, "the amp's clean model")
        #expect(abs((session.parameter("reverb.mix") ?? 0) - 0.25) < 1e-6)
        #expect(abs((session.parameter("eq.band5_db") ?? 0) - 2) < 1e-6)
        // On its board, every built-in pedal in the default order.
        let board = (session.state()?["layout"] as? [String: Any])?["board"] as? [String]
        #expect(board == ["gate", "overdrive", "amp", "neural", "cab", "eq", "flanger", "tremolo", "delay", "reverb", "looper"], "\(String(describing: board))")
    }

    @Test("save to slot 2, turn a knob, recall slot 2: the engine's values are the saved ones again")
    func saveChangeRecall() throws {
        let session = try PedalboardSession()
        defer { session.stop() }
        #expect(session.selectedSlot == 0)
        #expect((session.presets["names"] as? [String])?.count == 3)

        // Tap slot 2: it is selected (in presets.json too) and the engine plays what it stores.
        try session.click("presets", "slot2")
        #expect(waitUntil(seconds: 3) { session.selectedSlot == 1 && session.savedPresets()?["selected"] as? Int == 1 })
        let factory = try #require(session.savedValues(slot: 1))
        #expect(waitUntil(seconds: 3) { sameValues(session.parameters, factory).isEmpty },
                "after recalling slot 2: \(sameValues(session.parameters, factory))")
        #expect(session.presetModified == false)

        // Turn Delay Time up and Save into slot 2, confirming the overwrite question with Return.
        let before = session.parameter("delay.time_ms") ?? -1
        let dragged = try session.dragKnob("delay", "delay.time_ms", pixels: 60)
        let saved = try #require(dragged)
        #expect(saved > before + 50)
        #expect(waitUntil(seconds: 3) { session.presetModified == true }, "the slot is marked modified")
        try session.click("presets", "save")
        #expect(waitUntil(seconds: 5) { session.openDialogs == ["Save Preset"] })
        #expect(!session.windows(named: "Save Preset").isEmpty)
        _ = try? session.shot("preset-save-question.png")
        try session.keys(to: "Save Preset", "Return")
        #expect(waitUntil(seconds: 5) { session.openDialogs.isEmpty && session.presetModified == false })
        let stored = try #require(session.savedValues(slot: 1))
        // presets.json holds the Float's shortest decimal (674.80963), the state file the Float
        // itself widened to a Double (674.8096313476562): compared as the Floats they both are.
        #expect(stored["delay.time_ms"].map(Float.init) == Float(saved), "presets.json slot 2 holds the new Delay Time: \(String(describing: stored["delay.time_ms"])), dragged to \(saved)")
        #expect(sameValues(session.parameters, stored).isEmpty, "\(sameValues(session.parameters, stored))")
        #expect(FileManager.default.fileExists(atPath: session.presetsFile.path + ".bak"), "the previous file is kept")

        // Turn it away and change another pedal; the slot shows modified.
        try session.dragKnob("delay", "delay.time_ms", pixels: -90)
        try session.click("overdrive", "footswitch")
        #expect(waitUntil(seconds: 3) { (session.parameter("delay.time_ms") ?? saved) < saved - 100 })
        // Read once the window has handled the click (xdotool returns before it has).
        #expect(waitUntil(seconds: 3) { session.parameter("overdrive.enabled") != stored["overdrive.enabled"] })
        #expect(waitUntil(seconds: 3) { session.presetModified == true })
        let changedOverdrive = session.parameter("overdrive.enabled")
        _ = try? session.shot("preset-modified.png")

        // Recall slot 1, then slot 2: every value is back, the knob included.
        try session.click("presets", "slot1")
        #expect(waitUntil(seconds: 3) { session.selectedSlot == 0 })
        try session.click("presets", "slot2")
        #expect(waitUntil(seconds: 3) { session.selectedSlot == 1 && session.parameter("delay.time_ms") == saved },
                "Delay Time after recall: \(String(describing: session.parameter("delay.time_ms"))), saved \(saved)")
        #expect(sameValues(session.parameters, stored).isEmpty, "\(sameValues(session.parameters, stored))")
        #expect(session.parameter("overdrive.enabled") == stored["overdrive.enabled"] && stored["overdrive.enabled"] != changedOverdrive)
        #expect(session.presetModified == false)
        // The selected slot is lit: its number glows amber (once the window has redrawn).
        let slot = try session.point("presets", "slot2")
        var slotPixels = [(r: 0, g: 0, b: 0)]
        _ = waitUntil(seconds: 3) {
            guard let shot = try? session.shot("preset-panel.png"), let p = try? pixels(in: shot, at: [(slot.x - 44, slot.y)]) else { return false }
            slotPixels = p
            return p[0].r > p[0].b + 40
        }
        #expect(slotPixels[0].r > slotPixels[0].b + 40, "the selected slot is highlighted: \(slotPixels[0])")
    }

    @Test("rename asks for a name; an empty one is refused in words; the name lands in presets.json")
    func rename() throws {
        let session = try PedalboardSession()
        defer { session.stop() }
        try session.click("presets", "slot3")
        #expect(waitUntil(seconds: 3) { session.selectedSlot == 2 })
        try session.click("presets", "rename")
        try session.keys(to: "Rename Preset", "ctrl+a", "BackSpace", "Return")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(session.openDialogs == ["Rename Preset"], "an empty name keeps the dialog open")
        _ = try? session.shot("preset-rename-refused.png")
        try session.type(to: "Rename Preset", "Singing Lead")
        try session.keys(to: "Rename Preset", "Return")
        #expect(waitUntil(seconds: 5) { session.savedName(slot: 2) == "Singing Lead" })
        #expect(waitUntil(seconds: 3) { (session.presets["names"] as? [String])?[2] == "Singing Lead" })
        #expect(session.openDialogs.isEmpty)
    }

    @Test("a damaged presets.json is moved aside and the window says so; the factory presets load")
    func damagedFileIsReported() throws {
        let keys = FileManager.default.temporaryDirectory.appendingPathComponent("stompbox-ui-config-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: keys) }
        let folder = keys.appendingPathComponent("stompbox")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(#"{"format":"stompbox-presets","version":1,"selected":0,"slots":[{"na"#.utf8)
            .write(to: folder.appendingPathComponent("presets.json"))
        let session = try PedalboardSession(environment: ["XDG_CONFIG_HOME": keys.path])
        defer { session.stop() }
        #expect(waitUntil(seconds: 3) { session.notice.contains("moved to") }, "notice: \(session.notice)")
        let moved = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("presets.json.corrupt-") }
        #expect(moved.count == 1)
        if let name = moved.first { #expect(session.notice.contains(name)) }
        #expect((session.presets["names"] as? [String])?.first == "Clean Combo", "factory presets: \(session.presets)")
        _ = try? session.shot("preset-damaged-notice.png")
    }

    @Test("export writes the selected slot to a file; import reads one into the selected slot and plays it")
    func exportImport() throws {
        let session = try PedalboardSession()
        defer { session.stop() }
        let folder = session.home.appendingPathComponent("files")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try session.click("presets", "slot2")
        #expect(waitUntil(seconds: 3) { session.selectedSlot == 1 })
        let exported = folder.appendingPathComponent("crunch.json").path
        try session.click("presets", "export")
        try session.keys(to: "Export Preset 2", "ctrl+a")
        try session.type(to: "Export Preset 2", exported)
        try session.keys(to: "Export Preset 2", "Return")
        #expect(waitUntil(seconds: 5) { FileManager.default.fileExists(atPath: exported) })
        // The dialog is gone before the next click (a click on a closing dialog is lost).
        #expect(waitUntil(seconds: 5) { session.windows(named: "Export Preset 2").isEmpty })
        let file = try #require(FileManager.default.contents(atPath: exported))
        let json = try #require(try JSONSerialization.jsonObject(with: file) as? [String: Any])
        #expect(json["format"] as? String == "stompbox-preset")
        #expect(json["name"] as? String == session.savedName(slot: 1))

        // Import it into slot 3 and it plays.
        // A click made while focus comes back from the closed dialog can be lost; the selection is
        // the state to wait on, so a click that changed nothing is made once more (selecting a
        // slot twice is selecting it).
        try session.click("presets", "slot3")
        if !waitUntil(seconds: 3, { session.selectedSlot == 2 }) { try session.click("presets", "slot3") }
        #expect(waitUntil(seconds: 3) { session.selectedSlot == 2 })
        try session.click("presets", "import")
        try session.keys(to: "Import Preset into Slot 3", "ctrl+l")
        try session.type(to: "Import Preset into Slot 3", exported)
        Thread.sleep(forTimeInterval: 0.5)   // the location bar's completion settles
        try session.keys(to: "Import Preset into Slot 3", "Return")
        if !waitUntil(seconds: 3, { !session.windows(named: "Import Preset").isEmpty }),
           !session.windows(named: "Import Preset into Slot 3").isEmpty {
            try session.keys(to: "Import Preset into Slot 3", "Return")   // the first Return took a completion
        }
        try session.keys(to: "Import Preset", "Return")
        #expect(waitUntil(seconds: 5) { session.savedName(slot: 2) == session.savedName(slot: 1) })
        let slot2 = try #require(session.savedValues(slot: 1)), slot3 = try #require(session.savedValues(slot: 2))
        #expect(sameValues(slot3, slot2).isEmpty)
        #expect(waitUntil(seconds: 3) { sameValues(session.parameters, slot3).isEmpty })
        #expect(session.notice.contains("was imported into preset 3"), "notice: \(session.notice)")
    }
}

import Foundation
import StompboxTestTags
import Testing

/// The board in the window follows the chain: a preset with another board rebuilds the pedals
/// and the selector strip in its order. Checked through the state file's layout.
@Suite("The board in the window", .serialized, .tags(.window))
struct BoardWindowTests {
    @Test("recalling a preset whose board is delay, overdrive, reverb shows those three pedals in that order, and the classic board comes back")
    func aPresetsBoardIsShown() throws {
        let session = try PedalboardSession(startFromDefaults: true)
        defer { session.stop() }
        // Slot 2 gets a rearranged board behind the window's back (a recall reads the file again).
        let slot = { (name: String, chain: String) in
            #"{"format":"stompbox-preset","version":2,"name":"\#(name)","chain":\#(chain),"parameters":{"delay.enabled":true}}"#
        }
        let presets = #"{"format":"stompbox-presets","version":1,"selected":0,"slots":[\#(slot("All", #"["overdrive","eq","flanger","tremolo","delay","reverb","looper"]"#)),\#(slot("Three", #"["delay","overdrive","reverb"]"#)),\#(slot("None", "[]"))]}"#
        try Data(presets.utf8).write(to: session.presetsFile)

        func shownPedals() -> [String] {
            guard let layout = session.state()?["layout"] as? [String: Any] else { return [] }
            let pedals = layout.compactMap { key, value -> (String, Int)? in
                guard let entry = value as? [String: Any], let origin = entry["origin"] as? [Int] else { return nil }
                return (key, origin[0])
            }
            return pedals.sorted { $0.1 < $1.1 }.map(\.0)
        }
        func strip() -> [String] {
            let entries = ((session.state()?["layout"] as? [String: Any])?["strip"] as? [String: [Int]]) ?? [:]
            return entries.sorted { $0.value[0] < $1.value[0] }.map(\.key)
        }
        #expect(shownPedals() == ["overdrive", "eq", "flanger", "tremolo", "delay", "reverb", "looper"])

        try session.click("presets", "slot2")
        #expect(waitUntil(seconds: 5) { shownPedals() == ["delay", "overdrive", "reverb"] }, "shown: \(shownPedals())")
        // The strip's buttons are placed after the pedals (a report between the two shows
        // them unplaced, all at one x): read until they are.
        #expect(waitUntil(seconds: 5) { strip() == ["delay", "overdrive", "reverb"] }, "strip: \(strip())")
        #expect(session.parameter("delay.enabled") == 1)
        #expect(session.presetModified == false)
        let shot = try session.shot("board-three.png")
        try? FileManager.default.removeItem(atPath: "/tmp/stompbox-board-three.png")
        try? FileManager.default.copyItem(atPath: shot, toPath: "/tmp/stompbox-board-three.png")

        try session.click("presets", "slot1")
        #expect(waitUntil(seconds: 5) { shownPedals() == ["overdrive", "eq", "flanger", "tremolo", "delay", "reverb", "looper"] }, "shown: \(shownPedals())")
    }

    /// What "Add pedal…" offers, from the state file's layout.
    static func addable(_ session: PedalboardSession) -> [String] {
        (session.state()?["layout"] as? [String: Any])?["addable"] as? [String] ?? []
    }

    /// The pedals on screen, left to right, from the state file's layout.
    static func shownPedals(_ session: PedalboardSession) -> [String] {
        (session.state()?["layout"] as? [String: Any])?["board"] as? [String] ?? []
    }

    @Test("drag the Delay to the front with the mouse, take the Reverb off with its ×, put it back from Add pedal…; the chain follows and the preset is marked modified")
    func rearrangeByHand() throws {
        let session = try PedalboardSession(startFromDefaults: true)
        defer { session.stop() }
        let classic = ["overdrive", "eq", "flanger", "tremolo", "delay", "reverb", "looper"]
        #expect(Self.shownPedals(session) == classic)

        // Grab the Delay by its enclosure (under its name, where no control is) and drop it left
        // of the Overdrive.
        let delay = try session.settledPoint(["delay", "origin"])
        let overdrive = try session.settledPoint(["overdrive", "origin"])
        let start = (x: delay[0] + 92, y: delay[1] + 222)
        try session.xdotool("mousemove", "\(start.x)", "\(start.y)")
        Thread.sleep(forTimeInterval: 0.15)
        try session.xdotool("mousedown", "1")
        for step in 1...10 {
            let x = start.x + (overdrive[0] + 20 - start.x) * step / 10
            try session.xdotool("mousemove", "\(x)", "\(start.y)")
            Thread.sleep(forTimeInterval: 0.03)
        }
        try session.xdotool("mouseup", "1")
        let moved = ["delay", "overdrive", "eq", "flanger", "tremolo", "reverb", "looper"]
        #expect(waitUntil(seconds: 5) { Self.shownPedals(session) == moved }, "shown: \(Self.shownPedals(session))")
        #expect(waitUntil(seconds: 3) { session.presetModified == true })

        try session.click("reverb", "remove")
        let without = moved.filter { $0 != "reverb" }
        #expect(waitUntil(seconds: 5) { Self.shownPedals(session) == without }, "shown: \(Self.shownPedals(session))")

        // Add pedal… lists what is off the board in the registry's order (the Noise Gate, the Amp
        // and the Cabinet, which the classic factory board leaves off, then the Reverb); it goes on at the end.
        #expect(waitUntil(seconds: 5) { Self.addable(session) == ["gate", "amp", "cab", "reverb"] }, "Add pedal… offers \(Self.addable(session))")
        try session.openingPopup { try session.click("add_pedal") }
        for _ in 0..<4 { try session.xdotool("key", "Down") }
        try session.xdotool("key", "Return")
        #expect(waitUntil(seconds: 5) { Self.shownPedals(session) == without + ["reverb"] }, "shown: \(Self.shownPedals(session))")
        let shot = try session.shot("board-rearranged.png")
        try? FileManager.default.removeItem(atPath: "/tmp/stompbox-board-rearranged.png")
        try? FileManager.default.copyItem(atPath: shot, toPath: "/tmp/stompbox-board-rearranged.png")

        // Saved into the slot, the board is in presets.json.
        try session.click("presets", "save")
        try session.confirmSave()
        #expect(waitUntil(seconds: 5) {
            ((session.savedPresets()?["slots"] as? [[String: Any]])?.first?["chain"] as? [String]) == without + ["reverb"]
        }, "presets.json: \(String(describing: session.savedPresets()))")
    }
}

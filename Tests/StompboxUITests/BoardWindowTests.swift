import Foundation
import Testing

/// The board in the window follows the chain: a preset with another board rebuilds the pedals
/// and the selector strip in its order. Checked through the state file's layout.
@Suite("The board in the window", .serialized)
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
        #expect(strip() == ["delay", "overdrive", "reverb"])
        #expect(session.parameter("delay.enabled") == 1)
        #expect(session.presetModified == false)
        let shot = try session.shot("board-three.png")
        try? FileManager.default.removeItem(atPath: "/tmp/stompbox-board-three.png")
        try? FileManager.default.copyItem(atPath: shot, toPath: "/tmp/stompbox-board-three.png")

        try session.click("presets", "slot1")
        #expect(waitUntil(seconds: 5) { shownPedals() == ["overdrive", "eq", "flanger", "tremolo", "delay", "reverb", "looper"] }, "shown: \(shownPedals())")
    }
}

import Foundation
import StompboxDSP
import Testing
@testable import StompboxCore

@Suite("Foot controls: keys, MIDI messages and controls.json")
struct FootControlsTests {
    @Test("MIDI bytes decode to program changes, controllers and notes; what is not used decodes to nil")
    func decoding() {
        #expect(MIDIMessage(bytes: [0xC0, 2]) == .programChange(channel: 1, program: 2))
        #expect(MIDIMessage(bytes: [0xB3, 80, 127]) == .controlChange(channel: 4, controller: 80, value: 127))
        #expect(MIDIMessage(bytes: [0x9F, 60, 100]) == .noteOn(channel: 16, note: 60, velocity: 100))
        #expect(MIDIMessage(bytes: [0x90, 60, 0]) == .noteOff(channel: 1, note: 60))
        #expect(MIDIMessage(bytes: [0x80, 60, 64]) == .noteOff(channel: 1, note: 60))
        for junk: [UInt8] in [[], [0xF8], [0xF0, 1, 2, 0xF7], [0xE0, 0, 64], [0xB0, 80], [0xC0], [0x40, 1], [0xB0, 0x80, 1]] {
            #expect(MIDIMessage(bytes: junk) == nil, "\(junk)")
        }
    }

    @Test("The default keys: 1/2/3, Page Up/Down, Space, B, T, Enter; letters in either case, keypad Enter as Enter")
    func defaultKeys() {
        let c = FootControls.defaults
        #expect(c.action(forKey: "1") == .preset(1))
        #expect(c.action(forKey: "3") == .preset(3))
        #expect(c.action(forKey: "Page_Up") == .previousPreset)
        #expect(c.action(forKey: "Page_Down") == .nextPreset)
        #expect(c.action(forKey: "space") == .looperTap)
        #expect(c.action(forKey: "b") == .selectedPedal)
        #expect(c.action(forKey: "B") == .selectedPedal)
        #expect(c.action(forKey: "T") == .tuner)
        #expect(c.action(forKey: "Return") == .tapTempo)
        #expect(c.action(forKey: "KP_Enter") == .tapTempo)
        #expect(c.action(forKey: "x") == nil)
        #expect(c.action(forKey: "4") == nil)
    }

    @Test("The default MIDI map: Program Change 0/1/2 play presets 1/2/3, CC 80-86 switch the board's pedals in order")
    func defaultMIDI() {
        let c = FootControls.defaults
        #expect(c.actions(for: .programChange(channel: 1, program: 0)).map(\.action) == [.preset(1)])
        #expect(c.actions(for: .programChange(channel: 9, program: 2)).map(\.action) == [.preset(3)])
        #expect(c.actions(for: .programChange(channel: 1, program: 3)).isEmpty)
        #expect(c.actions(for: .controlChange(channel: 1, controller: 80, value: 127)).map(\.action) == [.boardPosition(1)])
        #expect(c.actions(for: .controlChange(channel: 1, controller: 86, value: 0)).map(\.input) == [.level(0)])
        #expect(c.actions(for: .controlChange(channel: 1, controller: 87, value: 127)).isEmpty)
        #expect(c.actions(for: .noteOff(channel: 1, note: 60)).isEmpty)
    }

    @Test("Actions and MIDI triggers read back what they print, and bad ones are refused by name")
    func textForms() throws {
        let actions: [FootAction] = [.preset(2), .nextPreset, .previousPreset, .looperTap, .looper(.recordNext), .looper(.undo), .selectedPedal,
                                     .pedal("delay"), .boardPosition(4), .tuner, .tapTempo, .metronome, .parameter("delay.time_ms")]
        for a in actions { #expect(try FootAction(parsing: a.description) == a) }
        for bad in ["preset:4", "preset:0", "board:0", "pedal:", "launch", "param:", "looper:jump"] {
            #expect(throws: FootControlsError.badAction(bad)) { try FootAction(parsing: bad) }
        }
        #expect(try MIDITrigger(parsing: "cc 80 ch 2") == MIDITrigger(.controlChange, 80, channel: 2))
        #expect(try MIDITrigger(parsing: "note 60").description == "note 60")
        for bad in ["cc 128", "pc", "cc 80 ch 17", "sysex 1", "cc 80 channel 2"] {
            #expect(throws: FootControlsError.badMIDI(bad)) { try MIDITrigger(parsing: bad) }
        }
        // A mapping on one channel ignores the others.
        var c = FootControls(keys: [], midi: [])
        c.learn(try MIDITrigger(parsing: "cc 7 ch 2"), for: .parameter("output.gain_db"))
        #expect(c.actions(for: .controlChange(channel: 1, controller: 7, value: 10)).isEmpty)
        #expect(c.actions(for: .controlChange(channel: 2, controller: 7, value: 10)).count == 1)
        // Key learn replaces what the key did and keeps the action's other keys.
        var k = FootControls.defaults
        k.learnKey("F7", for: .tuner)
        k.learnKey("b", for: .pedal("delay"))
        #expect(k.action(forKey: "F7") == .tuner && k.keys(for: .tuner).sorted() == ["F7", "t"])
        #expect(k.action(forKey: "b") == .pedal("delay") && k.keys(for: .selectedPedal).isEmpty)
    }

    @Test("controls.json: missing gives the defaults; learned mappings are written and read back; a bad entry is said and kept")
    func file() throws {
        let folder = TemporaryFolder()
        let dirs = UserDirectories(config: folder.url, data: folder.url)
        let first = FootControlsFile(directories: dirs)
        #expect(first.controls == .defaults && first.notices.isEmpty)
        #expect(folder.names().isEmpty, "nothing is written until something is learned")

        try first.learn(MIDITrigger(.controlChange, 11), for: .parameter("eq.band3_db"))
        try first.learn(MIDITrigger(.controlChange, 80), for: .pedal("reverb"))
        let again = FootControlsFile(directories: dirs)
        #expect(again.controls == first.controls)
        #expect(again.controls.actions(for: .controlChange(channel: 1, controller: 80, value: 127)).map(\.action) == [.pedal("reverb")])
        #expect(again.controls.actions(for: .controlChange(channel: 1, controller: 11, value: 64)).map(\.action) == [.parameter("eq.band3_db")])
        // Forget MIDI removes what is bound to the action, in the file too.
        try again.forget(.parameter("eq.band3_db"))
        #expect(FootControlsFile(directories: dirs).controls.actions(for: .controlChange(channel: 1, controller: 11, value: 64)).isEmpty)
        #expect(folder.names().contains("controls.json.bak"), "\(folder.names())")

        // A hand-edited file with one typo: that entry is said, kept, and the rest works.
        let text = """
            {"version": 1, "keys": [{"key": "F5", "action": "preset:2"}, {"key": "F6", "action": "preset:9"}],
             "midi": [{"message": "cc 64", "action": "looper:tap"}]}
            """
        folder.write("controls.json", Data(text.utf8))
        let edited = FootControlsFile(directories: dirs)
        #expect(edited.controls.action(forKey: "F5") == .preset(2))
        #expect(edited.controls.action(forKey: "1") == nil, "the file's keys replace the defaults")
        #expect(edited.notices.count == 1 && edited.notices[0].contains("'preset:9' is not an action"), "\(edited.notices)")
        try edited.learn(MIDITrigger(.note, 36), for: .tapTempo)
        let saved = try #require(String(data: folder.read("controls.json")!, encoding: .utf8))
        #expect(saved.contains("preset:9") && saved.contains("note 36") && saved.contains("F5"), "\(saved)")
    }

    @Test("A controls.json that is not JSON is moved aside, said by name, and the defaults are used")
    func damagedFile() {
        let folder = TemporaryFolder()
        folder.write("controls.json", Data("{\"keys\": [".utf8))
        let file = FootControlsFile(directories: UserDirectories(config: folder.url, data: folder.url))
        #expect(file.controls == .defaults)
        #expect(file.notices.count == 1 && file.notices[0].contains("controls.json") && file.notices[0].contains("moved to"), "\(file.notices)")
        #expect(folder.names().count == 1 && folder.names()[0].hasPrefix("controls.json.corrupt-"), "\(folder.names())")
    }

    @Test("A momentary footswitch (127 while held, 0 on release) toggles the pedal on each press; a latching one (127, then 0 on the next press) sets it")
    func momentaryAndLatchingControllers() {
        let controls = EngineControls()
        let p = controls.parameters
        var now = 100.0
        let board: [PedalKind] = [.overdrive, .delay]
        let d = FootControlDispatcher(controls: controls, board: { board }, clock: { now })
        p.set(.overdriveEnabled, 0)
        // Momentary: each press is 127 then 0 a fifth of a second later.
        func press(_ action: FootAction) {
            d.perform(action, .level(127))
            now += 0.2
            d.perform(action, .level(0))
            now += 1
        }
        press(.boardPosition(1))
        #expect(p.isOn(.overdriveEnabled), "the first press switches it on, the release leaves it on")
        press(.boardPosition(1))
        #expect(!p.isOn(.overdriveEnabled), "the second press switches it off")
        press(.boardPosition(1))
        #expect(p.isOn(.overdriveEnabled))
        // Switched off with the mouse meanwhile: the next press switches it on again.
        p.set(.overdriveEnabled, 0)
        press(.boardPosition(1))
        #expect(p.isOn(.overdriveEnabled))
        // The metronome's switch alike.
        p.set(.metronomeEnabled, 0)
        press(.metronome)
        press(.metronome)
        press(.metronome)
        #expect(p.isOn(.metronomeEnabled))

        // Latching: 127 on one press, 0 on the next, seconds apart: the level is the state.
        p.set(.delayEnabled, 0)
        d.perform(.boardPosition(2), .level(127))
        #expect(p.isOn(.delayEnabled))
        now += 3
        d.perform(.boardPosition(2), .level(0))
        #expect(!p.isOn(.delayEnabled))
        now += 3
        d.perform(.boardPosition(2), .level(127))
        #expect(p.isOn(.delayEnabled))
        now += 3
        d.perform(.boardPosition(2), .level(0))
        #expect(!p.isOn(.delayEnabled))
        // A momentary switch held down longer than a press: its release switches the pedal off
        // again (it played while held), and it counts as latching from then on.
        p.set(.overdriveEnabled, 0)
        d.perform(.boardPosition(1), .level(127))
        #expect(p.isOn(.overdriveEnabled))
        now += 2
        d.perform(.boardPosition(1), .level(0))
        #expect(!p.isOn(.overdriveEnabled))
        now += 1
        d.perform(.boardPosition(1), .level(127))
        #expect(p.isOn(.overdriveEnabled), "latching now: 127 is on")
        now += 0.1
        d.perform(.boardPosition(1), .level(127))
        #expect(p.isOn(.overdriveEnabled), "the same level again changes nothing")
    }

    @Test("The dispatcher switches pedals (a press toggles, a controller sets), steps knobs, taps the Looper and the tempo")
    func dispatcher() {
        let controls = EngineControls()
        let p = controls.parameters
        var now = 10.0
        let board: [PedalKind] = [.overdrive, .delay, .looper]
        let d = FootControlDispatcher(controls: controls, board: { board }, clock: { now })
        d.selectedPedal = { .delay }
        p.set(.overdriveEnabled, 0)
        d.perform(.boardPosition(1))
        #expect(p.isOn(.overdriveEnabled))
        d.perform(.boardPosition(1), .level(0))
        #expect(!p.isOn(.overdriveEnabled))
        d.perform(.boardPosition(1), .level(127))
        #expect(p.isOn(.overdriveEnabled))
        d.perform(.boardPosition(9))  // past the board's end: nothing
        let delayWas = p.isOn(.delayEnabled)
        d.perform(.selectedPedal)
        #expect(p.isOn(.delayEnabled) != delayWas)

        d.perform(.parameter("delay.time_ms"), .level(127))
        #expect(p.load(.delayTime) == Parameter.delayTime.spec.maximum)
        d.perform(.parameter("delay.time_ms"), .level(0))
        #expect(p.load(.delayTime) == Parameter.delayTime.spec.minimum)

        // Tap tempo: four presses 0.5 s apart.
        for _ in 0..<4 { d.perform(.tapTempo); now += 0.5 }
        #expect(abs(p.load(.tempo) - 120) < 0.01)

        // A switch that sends 127 then 0 presses once; a preset comes back to the caller once.
        #expect(d.perform(.preset(2), .level(127)) == .preset(2))
        #expect(d.perform(.preset(2), .level(127)) == nil)
        #expect(d.perform(.preset(2), .level(0)) == nil)
        #expect(d.perform(.preset(2), .level(100)) == .preset(2))

        // The Looper: a tap switches it in and starts recording.
        p.set(.looperEnabled, 0)
        d.perform(.looperTap)
        #expect(p.isOn(.looperEnabled))

        // A locked pedal is not switched on.
        var refused: [PedalKind] = []
        d.isLocked = { $0 == .overdrive }
        d.onLocked = { refused.append($0) }
        p.set(.overdriveEnabled, 0)
        d.perform(.pedal("overdrive"))
        #expect(!p.isOn(.overdriveEnabled) && refused == [.overdrive])
    }

    @Test("looper:record_next switches the Looper in and records on the first empty track, which it selects; looper:undo does not switch it in")
    func looperGestures() {
        let controls = EngineControls()
        let looper = Looper(parameters: controls.parameters, control: controls.looper)
        looper.prepare(sampleRate: 48_000, maximumBlockSize: 64)
        let d = FootControlDispatcher(controls: controls, board: { PedalKind.builtIn })
        var block = [Float](repeating: 0.1, count: 64)
        func play() { block.withUnsafeMutableBufferPointer { looper.process($0) } }
        d.perform(.looper(.undo))
        #expect(!controls.parameters.isOn(.looperEnabled))
        controls.parameters.set(.looperTrack, 3)
        d.perform(.looper(.recordNext))
        #expect(controls.parameters.isOn(.looperEnabled))
        play()
        #expect(controls.looper.track(0).state == .recording && controls.parameters.load(.looperTrack) == 0)
    }
}

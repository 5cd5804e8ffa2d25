import Foundation
import StompboxTestSupport
import StompboxTestTags
import Testing

/// Keyboard footswitches and the tempo controls in the window, as a player uses them: a USB
/// pedal that types keys, wherever the focus is but in a text field.
@Suite("Footswitch keys and tempo in the window", .serialized, .tags(.window))
struct FootControlWindowTests {
    @Test("Default keys: 1/2/3 and Page Up/Down play presets, B switches the touched pedal, Space taps the Looper, Enter taps the tempo; typing in the tempo field is typing; Learn key… binds another")
    func defaultKeys() throws {
        // The Looper is sold in the store: unlocked here with a key of a test key pair.
        let session = try PedalboardSession(startFromDefaults: true, environment: try unlockedLooperEnvironment())
        defer { session.stop() }
        func presets() -> Int? { (session.state()?["presets"] as? [String: Any])?["selected"] as? Int }
        func foot() -> [String: Any] { session.state()?["footControls"] as? [String: Any] ?? [:] }
        func tempo() -> [String: Any] { session.state()?["tempo"] as? [String: Any] ?? [:] }
        #expect(presets() == 0)

        // A knob focused (as after turning it) does not keep the keys from the footswitch.
        let time = try session.point("delay", "controls", "delay.time_ms")
        try session.xdotool("mousemove", "\(time.x)", "\(time.y)", "click", "1")
        #expect(waitUntil(seconds: 3) { foot()["selectedPedal"] as? String == "delay" }, "\(foot())")
        try session.xdotool("key", "2")
        #expect(waitUntil(seconds: 3) { presets() == 1 })
        try session.xdotool("key", "Page_Down")
        #expect(waitUntil(seconds: 3) { presets() == 2 })
        try session.xdotool("key", "Page_Down")
        #expect(waitUntil(seconds: 3) { presets() == 0 }, "Page Down goes round from 3 to 1")
        try session.xdotool("key", "Page_Up")
        #expect(waitUntil(seconds: 3) { presets() == 2 })
        try session.xdotool("key", "1")
        #expect(waitUntil(seconds: 3) { presets() == 0 })

        // B switches the pedal touched last: the delay, then the reverb picked on the strip.
        let delayWas = session.parameter("delay.enabled")
        try session.xdotool("key", "b")
        #expect(waitUntil(seconds: 3) { session.parameter("delay.enabled") != delayWas })
        let reverb = try session.point("strip", "reverb")
        try session.xdotool("mousemove", "\(reverb.x)", "\(reverb.y)", "click", "1")
        #expect(waitUntil(seconds: 3) { foot()["selectedPedal"] as? String == "reverb" })
        let reverbNow = session.parameter("reverb.enabled")
        try session.xdotool("key", "B")
        #expect(waitUntil(seconds: 3) { session.parameter("reverb.enabled") != reverbNow }, "Shift+B too")

        // Space taps the Looper (switching it in and recording), wherever the focus is.
        try session.xdotool("key", "space")
        #expect(waitUntil(seconds: 3) { session.looperState == "recording" }, "\(session.looperState ?? "-")")
        try session.xdotool("key", "space")
        #expect(waitUntil(seconds: 3) { session.looperState == "playing" })

        // Typed into the tempo field, "1" is a digit, not preset 1.
        try session.xdotool("key", "2")
        #expect(waitUntil(seconds: 3) { presets() == 1 })
        let bpm = try session.point("tempo", "bpm")
        try session.xdotool("mousemove", "\(bpm.x - 20)", "\(bpm.y)", "click", "--repeat", "3", "1")
        try session.xdotool("key", "ctrl+a")
        try session.xdotool("type", "--delay", "60", "97")
        try session.xdotool("key", "Tab")
        #expect(waitUntil(seconds: 3) { session.parameter("tempo.bpm") == 97 }, "\(tempo())")
        #expect(presets() == 1, "digits typed in the field stay there")

        // Enter four times half a second apart: 120 bpm. The clicks on the metronome button.
        try session.xdotool("key", "--delay", "500", "Return", "Return", "Return", "Return")
        #expect(waitUntil(seconds: 3) { abs((session.parameter("tempo.bpm") ?? 0) - 120) < 3 }, "\(tempo())")
        print("four Enter taps 0.5 s apart: \(session.parameter("tempo.bpm") ?? .nan) bpm; last action \(foot()["lastAction"] ?? "")")
        let metronome = try session.point("tempo", "metronome")
        try session.xdotool("mousemove", "\(metronome.x)", "\(metronome.y)", "click", "1")
        #expect(waitUntil(seconds: 3) { session.parameter("metronome.enabled") == 1 })
        _ = try? session.screenshot(to: Paths.artifacts.appendingPathComponent("foot-controls.png").path)

        // Any binding can be changed in the window too: right-click the Delay's footswitch,
        // Learn key…, press F7; F7 now switches the Delay, and controls.json keeps it.
        let footswitch = try session.point("delay", "footswitch")
        try session.openingPopup { try session.xdotool("mousemove", "\(footswitch.x)", "\(footswitch.y)", "click", "3") }
        try session.xdotool("key", "--delay", "100", "Home", "Down", "Return")
        #expect(waitUntil(seconds: 3) { foot()["learningKey"] as? String == "pedal:delay" }, "\(foot())")
        try session.xdotool("key", "F7")
        #expect(waitUntil(seconds: 3) { foot()["learningKey"] is NSNull })
        let delayNow = session.parameter("delay.enabled")
        try session.xdotool("key", "F7")
        #expect(waitUntil(seconds: 3) { session.parameter("delay.enabled") != delayNow })
        let saved = String(decoding: (try? Data(contentsOf: session.home.appendingPathComponent("config/stompbox/controls.json"))) ?? Data(), as: UTF8.self)
        #expect(saved.contains("\"F7\"") && saved.contains("pedal:delay") && saved.contains("\"Page_Down\""), "\(saved)")
    }

    @Test("controls.json binds other keys; a broken file is moved aside and said, and the defaults work")
    func editedBindings() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("stompbox-controls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let config = home.appendingPathComponent("stompbox")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let edited = """
            {"version": 1, "keys": [{"key": "F5", "action": "pedal:reverb"}, {"key": "m", "action": "metronome"},
                                    {"key": "F6", "action": "preset:3"}]}
            """
        try Data(edited.utf8).write(to: config.appendingPathComponent("controls.json"))
        do {
        let session = try PedalboardSession(startFromDefaults: true, environment: ["XDG_CONFIG_HOME": home.path])
        defer { session.stop() }
        func presets() -> Int? { (session.state()?["presets"] as? [String: Any])?["selected"] as? Int }
        let reverb = session.parameter("reverb.enabled")
        try session.xdotool("key", "F5")
        #expect(waitUntil(seconds: 3) { session.parameter("reverb.enabled") != reverb })
        try session.xdotool("key", "m")
        #expect(waitUntil(seconds: 3) { session.parameter("metronome.enabled") == 1 })
        try session.xdotool("key", "F6")
        #expect(waitUntil(seconds: 3) { presets() == 2 })
        try session.xdotool("key", "1")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(presets() == 2, "the file's keys replace the defaults")
        }

        try Data("{\"keys\": [".utf8).write(to: config.appendingPathComponent("controls.json"))
        let second = try PedalboardSession(startFromDefaults: true, environment: ["XDG_CONFIG_HOME": home.path])
        defer { second.stop() }
        let notice = second.state()?["notice"] as? String ?? ""
        #expect(notice.contains("controls.json") && notice.contains("moved to"), "\(notice)")
        let names = try FileManager.default.contentsOfDirectory(atPath: config.path)
        #expect(names.contains { $0.hasPrefix("controls.json.corrupt-") }, "\(names)")
        try second.xdotool("key", "3")
        #expect(waitUntil(seconds: 3) { second.selectedSlot == 2 })
        // Space on a locked Looper opens the store instead.
        try second.xdotool("key", "space")
        #expect(waitUntil(seconds: 5) { !second.openDialogs.isEmpty }, "\(second.openDialogs)")
        #expect(second.looperState == "stopped")
    }
}

/// MIDI in the window, from a test client on a private jackd sending to `stompbox:midi_in`.
@Suite("MIDI foot control in the window", .serialized, .tags(.window), .enabled(if: PrivateJackServer.unavailableReason == nil, Comment(rawValue: PrivateJackServer.unavailableReason ?? "")))
struct MIDIWindowTests {
    @Test("The default MIDI map plays presets and switches pedals; Learn MIDI… binds a controller to a knob and a note to a preset, kept in controls.json")
    func learn() throws {
        let server = PrivateJackServer(period: 128)
        try server.start()
        defer { server.stop() }
        let session = try PedalboardSession(startFromDefaults: true, environment: ["JACK_DEFAULT_SERVER": server.name, "STOMPBOX_OUTPUT": ""], startPulse: false)
        defer { session.stop() }
        func foot() -> [String: Any] { session.state()?["footControls"] as? [String: Any] ?? [:] }
        #expect(waitUntil(seconds: 10) { session.engineState == "running" }, "engine: \(String(describing: session.engineState))")
        let sender = try JackMIDISender()
        defer { sender.close() }
        #expect(waitUntil(seconds: 5) { (try? sender.connect(to: "stompbox:midi_in")) != nil })

        // The defaults: Program Change 2 plays preset 3, CC 80 switches the board's first pedal.
        try sender.send([0xC0, 2])
        #expect(waitUntil(seconds: 3) { session.selectedSlot == 2 }, "\(foot())")
        // A momentary footswitch's press (127, and 0 on release): on; the next press: off.
        try sender.send([0xB0, 80, 127])
        try sender.send([0xB0, 80, 0])
        #expect(waitUntil(seconds: 3) { session.parameter("overdrive.enabled") == 1 })
        // The release has been read (the window names the last message it read).
        _ = waitUntil(seconds: 3) { foot()["lastMIDI"] as? String == "cc 80 ch 1 = 0" }
        #expect(session.parameter("overdrive.enabled") == 1, "the release left it on")
        try sender.send([0xB0, 80, 127])
        try sender.send([0xB0, 80, 0])
        #expect(waitUntil(seconds: 3) { session.parameter("overdrive.enabled") == 0 })

        // Right-click the Delay's Time knob, Learn MIDI…, turn a controller: it is bound.
        let time = try session.point("delay", "controls", "delay.time_ms")
        try session.openingPopup { try session.xdotool("mousemove", "\(time.x)", "\(time.y)", "click", "3") }
        try session.xdotool("key", "--delay", "100", "Home", "Return")
        #expect(waitUntil(seconds: 3) { foot()["learning"] as? String == "param:delay.time_ms" }, "\(foot())")
        #expect(session.notice.contains("Learn MIDI for Delay Time"), "\(session.notice)")
        try sender.send([0xB2, 21, 127])
        #expect(waitUntil(seconds: 3) { foot()["learning"] is NSNull }, "\(foot())")
        #expect(session.notice.contains("cc 21 ch 3 → Delay Time"), "\(session.notice)")
        try sender.send([0xB2, 21, 0])
        #expect(waitUntil(seconds: 3) { session.parameter("delay.time_ms") == 20 }, "\(session.parameter("delay.time_ms") ?? -1)")
        let low = session.parameter("delay.time_ms") ?? -1
        try sender.send([0xB2, 21, 127])
        #expect(waitUntil(seconds: 3) { (session.parameter("delay.time_ms") ?? 0) > low + 100 })
        // The same controller on another channel is not the learned one.
        let now = session.parameter("delay.time_ms")
        try sender.send([0xB0, 21, 0])
        _ = waitUntil(seconds: 3) { foot()["lastMIDI"] as? String == "cc 21 ch 1 = 0" }
        #expect(session.parameter("delay.time_ms") == now)

        // Right-click preset 1, Learn MIDI…, a pad's note: that note now plays preset 1.
        let slot1 = try session.point("presets", "slot1")
        try session.openingPopup { try session.xdotool("mousemove", "\(slot1.x)", "\(slot1.y)", "click", "3") }
        try session.xdotool("key", "--delay", "100", "Home", "Return")
        #expect(waitUntil(seconds: 3) { foot()["learning"] as? String == "preset:1" }, "\(foot())")
        try sender.send([0x99, 36, 100])
        #expect(waitUntil(seconds: 3) { foot()["learning"] is NSNull })
        #expect(session.selectedSlot == 2, "learning does not play")
        try sender.send([0x99, 36, 100])
        #expect(waitUntil(seconds: 3) { session.selectedSlot == 0 }, "\(foot())")

        let saved = String(decoding: (try? Data(contentsOf: session.home.appendingPathComponent("config/stompbox/controls.json"))) ?? Data(), as: UTF8.self)
        #expect(saved.contains("\"cc 21 ch 3\"") && saved.contains("param:delay.time_ms") && saved.contains("\"note 36 ch 10\""), "\(saved)")
        print("MIDI learn in the window: \(foot()["lastMIDI"] ?? "-"); controls.json has \(saved.split(separator: "\n").count) lines")
    }
}

import Foundation
import StompboxTestSupport
import StompboxTestTags
import Testing

/// The window under Xvfb, driven with xdotool, checked through the engine state the window
/// writes (STOMPBOX_STATE_FILE) and through screen pixels — never by asking the widgets.
@Suite("Pedalboard window", .serialized, .tags(.window))
struct PedalboardWindowTests {
    init() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Paths.stompbox), "build first: swift build --build-tests")
    }

    @Test("the window opens and the screenshot shows every pedal in its own colour")
    func windowShowsPedals() throws {
        let session = try PedalboardSession(startFromDefaults: true)
        defer { session.stop() }
        let shot = Paths.artifacts.appendingPathComponent("pedalboard.png").path
        try session.screenshot(to: shot)

        let colours = Int(try shell(["identify", "-format", "%k", shot]).output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(colours > 2000, "screenshot \(shot) looks blank (\(colours) colours)")

        // A point on each enclosure left of the name, below the LED (and below the Delay's and
        // the Reverb's Trails switch).
        func body(_ pedal: String) throws -> (Int, Int) {
            let origin = try session.point(pedal, "origin")
            return (origin.x + 24, origin.y + 200)
        }
        let pedals = ["overdrive", "eq", "flanger", "tremolo", "delay", "reverb", "looper"]
        let samples = try pixels(in: shot, at: try pedals.map(body))
        let colour = Dictionary(uniqueKeysWithValues: zip(pedals, samples))
        let od = colour["overdrive"]!, eq = colour["eq"]!, fl = colour["flanger"]!, tr = colour["tremolo"]!
        let dl = colour["delay"]!, rv = colour["reverb"]!, lp = colour["looper"]!
        #expect(od.r > 200 && od.g > 140 && od.b < 90, "overdrive is yellow: \(od)")
        #expect(eq.r > 170 && eq.g > 170 && eq.b > 170, "EQ is silver: \(eq)")
        #expect(fl.r > 90 && fl.b > 130 && fl.g < 90, "flanger is purple: \(fl)")
        #expect(tr.g > tr.r + 60 && tr.g > tr.b, "tremolo is green: \(tr)")
        #expect(dl.b > 160 && dl.b > dl.r + 80, "delay is blue: \(dl)")
        #expect(rv.r < 70 && rv.g < 70 && rv.b < 80, "reverb is black: \(rv)")
        #expect(lp.r > 150 && lp.g < 80 && lp.b < 80, "looper is red: \(lp)")
    }

    @Test("dragging a knob turns its parameter in the engine; double-click resets it; the wheel steps")
    func knobDrag() throws {
        let session = try PedalboardSession(startFromDefaults: true)
        defer { session.stop() }
        // Straight drag up from the middle of Delay Time.
        let time = try session.point("delay", "controls", "delay.time_ms")
        #expect(session.parameter("delay.time_ms") == 350)
        try session.xdotool("mousemove", "\(time.x)", "\(time.y)", "mousedown", "1")
        for dy in stride(from: 10, through: 80, by: 10) {
            try session.xdotool("mousemove", "\(time.x)", "\(time.y - dy)")
        }
        try session.xdotool("mouseup", "1")
        #expect(waitUntil(seconds: 3) { (session.parameter("delay.time_ms") ?? 0) > 600 },
                "Delay Time after an 80 px drag up: \(String(describing: session.parameter("delay.time_ms")))")

        // Press and move clockwise around Overdrive Drive from 9 o'clock over the top to 3 o'clock.
        let drive = try session.point("overdrive", "controls", "overdrive.drive")
        let before = session.parameter("overdrive.drive") ?? -1
        try session.xdotool("mousemove", "\(drive.x - 22)", "\(drive.y)", "mousedown", "1")
        for step in 1...12 {
            let a = Double.pi * (-0.5 + Double(step) / 12)   // from -90° to +90° (clockwise from 12 o'clock)
            // One motion event at a time, as a hand makes them (GTK merges motions it has not read yet).
            try session.xdotool("mousemove", "\(drive.x + Int(22 * sin(a)))", "\(drive.y - Int(22 * cos(a)))", "sleep", "0.04")
        }
        try session.xdotool("mouseup", "1")
        // Half a turn of the pointer is 180° of the 270° sweep: 0.5 → about 1.0 (clamped).
        #expect(waitUntil(seconds: 3) { (session.parameter("overdrive.drive") ?? 0) > before + 0.3 },
                "Overdrive Drive after turning around it: \(String(describing: session.parameter("overdrive.drive")))")

        // Double-click puts it back to the table's default.
        try session.xdotool("mousemove", "\(drive.x)", "\(drive.y)", "click", "--repeat", "2", "--delay", "80", "1")
        #expect(waitUntil(seconds: 3) { session.parameter("overdrive.drive") == 0.5 })

        // Two wheel notches up on Reverb Mix: 2 % of travel each.
        let mix = try session.point("reverb", "controls", "reverb.mix")
        try session.xdotool("mousemove", "\(mix.x)", "\(mix.y)", "click", "4", "click", "4")
        #expect(waitUntil(seconds: 3) { abs((session.parameter("reverb.mix") ?? 0) - 0.34) < 0.001 })

        // The tremolo's three-way switch.
        #expect(session.parameter("tremolo.shape") == 1)
        let square = try session.point("tremolo", "controls", "tremolo.shape=square")
        try session.xdotool("mousemove", "\(square.x)", "\(square.y)", "click", "1")
        #expect(waitUntil(seconds: 3) { session.parameter("tremolo.shape") == 2 })
        let sine = try session.point("tremolo", "controls", "tremolo.shape=sine")
        try session.xdotool("mousemove", "\(sine.x)", "\(sine.y)", "click", "1")
        #expect(waitUntil(seconds: 3) { session.parameter("tremolo.shape") == 0 })

        // The Delay's TRAILS toggle, a click each way.
        #expect(session.parameter("delay.trails") == 1)
        let trails = try session.point("delay", "controls", "delay.trails")
        try session.xdotool("mousemove", "\(trails.x)", "\(trails.y)", "click", "1")
        #expect(waitUntil(seconds: 3) { session.parameter("delay.trails") == 0 })
        try session.xdotool("mousemove", "\(trails.x)", "\(trails.y)", "click", "1")
        #expect(waitUntil(seconds: 3) { session.parameter("delay.trails") == 1 })

        // The Delay's SYNC mini-menu drops down its note values: the third is ♪ 1/8.
        #expect(session.parameter("delay.sync") == 0)
        try session.openingPopup { try session.click("delay", "controls", "delay.sync") }
        for _ in 0..<3 { try session.xdotool("key", "Down") }
        try session.xdotool("key", "Return")
        #expect(waitUntil(seconds: 3) { session.parameter("delay.sync") == 2 }, "delay.sync \(String(describing: session.parameter("delay.sync")))")

        // An EQ fader dragged to the top is +12 dB.
        let band = try session.point("eq", "controls", "eq.band3_db")
        try session.xdotool("mousemove", "\(band.x)", "\(band.y)", "mousedown", "1", "mousemove", "\(band.x)", "\(band.y - 30)",
                            "mousemove", "\(band.x)", "\(band.y - 80)", "mouseup", "1")
        #expect(waitUntil(seconds: 3) { session.parameter("eq.band3_db") == 12 })
    }

    @Test("About in the status bar opens the About dialog with the version; Escape closes it")
    func aboutDialog() throws {
        let session = try PedalboardSession(startFromDefaults: true)
        defer { session.stop() }
        try session.click("about")
        #expect(waitUntil(seconds: 5) { !session.windows(named: "About Stompbox").isEmpty }, "no About dialog")
        let version = try shell([Paths.stompbox, "--version"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!version.isEmpty)
        _ = try session.shot("about.png")
        let id = try #require(session.windows(named: "About Stompbox").first)
        try session.xdotool("windowfocus", "--sync", id, "key", "Escape")
        #expect(waitUntil(seconds: 5) { session.windows(named: "About Stompbox").isEmpty }, "the About dialog stayed open")
    }

    @Test("clicking a footswitch toggles the effect and lights its LED red; the strip toggles too")
    func footswitchAndLED() throws {
        let session = try PedalboardSession(startFromDefaults: true)
        defer { session.stop() }
        let led = try session.point("overdrive", "led")
        let footswitch = try session.point("overdrive", "footswitch")
        #expect(session.parameter("overdrive.enabled") == 0)
        let dark = try session.pixel(led.x, led.y)
        #expect(dark.r < 150, "LED dark while off: \(dark)")

        try session.xdotool("mousemove", "\(footswitch.x)", "\(footswitch.y)", "click", "1")
        #expect(waitUntil(seconds: 3) { session.parameter("overdrive.enabled") == 1 })
        // The engine has it; the LED is drawn at the window's next frame.
        _ = waitUntil(seconds: 2) { (try? session.pixel(led.x, led.y)).map { $0.r > 220 } == true }
        let lit = try session.pixel(led.x, led.y)
        #expect(lit.r > 220 && lit.g < 120 && lit.b < 120, "LED red while on: \(lit)")

        try session.xdotool("click", "1")
        #expect(waitUntil(seconds: 3) { session.parameter("overdrive.enabled") == 0 })
        _ = waitUntil(seconds: 2) { (try? session.pixel(led.x, led.y)).map { $0.r < 150 } == true }
        let off = try session.pixel(led.x, led.y)
        #expect(off.r < 150, "LED dark again: \(off)")

        // The selector strip switches the delay on, and its pedal LED follows.
        let strip = try session.point("strip", "delay")
        try session.xdotool("mousemove", "\(strip.x)", "\(strip.y)", "click", "1")
        #expect(waitUntil(seconds: 3) { session.parameter("delay.enabled") == 1 })
        let delayLED = try session.point("delay", "led")
        _ = waitUntil(seconds: 2) { (try? session.pixel(delayLED.x, delayLED.y)).map { $0.r > 220 } == true }
        let delayLit = try session.pixel(delayLED.x, delayLED.y)
        #expect(delayLit.r > 220 && delayLit.g < 120, "delay LED red after the strip toggle: \(delayLit)")
    }

    @Test("a tap on the looper switches it in and records, a second plays; holding 0.8 s clears it")
    func looperLongPress() throws {
        // The Looper is sold in the store: unlocked here with a key of a test key pair.
        let session = try PedalboardSession(startFromDefaults: true, environment: try unlockedLooperEnvironment())
        defer { session.stop() }
        let looper = try session.point("looper", "footswitch")
        try session.xdotool("mousemove", "\(looper.x)", "\(looper.y)", "click", "1")
        #expect(waitUntil(seconds: 3) { session.parameter("looper.enabled") == 1 })
        #expect(waitUntil(seconds: 5) { session.looperState == "recording" })
        Thread.sleep(forTimeInterval: 1.0)
        try session.xdotool("click", "1")
        #expect(waitUntil(seconds: 5) { session.looperState == "playing" && (session.looperLength ?? 0) > 24_000 })
        // Long press: hold the footswitch for 1.2 s.
        try session.xdotool("mousedown", "1", "sleep", "1.2", "mouseup", "1")
        #expect(waitUntil(seconds: 5) { session.looperState == "stopped" && session.looperLength == 0 })
    }

    @Test("the window answers clicks while audio runs, and its state keeps updating")
    func responsiveWhileAudioRuns() throws {
        let session = try PedalboardSession(startFromDefaults: true)
        defer { session.stop() }
        #expect(waitUntil(seconds: 10) { session.engineState == "running" }, "engine state: \(String(describing: session.engineState))")
        let strip = try session.point("strip", "reverb")
        try session.xdotool("mousemove", "\(strip.x)", "\(strip.y)")
        for round in 1...8 {
            try session.xdotool("click", "1")
            let expected: Double = round % 2 == 1 ? 1 : 0
            #expect(waitUntil(seconds: 2) { session.parameter("reverb.enabled") == expected }, "round \(round)")
        }
        let seconds = session.state()?["ui_seconds"] as? Int ?? -1
        #expect(waitUntil(seconds: 3) { (session.state()?["ui_seconds"] as? Int ?? -1) > seconds }, "ui_seconds stopped at \(seconds)")
        #expect(session.engineState == "running")
    }

    @Test("AT-SPI reads every control's name and value, and follows a keyboard change",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-run-session")
                   && FileManager.default.fileExists(atPath: "/usr/libexec/at-spi-bus-launcher"),
                   "needs dbus-run-session and at-spi-bus-launcher (dbus, at-spi2-core)"))
    func accessibility() throws {
        let session = try PedalboardSession(startFromDefaults: true, accessibility: true)
        defer { session.stop() }
        let controls = try session.accessibleControls()
        func find(_ name: String) -> (role: String, name: String, value: String, range: String)? { controls.first { $0.name == name } }
        #expect(find("Delay Time")?.role == "dial")
        // AtkValue: what Orca says ("Delay Time, 350 milliseconds"), the range, the arrow's step.
        #expect(find("Delay Time")?.value == "350 milliseconds")
        let range = (find("Delay Time")?.range ?? "").split(separator: " ").compactMap { Double($0) }
        #expect(range.count == 4 && range[0] == 20 && range[1] == 2000 && range[2] > 5 && range[2] < 50 && range[3] == 350,
                "Delay Time's AtkValue: \(String(describing: find("Delay Time")))")
        #expect(find("Overdrive Level")?.value.hasSuffix("decibels") == true, "\(String(describing: find("Overdrive Level")))")
        #expect(find("Overdrive On")?.role == "toggle button")
        #expect(find("EQ 630 Hz")?.role == "slider")
        #expect(find("EQ 630 Hz")?.value == "0")
        #expect(find("Tremolo Shape triangle")?.role == "radio button")
        #expect(find("Looper Footswitch")?.role == "push button")
        #expect(find("Looper Undo") != nil && find("Input Level") != nil && find("Output Level") != nil)
        // Every knob of the table is there by its full name.
        for knob in ["Overdrive Drive", "Overdrive Tone", "Overdrive Level", "Flanger Rate", "Flanger Depth", "Flanger Delay",
                     "Flanger Feedback", "Flanger Mix", "Tremolo Rate", "Tremolo Depth", "Delay Feedback", "Delay Mix",
                     "Reverb Size", "Reverb Damping", "Reverb Mix", "Looper Level"] {
            #expect(find(knob)?.role == "dial", "\(knob)")
        }

        // Focus Delay Time by a click, then three Up arrows: the engine and AT-SPI both follow.
        let time = try session.point("delay", "controls", "delay.time_ms")
        try session.xdotool("mousemove", "\(time.x)", "\(time.y)", "click", "1", "key", "Up", "key", "Up", "key", "Up")
        #expect(waitUntil(seconds: 3) { (session.parameter("delay.time_ms") ?? 0) > 350 })
        var seen = ""
        var engine = ""
        let agrees = waitUntil(seconds: 8) {
            engine = "\(Int((session.parameter("delay.time_ms") ?? 0).rounded())) ms"
            seen = (try? session.accessibleControls().first { $0.name == "Delay Time" }?.value) ?? "nothing"
            return seen == engine.replacingOccurrences(of: " ms", with: " milliseconds") && engine != "350 ms"
        }
        #expect(agrees, "AT-SPI reads \(seen) for Delay Time, the engine holds \(engine)")

        // A screen reader sets a value: the engine takes it, the spoken text follows.
        #expect(try session.setAccessibleValue("Delay Time", 420))
        #expect(waitUntil(seconds: 3) { session.parameter("delay.time_ms").map { abs($0 - 420) < 0.5 } == true },
                "Delay Time after AtkValue set 420: \(String(describing: session.parameter("delay.time_ms")))")
        #expect(waitUntil(seconds: 8) { (try? session.accessibleControls().first { $0.name == "Delay Time" }?.value) == "420 milliseconds" })
    }

    @Test("without a PulseAudio server (and no JACK) the window opens, says so, and recovers when the server appears")
    func noServerThenRecovery() throws {
        // The server's folder and address now; the server itself later.
        let pulse = try PrivatePulseServer()
        let session = try PedalboardSession(startFromDefaults: true, environment: ["PULSE_SERVER": pulse.address], startPulse: false)
        defer { session.stop() }
        // The window is up and usable.
        let strip = try session.point("strip", "tremolo")
        try session.xdotool("mousemove", "\(strip.x)", "\(strip.y)", "click", "1")
        #expect(waitUntil(seconds: 3) { session.parameter("tremolo.enabled") == 1 })
        #expect(waitUntil(seconds: 5) { session.engineState == "no-server" }, "engine: \(String(describing: session.engineState))")
        #expect(session.statusText?.contains("No JACK or PulseAudio server") == true, "status bar: \(String(describing: session.statusText))")
        do { try pulse.start() } catch { Issue.record("cannot start PulseAudio: \(error)"); return }
        defer { pulse.stop() }
        #expect(waitUntil(seconds: 15) { session.engineState == "running" }, "engine after the server appeared: \(String(describing: session.engineState))")
        #expect(waitUntil(seconds: 3) { session.statusText?.hasPrefix("Running") == true }, "status bar: \(String(describing: session.statusText))")
    }

    @Test("closing the window (Ctrl+Q) exits cleanly and releases every signal closure")
    func closeReleasesEverything() throws {
        let session = try PedalboardSession(startFromDefaults: true)
        defer { session.stop() }
        // Touch a few controls first so gestures and timers have run.
        let drive = try session.point("overdrive", "controls", "overdrive.drive")
        try session.xdotool("mousemove", "\(drive.x)", "\(drive.y)", "click", "4")
        try session.xdotool("key", "ctrl+q")
        #expect(waitUntil(seconds: 10) { !session.process.isRunning })
        #expect(session.process.wait() == 0)
        let final = session.state()
        #expect(final?["closed"] as? Bool == true)
        #expect(final?["signal_closures_alive"] as? Int == 0, "closures alive after close: \(String(describing: final?["signal_closures_alive"]))")
    }
}

/// The window against a private `jackd -d dummy`, with the default backend (auto): it finds the
/// JACK server and plays through it.
@Suite("The window on JACK", .serialized, .tags(.window), .enabled(if: PrivateJackServer.unavailableReason == nil, Comment(rawValue: PrivateJackServer.unavailableReason ?? "")))
struct JackWindowTests {
    @Test("plays through JACK, says so in the status bar, and the pedals work as on PulseAudio")
    func playsThroughJack() throws {
        let server = PrivateJackServer(period: 128)
        try server.start()
        defer { server.stop() }
        let session = try PedalboardSession(environment: ["JACK_DEFAULT_SERVER": server.name, "STOMPBOX_OUTPUT": ""], startPulse: false, arguments: [])
        defer { session.stop() }
        #expect(waitUntil(seconds: 10) { session.engineState == "running" }, "engine: \(String(describing: session.engineState))")
        #expect(waitUntil(seconds: 5) {
            let text = session.statusText ?? ""
            return text.contains("JACK · 128 frames") && text.contains("xrun") && text.contains("DSP")
        }, "status bar: \(String(describing: session.statusText))")
        let before = try #require(session.parameter("overdrive.enabled"))
        try session.click("overdrive", "footswitch")
        #expect(waitUntil(seconds: 3) { session.parameter("overdrive.enabled") != before }, "the Overdrive's footswitch did nothing on JACK")
        let shot = try session.shot("jack-window.png")
        print("window on JACK: \(session.statusText ?? "-") (\(shot))")

        // The Audio… dialog, driven as a user would: it lists JACK's ports (hardware first,
        // Stompbox's own left out), the latency rows are greyed out (the server's) while the block
        // size stays (PipeWire's quantum request); choosing system:capture_2 and Apply rewires
        // stompbox:in to it.
        func audio() -> [String: Any] { ((session.state()?["layout"] as? [String: Any])?["audio"] as? [String: Any]) ?? [:] }
        try session.click("audio", "button")
        #expect(waitUntil(seconds: 5) { (audio()["inputs"] as? [String])?.contains("source:system:capture_2") == true }, "the dialog: \(audio())")
        let inputs = audio()["inputs"] as? [String] ?? []
        _ = try session.shot("jack-audio-dialog.png")
        #expect(Array(inputs.prefix(4)) == ["demo", "default", "source:system:capture_1", "source:system:capture_2"], "inputs listed: \(inputs)")
        #expect((audio()["outputs"] as? [String] ?? []).prefix(3) == ["default", "sink:system:playback_1", "sink:system:playback_2"], "outputs: \(audio())")
        #expect(!(inputs + (audio()["outputs"] as? [String] ?? [])).contains { $0.contains("stompbox:") }, "Stompbox's own ports listed: \(audio())")
        let sensitive = audio()["sensitive"] as? [String: Bool] ?? [:]
        #expect(audio()["lists_jack"] as? Bool == true && sensitive["latency"] == false && sensitive["block"] == true, "\(audio())")
        let from = inputs.firstIndex(of: audio()["input"] as? String ?? "") ?? 0
        let to = try #require(inputs.firstIndex(of: "source:system:capture_2"))
        try session.openingPopup { try session.click("audio", "input_combo") }
        try session.xdotool("key", "--delay", "80", (to > from ? "Down" : "Up"))
        for _ in 1..<max(1, abs(to - from)) { try session.xdotool("key", "--delay", "80", to > from ? "Down" : "Up") }
        try session.xdotool("key", "Return")
        #expect(waitUntil(seconds: 3) { audio()["input"] as? String == "source:system:capture_2" }, "input chosen: \(audio())")
        try session.click("audio", "apply")
        func stompboxInput() throws -> [String] {
            let text = try shell(["/usr/bin/jack_lsp", "-c"]).output
            var lines = text.split(separator: "\n").map(String.init)
            guard let i = lines.firstIndex(of: "stompbox:in") else { return [] }
            lines = Array(lines[(i + 1)...])
            return lines.prefix { $0.hasPrefix(" ") }.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        #expect(waitUntil(seconds: 5) { (try? stompboxInput()) == ["system:capture_2"] }, "stompbox:in after Apply: \((try? stompboxInput()) ?? [])")
        #expect(waitUntil(seconds: 5) { session.engineState == "running" }, "engine: \(String(describing: session.engineState))")

        // The server gone: the status bar says so, and the window stays.
        server.kill()
        #expect(waitUntil(seconds: 5) { session.statusText?.contains("No JACK or PulseAudio server") == true }, "status bar: \(String(describing: session.statusText))")
        try server.start()
        #expect(waitUntil(seconds: 5) { session.engineState == "running" }, "engine: \(String(describing: session.engineState))")
    }
}

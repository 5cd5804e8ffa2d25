import Foundation
import StompboxDSP
import StompboxTestSupport
import StompboxTestTags
import Testing
@testable import StompboxAudio

/// The JACK backend against a real `jackd -d dummy` (a private server per test, its name in
/// `JACK_DEFAULT_SERVER`): a probe plays into `stompbox:in` and records `stompbox:out_1` in the
/// same graph, so what comes back is sample-aligned with what went in.
/// Serialized: the server's name is process-wide.
@Suite(.serialized, .tags(.live), .enabled(if: PrivateJackServer.unavailableReason == nil, Comment(rawValue: PrivateJackServer.unavailableReason ?? "")))
struct LiveEngineJackTests {
    static func settings(connect: Bool = false) -> LiveSettings {
        var s = LiveSettings()
        s.backend = .jack
        s.connectPorts = connect
        return s
    }

    static func wait(for state: LiveState, _ engine: LiveEngine, timeout: Double) -> Double? {
        LiveEngineTests.wait(for: state, engine, timeout: timeout)
    }

    /// Every built-in pedal off (the chain's own path: gains at 0 dB, the limiter idle below it).
    static func allOff(_ chain: Chain) {
        for kind in PedalKind.builtIn { chain.parameters.set(kind.enabledParameter, 0) }
    }

    static func noise(seconds: Double) -> [Float] { jackTestNoise(seconds: seconds) }

    /// Plays `signal` through stompbox:in → out_1 and returns what came back (sample-aligned).
    static func throughStompbox(_ signal: [Float], record seconds: Double) throws -> (recording: [Float], xruns: Int, xrunTimes: [UInt64]) {
        let probe = try JackProbe(signal: signal, recordFrames: Int(seconds * 48_000))
        defer { probe.close() }
        try probe.connect(probe.playPort, "stompbox:in")
        try probe.connect("stompbox:out_1", probe.recordPort)
        let recording = try probe.run()
        return (recording, probe.xruns, probe.xrunTimes)
    }

    @Test func addedDelayIsTheChainsOwnNotAPeriodMore() throws {
        let server = PrivateJackServer(period: 128)
        try server.start()
        defer { server.stop() }
        let chain = Chain()
        Self.allOff(chain)
        let engine = LiveEngine(chain: chain, settings: Self.settings())
        engine.start()
        defer { engine.stop() }
        #expect(Self.wait(for: .running, engine, timeout: 5) != nil, "\(engine.status())")

        // Pedals off: what comes back is what went in, in the same cycle (0 samples).
        let signal = Self.noise(seconds: 0.5)
        // (The server runs synchronously, `PrivateJackServer`: an xrun is a late cycle, never a
        // lost one, so a take is sample-exact whatever the host does.)
        let off = try Self.throughStompbox(signal, record: 1).recording
        let plain = bestLag(signal, in: off, maximumLag: 2_000)
        #expect(plain.lag == 0 && plain.correlation > 0.9999, "pedals off: lag \(plain.lag) samples, correlation \(plain.correlation)")
        #expect(engine.status().backend == .jack)
        print("JACK, pedals off: added delay \(plain.lag) samples (correlation \(plain.correlation))")

        // The overdrive on: what comes back is exactly the offline render of the same signal
        // through the same chain, aligned at 0: its oversampling filters' delay (which both
        // contain) and not a sample more.
        chain.parameters.set(.overdriveEnabled, 1)
        chain.parameters.set(.overdriveDrive, 0.4)
        Thread.sleep(forTimeInterval: 0.5)   // the knobs' smoothing settles on silence
        #expect(chain.latencySamples > 0, "the overdrive reports \(chain.latencySamples) samples")
        let on = try Self.throughStompbox(signal, record: 1).recording
        let reference = Chain()
        Self.allOff(reference)
        reference.parameters.set(.overdriveEnabled, 1)
        reference.parameters.set(.overdriveDrive, 0.4)
        reference.prepare(sampleRate: 48_000, maximumBlockSize: 1024)
        var offline = signal + [Float](repeating: 0, count: on.count - signal.count)
        offline.withUnsafeMutableBufferPointer { reference.process($0) }
        let worst = zip(offline, on).map { abs($0 - $1) }.max() ?? 1
        let lag = bestLag(Array(offline.prefix(signal.count)), in: on, maximumLag: 2_000)
        #expect(worst < 1e-5 && lag.lag == 0, "overdrive on: largest difference from the offline render \(worst), best lag \(lag.lag)")
        print("JACK, overdrive on: equals the offline render (largest difference \(worst)), which the chain says is \(chain.latencySamples) samples late")
        // The status: JACK's port latencies (capture + playback) plus the chain's own.
        let status = engine.status()
        #expect(status.periodFrames == 128 && status.latencyMs != nil && status.statusLine.contains("backend=jack"), "\(status.statusLine)")
        // JACK's process thread has the server's priority (jackd -d dummy here runs without -R: none).
        #expect(status.realtime != nil && status.statusLine.contains(" rt="), "\(status.statusLine)")
    }

    /// Each xrun's time is checked against the host's stalls (`HostStallMonitor`): on this
    /// shared 2-core machine the host stops the whole VM for 2–40 ms several times a minute, and
    /// every client in the graph then misses its cycle, pass-through or not. The counts are
    /// compared as they are, and, when Stompbox has more, once more without the xruns a host
    /// stall explains (within 10 ms before to 50 ms after it). A pair where Stompbox still has
    /// more is retaken; it fails when every one of five pairs has more. When the stalls' windows
    /// cover more than half the pair, setting xruns aside proves nothing: such a pair counts only
    /// if Stompbox had no more xruns outright, and five of them are a known issue, not a pass.
    /// (Five pairs, as the sweep has takes: a busy host can leave three in a row with an xrun or
    /// two no stall explains.)
    @Test func dropoutsNoMoreThanAPassThroughClient() throws {
        let server = PrivateJackServer(period: 128)
        try server.start()
        defer { server.stop() }
        let seconds = 6.0
        let signal = Self.noise(seconds: seconds)
        var takes: [String] = []
        var passed = false
        var drowned = 0
        for _ in 0..<5 {
            let monitor = HostStallMonitor()
            let baseline = try JackPassthrough.xruns(playing: signal)
            let chain = Chain()
            for kind in PedalKind.builtIn where kind != .looper { chain.parameters.set(kind.enabledParameter, 1) }
            let engine = LiveEngine(chain: chain, settings: Self.settings())
            engine.start()
            #expect(Self.wait(for: .running, engine, timeout: 5) != nil)
            let ours = try Self.throughStompbox(signal, record: seconds)
            let counted = engine.status().underruns
            engine.stop()
            let stalls = monitor.stop()
            let share = monitor.explainedShare()
            let baselineLeft = baseline.times.filter { !monitor.explains($0) }.count
            let oursLeft = ours.xrunTimes.filter { !monitor.explains($0) }.count
            let take = "pass-through \(baseline.count) xruns (\(baselineLeft) with no host stall), Stompbox (every pedal on) \(ours.xruns) (\(oursLeft); its own count \(counted)); host stalls \(stalls.count), up to \(String(format: "%.1f", stalls.map(\.ms).max() ?? 0)) ms, covering \(Int((share * 100).rounded())) % of the pair"
            print("JACK dropouts over \(seconds) s: \(take)")
            takes.append(take)
            if ours.xruns <= baseline.count { passed = true; break }
            if share > 0.5 { drowned += 1; continue }
            if oursLeft <= baselineLeft { passed = true; break }
        }
        if !passed && drowned == takes.count {
            withKnownIssue("the host stalled the machine through most of every pair: no verdict") { Issue.record("\(takes)") }
            return
        }
        #expect(passed, "Stompbox had more xruns than the pass-through, host stalls aside, in every pair: \(takes)")
    }

    @Test func aNewBufferSizeKeepsTheLoopAndTheSettings() throws {
        let server = PrivateJackServer(period: 128)
        try server.start()
        defer { server.stop() }
        let chain = Chain()
        Self.allOff(chain)
        chain.parameters.set(.delayEnabled, 1)
        chain.parameters.set(.delayTime, 333)
        var settings = Self.settings()
        settings.input = .demo
        let engine = LiveEngine(chain: chain, settings: settings)
        engine.start()
        defer { engine.stop() }
        #expect(Self.wait(for: .running, engine, timeout: 5) != nil)
        // A one-second loop, playing. The taps wait on the loop, not the clock: a busy machine
        // runs the audio thread late.
        let looper = chain.controls.looper
        chain.parameters.set(.looperEnabled, 1)
        looper.send(.tap)
        _ = waitUntil(seconds: 3) { looper.length >= 48_000 }
        looper.send(.tap)
        _ = waitUntil(seconds: 1) { looper.state == .playing }
        let length = looper.length
        #expect(looper.state == .playing && length > 40_000, "looper \(looper.state) \(length)")

        for frames in [256, 64, 1024, 128] {
            try server.setPeriod(frames)
            _ = waitUntil(seconds: 3) { engine.status().periodFrames == frames }
            _ = engine.status()   // clears the peaks
            Thread.sleep(forTimeInterval: 0.4)
            let status = engine.status()
            #expect(status.state == .running && status.periodFrames == frames, "after jack_bufsize \(frames): \(status.statusLine)")
            #expect(status.outputPeakDB > -40, "after jack_bufsize \(frames) the output is silent: \(status.statusLine)")
            #expect(looper.state == .playing && looper.length == length, "after jack_bufsize \(frames): looper \(looper.state), \(looper.length) samples (was \(length))")
            #expect(chain.parameters.load(.delayTime) == 333)
        }
    }

    /// A server back at another rate: the chain is prepared again (off the process thread) and
    /// the loop recorded at 48 000 Hz plays on at 44 100 Hz, resampled: same pitch, same length
    /// in seconds.
    @Test func aNewSampleRateKeepsTheLoop() throws {
        let server = PrivateJackServer(period: 128)
        try server.start()
        defer { server.stop() }
        let chain = Chain()
        Self.allOff(chain)
        chain.parameters.set(.looperEnabled, 1)
        let engine = LiveEngine(chain: chain, settings: Self.settings())
        engine.start()
        defer { engine.stop() }
        #expect(Self.wait(for: .running, engine, timeout: 5) != nil, "\(engine.status())")

        // A loop of a 480 Hz tone, played into stompbox:in: tap, a second, tap. The closing tap
        // waits on the loop's length, not the clock, and the tone lasts twice as long as the taps
        // need: a busy machine can hand the first tap to the audio thread a second late or more,
        // and the loop must still hold nothing but the tone.
        let tone = (0..<192_000).map { 0.4 * Float(sin(2 * Double.pi * 480 * Double($0) / 48_000)) }
        let looper = chain.controls.looper
        let probe = try JackProbe(signal: tone, recordFrames: tone.count)
        try probe.connect(probe.playPort, "stompbox:in")
        let tapped = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.4) {
            looper.send(.tap)
            _ = waitUntil(seconds: 3) { looper.length >= 48_000 }
            looper.send(.tap)
            tapped.signal()
        }
        _ = try probe.run()
        probe.close()
        #expect(tapped.wait(timeout: .now() + 5) == .success, "the taps did not finish")
        _ = waitUntil(seconds: 1) { looper.state == .playing }
        let length = looper.length
        #expect(looper.state == .playing && length > 40_000, "looper \(looper.state) \(length)")

        server.kill()
        #expect(Self.wait(for: .noServer, engine, timeout: 3) != nil, "\(engine.status())")
        server.sampleRate = 44_100
        try server.start()
        #expect(Self.wait(for: .running, engine, timeout: 5) != nil, "\(engine.status())")
        // (The status takes the new rate on the session's next round, 20 ms after it runs.)
        #expect(waitUntil(seconds: 2) { engine.status().serverRate == 44_100 }, "\(engine.status().statusLine)")
        let expected = Int((Double(length) * 44_100 / 48_000).rounded())
        #expect(looper.state == .playing && looper.length == expected, "looper \(looper.state), \(looper.length) samples (expected \(expected))")

        // What plays now, with nothing coming in: the loop, still 480 Hz.
        let listen = try JackProbe(signal: [], recordFrames: 44_100)
        defer { listen.close() }
        try listen.connect("stompbox:out_1", listen.recordPort)
        let heard = try listen.run()
        var crossings: [Double] = []
        for i in 1..<heard.count where heard[i - 1] < 0 && heard[i] >= 0 {
            crossings.append(Double(i - 1) + Double(-heard[i - 1] / (heard[i] - heard[i - 1])))
        }
        // The median period: a block the loaded machine drops (a gap, a jump) moves a few
        // crossings, not the pitch the loop plays at.
        let periods = zip(crossings.dropFirst(), crossings).map { $0 - $1 }.sorted()
        let hz = periods.isEmpty ? 0 : 44_100 / periods[periods.count / 2]
        let peak = heard.map(abs).max() ?? 0
        #expect(abs(hz - 480) < 1 && peak > 0.3, "at 44 100 Hz the loop plays at \(hz) Hz, peak \(peak)")
        print("JACK restarted at 44 100 Hz: loop \(length) → \(looper.length) samples, plays at \(String(format: "%.2f", hz)) Hz, peak \(peak)")
    }

    @Test func aServerThatGoesAndComesBackIsFollowed() throws {
        let server = PrivateJackServer(period: 128)
        try server.start()
        defer { server.stop() }
        var settings = Self.settings()
        settings.input = .demo
        let engine = LiveEngine(chain: Chain(), settings: settings)
        engine.start()
        defer { engine.stop() }
        #expect(Self.wait(for: .running, engine, timeout: 5) != nil)

        server.kill()
        let gone = Self.wait(for: .noServer, engine, timeout: 5)
        #expect(gone != nil, "\(engine.status())")
        #expect(engine.status().message?.contains("JACK server") == true, "\(String(describing: engine.status().message))")
        Thread.sleep(forTimeInterval: 1)
        try server.start()   // returns once a client can join
        let back = Self.wait(for: .running, engine, timeout: 5)
        #expect(back != nil && back! <= 1, "running again \(back.map { String(format: "%.2f s", $0) } ?? "never") after the server's return")
        print("JACK server killed: reported in \(gone.map { String(format: "%.2f s", $0) } ?? "-"); playing again \(back.map { String(format: "%.2f s", $0) } ?? "never") after it returned")
        Thread.sleep(forTimeInterval: 0.3)
        _ = engine.status()
        Thread.sleep(forTimeInterval: 0.3)
        #expect(engine.status().outputPeakDB > -40, "silent after the server came back: \(engine.status().statusLine)")
    }

    @Test func connectsToThePhysicalPortsByDefault() throws {
        let server = PrivateJackServer(period: 128)
        try server.start()
        defer { server.stop() }
        let engine = LiveEngine(chain: Chain(), settings: Self.settings(connect: true))
        engine.start()
        defer { engine.stop() }
        #expect(Self.wait(for: .running, engine, timeout: 5) != nil, "\(engine.status())")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/jack_lsp")
        p.arguments = ["-c"]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        // jack_lsp -c: each port, then the ports it connects to, indented.
        func connections(_ port: String) -> [String] {
            var lines = text.split(separator: "\n").map(String.init)
            guard let i = lines.firstIndex(of: port) else { return [] }
            lines = Array(lines[(i + 1)...])
            return lines.prefix { $0.hasPrefix(" ") }.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        #expect(connections("stompbox:in") == ["system:capture_1"], "\(text)")
        #expect(connections("stompbox:out_1") == ["system:playback_1"], "\(text)")
        #expect(connections("stompbox:out_2") == ["system:playback_2"], "\(text)")

        // What the device picker and `stompbox devices --backend jack` offer: the server's
        // ports, hardware first, Stompbox's own left out.
        let ports = try LiveEngine.devices(backend: .jack)
        #expect(ports.sources.map(\.name).prefix(2) == ["system:capture_1", "system:capture_2"], "\(ports.sources.map(\.name))")
        #expect(ports.sinks.map(\.name).prefix(2) == ["system:playback_1", "system:playback_2"], "\(ports.sinks.map(\.name))")
        #expect(!(ports.sources + ports.sinks).contains { $0.name.hasPrefix("stompbox:") })

        // A named port that is not there: waiting, and said so.
        var settings = Self.settings(connect: true)
        settings.input = .source("system:capture_9")
        engine.apply(settings)
        #expect(Self.wait(for: .waitingForInput, engine, timeout: 3) != nil, "\(engine.status())")
        #expect(engine.status().message?.contains("system:capture_9") == true, "\(String(describing: engine.status().message))")
    }
}

/// `--backend auto`: JACK when a JACK server answers, PulseAudio otherwise.
@Suite(.serialized, .tags(.live), .enabled(if: PrivateJackServer.unavailableReason == nil && PrivatePulseServer.isAvailable,
                             Comment(rawValue: PrivateJackServer.unavailableReason ?? "pulseaudio is not installed")))
struct LiveEngineAutoBackendTests {
    @Test func autoPicksJackWhenAServerAnswersAndPulseAudioOtherwise() throws {
        let pulse = try PrivatePulseServer()
        try pulse.start()
        defer { pulse.stop() }
        var settings = LiveEngineTests.settings()
        settings.backend = .auto
        settings.connectPorts = false

        // No JACK server of that name: PulseAudio.
        setenv("JACK_DEFAULT_SERVER", "stompbox-test-nobody-\(getpid())", 1)
        let engine = LiveEngine(chain: Chain(), settings: settings)
        engine.start()
        #expect(LiveEngineTests.wait(for: .running, engine, timeout: 5) != nil, "\(engine.status())")
        #expect(engine.status().backend == .pulse, "\(engine.status())")
        engine.stop()

        // A JACK server: JACK, with the same settings.
        let jack = PrivateJackServer(period: 128)
        try jack.start()
        defer { jack.stop() }
        engine.start()
        defer { engine.stop() }
        #expect(LiveEngineTests.wait(for: .running, engine, timeout: 5) != nil, "\(engine.status())")
        #expect(engine.status().backend == .jack, "\(engine.status())")
    }
}

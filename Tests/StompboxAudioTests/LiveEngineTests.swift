import Foundation
import StompboxDSP
import StompboxTestSupport
import StompboxTestTags
import Testing
@testable import StompboxAudio

/// The live loop against a real, private PulseAudio server (see PrivatePulseServer).
/// Serialized: the server's address is process-wide (`PULSE_SERVER`).
@Suite(.serialized, .tags(.live), .enabled(if: PrivatePulseServer.isAvailable, "pulseaudio/pactl/pacat are not installed; install pulseaudio pulseaudio-utils to run the live tests"))
struct LiveEngineTests {
    /// One clock or two, told from the devices: the scope's input (the monitor of one remap of
    /// the scope sink) and its output (another remap of it) run on the scope's clock, so the loop
    /// never resamples between them, whatever a busy host does to the frame counts; a pipe
    /// source (an interface with a crystal of its own) and a null sink of its own do not.
    @Test func devicesOfOneSinkShareAClockAndAPipeSourceHasItsOwn() throws {
        let server = try PrivatePulseServer(kind: .pulseaudio)
        try server.start()
        defer { server.stop() }
        let pipe = try server.loadPipeSource(name: "usb_guitar")
        defer { try? server.unloadPipeSource(pipe) }
        let sinkModule = try server.loadNullSink(name: "drift_out", rate: 48_000)
        defer { try? server.unloadModule(sinkModule) }
        let connection = PulseConnection()
        #expect(connection.connect(name: "clock test", timeout: 5) { false })
        let input = try #require(connection.sourceInfo("guitar_in.monitor"))
        let output = try #require(connection.sinkInfo("amp_out"))
        #expect(connection.clockRoot(source: input) == "sink scope")
        #expect(connection.clockRoot(sink: output) == "sink scope")
        let usb = try #require(connection.sourceInfo(pipe.name))
        let own = try #require(connection.sinkInfo("drift_out"))
        #expect(connection.clockRoot(source: usb) == "source \(pipe.name)")
        #expect(connection.clockRoot(sink: own) == "sink drift_out")
        #expect(connection.clockRoot(source: try #require(connection.sourceInfo("drift_out.monitor"))) == "sink drift_out")
    }

    static func settings(block: Int = 128, latencyMs: Double = LiveSettings().latencyMs) -> LiveSettings {
        var s = LiveSettings()
        s.input = .source("guitar_in.monitor")
        s.output = "amp_out"
        s.blockSize = block
        s.latencyMs = latencyMs
        return s
    }

    /// Polls the engine until `state` (or the timeout); returns the seconds it took, nil on timeout.
    @discardableResult
    static func wait(for state: LiveState, _ engine: LiveEngine, timeout: Double) -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < timeout {
            if engine.status().state == state { return Date().timeIntervalSince(start) }
            usleep(5_000)
        }
        return nil
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    static func configure(_ p: ParameterStore) {
        p.set(.overdriveEnabled, 1)
        p.set(.overdriveDrive, 0.6)
        p.set(.eqEnabled, 1)
        p.set(.eqBand2, 4)
        p.set(.delayEnabled, 1)
        p.set(.delayTime, 120)
        p.set(.delayMix, 0.3)
    }

    @Test func outputEqualsTheOfflineRenderAndLatencyIsReported() throws {
        let server = try PrivatePulseServer()
        try server.start()
        let chain = Chain()
        Self.configure(chain.parameters)
        let engine = LiveEngine(chain: chain, settings: Self.settings())
        engine.start()
        defer { engine.stop() }
        #expect(Self.wait(for: .running, engine, timeout: 5) != nil)
        Thread.sleep(forTimeInterval: 2)   // past the server's start-up backlog

        // A take is clean when the engine counted no dropout and the output matches the offline
        // render (a dropout it did not count fails the comparison). A take that is not clean
        // while the host stood the whole machine still (`HostStallMonitor`: every thread, the
        // servers' included, woken 2 ms late or more) is taken again: the judged take is a clean
        // one or one the host left alone. When every take was disturbed and none was clean, the
        // runner reports a known issue with the figures: no verdict, not a pass.
        // (A fresh-clone run on such an afternoon: the output 13 samples later from 1.5 s into
        // the riff, no dropout counted, correlation 0.574; the stalls were not recorded then.)
        struct Take {
            var c: Double; var lag: Int; var span: Int; var status: LiveStatus; var windows: String
            var stalls: [(at: Double, ms: Double)]; var dropouts: Int
        }
        var takes: [Take] = []
        var judged: Take?
        for _ in 0..<3 {
            let before = engine.status()
            let monitor = HostStallMonitor()
            let recording = try server.startScopeRecording()
            Thread.sleep(forTimeInterval: 0.5)
            let riff = Signal.silence(12_000) + Signal.guitarRiff(seconds: 3) + Signal.silence(24_000)
            let player = try server.play(riff)
            player.wait()
            Thread.sleep(forTimeInterval: 0.5)
            let status = engine.status()
            let (left, right) = recording.finish()
            let stalls = monitor.stop()
            let dropouts = status.underruns - before.underruns + status.overruns - before.overruns
            if dropouts > 0 { print("take had a dropout (\(status.statusLine))") }
            #expect(left.count > 4 * 48_000)

            // Offline: the same settings, the same (recorded) input, processed from silence as live.
            let offlineChain = Chain()
            Self.configure(offlineChain.parameters)
            offlineChain.prepare(sampleRate: 48_000, maximumBlockSize: 128)
            let offline = Render.through(offlineChain, left)

            // Align on the first loud onset, then compare the whole riff.
            let onset = try #require(left.firstIndex { abs($0) > 0.05 })
            let search = try #require(ScopeAnalysis.delay(offline, right, start: max(0, onset - 480), window: 9_600, maxLag: 4_800))
            let span = min(3 * 48_000, right.count - onset - search.lag - 1)
            let c = ScopeAnalysis.correlation(offline, onset, right, onset + search.lag, span)
            var windows = ""
            if c < 0.99 {
                // Where it went wrong: the best lag and correlation of each 100 ms window.
                var report: [String] = []
                var i = onset
                while i + 14_400 < min(offline.count, right.count) && report.count < 40 {
                    if let w = ScopeAnalysis.delay(offline, right, start: i, window: 4_800, maxLag: 4_800) {
                        report.append("\(i - onset):\(w.lag)/\(String(format: "%.3f", w.correlation))")
                    }
                    i += 4_800
                }
                windows = "windows (offset:lag/corr): " + report.joined(separator: " ")
            }
            let take = Take(c: c, lag: search.lag, span: span, status: status, windows: windows, stalls: stalls, dropouts: dropouts)
            takes.append(take)
            let stallText = stalls.isEmpty ? "" : "; the host stalled the machine \(stalls.count)× (up to \(String(format: "%.1f", stalls.map(\.ms).max() ?? 0)) ms)"
            print("live vs offline: lag \(take.lag) samples (\(Double(take.lag) / 48) ms), correlation \(c) over \(span) samples; engine reports \(status.statusLine)\(stallText)")
            if !windows.isEmpty { print(windows) }
            if (c >= 0.99 && dropouts == 0) || stalls.isEmpty { judged = take; break }
        }
        guard let take = judged else {
            withKnownIssue("the host held this machine back during every take: no verdict") {
                Issue.record("\(takes.map { "correlation \($0.c), lag \($0.lag), \($0.dropouts) dropouts counted, \($0.stalls.count) stalls up to \($0.stalls.map(\.ms).max() ?? 0) ms; \($0.windows)" })")
            }
            return
        }
        let status = take.status
        let measuredMs = Double(take.lag) / 48
        #expect(take.dropouts == 0, "\(status.statusLine)")
        #expect(take.c >= 0.99, "\(take.windows)")
        #expect(measuredMs > 1 && measuredMs < 30)
        // The engine's own figure comes from the streams; it must be there and plausible.
        let reported = try #require(status.latencyMs)
        #expect(reported > 2.6 && reported < 60)
        #expect(status.state == .running)
        #expect(status.inputPeakDB > -40)
    }

    /// Plugs the device back in and measures, by the wall clock, how long after that the first
    /// output sample that matches the input reaches the amp: a recording of `scope.monitor` and
    /// a noise player into `guitar_in` are started right after the plug (neither exists while
    /// the device is away, so neither keeps the server's timing warm); the first 5 ms window
    /// where the right channel (the engine's output) equals the left (the input) delayed by
    /// the pass-through latency is the first sound; its arrival time in the recording file
    /// (polled every 5 ms) minus the moment the plug started is the recovery. The recording's
    /// own fragment (20 ms) and the poll are included: an upper bound.
    /// Also returns when the engine's state was first seen `running` again.
    static func recovery(_ server: PrivatePulseServer, _ engine: LiveEngine,
                         plug: () throws -> Void) throws -> (state: Double?, sound: Double?) {
        let plugged = Date()
        try plug()
        let recording = try server.startScopeRecording()
        let player = try server.play(Signal.noise(length: 72_000, amplitude: 0.25, seed: 5))
        var arrivals: [(seconds: Double, frames: Int)] = []
        var state: Double? = nil
        while Date().timeIntervalSince(plugged) < 3 {
            arrivals.append((Date().timeIntervalSince(plugged), recording.framesRecorded))
            if state == nil && engine.status().state == .running { state = Date().timeIntervalSince(plugged) }
            if !player.isRunning && Date().timeIntervalSince(plugged) > 1.8 { break }
            usleep(5_000)
        }
        player.stop()
        let (left, right) = recording.finish()
        // The pass-through delay, from the body of the noise: the first of several 50 ms windows
        // that matches cleanly (one may hold a resynchronisation after a late block).
        guard let onset = left.firstIndex(where: { abs($0) > 0.01 }),
              let through = [24_000, 36_000, 48_000, 60_000].lazy
                .compactMap({ ScopeAnalysis.delay(left, right, start: onset + $0, window: 2_400, maxLag: 4_800) })
                .first(where: { $0.correlation > 0.99 }) else {
            print("recovery: no clean pass-through window in \(left.count) recorded frames")
            return (state, nil)
        }
        var i = onset
        while i + through.lag + 240 < min(left.count, right.count) {
            if ScopeAnalysis.correlation(left, i, right, i + through.lag, 240) >= 0.99 {
                let needed = i + through.lag + 240
                return (state, arrivals.first { $0.frames >= needed }?.seconds)
            }
            i += 48
        }
        return (state, nil)
    }

    @Test func inputUnpluggedAgainAndAgain() throws {
        try unplugAgainAndAgain("input", waiting: .waitingForInput, measureIdleCPU: true,
                              unplug: { try $0.unplugInput() }, plug: { try $0.plugInput() })
    }

    @Test func outputUnpluggedAgainAndAgain() throws {
        try unplugAgainAndAgain("output", waiting: .waitingForOutput, measureIdleCPU: false,
                              unplug: { try $0.unplugOutput() }, plug: { try $0.plugOutput() })
    }

    /// Unplugs a device again and again (five times in `make test`, twenty in `make soak`):
    /// each time the engine reports `waiting`, and within 1 s of the device's return it is
    /// running and the input's sound reaches the amp again.
    private func unplugAgainAndAgain(_ device: String, waiting: LiveState, measureIdleCPU: Bool,
                                   unplug: (PrivatePulseServer) throws -> Void,
                                   plug: (PrivatePulseServer) throws -> Void,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        let server = try PrivatePulseServer()
        try server.start()
        let engine = LiveEngine(chain: Chain(), settings: Self.settings())
        engine.start()
        defer { engine.stop() }
        try #require(Self.wait(for: .running, engine, timeout: 5) != nil, sourceLocation: sourceLocation)
        var recoveries: [Double] = []
        var sounding: [Double] = []
        let rounds = LiveScale.pick(5, soak: 20)
        for round in 0..<rounds {
            // A round the host disturbed (it stood the machine still while the device came back)
            // is played again, up to twice; a round that fails with the host quiet is a failure.
            var disturbed: [String] = []
            for attempt in 0..<3 {
                try unplug(server)
                #expect(Self.wait(for: waiting, engine, timeout: 2) != nil, "round \(round)", sourceLocation: sourceLocation)
                if round == 0 && attempt == 0 && measureIdleCPU {
                    let cpu0 = Self.cpuSeconds()
                    Thread.sleep(forTimeInterval: 2)
                    let share = (Self.cpuSeconds() - cpu0) / 2
                    print("CPU while waiting for the \(device): \(share * 100) %")
                    #expect(share < 0.05, sourceLocation: sourceLocation)
                    #expect(engine.status().state == waiting, sourceLocation: sourceLocation)
                }
                // Let the server go idle as it would with the interface away for a while.
                Thread.sleep(forTimeInterval: 0.3)
                let monitor = HostStallMonitor()
                let (state, sound) = try Self.recovery(server, engine) { try plug(server) }
                let stalls = monitor.stop()
                let figures = "round \(round): running after \(String(describing: state)) s, sound after \(String(describing: sound)) s"
                    + (stalls.isEmpty ? "" : "; the host stalled the machine \(stalls.count)× (up to \(String(format: "%.1f", stalls.map(\.ms).max() ?? 0)) ms)")
                print(figures)
                let recovered = state != nil && state! < 1 && sound != nil && sound! < 1
                if !recovered && !stalls.isEmpty {
                    disturbed.append(figures)
                    if attempt < 2 { continue }
                    withKnownIssue("the host held this machine back during every try of \(device) round \(round): no verdict") {
                        Issue.record(Comment(rawValue: disturbed.joined(separator: "; ")))
                    }
                    break
                }
                #expect(state != nil && state! < 1, "round \(round): running after \(String(describing: state)) s",
                        sourceLocation: sourceLocation)
                #expect(sound != nil && sound! < 1, "round \(round): sound after \(String(describing: sound)) s",
                        sourceLocation: sourceLocation)
                if let state { recoveries.append(state) }
                if let sound { sounding.append(sound) }
                break
            }
        }
        print("\(device) hot-plug over \(rounds) rounds (\(LiveScale.name)): running again after \(recoveries.min() ?? -1)…\(recoveries.max() ?? -1) s; "
              + "sound matching the input at the amp after \(sounding.min() ?? -1)…\(sounding.max() ?? -1) s (\(sounding.count) rounds)")
    }

    @Test func serverRestartComesBackOnItsOwn() throws {
        let server = try PrivatePulseServer()
        try server.start()
        let engine = LiveEngine(chain: Chain(), settings: Self.settings())
        engine.start()
        defer { engine.stop() }
        try #require(Self.wait(for: .running, engine, timeout: 5) != nil)
        server.stop()
        #expect(Self.wait(for: .noServer, engine, timeout: 3) != nil)
        #expect(engine.status().message != nil)
        Thread.sleep(forTimeInterval: 1)
        #expect(engine.status().state == .noServer)
        try server.start()
        let back = Self.wait(for: .running, engine, timeout: 8)
        print("back to running \(String(describing: back)) s after the server restarted")
        #expect(back != nil)
    }

    @Test func noServerAtStart() throws {
        let server = try PrivatePulseServer()   // sets PULSE_SERVER, starts nothing
        _ = server
        let engine = LiveEngine(chain: Chain(), settings: Self.settings())
        engine.start()
        #expect(Self.wait(for: .noServer, engine, timeout: 3) != nil)
        let status = engine.status()
        #expect(status.message?.contains("cannot reach") == true)
        #expect(status.latencyMs == nil)
        #expect(throws: LiveEngineError.self) { try LiveEngine.devices() }
        engine.stop()
        #expect(engine.status().state == .stopped)
    }

    @Test func devicesAreListed() throws {
        let server = try PrivatePulseServer()
        try server.start()
        let list = try LiveEngine.devices()
        let input = try #require(list.sources.first { $0.name == "guitar_in.monitor" })
        #expect(input.channels == 1 && input.sampleRate == 48_000 && input.isMonitor)
        let scope = try #require(list.sinks.first { $0.name == "scope" })
        #expect(scope.channels == 2)
        #expect(list.sinks.contains { $0.name == "amp_out" })
    }

    @Test func demoRiffIsSmallMonoAndSounds() throws {
        let riff = DemoRiff.generate()
        #expect(riff.count == 4 * 48_000)
        #expect(Measure.peak(riff) > 0.1 && Measure.peak(riff) < 1)
        #expect(Measure.allFinite(riff))
        // The committed file is the generator's output, and the engine's loader reads it.
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../data/\(DemoRiffFile.fileName)").standardized.path
        let file = try AudioFile.read(path)
        let samples = file.channel(0)
        #expect(file.sampleRate == 48_000 && file.channels == 1 && samples.count == riff.count)
        let loaded = DemoRiff.load(sampleRate: 48_000, file: path)
        defer { loaded.deallocate() }
        #expect(Array(loaded) == samples)
        let worst = zip(samples, riff).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 1e-3)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? .max
        #expect(size < 500_000)
    }
}

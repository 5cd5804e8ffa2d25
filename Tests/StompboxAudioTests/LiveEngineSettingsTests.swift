import Foundation
import StompboxDSP
import StompboxTestSupport
import StompboxTestTags
import Testing
@testable import StompboxAudio

/// The live loop away from its default setting, on both servers, and with an input on its own
/// clock or stalled. Real private servers; every figure comes from a recording.
/// Serialized: the server's address is process-wide (`PULSE_SERVER`).
@Suite(.serialized, .tags(.live))
struct LiveEngineSettingsTests {
    /// (block, margin ms): the smallest block at the issue's 6 ms, the default, larger blocks,
    /// a large margin, and the largest block with a margin below it: the grid `make soak` plays
    /// on each server, 9 s a take.
    static let grid: [(Int, Double)] = [(64, 6), (LiveSettings().blockSize, LiveSettings().latencyMs), (256, 8), (128, 20), (512, 40), (1024, 8)]

    /// What `make test` plays, 5 s a take: the smallest block on both servers (where a loop
    /// that cannot keep up crackles first), the largest block with a margin below it on
    /// PulseAudio, and on PipeWire the large margin whose server buffering grew as a player joined.
    static func sweep(_ kind: AudioServerKind) -> [(Int, Double)] {
        LiveScale.pick(kind == .pipewire ? [(64, 6), (512, 40)] : [(64, 6), (1024, 8)], soak: grid)
    }

    /// A take of one setting is retaken (up to five takes) when it had a dropout: this 2-core
    /// machine is shared, and one scheduling hiccup is not the loop falling apart. Today's
    /// failure modes (continuous crackle away from 128/11) fail every take. Also when its latency
    /// is over the bar: on PipeWire at 512/40 about one start in thirty ended up ~10 ms over it
    /// (the server's buffering grew as the player joined); the loop now trims that after 4 s
    /// under a crossfade, which the scope can see as a seam.
    ///
    /// A take is judged only if the host let the machine run (`HostStallMonitor`: no wake-up 2 ms
    /// or more late during it) or it played cleanly anyway: on busy days this VM's host stops the
    /// whole machine for 5-40 ms several times a minute, and then PulseAudio's own threads stand
    /// still with the loop's. When no take of a setting could be judged, the runner reports a
    /// known issue with the takes' figures.
    ///
    /// Each setting on a server of its own, as each row of the issue's table was tried.
    static func play(_ kind: AudioServerKind) throws {
        print("\(kind) settings, \(LiveScale.name)")
        for (block, ms) in sweep(kind) {
            let server = try PrivatePulseServer(kind: kind)
            try server.start()
            defer { server.stop() }
            // End to end: no more than the margin in force plus one block plus a few ms.
            let blockMs = Double(block) / 48
            func excess(_ run: LiveProbe.ScopeRun) -> Double { max(0, run.measuredMs - (run.settledTargetMs + blockMs + 4)) }
            var takes: [LiveProbe.ScopeRun] = []
            func clean(_ run: LiveProbe.ScopeRun) -> Bool { run.scopeDropouts == 0 && run.underruns + run.overruns == 0 && excess(run) == 0 }
            // Up to five takes (three in `make test`) until one is clean: a busy host stalls
            // several takes in a row, and a quiet take between stalled ones can still carry a
            // dropout nobody saw.
            for _ in 0..<LiveScale.pick(3, soak: 5) {
                let run = try LiveProbe.scope(server, block: block, latencyMs: ms, seconds: LiveScale.pick(5, soak: 9))
                takes.append(run)
                print(run)
                if clean(run) { break }
            }
            // A take during which the host stood the whole machine still (every real-time thread,
            // the servers' included) judged the host; one that played cleanly anyway counts.
            let judged = takes.filter { $0.hostWasQuiet || clean($0) }
            guard let best = judged.min(by: { ($0.scopeDropouts, excess($0)) < ($1.scopeDropouts, excess($1)) }) else {
                withKnownIssue("the host held this machine back during every take of \(kind) \(block)/\(ms): no verdict") {
                    Issue.record("\(takes)")
                }
                continue
            }
            #expect(best.scopeDropouts == 0, "\(kind) \(block)/\(ms): \(takes.map(\.scopeDropouts)) dropouts in \(takes.count) takes")
            #expect(excess(best) == 0, "\(best)")
            // Honest: the engine's figure within 2 ms of the scope's (the issue's bar).
            #expect(abs(best.reportedMs - best.measuredMs) <= 2, "\(best)")
            // One clock (every device here runs on the server's): never resampled, bit-exact.
            #expect(judged.allSatisfy { $0.followedDriftPPM == nil }, "\(takes)")
        }
    }

    @Test(.enabled(if: AudioServerKind.pulseaudio.isAvailable, "\(AudioServerKind.pulseaudio.unavailableReason ?? "")"))
    func theSettingsPlayCleanlyOnPulseAudio() throws { try Self.play(.pulseaudio) }

    @Test(.enabled(if: AudioServerKind.pipewire.isAvailable, "\(AudioServerKind.pipewire.unavailableReason ?? "")"))
    func theSettingsPlayCleanlyOnPipeWire() throws { try Self.play(.pipewire) }

    /// How long a drift take is judged: a minute in `make soak`, 20 s in `make test` (without
    /// following, the latency would move 6 ms in those 20 s, six times the bar).
    static let driftSeconds = LiveScale.pick(20.0, soak: 60)

    /// A drift take that held: no dropout, the latency within 1 ms, at least two thirds of the
    /// take clear of the writer's stalls, and the drift the engine reports within 60 ppm of the
    /// one asked for.
    static func passes(_ run: LiveProbe.DriftRun, _ ppm: Double) -> Bool {
        run.dropouts == 0 && run.latencyRangeMs <= 1 && run.stallFreeSeconds >= driftSeconds * 2 / 3
            && run.reportedDriftPPM.map { abs($0 - ppm) < 60 } == true
    }

    /// An interface whose crystal runs 300 ppm fast or slow against the output's: `driftSeconds`
    /// without a dropout, the latency held within 1 ms, and the engine says which way the clock
    /// runs. The judged span starts 15 s after the first sound: telling two clocks from one
    /// takes the frame counts 2.5 s of settling and six to ten seconds of readings (until then
    /// the latency moves with the drift, 0.3 ms a second here).
    ///
    /// The interface is a paced writer into a pipe source, and the pipe source delivers only what
    /// the writer has handed over: when this shared VM's host holds the writer's thread back
    /// (seen: 5-50 ms late, several times a minute on busy afternoons, even at SCHED_FIFO), the
    /// input stalls as a hung USB device would, the output may run dry, and the loop rightly
    /// counts an underrun (each one seen matched a late hand-over to within 0.1 s), clears its
    /// drift meter and takes ten seconds to tell the drift again. Such a take says nothing about
    /// following a clock. So a take is judged when it passed, or when the rig was steady: no
    /// writer stall of 4 ms or more, and the output's clock within 5 ppm. Dropouts and the
    /// latency are read outside the windows around stalls (`LiveProbe.DriftRun.stallWindow`),
    /// which on a steady take is the whole span. At a 20 ms margin (the sweep covers the small
    /// ones on a steady input). Up to five takes (three in `make test`), as the sweep's settings; the best judged one
    /// counts (a busy host can leave one take of three to judge, with a late writer). When no take could
    /// be judged, the runner reports a known issue with the figures: no verdict, not a pass.
    /// The rig is checked too: the writer and the recorded output, each timed against the
    /// monotonic clock, differ by the drift asked for (a 48 kHz null sink would not: see
    /// `PrivatePulseServer.loadNullSink`). PulseAudio only: PipeWire 0.3.65's pipe source runs
    /// on the graph's own clock.
    @Test(.enabled(if: AudioServerKind.pulseaudio.isAvailable, "\(AudioServerKind.pulseaudio.unavailableReason ?? "")"),
          arguments: [300.0, -300.0])
    func aDriftingInputIsFollowed(ppm: Double) throws {
        let server = try PrivatePulseServer(kind: .pulseaudio)
        try server.start()
        defer { server.stop() }
        var takes: [LiveProbe.DriftRun] = []
        var busy: [LiveProbe.DriftRun] = []
        for _ in 0..<LiveScale.pick(3, soak: 5) {
            let run = try LiveProbe.drift(server, ppm: ppm, seconds: Self.driftSeconds, warmUp: 15, latencyMs: 20)
            print(run)
            let passed = Self.passes(run, ppm)
            guard passed || run.rigWasSteady else { busy.append(run); continue }
            takes.append(run)
            if passed { break }
        }
        // A take that passed ends the takes and is the one judged; else the best of the judged ones
        // (fewest dropouts, then the steadiest latency), which fails the bars below. (The fewest
        // dropouts and steadiest latency alone could pick a take that failed on the drift it
        // reported over a later one that passed.)
        let passedTake = takes.last.flatMap { Self.passes($0, ppm) ? $0 : nil }
        guard let best = passedTake ?? takes.min(by: { ($0.dropouts, $0.latencyRangeMs) < ($1.dropouts, $1.latencyRangeMs) }) else {
            withKnownIssue("this machine held the simulated interface back too often to judge the loop") {
                Issue.record("in every take the writer stalled \(Int(LiveProbe.DriftRun.writerStall * 1000)) ms or more, or the output's clock wandered by more than 5 ppm: \(busy)")
            }
            return
        }
        #expect(best.dropouts == 0, "\(best)")
        #expect(best.latencyRangeMs <= 1, "\(best)")
        // Ten clicks a second; most of them outside the stall windows.
        #expect(Double(best.expectedClicks) >= Self.driftSeconds * 35 / 6, "clicks outside the stall windows: \(best)")
        let writer = try #require(best.writerRate), output = try #require(best.outputRate)
        // The rig: the writer (the interface) ran at the drift asked for. The output's clock is
        // the null sink's, and when the host held the machine back during a take that passed
        // anyway it wandered by tens of ppm (seen: -20 ppm), so the loop faced the drift between
        // the two as recorded, and is judged on that one.
        let writerPPM = (writer / Double(PrivatePulseServer.rate) - 1) * 1e6
        #expect(abs(writerPPM - ppm) < 20, "the writer ran at \(writerPPM) ppm, not \(ppm): \(best)")
        let faced = ((writer / Double(PrivatePulseServer.rate)) / (output / Double(LiveProbe.outputRate)) - 1) * 1e6
        #expect(abs(faced - ppm) < 60, "the clocks differed by \(faced) ppm, not about \(ppm): \(best)")
        let followed = try #require(best.reportedDriftPPM, "the engine did not notice the drift: \(best)")
        #expect(abs(followed - faced) < 60, "the clocks differed by \(faced) ppm: \(best)")
    }

    /// The program is held still for 15 ms, six times (four in `make test`), 3 s apart, as a busy desktop can hold it:
    /// each time the output runs dry and input piles up. The engine counts the dropouts, and
    /// three seconds after the last stall its own latency figure is no more than 0.5 ms above
    /// the one before the first stall, the scope's no more than 2 ms above (at a fixed margin:
    /// `--no-auto-latency`), and the two within 2 ms of each other. Before, each stall could
    /// leave part of its gap as latency for good, less than the margin's bands show, and the
    /// parts added up: the engine reported 8.0 → 9.9 and 8.0 → 9.4 ms, the scope read 386 → 474
    /// and 386 → 497 samples (and 377 → 478, 386 → 505 by hand). Since, the scope reads −46 to
    /// +62 samples from where it began (the engine's figures and the scope's differ by up to a
    /// millisecond on this rig, whose input and output are two remaps of one null sink). A take
    /// during which the host also stalled the machine is taken again, up to three.
    static func stalls(_ kind: AudioServerKind) throws {
        let server = try PrivatePulseServer(kind: kind)
        try server.start()
        defer { server.stop() }
        struct Take: CustomStringConvertible {
            var before = 0, after = 0
            /// The engine's own figures (latency_ms), just before the first stall and at the end.
            var reportedBefore = 0.0, reportedAfter = 0.0
            var underruns = 0
            var grown: Int { after - before }
            var description: String {
                "lag \(before) samples before the stalls, \(after) after; the engine reported \(reportedBefore) ms, then \(reportedAfter) ms; \(underruns) underruns"
            }
        }
        let bar = 96   // 2 ms
        func passed(_ t: Take) -> Bool {
            t.grown <= bar && t.reportedAfter - t.reportedBefore <= 0.5 && abs(t.reportedAfter - Double(t.after) / 48) <= 2
        }
        var attempt = 0
        let result = try HostStallMonitor.quietTake({ () throws -> Take in
            attempt += 1
            let out = server.directory.appendingPathComponent("stalls-\(attempt).out").path
            let run = try Self.startRun(["--backend", "pulse", "--input", "guitar_in.monitor", "--output", "amp_out",
                                         "--no-auto-latency", "--chain", "overdrive", "--set", "overdrive.enabled=off"], server, statusTo: out)
            defer { run.stop(SIGKILL) }
            Thread.sleep(forTimeInterval: 2)
            let recording = try server.startScopeRecording()
            Thread.sleep(forTimeInterval: 0.5)
            let stallTimes = LiveScale.pick([3.0, 6.0, 9.0, 12.0], soak: [3.0, 6.0, 9.0, 12.0, 15.0, 18.0])
            let player = try server.play(Signal.noise(length: 48_000 * Int(stallTimes.last! + 5), amplitude: 0.3))
            let playedAt = Date()
            var take = Take()
            func status() -> Substring? {
                ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").last { $0.contains("underruns=") }
            }
            func field(_ name: String, _ line: Substring?) -> Substring? {
                line?.split(separator: " ").first { $0.hasPrefix(name + "=") }?.dropFirst(name.count + 1)
            }
            for t in stallTimes {
                Thread.sleep(forTimeInterval: max(0, t - Date().timeIntervalSince(playedAt)))
                if t == stallTimes[0] {
                    take.reportedBefore = try #require(field("latency_ms", status()).flatMap { Double($0) }, "no latency figure from run")
                }
                kill(run.pid, SIGSTOP)
                usleep(15_000)
                kill(run.pid, SIGCONT)
            }
            player.wait()
            let last = status()
            take.reportedAfter = try #require(field("latency_ms", last).flatMap { Double($0) }, "no latency figure from run")
            take.underruns = try #require(field("underruns", last).flatMap { Int($0) }, "no underrun count from run")
            Thread.sleep(forTimeInterval: 0.5)
            let (left, right) = recording.finish()
            run.stop(SIGTERM)
            let onset = try #require(left.firstIndex { abs($0) > 0.01 })
            func lag(at seconds: Double) throws -> Int {
                try #require(ScopeAnalysis.delay(left, right, start: onset + Int(seconds * 48_000), window: 2_400, maxLag: 2_400)).lag
            }
            take.before = try lag(at: stallTimes[0] - 0.5)
            take.after = try lag(at: stallTimes.last! + 3)
            print("\(kind) stalls: \(take)")
            return take
        }, clean: passed)
        guard let judged = result.take else {
            withKnownIssue("the host held this machine back during every take: no verdict") {
                Issue.record("\(kind): \(result.disturbed)")
            }
            return
        }
        #expect(judged.underruns >= 1, "the stalls made no dropout to count: \(judged)")
        // The engine's own figure (the frame counts) no more than 0.5 ms up, and honest: within
        // 2 ms of the scope's.
        #expect(judged.reportedAfter - judged.reportedBefore <= 0.5, "\(kind): \(judged); retaken: \(result.disturbed)")
        #expect(abs(judged.reportedAfter - Double(judged.after) / 48) <= 2, "\(kind): \(judged); retaken: \(result.disturbed)")
        #expect(judged.grown <= bar, "\(kind): \(judged); retaken: \(result.disturbed)")
    }

    @Test(.enabled(if: AudioServerKind.pulseaudio.isAvailable, "\(AudioServerKind.pulseaudio.unavailableReason ?? "")"))
    func afterAStallTheLatencyComesBackOnPulseAudio() throws { try Self.stalls(.pulseaudio) }

    @Test(.enabled(if: AudioServerKind.pipewire.isAvailable, "\(AudioServerKind.pipewire.unavailableReason ?? "")"))
    func afterAStallTheLatencyComesBackOnPipeWire() throws { try Self.stalls(.pipewire) }

    /// Every dropout the scope hears is one the engine counts, so automatic latency knows of it.
    /// At 64 frames / 4 ms (automatic latency off) the PulseAudio server itself is held still for
    /// a few ms every 4 s, as this VM's host holds the whole machine: its sinks then catch up at
    /// once and the loop's queue runs dry. The server reports it, and rewinds once the queue
    /// refills, but often not far enough: a few frames are skipped or silent while the margin
    /// still reads 1.5-2.7 ms. Such reports used to be taken for rewound and not counted: with
    /// these stalls, 6 of the 19 dropouts the scope heard in two takes were counted by nobody.
    /// A scope dropout counts as the engine's if its count rose up to 0.6 s after it (the
    /// verdict can wait for timing replies) or up to 1.6 s before it (the loop's own correction
    /// of the level after a dropout is a seam on the scope too); the stalls are 4 s apart.
    @Test(.enabled(if: AudioServerKind.pulseaudio.isAvailable, "\(AudioServerKind.pulseaudio.unavailableReason ?? "")"))
    func everyDropoutTheScopeHearsIsCountedOnPulseAudio() throws {
        let server = try PrivatePulseServer(kind: .pulseaudio)
        try server.start()
        defer { server.stop() }
        var takes: [LiveProbe.ScopeRun] = []
        for _ in 0..<3 {
            let run = try LiveProbe.scope(server, block: 64, latencyMs: 4, seconds: 21, autoLatency: false, serverStalls: (every: 4, ms: 2.5))
            takes.append(run)
            print(run, "; scope dropouts at", run.dropoutTimes.map { String(format: "%.2f", $0) }, "s, counted at",
                  run.countedTimes.map { String(format: "%.2f", $0) }, "s")
            if takes.reduce(0, { $0 + $1.scopeDropouts }) >= 4 { break }
        }
        func unmatched(_ run: LiveProbe.ScopeRun) -> [Double] {
            run.dropoutTimes.filter { t in !run.countedTimes.contains { $0 - t <= 0.6 && t - $0 <= 1.6 } }
        }
        let heard = takes.reduce(0) { $0 + $1.scopeDropouts }
        #expect(heard >= 1, "the server's stalls made no dropout the scope heard: \(takes)")
        for run in takes {
            #expect(unmatched(run).isEmpty, "heard but not counted at \(unmatched(run)) s: \(run); counted at \(run.countedTimes)")
        }
    }

    /// The interface stops delivering (a hung USB device: reads would block for ever):
    /// `stompbox run` says so, and SIGTERM still ends it within a second.
    @Test(.enabled(if: AudioServerKind.pulseaudio.isAvailable, "\(AudioServerKind.pulseaudio.unavailableReason ?? "")"))
    func aStalledInputNeverHangsRun() throws {
        let server = try PrivatePulseServer(kind: .pulseaudio)
        try server.start()
        defer { server.stop() }
        let source = try server.loadPipeSource(name: "usb_guitar")
        let out = server.directory.appendingPathComponent("run.out").path
        let run = try Self.startRun(["--input", source.name, "--output", "amp_out"], server, statusTo: out)
        defer { run.stop(SIGKILL) }
        let writer = try PacedWriter(fifo: source.fifoPath, rate: 48_000, looping: Signal.sine(frequency: 440, seconds: 0.1).map { $0 * 0.2 })
        Thread.sleep(forTimeInterval: 2)
        writer.stall()
        Thread.sleep(forTimeInterval: 2)
        #expect(run.isRunning)
        let stopAt = Date()
        kill(run.pid, SIGTERM)
        var exited = false
        while Date().timeIntervalSince(stopAt) < 3 {
            if !run.isRunning { exited = true; break }
            usleep(10_000)
        }
        let took = Date().timeIntervalSince(stopAt)
        print("stalled input: run ended \(String(format: "%.3f", took)) s after SIGTERM")
        #expect(exited && took < 1, "run still going \(took) s after SIGTERM")
        #expect(run.wait() == 0)
        let lines = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        #expect(lines.contains("state=running"))
        // The audio thread's real-time priority is on the line: as root, SCHED_FIFO directly.
        #expect(lines.contains(getuid() == 0 ? " rt=fifo:10" : " rt="), "\(lines.split(separator: "\n").last ?? "")")
        writer.stop()
    }

    /// `stompbox run --headless ARGUMENTS` on `server`, its status lines into `out`; returns once
    /// it says `state=running` (or after 10 s).
    static func startRun(_ arguments: [String], _ server: PrivatePulseServer, statusTo out: String) throws -> Subprocess {
        var env = ProcessInfo.processInfo.environment
        env["PULSE_SERVER"] = server.address
        let run = try Subprocess(try stompbox(), ["run", "--headless"] + arguments, environment: env, stdout: out)
        let start = Date()
        while !((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains("state=running") && Date().timeIntervalSince(start) < 10 {
            usleep(50_000)
        }
        return run
    }

    static func stompbox() throws -> String {
        var folders: [URL] = []
        if let exe = Bundle.main.executableURL { folders.append(exe.deletingLastPathComponent()) }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            folders.append(bundle.bundleURL.deletingLastPathComponent())
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        folders.append(root.appendingPathComponent(".build/debug"))
        for folder in folders {
            let path = folder.appendingPathComponent("stompbox").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw PulseTestError.missing("the stompbox executable (build it first: swift build --build-tests)")
    }
}

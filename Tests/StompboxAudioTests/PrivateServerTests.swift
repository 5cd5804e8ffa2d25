import Foundation
import StompboxTestSupport
import StompboxTestTags
import Testing

/// The test servers themselves: the scope topology passes audio on PulseAudio and on
/// PipeWire's pulse server, survives a restart, and the paced FIFO writer keeps its rate.
/// Serialized: the server's address is process-wide (`PULSE_SERVER`).
@Suite(.serialized, .tags(.live))
struct PrivateServerTests {
    static let pulse = AudioServerKind.pulseaudio
    static let pipe = AudioServerKind.pipewire

    // MARK: Scope

    @Test(.enabled(if: pulse.isAvailable, Comment(rawValue: pulse.unavailableReason ?? "")))
    func pulseAudioScopePassesAudioAndSurvivesARestart() throws {
        try Self.scopeAndRestart(.pulseaudio)
    }

    @Test(.enabled(if: pipe.isAvailable, Comment(rawValue: pipe.unavailableReason ?? "")))
    func pipeWireScopePassesAudioAndSurvivesARestart() throws {
        try Self.scopeAndRestart(.pipewire)
    }

    static func scopeAndRestart(_ kind: AudioServerKind) throws {
        let server = try PrivatePulseServer(kind: kind)
        try server.start()
        print("[\(kind)] started in \(String(format: "%.3f", server.startSeconds)) s; "
              + (server.serverInfo.split(separator: "\n").first { $0.hasPrefix("Server Name") } ?? ""))
        #expect(ProcessInfo.processInfo.environment["PULSE_SERVER"] == server.address)
        if kind == .pipewire { #expect(server.serverInfo.contains("on PipeWire")) }
        try checkScope(server, label: "first start")

        server.stop()
        #expect(server.process == nil)
        #expect(throws: (any Error).self) { try server.pactl(["info"]) }
        try server.start()
        print("[\(kind)] restarted in \(String(format: "%.3f", server.startSeconds)) s")
        try checkScope(server, label: "after restart")
        server.stop()
    }

    /// What one look through the scope found wrong (nothing: it passed).
    struct ScopeCheck: CustomStringConvertible {
        var failures: [String] = []
        var description: String { failures.isEmpty ? "scope clean" : failures.joined(separator: "; ") }
        mutating func require(_ condition: Bool, _ failure: @autoclosure () -> String) {
            if !condition { failures.append(failure()) }
        }
    }

    /// The scope checked as a take: a take during which the host stood the machine still
    /// (PipeWire's graph then drops or repeats a quantum) is retaken, as the live takes are.
    static func checkScope(_ server: PrivatePulseServer, label: String) throws {
        guard let check = try quietTake("[\(server.kind) \(label)] the scope", { try scopeCheck(server, label: label) },
                                        clean: { $0.failures.isEmpty }) else { return }
        for failure in check.failures { Issue.record(Comment(rawValue: failure)) }
    }

    /// Noise into `guitar_in` must come out of the scope's left channel sample for sample, and
    /// a tone into `amp_out` out of its right channel only.
    static func scopeCheck(_ server: PrivatePulseServer, label: String) throws -> ScopeCheck {
        var check = ScopeCheck()
        let rate = PrivatePulseServer.rate
        let burst = Signal.noise(length: rate / 2, amplitude: 0.5, seed: 11)
        let tone = Signal.sine(frequency: 1000, seconds: 0.5, amplitude: 0.3)
        let recording = try server.startScopeRecording()
        // The first read of an idle null sink may block for a while: wait for parec's first data.
        let deadline = Date().addingTimeInterval(5)
        while recording.framesRecorded == 0 && Date() < deadline { usleep(10_000) }
        let pad = Signal.silence(rate / 10)
        let left = try server.play(pad + burst + pad, into: "guitar_in")
        let right = try server.play(pad + tone + pad, into: "amp_out")
        check.require(left.wait() == 0, "[\(server.kind) \(label)] playing into guitar_in failed")
        check.require(right.wait() == 0, "[\(server.kind) \(label)] playing into amp_out failed")
        Thread.sleep(forTimeInterval: 0.3)
        let (l, r) = recording.finish()

        guard let start = l.firstIndex(where: { abs($0) > 1e-6 }) else {
            check.failures.append("[\(server.kind) \(label)] nothing reached the left channel (\(l.count) frames recorded)")
            return check
        }
        // Align on the burst (its first sample may be near zero), then compare sample for sample.
        var best = (offset: start, correlation: -1.0)
        for offset in max(0, start - 8)...(start + 8) where offset + burst.count <= l.count {
            let c = ScopeAnalysis.correlation(l, offset, burst, 0, burst.count)
            if c > best.correlation { best = (offset, c) }
        }
        check.require(best.correlation > 0.999, "[\(server.kind) \(label)] left/noise correlation \(best.correlation)")
        if best.offset + burst.count <= l.count {
            let maxError = (0..<burst.count).map { abs(l[best.offset + $0] - burst[$0]) }.max() ?? 1
            check.require(maxError < 1e-6, "[\(server.kind) \(label)] left differs from the noise by up to \(maxError)")
            let leak = ScopeAnalysis.correlation(r, best.offset, burst, 0, burst.count)
            check.require(abs(leak) < 0.05, "[\(server.kind) \(label)] the noise leaks into the right channel (\(leak))")
        }
        let rightRMS = rms(r)
        let expectedRMS = rms(tone) * (Float(tone.count) / Float(max(1, r.count))).squareRoot()
        check.require(rightRMS > 0.9 * expectedRMS && rightRMS < 1.1 * expectedRMS,
                      "[\(server.kind) \(label)] right channel rms \(rightRMS), the tone alone would give \(expectedRMS)")
        if let t0 = r.firstIndex(where: { abs($0) > 1e-6 }) {
            // The tone starts at sin(0) = 0: its first non-zero sample is its second.
            let aligned = max(0, t0 - 1)
            if aligned + tone.count <= r.count {
                let c = ScopeAnalysis.correlation(r, aligned, tone, 0, tone.count)
                check.require(c > 0.999, "[\(server.kind) \(label)] right/tone correlation \(c)")
            }
            let toneInLeft = l.indices.filter { abs(l[$0]) > 1e-6 && ($0 < best.offset || $0 >= best.offset + burst.count) }.count
            check.require(toneInLeft == 0, "[\(server.kind) \(label)] \(toneInLeft) non-zero left samples outside the burst")
        } else {
            check.failures.append("[\(server.kind) \(label)] nothing reached the right channel")
        }
        return check
    }

    static func rms(_ x: [Float]) -> Float {
        guard !x.isEmpty else { return 0 }
        return (x.reduce(0) { $0 + $1 * $1 } / Float(x.count)).squareRoot()
    }

    // MARK: Paced writer

    @Test(.enabled(if: pulse.isAvailable, Comment(rawValue: pulse.unavailableReason ?? "")))
    func pulseAudioPacedWriterKeepsItsRate() throws {
        try Self.pacedRate(.pulseaudio)
    }

    @Test(.enabled(if: pipe.isAvailable, Comment(rawValue: pipe.unavailableReason ?? "")))
    func pipeWirePacedWriterKeepsItsRate() throws {
        try Self.pacedRate(.pipewire)
    }

    /// Index ramp: sample i carries (i mod 2^20) / 2^20, exactly representable in a float.
    static let ramp: [Float] = (0..<(1 << 20)).map { Float($0) / Float(1 << 20) }
    static func index(_ x: Float) -> Int { Int((x * Float(1 << 20)).rounded()) }

    /// 10 s at 300 ppm fast into a pipe source that parec records: the rate measured from the
    /// writer's own timestamps must be within 5 ppm of the one asked, nothing dropped, and the
    /// reader must receive the samples in order.
    static func pacedRate(_ kind: AudioServerKind) throws {
        struct Take: CustomStringConvertible {
            var kind: AudioServerKind
            var asked: Double, measured: Double?, allPPM: Double
            var chunks: Int, late: Int, latest: Double, realtime: Bool, dropped: Int, written: Int
            var received: Int, breaks: Int
            var ppm: Double { ((measured ?? 0) / asked - 1) * 1e6 }
            var clean: Bool { measured != nil && late < chunks / 20 && abs(ppm) < 5 && dropped == 0 && written > Int(asked * 10) && received > 9 * 48_000 && breaks == 0 }
            var description: String {
                "[\(kind)] paced writer: asked \(asked), measured \(String(format: "%.4f", measured ?? 0)) "
                    + "(\(String(format: "%+.3f", ppm)) ppm; \(String(format: "%+.3f", allPPM)) ppm fitting the late chunks too), "
                    + "\(chunks) chunks, \(late) over 1 ms late, latest \(String(format: "%.2f", latest * 1000)) ms, "
                    + "realtime \(realtime), dropped \(dropped), received \(received), \(breaks) breaks"
            }
        }
        let server = try PrivatePulseServer(kind: kind)
        try server.start()
        defer { server.stop() }
        let take = try quietTake("the paced writer on \(kind)", { () throws -> Take in
            let source = try server.loadPipeSource(name: "usb_guitar")
            defer { try? server.unloadPipeSource(source) }
            let recording = try server.startRecording(source: source.name)
            let asked = 48_014.4
            let writer = try PacedWriter(source: source, rate: asked, looping: ramp)
            Thread.sleep(forTimeInterval: 10.2)
            writer.stop()
            let received = recording.finishMono()
            let indices = received.drop { $0 == 0 }.map(index)
            let breaks = zip(indices, indices.dropFirst()).filter { $1 != ($0 + 1) & ((1 << 20) - 1) }.count
            let t = Take(kind: kind, asked: asked, measured: writer.measuredRate(),
                         allPPM: ((writer.measuredRate(ignoringLaterThan: .infinity) ?? 0) / asked - 1) * 1e6,
                         chunks: writer.chunks.count, late: writer.lateChunks(), latest: writer.maxLateness,
                         realtime: writer.isRealtime, dropped: writer.droppedSamples, written: writer.samplesWritten,
                         received: indices.count, breaks: breaks)
            print(t)
            return t
        }, clean: \.clean)
        guard let take else { return }
        #expect(take.measured != nil, "[\(kind)] the writer wrote almost nothing (\(take.written) samples)")
        #expect(take.late < take.chunks / 20, "[\(kind)] \(take.late) chunks over 1 ms late")
        #expect(abs(take.ppm) < 5, "[\(kind)] rate error \(take.ppm) ppm")
        #expect(take.dropped == 0)
        #expect(take.written > Int(take.asked * 10))
        // The reader got the ramp in order, from where it started reading.
        #expect(take.received > 9 * 48_000, "[\(kind)] the reader received \(take.received) samples")
        #expect(take.breaks == 0, "[\(kind)] \(take.breaks) breaks in the received ramp")
    }

    /// Up to three takes of a timing measurement: the first that is clean, else the first the
    /// host let run (no stall, `HostStallMonitor.quietTake`), which is then judged. When
    /// the host stood the machine still in all three, the runner reports a known issue with the
    /// figures instead of a verdict (nil).
    static func quietTake<T: CustomStringConvertible>(_ what: String, _ take: () throws -> T, clean: (T) -> Bool) throws -> T? {
        let result = try HostStallMonitor.quietTake(take, clean: clean)
        if result.take == nil {
            withKnownIssue("the host held this machine back during every take of \(what): no verdict") {
                Issue.record("\(result.disturbed)")
            }
        }
        return result.take
    }

    // MARK: Whose clock the pipe source runs on

    @Test(.enabled(if: pulse.isAvailable, Comment(rawValue: pulse.unavailableReason ?? "")))
    func pulseAudioPipeSourceRunsOnTheWritersClockAndStalls() throws {
        try Self.pipeSourceClock(.pulseaudio)
    }

    /// Documents the limitation of pipewire-pulse 0.3.65 (see
    /// `AudioServerKind.pipeSourceRunsOnWriterClock`): its pipe source follows the graph clock.
    @Test(.enabled(if: pipe.isAvailable, Comment(rawValue: pipe.unavailableReason ?? "")))
    func pipeWirePipeSourceRunsOnTheGraphClock() throws {
        try Self.pipeSourceClock(.pipewire)
    }

    /// A writer 1 % slow: on PulseAudio the reader receives 47 520 samples a second, all of them
    /// the writer's; a stalled writer stops the reader. On PipeWire 0.3.65 the reader receives
    /// the graph's 48 000 a second, with silence where the writer fell short, and a stall is
    /// silence.
    ///
    /// Rates are frames against the wall clock, so a take during which the host stalled the
    /// machine says nothing (a fresh-clone run read 47 826/s on PipeWire in a stretch when the
    /// host held other takes back by up to 27 ms): it is retaken (`quietTake`), and judged when
    /// quiet or clean.
    static func pipeSourceClock(_ kind: AudioServerKind) throws {
        let server = try PrivatePulseServer(kind: kind)
        try server.start()
        defer { server.stop() }
        let asked = 47_520.0
        var n = 0
        guard let take = try quietTake("[\(kind)] the pipe source's clock", { () throws -> PipeClockTake in
            n += 1
            return try pipeClockTake(server, name: "slow_guitar\(n)", asked: asked)
        }, clean: { $0.passes(kind, asked: asked) }) else { return }
        print(take)
        if kind.pipeSourceRunsOnWriterClock {
            #expect(abs(take.running / asked - 1) < 0.002, "[\(kind)] reader rate \(take.running), writer \(asked)")
            #expect(take.stalledFrames < 4_800, "[\(kind)] \(take.stalledFrames) frames arrived while the writer was stalled")
            #expect(abs(take.resumed / asked - 1) < 0.005, "[\(kind)] reader rate after resume \(take.resumed)")
            #expect(take.silent == 0, "[\(kind)] \(take.silent) silent samples")
        } else {
            // The documented limitation: graph clock, silence for the missing samples.
            #expect(abs(take.running / 48_000 - 1) < 0.002, "[\(kind)] reader rate \(take.running)")
            #expect(take.stalledFrames > 48_000, "[\(kind)] only \(take.stalledFrames) frames arrived during the stall")
            #expect(take.silent > 48_000, "[\(kind)] \(take.silent) silent samples")
        }
    }

    struct PipeClockTake: CustomStringConvertible {
        var kind: AudioServerKind
        var asked: Double
        var writerRate: Double
        var running: Double
        var stalledFrames: Int
        var resumed: Double
        var silent: Int

        func passes(_ kind: AudioServerKind, asked: Double) -> Bool {
            kind.pipeSourceRunsOnWriterClock
                ? abs(running / asked - 1) < 0.002 && stalledFrames < 4_800 && abs(resumed / asked - 1) < 0.005 && silent == 0
                : abs(running / 48_000 - 1) < 0.002 && stalledFrames > 48_000 && silent > 48_000
        }

        var description: String {
            "[\(kind)] writer at \(asked)/s (measured \(String(format: "%.2f", writerRate))): reader received "
                + "\(String(format: "%.1f", running))/s; \(stalledFrames) frames during a 1.5 s stall; "
                + "\(String(format: "%.1f", resumed))/s after resume; \(silent) silent samples in the stream"
        }
    }

    /// One take: a pipe source of its own, a writer `asked` samples a second, the reader's rate
    /// running, during a 1.5 s stall and after it.
    static func pipeClockTake(_ server: PrivatePulseServer, name: String, asked: Double) throws -> PipeClockTake {
        let source = try server.loadPipeSource(name: name)
        let recording = try server.startRecording(source: source.name)
        let writer = try PacedWriter(source: source, rate: asked, looping: ramp.map { $0 * 0.5 + 0.25 })

        // Frames received against time, after a second for start-up.
        func measure(seconds: Double) -> (rate: Double, frames: Int) {
            var points: [(Double, Double)] = []
            let t0 = Date()
            let f0 = recording.framesRecorded
            while Date().timeIntervalSince(t0) < seconds {
                points.append((Date().timeIntervalSince(t0), Double(recording.framesRecorded)))
                usleep(20_000)
            }
            let n = Double(points.count)
            let sx = points.reduce(0) { $0 + $1.0 }, sy = points.reduce(0) { $0 + $1.1 }
            let sxx = points.reduce(0) { $0 + $1.0 * $1.0 }, sxy = points.reduce(0) { $0 + $1.0 * $1.1 }
            return ((n * sxy - sx * sy) / (n * sxx - sx * sx), recording.framesRecorded - f0)
        }
        Thread.sleep(forTimeInterval: 1)
        let running = measure(seconds: 5)
        writer.stall()
        Thread.sleep(forTimeInterval: 0.3)   // what was in flight drains
        let stalled = measure(seconds: 1.5)
        writer.resume()
        Thread.sleep(forTimeInterval: 0.5)
        let resumed = measure(seconds: 2)
        writer.stop()
        let received = recording.finishMono()
        let silent = received.drop { $0 == 0 }.filter { $0 == 0 }.count
        return PipeClockTake(kind: server.kind, asked: asked, writerRate: writer.measuredRate() ?? 0, running: running.rate,
                             stalledFrames: stalled.frames, resumed: resumed.rate, silent: silent)
    }
}

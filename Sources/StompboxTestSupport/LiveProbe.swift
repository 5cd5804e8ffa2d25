import Foundation
import StompboxAudio
import StompboxDSP

/// Measurements of the live loop through a real private server, shared by the live tests and
/// `make bench`: never the engine's own word, always a recording.
public enum LiveProbe {
    /// One setting played through the scope (see `PrivatePulseServer`): noise into `guitar_in`,
    /// the engine from `guitar_in.monitor` to `amp_out`, both sides in one recording.
    public struct ScopeRun: CustomStringConvertible {
        public var server: AudioServerKind
        public var block: Int
        public var requestedMs: Double
        public var seconds: Double
        /// End to end on the scope: time-weighted mean of the lags (ms).
        public var measuredMs: Double
        /// The engine's own figure, averaged over the take (ms).
        public var reportedMs: Double
        /// Windows where the output stopped matching the delayed input.
        public var scopeDropouts: Int
        public var underruns: Int
        public var overruns: Int
        /// The margin automatic latency settled on (ms).
        public var settledTargetMs: Double
        /// The drift the engine followed at the end (nil: it never resampled, one clock).
        public var followedDriftPPM: Double?
        public var status: String
        /// The host's stalls during the take (`HostStallMonitor`): when (s) and how long (ms).
        public var hostStalls: [(at: Double, ms: Double)] = []
        /// When (seconds from the noise's start) each dropout the scope heard began, and when the
        /// engine's dropout count rose (seconds from the noise being started, read every 0.1 s).
        public var dropoutTimes: [Double] = []
        public var countedTimes: [Double] = []
        /// Whether the host let the machine run steadily through the take (no stall of 2 ms or
        /// more): only such a take says something about the loop.
        public var hostWasQuiet: Bool { hostStalls.isEmpty }

        public var dropoutsPerMinute: Double { Double(scopeDropouts) * 60 / seconds }
        public var description: String {
            // No clean stretch to measure the lag on: the output never matched the input.
            let heard = measuredMs.isNaN
                ? "the scope found no clean stretch to measure, reported \(LiveProbe.f2(reportedMs)) ms, every window a dropout ("
                : "measured \(LiveProbe.f2(measuredMs)) ms, reported \(LiveProbe.f2(reportedMs)) ms, "
                    + "dropouts \(LiveProbe.f2(dropoutsPerMinute))/min (\(scopeDropouts) in \(Int(seconds)) s; "
            return "\(server.rawValue) \(block)/\(LiveProbe.ms(requestedMs)): " + heard + "engine \(underruns) underruns, \(overruns) overruns), "
                + "settled margin \(LiveProbe.ms(settledTargetMs)) ms"
                + (followedDriftPPM.map { String(format: ", resampling for %+.0f ppm", $0) } ?? "")
                + (hostStalls.isEmpty ? "" : "; the host stalled the machine \(hostStalls.count)× (up to \(LiveProbe.f2(hostStalls.map(\.ms).max() ?? 0)) ms)")
        }
    }

    static func f2(_ x: Double) -> String { String(format: "%.2f", x) }
    static func ms(_ x: Double) -> String { x == x.rounded() ? String(Int(x)) : String(format: "%.1f", x) }

    /// Waits until the engine runs and reports a settled latency (its first figure comes once
    /// the streams have settled), then half a second more.
    @discardableResult
    public static func waitSettled(_ engine: LiveEngine, timeout: Double = 10) -> Bool {
        let start = Date()
        while Date().timeIntervalSince(start) < timeout {
            let s = engine.status()
            if s.state == .running && s.latencyMs != nil {
                Thread.sleep(forTimeInterval: 0.5)
                return true
            }
            usleep(20_000)
        }
        return false
    }

    public static func settings(block: Int, latencyMs: Double, autoLatency: Bool = true) -> LiveSettings {
        var live = LiveSettings()
        live.input = .source("guitar_in.monitor")
        live.output = "amp_out"
        live.blockSize = block
        live.latencyMs = latencyMs
        live.autoLatency = autoLatency
        return live
    }

    /// Plays `seconds` of noise through one setting and measures it on the scope.
    /// `serverStalls`: the server process is held still (SIGSTOP) for `ms` every `every` seconds
    /// from one second in, as a busy host holds a whole machine: its sinks then catch up at once.
    public static func scope(_ server: PrivatePulseServer, block: Int, latencyMs: Double, seconds: Double,
                             autoLatency: Bool = true, serverStalls: (every: Double, ms: Double)? = nil) throws -> ScopeRun {
        let engine = LiveEngine(chain: Chain(), settings: settings(block: block, latencyMs: latencyMs, autoLatency: autoLatency))
        engine.start()
        defer { engine.stop() }
        guard waitSettled(engine) else {
            throw PulseTestError.failed("block \(block)/\(latencyMs) ms on \(server.kind): the engine did not settle (\(engine.status().statusLine))")
        }
        let before = engine.status()
        let recording = try server.startScopeRecording()
        Thread.sleep(forTimeInterval: 0.3)
        let rate = PrivatePulseServer.rate
        let monitor = HostStallMonitor()
        defer { monitor.stop() }
        let player = try server.play(Signal.noise(length: Int(seconds * Double(rate)), amplitude: 0.25, seed: 11))
        let playedAt = Date()
        var reported: [Double] = []
        var counted: [Double] = []
        var dropouts = before.underruns + before.overruns
        var target = before.targetLatencyMs ?? latencyMs
        var nextStall = 1.0
        var lastReading = Date()
        while player.isRunning {
            Thread.sleep(forTimeInterval: 0.1)
            let now = Date().timeIntervalSince(playedAt)
            if let stalls = serverStalls, let pid = server.process?.pid, now >= nextStall, now < seconds - 1 {
                kill(pid, SIGSTOP)
                usleep(UInt32(stalls.ms * 1000))
                kill(pid, SIGCONT)
                nextStall += stalls.every
            }
            let s = engine.status()
            if s.underruns + s.overruns > dropouts {
                dropouts = s.underruns + s.overruns
                counted.append(now)
            }
            if Date().timeIntervalSince(lastReading) >= 0.5 {
                lastReading = Date()
                if let l = s.latencyMs { reported.append(l) }
            }
            if let t = s.targetLatencyMs { target = t }
        }
        Thread.sleep(forTimeInterval: 0.3)
        let after = engine.status()
        let (left, right) = recording.finish()
        if let folder = ProcessInfo.processInfo.environment["STOMPBOX_SCOPE_DUMP"] {
            // For looking into a take by hand: the two channels as raw float32.
            let name = "\(folder)/\(server.kind.rawValue)-\(block)-\(Int(latencyMs))-\(Int(Date().timeIntervalSince1970 * 1000) % 1_000_000)"
            for (side, samples) in [("left", left), ("right", right)] {
                samples.withUnsafeBytes { try? Data($0).write(to: URL(fileURLWithPath: "\(name).\(side).f32")) }
            }
        }
        let meanReported = reported.isEmpty ? Double.nan : reported.reduce(0, +) / Double(reported.count)
        var run = ScopeRun(server: server.kind, block: block, requestedMs: latencyMs, seconds: seconds, measuredMs: .nan,
                           reportedMs: meanReported, scopeDropouts: Int.max,
                           underruns: after.underruns - before.underruns, overruns: after.overruns - before.overruns,
                           settledTargetMs: target, followedDriftPPM: after.driftPPM, status: after.statusLine,
                           hostStalls: monitor.stop(), countedTimes: counted)
        // From one second into the noise: the player joining the sink makes the server rewind
        // (a guitar is not a new client), which is not the loop's doing.
        // The reference lag comes from the first clean 100 ms window of several.
        guard let noise = left.firstIndex(where: { abs($0) > 0.01 }),
              let (onset, first) = [rate, 3 * rate / 2, 2 * rate].lazy
                .compactMap({ start in ScopeAnalysis.delay(left, right, start: noise + start, window: 4_800, maxLag: 4_800).map { (noise + start, $0) } })
                .first(where: { $0.1.correlation > 0.99 }) else {
            return run
        }
        let analysed = min(left.count - onset, Int(seconds * Double(rate)) - (onset - noise)) - 9_600
        let drops = ScopeAnalysis.dropouts(Array(left[onset..<(onset + analysed)]),
                                           Array(right[onset..<min(right.count, onset + analysed + 9_600)]),
                                           lag: first.lag, from: 0)
        run.measuredMs = drops.meanLag * 1000 / Double(rate)
        run.scopeDropouts = drops.count
        run.dropoutTimes = drops.starts.map { Double(onset - noise + $0) / Double(rate) }
        run.seconds = Double(analysed) / Double(rate)
        return run
    }

    /// A guitar interface on its own clock: a `PacedWriter` feeds a pipe source at
    /// 48 kHz × (1 + ppm/10⁶) of the monotonic clock while the engine plays it into `drift_out`,
    /// a null sink at 50 kHz that keeps monotonic time (a 48 kHz one runs some 250 ppm fast:
    /// see `PrivatePulseServer.loadNullSink`), so the two clocks differ by `ppm`; the server
    /// resamples the engine's 48 kHz stream to the sink at a fixed ratio, and the recording of
    /// `drift_out.monitor` comes back at 48 kHz. The signal is a quiet sine with a marker click
    /// every 100 ms of the source's time; each click's place in the recording, against where it
    /// would be at a constant latency, gives the latency click by click (up to one constant).
    public struct DriftRun: CustomStringConvertible {
        public var ppm: Double
        public var seconds: Double
        /// Max − min of the click-by-click latency over the analysed span (ms).
        public var latencyRangeMs: Double
        /// Clicks found / expected in the analysed span, outside the windows around writer stalls.
        public var clicks: Int
        public var expectedClicks: Int
        /// Gaps (2.5 ms with nothing in them) and jumps (a click more than 0.25 ms off its place).
        public var gaps: Int
        public var jumps: Int
        public var underruns: Int
        public var overruns: Int
        /// The drift the engine reports it follows (ppm), and its latency figure.
        public var reportedDriftPPM: Double?
        public var reportedMs: Double?
        /// What the writer (the interface) did: samples the FIFO refused, and its rate as measured.
        public var writerDropped = 0
        public var writerRate: Double?
        /// The output's rate as recorded (frames a monotonic second, least squares over the run).
        public var outputRate: Double?
        /// What the engine said over the take, a line whenever it changed (seconds from the
        /// writer's start): dropouts counted, the margin in force, the drift followed.
        public var timeline: [String] = []
        /// Where in the analysed span (seconds from the writer's start) the gaps and jumps were.
        public var dropoutTimes: [Double] = []
        /// When (seconds from the writer's start) and by how much (ms) the writer handed a chunk
        /// over late: the interface's own hiccups, which starve the input.
        public var writerLate: [(at: Double, ms: Double)] = []
        /// The longest the writer left the input without samples beyond its own pacing (ms).
        public var longestWriterStallMs: Double { writerLate.map(\.ms).max() ?? 0 }
        /// Gaps and jumps within `stallWindow` of a writer stall: the interface's, not the loop's.
        public var rigDropouts = 0
        /// Seconds of the analysed span outside those windows, over which `latencyRangeMs` and
        /// `dropouts` are taken.
        public var stallFreeSeconds = 0.0

        public var dropouts: Int { gaps + jumps + max(0, expectedClicks - clicks) }
        /// The output's own clock against the monotonic one (ppm): a null sink keeps it within a
        /// few ppm on a quiet machine; tens of ppm say the host held the whole machine back.
        public var outputDriftPPM: Double? { outputRate.map { ($0 / Double(LiveProbe.outputRate) - 1) * 1e6 } }
        /// Whether the rig gave the loop a steady input and output to be judged on: the writer
        /// never stalled 4 ms or more (each such stall starves the input; the loop counts an
        /// underrun, clears its drift meter and takes ten seconds to tell the drift again, so the
        /// latency and the figure it follows wander for a while after each), and the output's
        /// clock within 5 ppm.
        public var rigWasSteady: Bool {
            !writerLate.contains { $0.ms >= DriftRun.writerStall * 1000 } && abs(outputDriftPPM ?? .infinity) <= 5
        }

        /// A hand-over this late (seconds) is the interface stalling: the input starves.
        public static let writerStall = 0.004
        /// The output around a writer stall that is the stall's (seconds before, after): what the
        /// loop then does about it (an underrun counted, the gap set back, automatic latency
        /// raised) is the behaviour a stalled device should get, and is tested elsewhere.
        public static let stallWindow = (before: 0.15, after: 1.5)
        public var description: String {
            "drift \(ppm > 0 ? "+" : "")\(Int(ppm)) ppm: latency held within \(LiveProbe.f2(latencyRangeMs)) ms over \(Int(seconds)) s, "
                + "\(dropouts) dropouts (gaps \(gaps), jumps \(jumps), clicks \(clicks)/\(expectedClicks); engine \(underruns) underruns, \(overruns) overruns) "
                + "in \(Int(stallFreeSeconds)) s clear of the writer's stalls, \(rigDropouts) more around them, "
                + "engine follows \(reportedDriftPPM.map { String(format: "%+.0f", $0) } ?? "no drift") ppm, reports \(reportedMs.map { String(format: "%.1f", $0) } ?? "-") ms; "
                + "writer at \(writerRate.map { String(format: "%+.1f", ($0 / Double(PrivatePulseServer.rate) - 1) * 1e6) } ?? "?") ppm, \(writerDropped) samples refused, "
                + "output at \(outputRate.map { String(format: "%+.1f", ($0 / Double(LiveProbe.outputRate) - 1) * 1e6) } ?? "?") ppm, "
                + "writer late by up to \(LiveProbe.f2(longestWriterStallMs)) ms"
                + (dropoutTimes.isEmpty ? "" : "; dropouts at \(dropoutTimes.sorted().map { String(format: "%.1f", $0) }.joined(separator: ", ")) s")
                + (writerLate.isEmpty ? "" : "; writer late at \(writerLate.filter { $0.ms > 4 }.map { String(format: "%.1f s (%.0f ms)", $0.at, $0.ms) }.joined(separator: ", "))")
        }
    }

    public static let clickSpacing = 4_800
    /// The drift runs' output: a null sink that keeps monotonic time (see `PrivatePulseServer.loadNullSink`).
    public static let outputRate = 50_000

    /// Least-squares slope of y against x; nil with fewer than 10 points.
    static func slope(_ points: [(Double, Double)]) -> Double? {
        guard points.count >= 10 else { return nil }
        let n = Double(points.count)
        let sx = points.reduce(0) { $0 + $1.0 }, sy = points.reduce(0) { $0 + $1.1 }
        let sxx = points.reduce(0) { $0 + $1.0 * $1.0 }, sxy = points.reduce(0) { $0 + $1.0 * $1.1 }
        let d = n * sxx - sx * sx
        return d > 0 ? (n * sxy - sx * sy) / d : nil
    }

    public static func drift(_ server: PrivatePulseServer, ppm: Double, seconds: Double, warmUp: Double = 8,
                             block: Int = LiveSettings().blockSize, latencyMs: Double = LiveSettings().latencyMs) throws -> DriftRun {
        let source = try server.loadPipeSource(name: "usb_guitar")
        defer { try? server.unloadPipeSource(source) }
        let sink = try server.loadNullSink(name: "drift_out", rate: outputRate)
        defer { try? server.unloadModule(sink) }
        // Recording first, at the sink's own rate: it keeps the sink at 50 kHz.
        let recording = try server.startRecording(source: "drift_out.monitor", rate: outputRate)
        var live = settings(block: block, latencyMs: latencyMs)
        live.input = .source(source.name)
        live.output = "drift_out"
        let engine = LiveEngine(chain: Chain(), settings: live)
        engine.start()
        defer { engine.stop() }
        let start = Date()
        while engine.status().state != .running && Date().timeIntervalSince(start) < 5 { usleep(10_000) }
        // The writer after the engine's reader: a pipe source nobody records fills up.
        let rate = Double(PrivatePulseServer.rate) * (1 + ppm / 1e6)
        let spacing = clickSpacing
        let writer = try PacedWriter(fifo: source.fifoPath, rate: rate) { first, buffer in
            for i in 0..<buffer.count {
                let n = first + i
                let phase = Double(n % 48_000) * 440 / 48_000
                buffer[i] = Float(0.1 * sin(2 * Double.pi * phase)) + (n % spacing == 0 ? 0.8 : 0)
            }
        }
        let before = engine.status()
        // The output lags the writer (an idle sink first renders ahead): play on for a few
        // seconds after the analysed span so the recording holds all of it.
        // Meanwhile the output's rate: frames recorded against the monotonic clock, fitted.
        var marks: [(Double, Double)] = []
        var timeline: [String] = []
        var said = ""
        let t0 = PacedWriter.now()
        while Double(PacedWriter.now() - t0) / 1e9 < warmUp + seconds + 3 {
            usleep(100_000)
            let t = Double(PacedWriter.now() - t0) / 1e9
            marks.append((t, Double(recording.framesRecorded)))
            let s = engine.status()
            let now = "under \(s.underruns) over \(s.overruns) target \(s.targetLatencyMs.map { String(format: "%.0f", $0) } ?? "-") ms drift \(s.driftPPM.map { String(format: "%+.0f", $0) } ?? "-")"
            if now != said {
                timeline.append(String(format: "%.1f s: ", t) + now + (s.latencyMs.map { String(format: " (latency %.1f ms)", $0) } ?? ""))
                said = now
            }
        }
        let after = engine.status()
        writer.stop()
        let lateChunks = writer.chunks.filter { !$0.isPrefill && $0.time > $0.due && $0.time - $0.due > 2_000_000 }
        let out = recording.finishMono()
        var run = DriftRun(ppm: ppm, seconds: seconds, latencyRangeMs: .infinity, clicks: 0, expectedClicks: 0, gaps: 0, jumps: 0,
                           underruns: after.underruns - before.underruns, overruns: after.overruns - before.overruns,
                           reportedDriftPPM: after.driftPPM, reportedMs: after.latencyMs,
                           writerDropped: writer.droppedSamples, writerRate: writer.measuredRate(),
                           outputRate: Self.slope(marks.filter { $0.0 > 2 && $0.1 > 0 }), timeline: timeline,
                           writerLate: lateChunks.map { (Double($0.due - t0) / 1e9, Double($0.time - $0.due) / 1e6) })
        // Clicks: peaks above the sine, located to a fraction of a sample.
        var clicks: [Double] = []
        var i = 1
        while i < out.count - 1 {
            if abs(out[i]) > 0.4 {
                var best = i
                var j = i
                while j < min(out.count - 1, i + 48) { if abs(out[j]) > abs(out[best]) { best = j }; j += 1 }
                let a = Double(abs(out[max(0, best - 1)])), b = Double(abs(out[best])), c = Double(abs(out[best + 1]))
                let d = a - 2 * b + c
                clicks.append(Double(best) + (d != 0 ? 0.5 * (a - c) / d : 0))
                i = best + 480
            } else {
                i += 1
            }
        }
        // The analysed span: after warm-up, the last `seconds` of the recording before the writer stopped.
        let outRate = Double(outputRate)
        guard let firstClick = clicks.first else { return run }
        let spanStart = firstClick + warmUp * outRate
        let spanEnd = min(spanStart + seconds * outRate, Double(out.count) - Double(spacing) * outRate / rate)
        let span = clicks.filter { $0 >= spanStart && $0 < spanEnd }
        guard let ref = span.first else { return run }
        let expectedSpacing = Double(spacing) * outRate / rate
        // Where the writer stalled, in the output: the late chunk's first sample, placed from
        // the first click (the writer's sample 0) at the output's rate; a latency of a few ms
        // and any click lost at start lie well inside the window.
        let stalls = writer.chunks.filter { !$0.isPrefill && $0.time > $0.due && Double($0.time - $0.due) / 1e9 >= DriftRun.writerStall }
            .map { firstClick + Double($0.firstSample) * outRate / rate }
        func nearStall(_ p: Double) -> Bool {
            stalls.contains { p >= $0 - DriftRun.stallWindow.before * outRate && p <= $0 + DriftRun.stallWindow.after * outRate }
        }
        // The latency click by click, over stretches clear of stalls: each must hold within the range.
        var segments: [[Double]] = [[]]
        var previous: Double? = nil
        var excludedClicks = 0
        for p in span {
            let k = ((p - ref) / expectedSpacing).rounded()
            let latency = (p - ref - k * expectedSpacing) / outRate * 1000
            let near = nearStall(p)
            if let q = previous, abs((p - q) - expectedSpacing * ((p - q) / expectedSpacing).rounded()) > 12 {
                if near { run.rigDropouts += 1 } else { run.jumps += 1 }
                run.dropoutTimes.append((p - firstClick) / outRate)
            }
            if near {
                excludedClicks += 1
                if !(segments.last?.isEmpty ?? true) { segments.append([]) }
            } else {
                segments[segments.count - 1].append(latency)
            }
            previous = p
        }
        // Clicks are counted where the output is judged: outside the stall windows.
        let expected = Int(((spanEnd - spanStart) / expectedSpacing).rounded(.down))
        let expectedNear = (0..<expected).filter { nearStall(ref + Double($0) * expectedSpacing) }.count
        run.clicks = span.count - excludedClicks
        run.expectedClicks = expected - expectedNear
        run.latencyRangeMs = segments.map { ($0.max() ?? 0) - ($0.min() ?? 0) }.max() ?? 0
        run.stallFreeSeconds = Double(span.count - excludedClicks) * Double(spacing) / rate
        // Gaps: 2.5 ms windows without the sine in them.
        var w = Int(spanStart)
        var inGap = false
        while w + 120 < min(out.count, Int(spanEnd)) {
            var energy: Float = 0
            for j in w..<(w + 120) { energy += out[j] * out[j] }
            let silent = (energy / 120).squareRoot() < 0.02
            if silent && !inGap {
                if nearStall(Double(w)) { run.rigDropouts += 1 } else { run.gaps += 1 }
                run.dropoutTimes.append((Double(w) - firstClick) / outRate)
            }
            inGap = silent
            w += 120
        }
        return run
    }
}

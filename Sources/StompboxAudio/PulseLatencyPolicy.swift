import Foundation

/// The PulseAudio session's end-to-end policy: what `LatencyControl` cannot see from the margin
/// alone, decided from the servers' frame counts (their timing replies) and the server's "ran
/// dry" reports. The session feeds it what it saw (a margin after each block written, a timing
/// reply, a dry report, the output's peak) and applies the actions it returns; it reads no clock
/// and touches no stream, so every rule runs under simulated timelines in the unit tests.
///
/// The rules (each after `observe`):
/// - **Fall verdict**: a margin that stays low for `LatencyControl.hold` is judged by the frame
///   counts once both servers have timed since: the end to end fell (silence put back, exactly)
///   or the margin was misread (nothing put in) (`LatencyControl.levelFell`).
/// - **Held gap**: after a dry report, an end to end grown by the gap (the server stopped its
///   read index while dry) is taken back, exactly (`LatencyControl.gapHeld`).
/// - **Restore**: a second after a spell of dropouts, with steady figures, a level left above
///   where it stood before the spell is brought back.
/// - **Counting**: a dropout the control found is counted for the user (overrun or underrun)
///   only after the `settleSeconds` and when the output was audible (`audibleLevel`); an
///   underrun feeds automatic latency, which may raise the target.
/// - **Drift meter**: fed from the playback timing replies on two clocks once settled, and
///   cleared at every dropout and dry report (a queue that ran empty steps the counts).
///
/// Pure arithmetic on what the session measured: no allocation, safe on the audio thread.
struct PulseLatencyPolicy {
    /// Where a server queue's far end stood (frames, in the stream's own count) at the wall-clock
    /// time a timing reply was current.
    struct ServerPosition: Equatable {
        var frames: Double
        var at: Double
    }

    /// What the session saw when it wrote a block and the playback stream was playing.
    struct Observation {
        /// Queued output in front of the block plus the input waiting (seconds).
        var margin: Double
        /// Captured input not yet processed: in the FIFO and held by the resampler (seconds).
        var waiting: Double
        /// Frames taken from the record stream, and written to the playback stream (with seeks).
        var framesTaken: Int
        var framesWritten: Int
        /// The input goes through the resampler.
        var resampling: Bool
        /// Monotonic time (seconds), and the wall clock the servers' timing replies are stamped in.
        var now: Double
        var wallNow: Double
    }

    /// What the session has to do after an observation.
    struct Verdict: Equatable {
        var action: LatencyControl.Action = .none
        /// The action is a trim: taken from the queued output (crossfaded), not from the input.
        var fromQueue = false
        /// A dropout counted for the user (audible, after settling).
        var underrun = false
        var overrun = false
        /// Automatic latency raised the target to this (ms).
        var raisedTargetMs: Double?
    }

    /// Corrections in the first seconds after sound starts flowing are the server settling
    /// (an idle sink renders ahead, then catches up): mended, not counted as dropouts.
    static let settleSeconds = 2.5
    /// −70 dBFS: below this a dropout cannot be heard.
    static let audibleLevel: Float = 3.2e-4
    /// Above this `endToEndJitter` (seconds) the frame counts do not judge a low margin.
    static let steadyJitter = 0.0004

    let rate: Double
    /// In and out run on one clock: the drift meter is never fed. Set before the first block.
    var oneClock: Bool
    private(set) var control: LatencyControl
    /// Captured − heard at each playback timing reply: the clocks' drift from frame counts.
    private var clockMeter: ClockDriftMeter
    /// The server's end of each queue at the moment its last timing reply was current.
    private(set) var capturedAt: ServerPosition?
    private(set) var heardAt: ServerPosition?
    /// When (monotonic) the first block was observed playing.
    private(set) var firstBlockAt: Double?
    private var latencySum = 0.0
    private var latencyCount = 0
    /// The end-to-end figure, smoothed (seconds), and, after the server reported the output dry, when
    /// (wall clock) and what it was then: once both streams have timed since, a figure grown
    /// by the gap says the server played silence and kept its place (see `observe`).
    private var lastEndToEnd: Double?
    private var lastEndToEndAt = 0.0
    private var endToEndSince = 0.0
    private var dryReportedAt: Double?
    private var endToEndBeforeDry = 0.0
    private var targetBeforeDry = 0.0
    /// The smoothed end to end when the level was last at its target (kept while the margin is
    /// low, dropped at a correction), and, while the control waits for the frame counts'
    /// verdict on a low margin, when (wall clock) it began waiting and the target then.
    private var endToEndBeforeLow: Double?
    private var fallAskedAt: Double?
    /// How far a figure strays from the smoothed one, on average over ~1 s (seconds): 0.01–0.15 ms
    /// on a sink's monitor and on PipeWire, about 1 ms from a source that delivers in bursts
    /// (a pipe), where one figure cannot tell a fall.
    private(set) var endToEndJitter = 0.0
    private var targetBeforeFall = 0.0
    /// A dropout can leave part of its gap as latency, less than the margin's bands show (a few
    /// ms after a stall of the loop). So when one is counted, the smoothed end to end just before
    /// it (if the figures were steady) and the target then are kept, and once the figures are
    /// steady again the frame counts take back what the level stands above it. `restoreSince`:
    /// when the spell's last dropout was counted.
    private var endToEndBeforeDropout: Double?
    private var targetBeforeDropout = 0.0
    private var restoreSince: Double?
    private var lastActionAt = -Double.infinity
    private var countedControlDropouts = 0
    private var countedOverruns = 0
    private var countedTrims = 0
    /// The output's peak over the last quarter second or so (decaying block by block).
    private(set) var recentPeak: Float = 0
    private let peakDecay: Float

    init(sampleRate rate: Double, block: Int, targetMs: Double, oneClock: Bool) {
        self.rate = rate
        self.oneClock = oneClock
        let blockSeconds = Double(block) / rate
        peakDecay = Float(exp(-blockSeconds / 0.25))
        control = LatencyControl(sampleRate: rate, target: targetMs / 1000, blockSeconds: Double(block) / rate)
        clockMeter = ClockDriftMeter(sampleRate: rate)
    }

    // MARK: What the session saw

    /// A block went through the chain with this output peak.
    mutating func notePeak(_ peak: Float) {
        recentPeak = max(peak, recentPeak * peakDecay)
    }

    /// A latency figure for the status (seconds) from elsewhere (the demo's playback latency).
    mutating func noteLatency(_ seconds: Double) {
        latencySum += seconds
        latencyCount += 1
    }

    /// The mean latency figure (ms) since the last call, or nil if there was none.
    mutating func takeLatencyMs() -> Double? {
        defer {
            latencySum = 0
            latencyCount = 0
        }
        return latencyCount > 0 ? 1000 * latencySum / Double(latencyCount) : nil
    }

    /// A timing reply for the record stream: the server's end of the capture queue.
    mutating func recordTiming(_ captured: ServerPosition) {
        capturedAt = captured
    }

    /// A timing reply for the playback stream at `now` (monotonic): the frame being heard.
    mutating func playbackTiming(_ heard: ServerPosition, now: Double) {
        heardAt = heard
        // From when the streams have settled: opening them steps the counts by a few ms. Not
        // on one clock: PipeWire brings every device to one itself, and a card's (or a sink's
        // monitor and filters') in and out share one; a busy host can step the counts so that
        // they seem to slope, and following that would bend the output.
        if !oneClock, let captured = capturedAt, let first = firstBlockAt, now - first > Self.settleSeconds {
            clockMeter.add(offset: captured.frames + (heard.at - captured.at) * rate - heard.frames, at: heard.at)
            control.clockDrift = clockMeter.drift
        }
    }

    /// The server says the output ran dry (monotonic `now`, wall clock `wallNow`): a dropout
    /// (`LatencyControl.outputRanDry`); the next block's margin tells whether it collapsed, and
    /// the end to end once both servers have timed again whether the gap was kept as latency.
    mutating func outputRanDry(now: Double, wallNow: Double) {
        if firstBlockAt != nil { control.outputRanDry(at: now) }
        if dryReportedAt == nil, let before = lastEndToEnd, lastEndToEndAt - endToEndSince >= 0.2 {
            dryReportedAt = wallNow
            endToEndBeforeDry = before
            targetBeforeDry = control.target
            // The verdict waits for the regular replies (within 0.2 s): an extra timing request
            // resets libpulse's interpolation, and the margin read through it can dip far enough
            // for silence to go in.
        }
        clockMeter.clear()
        control.clockDrift = nil
    }

    /// End to end for the block just written (seconds): from the moment the newest waiting
    /// input sample was captured until that sample is heard, or nil before both streams
    /// have reported their timing.
    ///
    /// Computed from the two servers' raw timing replies, not from `pa_stream_get_latency`:
    /// libpulse interpolates each stream's clock on its own and never lets it run backwards,
    /// which is harmless where the server's figures are current (PulseAudio) but biases them
    /// where they are as old as the last graph cycle (PipeWire's pulse server, whose read and
    /// write indices move a quantum at a time). Here each reply gives the server's end of its
    /// queue at the reply's own timestamp; the two ends are brought to one time at the nominal
    /// rate, so the time of the observation drops out, and a reply's age on PipeWire counts the
    /// same on both sides and cancels.
    ///   latency = (captured − processed) + (written − heard), each in its stream's frames
    func endToEndLatency(waiting: Double, framesTaken: Int, framesWritten: Int) -> Double? {
        guard let captured = capturedAt, let heard = heardAt else { return nil }
        let capturedNow = captured.frames + (heard.at - captured.at) * rate
        let processed = Double(framesTaken) - waiting * rate
        return (capturedNow - processed + Double(framesWritten) - heard.frames) / rate
    }

    /// After a block was written and the playback stream is playing: the margin's control, the
    /// frame counts' verdicts, the dropouts counted. `autoLatency` is the engine's (it outlives
    /// the session); an underrun counted may raise its target.
    mutating func observe(_ o: Observation, autoLatency: inout AutoLatency) -> Verdict {
        let now = o.now
        var verdict = Verdict()
        if firstBlockAt == nil { firstBlockAt = now }
        let settled = now - firstBlockAt! > Self.settleSeconds
        let e2e = endToEndLatency(waiting: o.waiting, framesTaken: o.framesTaken, framesWritten: o.framesWritten)
        if settled, let e2e {
            latencySum += e2e
            latencyCount += 1
        }
        if !control.starving && !control.awaitingFallVerdict && control.atTarget, let e = lastEndToEnd {
            endToEndBeforeLow = e
        }
        control.fallsCounted = endToEndBeforeLow != nil && endToEndJitter < Self.steadyJitter
        var action = control.observe(margin: o.margin, at: now)
        if control.awaitingFallVerdict {
            if fallAskedAt == nil {
                fallAskedAt = o.wallNow
                targetBeforeFall = control.target
            } else if let asked = fallAskedAt, let before = endToEndBeforeLow, let e2e, let c = capturedAt,
                      let h = heardAt, c.at > asked, h.at > asked {
                // Both servers have timed since the margin stayed low: the end to end in frame
                // counts says whether the level fell, and by how much.
                action = Self.combine(action, control.levelFell(before + (control.target - targetBeforeFall) - e2e, at: now))
            }
        }
        if !control.awaitingFallVerdict { fallAskedAt = nil }
        if action == .none, !control.starving, let since = dryReportedAt, let e2e, let c = capturedAt, let h = heardAt,
           c.at > since, h.at > since {
            // Both servers have reported since the output ran dry. A gap the server kept as
            // latency (prebuf: it stops its read index while dry) grew the end to end by its
            // length in frame counts, exactly, net of what has been corrected since; nothing
            // heard (the sink rewound in time) leaves it where it was. A raised target is meant.
            dryReportedAt = nil
            let grown = e2e - endToEndBeforeDry - (control.target - targetBeforeDry)
            if grown > LatencyControl.countsJitter {
                action = control.gapHeld(grown, at: now)
            }
        }
        if let e2e {
            // Smoothed over ~0.2 s: a single figure can be off by a ms or two while one stream's
            // reply has come in and the other's not yet.
            if let last = lastEndToEnd, lastEndToEndAt > 0 {
                let dt = now - lastEndToEndAt
                endToEndJitter += (1 - exp(-dt / 1.0)) * (abs(e2e - last) - endToEndJitter)
                lastEndToEnd = last + (1 - exp(-dt / 0.2)) * (e2e - last)
            } else {
                lastEndToEnd = e2e
                endToEndSince = now
            }
            lastEndToEndAt = now
        }
        if control.dropouts != countedControlDropouts {
            // A dropout may have stepped the frame counts (a queue that ran empty stopped).
            clockMeter.clear()
            control.clockDrift = nil
            let overran = control.overruns != countedOverruns
            countedControlDropouts = control.dropouts
            if restoreSince == nil {
                endToEndBeforeDropout = endToEndJitter < Self.steadyJitter ? lastEndToEnd : nil
                targetBeforeDropout = control.target
            }
            restoreSince = now
            countedOverruns = control.overruns
            // A gap in silence is heard by nobody (an idle guitar, a device that only just
            // woke up): mended, but neither counted nor a reason to raise the latency.
            // Automatic latency answers gaps in the output (underruns): dropping input that piled
            // up is a glitch too, but a larger margin would not have prevented it.
            if settled && recentPeak > Self.audibleLevel {
                if overran { verdict.overrun = true } else { verdict.underrun = true }
                if !overran, let raised = autoLatency.noteDropout(at: now) {
                    let raisedMs = 1000 * raised
                    verdict.raisedTargetMs = raisedMs
                    action = Self.combine(action, control.retarget(raisedMs / 1000))
                }
            }
        }
        if let since = restoreSince, o.resampling || now - since > 10 { restoreSince = nil }
        if action == .none, let since = restoreSince, now - since >= 1, now - lastActionAt >= 0.5,
           !control.starving, !control.awaitingFallVerdict, dryReportedAt == nil,
           endToEndJitter < Self.steadyJitter, let e = lastEndToEnd, lastEndToEndAt - endToEndSince >= 0.5 {
            // A second after the spell's last dropout, the figures steady for half a second since
            // the last correction: a level above where it stood before the spell (net of a
            // raised target) is brought back, exactly. One clock only: while the input's clock
            // is followed, the resampler holds the level (and a spell not settled in 10 s is
            // let go).
            restoreSince = nil
            if let before = endToEndBeforeDropout {
                let above = e - before - (control.target - targetBeforeDropout)
                if above > LatencyControl.countsJitter { action = control.gapHeld(above, at: now) }
            }
        }
        // A figure from before a correction is no yardstick for the next dry report or fall.
        if action != .none {
            lastActionAt = now
            lastEndToEnd = nil
            endToEndBeforeLow = nil
        }
        // A trim takes back queued output (the level settled high in the server's queue, the
        // input is not waiting): written over under a crossfade, nothing skipped in the input.
        let trimmed = control.trims != countedTrims
        countedTrims = control.trims
        verdict.action = action
        verdict.fromQueue = trimmed
        return verdict
    }

    /// Two actions as one: the frames put in minus the frames dropped.
    static func combine(_ a: LatencyControl.Action, _ b: LatencyControl.Action) -> LatencyControl.Action {
        func frames(_ x: LatencyControl.Action) -> Int {
            switch x {
            case .none: 0
            case .insertSilence(let n): n
            case .dropInput(let n): -n
            }
        }
        let n = frames(a) + frames(b)
        return n > 0 ? .insertSilence(n) : n < 0 ? .dropInput(-n) : .none
    }
}

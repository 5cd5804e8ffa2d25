import Foundation
import Testing
@testable import StompboxAudio

/// The PulseAudio session's end-to-end policy against simulated timelines: blocks written every
/// `block` frames with the margin the session would read, the servers' timing replies every
/// 0.1 s carrying the end to end in frame counts, and the server's dry reports. Every rule the
/// live tests prove on a real server has its case here.
struct PulseLatencyPolicyTests {
    struct Timeline {
        var policy: PulseLatencyPolicy
        var autoLatency = AutoLatency(requested: 0.008, cap: 0.04, step: 0.002)
        let rate = 48_000.0
        let blockSeconds: Double
        /// Monotonic time (seconds); the wall clock the replies are stamped in runs `wallOffset` ahead.
        var now = 0.0
        let wallOffset = 1_000.0
        /// The margin the session reads (seconds), and the end to end the frame counts show.
        var margin: Double
        var endToEnd: Double
        /// The input's clock against the output's (seconds per second), as the frame counts see it.
        var drift = 0.0
        /// The output's peak at every block.
        var peak: Float = 0.1
        /// Whether the servers answer timing requests.
        var timingReplies = true
        private var lastReply = -Double.infinity
        var verdicts: [(t: Double, v: PulseLatencyPolicy.Verdict)] = []

        init(target: Double = 0.008, endToEnd: Double = 0.020, oneClock: Bool = true, block: Int = 128) {
            blockSeconds = Double(block) / 48_000
            policy = PulseLatencyPolicy(sampleRate: 48_000, block: block, targetMs: 1000 * target, oneClock: oneClock)
            margin = target
            self.endToEnd = endToEnd
        }

        var actions: [LatencyControl.Action] { verdicts.map(\.v.action).filter { $0 != .none } }
        var underrunsCounted: Int { verdicts.filter(\.v.underrun).count }
        var overrunsCounted: Int { verdicts.filter(\.v.overrun).count }

        /// Both servers' timing replies, current at `now`.
        mutating func reply() {
            let at = now + wallOffset
            // Captured − heard in frames is the end to end (nothing taken, written or waiting),
            // plus what a drifting input has gained since the start.
            policy.recordTiming(.init(frames: (endToEnd + drift * now) * rate, at: at))
            policy.playbackTiming(.init(frames: 0, at: at), now: now)
        }

        /// One block written and observed; the action is applied to the queue (the margin and the
        /// end to end move by what is put in or dropped).
        mutating func block() {
            now += blockSeconds
            if timingReplies && now - lastReply >= 0.1 {
                lastReply = now
                reply()
            }
            policy.notePeak(peak)
            let o = PulseLatencyPolicy.Observation(margin: margin, waiting: 0, framesTaken: 0, framesWritten: 0,
                                                   resampling: false, now: now, wallNow: now + wallOffset)
            let v = policy.observe(o, autoLatency: &autoLatency)
            switch v.action {
            case .none: break
            case .insertSilence(let n):
                margin += Double(n) / rate
                endToEnd += Double(n) / rate
            case .dropInput(let n):
                margin -= Double(n) / rate
                endToEnd -= Double(n) / rate
            }
            if v != PulseLatencyPolicy.Verdict() { verdicts.append((now, v)) }
        }

        mutating func run(_ seconds: Double) {
            let end = now + seconds
            while now < end { block() }
        }

        /// The server reports the output dry.
        mutating func ranDry() {
            policy.outputRanDry(now: now, wallNow: now + wallOffset)
        }
    }

    /// Three seconds at the target: warmed up, settled, the end to end steady.
    static func steady(oneClock: Bool = true) -> Timeline {
        var t = Timeline(oneClock: oneClock)
        t.run(3)
        #expect(t.actions.isEmpty)
        #expect(t.policy.control.atTarget)
        return t
    }

    @Test func lowMarginWithLevelIntactPutsNothingIn() {
        // libpulse's interpolated clock misreads the margin 5 ms low; the frame counts show the
        // end to end where it was: the verdict (levelFell) puts no silence in and counts nothing.
        var t = Self.steady()
        t.margin = 0.003
        t.run(0.06)
        #expect(t.policy.control.awaitingFallVerdict)
        // The verdict comes with the next timing replies (every 0.1 s here).
        let asked = t.now
        while t.policy.control.awaitingFallVerdict && t.now - asked < 0.3 { t.block() }
        #expect(t.now - asked < 0.25)
        t.margin = 0.008
        t.run(2)
        #expect(t.actions.isEmpty, "\(t.actions)")
        #expect(t.policy.control.underruns == 0)
        #expect(t.underrunsCounted == 0)
    }

    @Test func lowMarginWithLevelFallenPutsTheFallBack() {
        // The level really fell by 2 ms (output skipped): the frame counts say so, and exactly
        // that much silence goes in, counted as an underrun.
        var t = Self.steady()
        t.margin = 0.003
        t.endToEnd -= 0.002
        t.run(0.3)
        #expect(t.actions == [.insertSilence(96)], "\(t.actions)")
        #expect(t.policy.control.underruns == 1)
        #expect(t.underrunsCounted == 1)
    }

    @Test func lowMarginWithoutTimingRepliesIsSetByTheMargin() {
        // No frame counts come: after the held-gap wait the margin decides, as LatencyControl alone.
        var t = Self.steady()
        t.timingReplies = false
        t.margin = 0.003
        t.run(0.5)
        #expect(t.actions == [.insertSilence(240)], "\(t.actions)")
    }

    @Test func gapHeldAfterDryReportIsTakenBack() {
        // The server ran dry and kept the 3 ms gap as latency (prebuf): the margin reads 3 ms high
        // and the end to end grew by 3 ms. Exactly that is dropped once both servers have timed,
        // and the one dropout is counted once (from the dry report).
        var t = Self.steady()
        t.ranDry()
        t.margin += 0.003
        t.endToEnd += 0.003
        t.run(1)
        #expect(t.actions == [.dropInput(144)], "\(t.actions)")
        #expect(t.policy.control.underruns == 1)
        #expect(t.underrunsCounted == 1)
        t.run(3)
        #expect(t.actions.count == 1)
    }

    @Test func dryReportWithNothingKeptDropsNothing() {
        // The sink rewound in time: the end to end did not grow, nothing is taken back; the
        // report still counts as a dropout (most are heard).
        var t = Self.steady()
        t.ranDry()
        t.run(2)
        #expect(t.actions.isEmpty, "\(t.actions)")
        #expect(t.underrunsCounted == 1)
    }

    /// A stall of the loop: one block finds the queue empty (an underrun), then the margin reads
    /// `residual` above the target (inside the dead band) and the end to end stays up by as much.
    static func stall(_ t: inout Timeline, residual: Double) {
        t.margin = -0.001
        t.block()
        t.margin = 0.008 + residual
        t.endToEnd += residual
    }

    @Test func levelIsRestoredASecondAfterADropout() {
        // 0.5 ms left as latency hides in the margin's dead band: a second after the dropout,
        // the figures steady, the frame counts take it back.
        var t = Self.steady()
        Self.stall(&t, residual: 0.0005)
        let at = t.now
        t.run(0.9)
        #expect(t.actions.isEmpty, "\(t.actions)")
        t.run(1)
        #expect(t.actions.count == 1, "\(t.actions)")
        if case .dropInput(let n)? = t.actions.first {
            #expect((23...24).contains(n), "\(n)")
        } else {
            Issue.record("expected input dropped, got \(t.actions)")
        }
        #expect(t.verdicts.first { $0.v.action != .none }.map { $0.t - at }.map { $0 >= 1 && $0 < 1.1 } == true)
        #expect(t.underrunsCounted == 1)
    }

    @Test func restoreLeavesALevelWithinTheJitterAlone() {
        var t = Self.steady()
        Self.stall(&t, residual: 0.0002)
        t.run(3)
        #expect(t.actions.isEmpty, "\(t.actions)")
    }

    @Test func silentDropoutIsMendedButNotCounted() {
        // Below −70 dBFS nobody hears the gap: neither counted nor a reason to raise the latency.
        var t = Self.steady()
        t.peak = 2e-4
        // The output's recent peak decays from 0.1 below −70 dBFS within 1.5 s.
        t.run(2)
        Self.stall(&t, residual: 0)
        t.run(1)
        #expect(t.policy.control.underruns == 1)
        #expect(t.underrunsCounted == 0)
        #expect(t.autoLatency.totalDropouts == 0)
    }

    @Test func audibleDropoutIsCounted() {
        var t = Self.steady()
        t.peak = 4e-4
        Self.stall(&t, residual: 0)
        t.run(1)
        #expect(t.underrunsCounted == 1)
        #expect(t.autoLatency.totalDropouts == 1)
    }

    @Test func recentPeakDecaysOverAQuarterSecond() {
        var t = Self.steady()
        t.peak = 0.1
        t.block()
        t.peak = 0
        t.run(0.25)
        #expect(abs(t.policy.recentPeak - 0.1 * Float(exp(-1.0))) < 0.002, "\(t.policy.recentPeak)")
    }

    @Test func dropoutWhileSettlingIsNotCounted() {
        // The first 2.5 s after sound starts flowing are the server settling.
        var t = Timeline()
        t.run(1.5)
        Self.stall(&t, residual: 0)
        t.run(1)
        #expect(t.policy.control.underruns == 1)
        #expect(t.underrunsCounted == 0)
        Self.stall(&t, residual: 0)
        t.run(1)
        #expect(t.policy.control.underruns == 2)
        #expect(t.underrunsCounted == 1)
    }

    @Test func secondUnderrunRaisesTheTarget() {
        // Two audible underruns within 30 s: automatic latency raises the target by a step, and
        // the raise goes in at once as silence.
        var t = Self.steady()
        Self.stall(&t, residual: 0)
        t.run(2)
        #expect(t.verdicts.allSatisfy { $0.v.raisedTargetMs == nil })
        Self.stall(&t, residual: 0)
        t.run(2)
        let raised = t.verdicts.filter { $0.v.raisedTargetMs != nil }
        #expect(raised.count == 1)
        #expect(raised.first?.v.raisedTargetMs == 10)
        #expect(raised.first?.v.action == .insertSilence(96))
        #expect(abs(t.policy.control.target - 0.010) < 1e-12)
        #expect(t.underrunsCounted == 2)
    }

    @Test func overrunIsCountedAsSuchAndDoesNotRaise() {
        // Input piled up behind a late loop: 6 ms above the target for longer than the hold. The
        // excess is dropped and counted as an overrun; automatic latency does not hear it.
        var t = Self.steady()
        t.margin += 0.006
        t.endToEnd += 0.006
        t.run(1)
        #expect(t.actions == [.dropInput(288)], "\(t.actions)")
        #expect(t.overrunsCounted == 1)
        #expect(t.underrunsCounted == 0)
        #expect(t.autoLatency.totalDropouts == 0)
        #expect(t.policy.control.overruns == 1)
    }

    @Test func driftMeterIsClearedByADropout() {
        // Two clocks, the input 300 ppm fast in the frame counts: the meter gives its verdict
        // about six seconds after settling; a dropout (which can step the counts) clears it, and
        // it takes as long again.
        var t = Timeline(oneClock: false)
        t.drift = 300e-6
        t.run(10)
        let measured = t.policy.control.clockDrift
        #expect(measured.map { abs($0 - 300e-6) < 10e-6 } == true, "\(String(describing: measured))")
        Self.stall(&t, residual: 0)
        #expect(t.policy.control.clockDrift == nil)
        t.run(3)
        #expect(t.policy.control.clockDrift == nil)
        t.run(5)
        #expect(t.policy.control.clockDrift != nil)
    }

    @Test func driftMeterIsClearedByADryReport() {
        var t = Timeline(oneClock: false)
        t.drift = 300e-6
        t.run(10)
        #expect(t.policy.control.clockDrift != nil)
        t.ranDry()
        #expect(t.policy.control.clockDrift == nil)
    }

    @Test func oneClockNeverFeedsTheDriftMeter() {
        var t = Timeline(oneClock: true)
        t.drift = 300e-6
        t.run(10)
        #expect(t.policy.control.clockDrift == nil)
        #expect(!t.policy.control.following)
    }

    @Test func latencyFigureIsTheMeanOfSettledEndToEnds() {
        var t = Timeline()
        t.run(2)
        #expect(t.policy.takeLatencyMs() == nil)
        t.run(1)
        let ms = t.policy.takeLatencyMs()
        #expect(ms.map { abs($0 - 20) < 1e-9 } == true, "\(String(describing: ms))")
        #expect(t.policy.takeLatencyMs() == nil)
        t.policy.noteLatency(0.010)
        t.policy.noteLatency(0.020)
        #expect(t.policy.takeLatencyMs().map { abs($0 - 15) < 1e-9 } == true)
    }

    @Test func aSteadyLevelWithJitteryRepliesIsLeftAlone() {
        // What the settings sweep hears as a clean take: a minute at the target, the replies
        // 0.2 ms apart from one another, nothing put in or dropped, nothing counted.
        var t = Timeline()
        var phase = 0.0
        let end = 60.0
        while t.now < end {
            phase += 0.37
            t.endToEnd = 0.020 + 0.0002 * (phase.truncatingRemainder(dividingBy: 1) - 0.5)
            t.block()
        }
        #expect(t.actions.isEmpty, "\(t.actions)")
        #expect(t.policy.control.dropouts == 0)
        #expect(t.verdicts.isEmpty)
    }

    @Test func dryReportWhileSettlingIsNotCounted() {
        // A dry report in the first 2.5 s is the server settling: mended, not counted for the
        // user nor for automatic latency.
        var t = Timeline()
        t.run(1)
        t.ranDry()
        t.run(1)
        #expect(t.policy.control.underruns == 1)
        #expect(t.underrunsCounted == 0)
        #expect(t.autoLatency.totalDropouts == 0)
    }

    @Test func dryReportBeforeTheFirstBlockIsNotADropout() {
        // The output runs dry before anything was written: nothing is playing yet.
        var t = Timeline()
        t.ranDry()
        t.run(4)
        #expect(t.policy.control.dropouts == 0)
        #expect(t.actions.isEmpty)
    }

    @Test func aDriftingInputIsFollowedFromTheFrameCounts() {
        // Two clocks, 300 ppm apart in the frame counts: once settled and measured, the control
        // follows (the resampler goes in), the drift near the counted one.
        var t = Timeline(oneClock: false)
        t.drift = 300e-6
        t.run(12)
        #expect(t.policy.control.following)
        #expect(t.policy.control.ratio != 1)
    }

    @Test func combineNetsFrames() {
        #expect(PulseLatencyPolicy.combine(.insertSilence(96), .dropInput(40)) == .insertSilence(56))
        #expect(PulseLatencyPolicy.combine(.dropInput(96), .insertSilence(40)) == .dropInput(56))
        #expect(PulseLatencyPolicy.combine(.dropInput(5), .insertSilence(5)) == .none)
        #expect(PulseLatencyPolicy.combine(.none, .none) == .none)
    }
}

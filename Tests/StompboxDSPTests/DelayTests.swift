import Testing
@testable import StompboxDSP
import StompboxTestSupport

@Suite struct DelayTests {
    static func make(time: Float, feedback: Float, mix: Float, rate: Double = 48_000, block: Int = 256) -> (Delay, ParameterStore) {
        let p = ParameterStore()
        p[.delayTime] = time
        p[.delayFeedback] = feedback
        p[.delayMix] = mix
        let d = Delay(parameters: p)
        d.prepare(sampleRate: rate, maximumBlockSize: block)
        return (d, p)
    }

    struct Setting: CustomTestStringConvertible, Sendable {
        let time: Float, feedback: Float, mix: Float, rate: Double
        var testDescription: String { "\(time) ms, feedback \(feedback), mix \(mix), \(Int(rate)) Hz" }
    }

    @Test(arguments: [
        Setting(time: 350, feedback: 0.4, mix: 0.35, rate: 48_000),
        Setting(time: 20, feedback: 0.95, mix: 1, rate: 48_000),
        Setting(time: 123.4, feedback: 0.7, mix: 0.5, rate: 44_100),
        Setting(time: 2000, feedback: 0.5, mix: 0.8, rate: 48_000),
        Setting(time: 777, feedback: 0.9, mix: 0.25, rate: 96_000),
    ])
    func impulseEchoesAtTheTimeScaledByFeedback(_ s: Setting) {
        let (d, _) = Self.make(time: s.time, feedback: s.feedback, mix: s.mix, rate: s.rate)
        let spacing = Int((Double(s.time) * s.rate / 1000).rounded())
        let echoes = 6
        let out = Render.through(d, Signal.impulse(length: spacing * echoes + 100), block: 256)
        #expect(out[0] == 1, "dry impulse at unity")
        var expected = s.mix
        var previousPeak: Float = 0
        for k in 1...echoes {
            // Where the k-th echo is, within ±1 sample of k·spacing, and how tall.
            let window = (k * spacing - 1)...(k * spacing + 1)
            let index = window.max { abs(out[$0]) < abs(out[$1]) }!
            #expect(abs(index - k * spacing) <= 1, "echo \(k) at \(index), expected \(k * spacing)")
            let peak = out[index]
            #expect(abs(peak / expected - 1) < 0.02, "echo \(k): \(peak), expected \(expected)")
            if k > 1 {
                #expect(abs(peak / previousPeak / s.feedback - 1) < 0.02, "echo \(k) / echo \(k - 1)")
            }
            previousPeak = peak
            expected *= s.feedback
            // Nothing between the echoes: the loop holds no filter.
            guard k < echoes else { continue }
            let gap = out[(window.upperBound + 1)..<((k + 1) * spacing - 1)]
            #expect(Measure.peak(gap) == 0, "energy between echo \(k) and \(k + 1)")
        }
    }

    /// The largest sample step a sine of this amplitude and frequency can produce, through a
    /// delay with this mix and feedback (every echo in phase: the worst case).
    static func stepBound(frequency: Double, amplitude: Float, mix: Float, feedback: Float) -> Float {
        let own = amplitude * Float(2 * Double.pi * frequency / 48_000)
        return own * (1 + mix / (1 - feedback))
    }

    @Test func jumpingTheTimeWhilePlayingDoesNotClick() {
        let (d, p) = Self.make(time: 350, feedback: 0.4, mix: 0.6, block: 128)
        // 450 Hz: 150 ms is 67.5 periods, so the old and new read positions are in antiphase.
        let sine = Signal.sine(frequency: 450, seconds: 3, amplitude: 0.5)
        // The change lands near a crest (a quarter period past a zero crossing), where an
        // instant switch of read position would step by up to 2 · mix · amplitude.
        let change = 96_000 + 27
        let before = Render.through(d, Array(sine[0..<change]), block: 128)
        p[.delayTime] = 500
        let after = Render.through(d, Array(sine[change...]), block: 128)
        let bound = Self.stepBound(frequency: 450, amplitude: 0.5, mix: 0.6, feedback: 0.4)
        let stepBefore = Measure.largestStep(Array(before[48_000...]))
        let stepAfter = Measure.largestStep(Array(before.suffix(1)) + after)
        #expect(stepBefore <= bound * 1.001)
        #expect(stepAfter <= bound * 1.001, "step \(stepAfter) after the change; the signal's own bound is \(bound)")
    }

    @Test func echoFollowsTheNewTimeAfterTheFade() {
        let (d, p) = Self.make(time: 350, feedback: 0, mix: 1, block: 128)
        _ = Render.through(d, Signal.noise(length: 20_000), block: 128)
        p[.delayTime] = 100
        // Let the fade (30 ms) and the old echoes (350 ms) pass in silence.
        let quiet = Render.through(d, Signal.silence(20_000), block: 128)
        // 100 ms after the input stopped (plus the fade) the line reads silence.
        #expect(Measure.peak(quiet[7_000...]) == 0)
        let out = Render.through(d, Signal.impulse(length: 10_000), block: 128)
        #expect(out[4_800] == 1, "echo at the new 100 ms")
        #expect(Measure.peak(out[1..<4_800]) == 0 && Measure.peak(out[4_801...]) == 0)
    }

    @Test func aKnobThatKeepsMovingKeepsCrossfading() {
        let (d, p) = Self.make(time: 350, feedback: 0.5, mix: 0.5, block: 64)
        let sine = Signal.sine(frequency: 330, seconds: 5, amplitude: 0.5)
        var out: [Float] = []
        var start = 0
        // The time knob sweeps 350 → 1200 → 80 ms over 3 s, a new value every 64-sample block.
        while start < sine.count {
            let t = Double(start) / 48_000
            let time: Double = t < 1.5 ? 350 + 850 * t / 1.5 : (t < 3 ? 1200 - 1120 * (t - 1.5) / 1.5 : 80)
            p[.delayTime] = Float(time)
            let end = min(start + 64, sine.count)
            out += Render.through(d, Array(sine[start..<end]), block: 64)
            start = end
        }
        #expect(Measure.allFinite(out))
        let bound = Self.stepBound(frequency: 330, amplitude: 0.5, mix: 0.5, feedback: 0.5)
        let step = Measure.largestStep(out)
        #expect(step <= bound * 1.001, "largest step \(step), signal bound \(bound)")
        // The fades converged on the knob's final 80 ms: with the feedback off and the line
        // run empty, an impulse comes back exactly once, 3840 samples later.
        p[.delayFeedback] = 0
        _ = Render.through(d, Signal.silence(48_000), block: 64)
        let impulse = Render.through(d, Signal.impulse(length: 10_000), block: 64)
        #expect(impulse[3_840] == 0.5)
        #expect(Measure.peak(impulse[1..<3_840]) == 0 && Measure.peak(impulse[3_841...]) == 0)
    }

    @Test func feedbackAndMixJumpsAreSmoothed() {
        let (d, p) = Self.make(time: 20, feedback: 0, mix: 0, block: 128)
        let sine = Signal.sine(frequency: 440, seconds: 2, amplitude: 0.5)
        _ = Render.through(d, Array(sine[0..<48_000]), block: 128)
        p[.delayFeedback] = 0.95
        p[.delayMix] = 1
        let after = Render.through(d, Array(sine[48_000..<52_800]), block: 128)
        // Within the 20 ms ramps the step stays of the order of the signal's own slope; an
        // instant mix jump would add a full wet sample (up to 0.5) in one step.
        let own = Float(0.5 * 2 * Double.pi * 440 / 48_000)
        #expect(Measure.largestStep(after) < 4 * own)
    }

    @Test func nonFiniteInputIsSilencedAndTheDelayRecovers() {
        let (d, _) = Self.make(time: 100, feedback: 0.6, mix: 0.5, block: 128)
        var input = Signal.noise(length: 9_600)
        input[10] = .nan; input[500] = .infinity; input[900] = -.infinity
        let out = Render.through(d, input, block: 128)
        #expect(Measure.allFinite(out))
        #expect(out[10] == 0 && out[500] == 0)
        // Absurd but finite input: the state is dropped rather than overflowing.
        let loud = Render.through(d, [Float](repeating: 3e38, count: 1000), block: 128)
        #expect(Measure.allFinite(loud))
        d.reset()
        let impulse = Render.through(d, Signal.impulse(length: 5_000), block: 128)
        #expect(impulse[4_800] == 0.5)
    }

    @Test func theLongestTailEndsInExactSilence() {
        // Feedback 0.95 at 20 ms: more than a thousand echoes; the denormal flush ends them in
        // true zeros after about 22 s instead of crawling through denormals.
        let (d, _) = Self.make(time: 20, feedback: 0.95, mix: 1, block: 512)
        let out = Render.through(d, Signal.noise(length: 960) + Signal.silence(26 * 48_000), block: 512)
        #expect(out[(out.count - 48_000)...].allSatisfy { $0 == 0 })
    }

    @Test func bufferHoldsTwoSecondsAtAnyRate() {
        for rate in [44_100.0, 48_000, 96_000, 192_000] {
            let (d, _) = Self.make(time: 2000, feedback: 0, mix: 1, rate: rate, block: 512)
            let spacing = Int(2 * rate)
            let out = Render.through(d, Signal.impulse(length: spacing + 10), block: 512)
            #expect(out[spacing] == 1, "\(rate) Hz")
        }
    }
}

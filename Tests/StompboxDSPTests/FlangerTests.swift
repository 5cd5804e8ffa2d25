import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

@Suite struct FlangerTests {
    /// Sends a pulse every `spacing` samples through the wet path alone (mix 1, no feedback) and
    /// returns each pulse's time and its measured delay: the centroid of the wet response.
    /// The cubic interpolator reproduces straight lines exactly, so the centroid of a delayed
    /// pulse is its fractional delay.
    func delayTrack(rate: Float, depth: Float, centreMs: Float, seconds: Double,
                    spacing: Int = 256) -> (times: [Double], delays: [Double]) {
        let p = store([.flangerRate: rate, .flangerDepth: depth, .flangerDelay: centreMs,
                       .flangerFeedback: 0, .flangerMix: 1])
        let fl = prepared(Flanger(parameters: p))
        let n = Int(seconds * testRate)
        var x = [Float](repeating: 0, count: n)
        for i in stride(from: 0, to: n, by: spacing) { x[i] = 1 }
        let y = Render.through(fl, x)
        var times: [Double] = [], delays: [Double] = []
        for start in stride(from: 0, to: n - spacing, by: spacing) {
            var sum = 0.0, moment = 0.0
            for k in 0..<spacing {
                sum += Double(y[start + k])
                moment += Double(k) * Double(y[start + k])
            }
            times.append(Double(start))
            delays.append(moment / sum)
        }
        return (times, delays)
    }

    @Test(arguments: [Float(0.3), 1, 5])
    func sweepPeriodIsOneOverRate(_ rate: Float) {
        let cycles = 4.0
        let track = delayTrack(rate: rate, depth: 0.7, centreMs: 2, seconds: cycles / Double(rate) + 0.05,
                               spacing: 256)
        let lo = track.delays.min()!, hi = track.delays.max()!
        let crossings = upwardCrossings(times: track.times, values: track.delays, level: (lo + hi) / 2)
        #expect(crossings.count >= 3)
        let period = meanPeriod(crossings) / testRate
        print("flanger rate \(rate) Hz: sweep period \(period) s, expected \(1 / rate)")
        #expect(abs(period * Double(rate) - 1) <= 0.02, "rate \(rate) Hz: measured sweep period \(period) s")
    }

    @Test(arguments: [(Float(0.7), Float(2)), (1, 2), (0.3, 8), (0, 5)])
    func sweepWidthFollowsDepthAroundTheCentre(_ depth: Float, _ centreMs: Float) {
        let track = delayTrack(rate: 2, depth: depth, centreMs: centreMs, seconds: 1.1, spacing: 512)
        let centre = Double(centreMs) / 1000 * testRate
        let swing = 0.9 * Double(depth) * centre
        let lo = track.delays.min()!, hi = track.delays.max()!
        #expect(abs(hi - (centre + swing)) <= 0.02 * centre + 0.5, "max delay \(hi) samples")
        #expect(abs(lo - (centre - swing)) <= 0.02 * centre + 0.5, "min delay \(lo) samples")
    }

    @Test(arguments: [Float(0.5), -0.5, 0.9])
    func feedbackScalesEachPassOfTheLoop(_ feedback: Float) {
        let p = store([.flangerDepth: 0, .flangerDelay: 2, .flangerFeedback: feedback, .flangerMix: 1])
        let fl = prepared(Flanger(parameters: p))
        let y = Render.through(fl, Signal.impulse(length: 2000, at: 100))
        let d = 96 // 2 ms at 48 kHz
        let echoes = (1...5).map { Double(y[100 + $0 * d]) }
        let g = Double((1 - feedback * feedback).squareRoot())
        #expect(abs(echoes[0] - g) < 1e-4)
        for k in 1..<5 {
            #expect(abs(echoes[k] / echoes[k - 1] - Double(feedback)) < 0.01 * abs(Double(feedback)))
        }
    }

    @Test func fractionalDelayCarvesTheNotchWhereItShould() {
        // Mix ½ without feedback: x + x delayed by 1.01 ms cancels at 1/(2·1.01 ms) ≈ 495 Hz, a
        // frequency only an interpolated (fractional, 48.48-sample) delay puts there.
        let p = store([.flangerDepth: 0, .flangerDelay: 1.01, .flangerFeedback: 0, .flangerMix: 0.5])
        let notch = testRate / (2 * 48.48)
        func level(_ f: Double) -> Double {
            let fl = prepared(Flanger(parameters: p))
            let x = Signal.sine(frequency: f, seconds: 0.5)
            let y = Render.through(fl, x)
            return decibels(Double(Measure.amplitude(of: f, in: y[4800...]) / Measure.amplitude(of: f, in: x[4800...])))
        }
        #expect(level(notch) < -40, "notch \(level(notch)) dB")
        #expect(level(2 * notch) > -0.1) // the comb's peak: in phase again
    }

    @Test func mixZeroIsDry() {
        let fl = prepared(Flanger(parameters: store([.flangerMix: 0])))
        let x = Signal.guitarRiff(seconds: 0.5)
        let unchanged = Render.through(fl, x) == x
        #expect(unchanged)
    }

    @Test func extremeFeedbackStaysStableAndDecays() {
        for fb in [Float(0.95), -0.95] {
            let fl = prepared(Flanger(parameters: store([.flangerFeedback: fb, .flangerDelay: 0.5, .flangerDepth: 1, .flangerRate: 5])))
            let y = Render.through(fl, Signal.noise(length: 48_000) + Signal.silence(96_000))
            let finite = Measure.allFinite(y)
            #expect(finite)
            #expect(Measure.peak(y) < 10)
            #expect(Measure.peak(y[(48_000 + 48_000)...]) == 0)
        }
    }
}

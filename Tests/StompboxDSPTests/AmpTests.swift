import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

@Suite struct AmpTests {
    /// The tone stack's gain at `frequency` (dB), measured with a sine through the digital filter.
    func stackGain(bass: Float = 0.5, mid: Float = 0.5, treble: Float = 0.5, at frequency: Double) -> Double {
        var stack = ToneStack()
        stack.setKnobs(bass: bass, mid: mid, treble: treble, sampleRate: testRate)
        let x = Signal.sine(frequency: frequency, seconds: 0.5, amplitude: 0.5)
        let y = x.map { Float(stack.process(Double($0))) }
        return decibels(Double(Measure.amplitude(of: frequency, in: y[12_000...]) / Measure.amplitude(of: frequency, in: x[12_000...])))
    }

    /// |H(j2πf)| of Yeh and Smith's analog transfer function, in dB.
    func analogGain(bass: Float, mid: Float, treble: Float, at frequency: Double) -> Double {
        let h = ToneStack.analog(t: Double(treble), m: Double(mid), l: ToneStack.bassPosition(bass))
        let w = 2 * Double.pi * frequency
        // s = jw: numerator and denominator as (real, imaginary).
        let nRe = -h.b2 * w * w, nIm = h.b1 * w - h.b3 * w * w * w
        let dRe = 1 - h.a2 * w * w, dIm = h.a1 * w - h.a3 * w * w * w
        return 10 * log10((nRe * nRe + nIm * nIm) / (dRe * dRe + dIm * dIm))
    }

    @Test func eachKnobMovesItsBand() {
        let bass = (stackGain(bass: 0, at: 100), stackGain(bass: 1, at: 100))
        let mid = (stackGain(mid: 0, at: 600), stackGain(mid: 1, at: 600))
        let treble = (stackGain(treble: 0, at: 3000), stackGain(treble: 1, at: 3000))
        print("tone stack: 100 Hz \(bass.0)…\(bass.1) dB over bass, 600 Hz \(mid.0)…\(mid.1) dB over mid, 3 kHz \(treble.0)…\(treble.1) dB over treble")
        #expect(bass.1 - bass.0 > 8, "bass: \(bass)")
        #expect(mid.1 - mid.0 > 6, "mid: \(mid)")
        #expect(treble.1 - treble.0 > 9, "treble: \(treble)")
        // Each knob is a shelf or a band, not a level: turning it moves the other bands far less.
        #expect(abs(stackGain(bass: 0, at: 3000) - stackGain(bass: 1, at: 3000)) < 1)
        #expect(abs(stackGain(treble: 0, at: 100) - stackGain(treble: 1, at: 100)) < 1)
    }

    /// The passive stack's knobs load one another (three peaking filters would not): the mid
    /// knob lifts the bass too, the bass knob lowers the mids, treble lifts the upper mids.
    @Test func theKnobsInteractAsThePassiveStackDoes() {
        let bassByMid = stackGain(mid: 1, at: 100) - stackGain(mid: 0, at: 100)
        let midByBass = stackGain(bass: 1, at: 600) - stackGain(bass: 0, at: 600)
        let kHzByTreble = stackGain(treble: 1, at: 1000) - stackGain(treble: 0, at: 1000)
        let bassByTreble = stackGain(bass: 0, treble: 1, at: 100) - stackGain(bass: 0, treble: 0, at: 100)
        print("interaction: 100 Hz +\(bassByMid) dB from mid 0→1, 600 Hz \(midByBass) dB from bass 0→1, 1 kHz +\(kHzByTreble) dB from treble 0→1, 100 Hz \(bassByTreble) dB from treble 0→1 (bass 0)")
        #expect(bassByMid > 0.3 && bassByMid < 3, "\(bassByMid)")
        #expect(midByBass < -0.5 && midByBass > -4, "\(midByBass)")
        #expect(kHzByTreble > 2, "\(kHzByTreble)")
        #expect(abs(bassByTreble) > 0.1, "\(bassByTreble)")
        // Everything at zero nearly mutes it, as the real stack does.
        for f in [100.0, 600, 3000] { #expect(stackGain(bass: 0, mid: 0, treble: 0, at: f) < -14) }
    }

    /// The bilinear transform keeps the analog response (the warping is small below 5 kHz).
    @Test(arguments: [(Float(0.5), Float(0.5), Float(0.5)), (0, 1, 0.2), (1, 0, 1), (0.8, 0.3, 0.6)])
    func theDigitalStackFollowsTheAnalogOne(_ bass: Float, _ mid: Float, _ treble: Float) {
        for f in [100.0, 600, 3000] {
            let digital = stackGain(bass: bass, mid: mid, treble: treble, at: f)
            let analog = analogGain(bass: bass, mid: mid, treble: treble, at: f)
            #expect(abs(digital - analog) < 0.25, "\(bass)/\(mid)/\(treble) at \(f) Hz: \(digital) against \(analog)")
        }
    }

    /// The amp's gain for a quiet sine (clean, gain 0: the curve's linear region), in dB.
    func ampSmallSignalGain(_ settings: [Parameter: Float], at frequency: Double) -> Double {
        let amp = prepared(Amp(parameters: store(settings.merging([.ampModel: 0, .ampGain: 0, .ampMaster: 0]) { a, _ in a })))
        let x = Signal.sine(frequency: frequency, seconds: 0.5, amplitude: 0.001)
        let y = Render.through(amp, x)
        return decibels(Double(Measure.amplitude(of: frequency, in: y[12_000...]) / Measure.amplitude(of: frequency, in: x[12_000...])))
    }

    @Test func theAmpsKnobsMoveItsResponseAsTheStacksDo() {
        for (knob, f) in [(Parameter.ampBass, 100.0), (.ampMid, 600), (.ampTreble, 3000)] {
            let amp = ampSmallSignalGain([knob: 1], at: f) - ampSmallSignalGain([knob: 0], at: f)
            let stack = knob == .ampBass ? stackGain(bass: 1, at: f) - stackGain(bass: 0, at: f)
                : knob == .ampMid ? stackGain(mid: 1, at: f) - stackGain(mid: 0, at: f)
                : stackGain(treble: 1, at: f) - stackGain(treble: 0, at: f)
            print("amp \(knob.id) 0→1 at \(f) Hz: \(amp) dB (the stack alone \(stack) dB)")
            #expect(abs(amp - stack) < 0.5, "\(knob.id): \(amp) against \(stack)")
        }
    }

    /// Energy of everything but the harmonics of 2.5 kHz, relative to the harmonics, in dB.
    func nonHarmonicRatio(_ model: AmpModel, gain: Float) -> Double {
        let p = store([.ampModel: Float(model.rawValue), .ampGain: gain, .ampTreble: 1, .ampMaster: 0])
        let amp = prepared(Amp(parameters: p))
        let y = Render.through(amp, Signal.sine(frequency: 2500, seconds: 1, amplitude: 0.5))
        let e = Spectrum.harmonicAndOtherEnergy(y[9600...], fundamental: 2500)
        return 10 * log10(e.other / e.harmonic)
    }

    /// Lead at full gain (+40 dB and two more stages: a square wave) folds nothing audible back.
    @Test func aliasingOfTheLeadAtFullGainStaysBelowMinus50dBc() {
        let lead = nonHarmonicRatio(.lead, gain: 1)
        let crunch = nonHarmonicRatio(.crunch, gain: 1)
        print("amp 2.5 kHz @ 0.5, gain 1: non-harmonic energy \(lead) dBc lead, \(crunch) dBc crunch")
        #expect(lead <= -50)
        #expect(crunch <= -50)
    }

    /// Harmonic levels of a 220 Hz sine through the amp, relative to the fundamental (dB).
    func harmonics(_ model: AmpModel, gain: Float, amplitude: Float) -> (h2: Double, h3: Double) {
        let amp = prepared(Amp(parameters: store([.ampModel: Float(model.rawValue), .ampGain: gain, .ampMaster: 0])))
        let y = Render.through(amp, Signal.sine(frequency: 220, seconds: 1, amplitude: amplitude))
        let tail = y[24_000...]
        let h1 = Double(Measure.amplitude(of: 220, in: tail))
        return (decibels(Double(Measure.amplitude(of: 440, in: tail)) / h1), decibels(Double(Measure.amplitude(of: 660, in: tail)) / h1))
    }

    /// The biased curve adds a second harmonic at moderate levels, before it clips: the
    /// asymmetry of a triode, even harmonics first.
    @Test func theCleanModelAddsEvenHarmonicsAtModerateLevel() {
        let moderate = harmonics(.clean, gain: 0.5, amplitude: 0.1)
        let quiet = harmonics(.clean, gain: 0.5, amplitude: 0.02)
        print("clean, gain 0.5, 220 Hz: H2 \(moderate.h2) dB, H3 \(moderate.h3) dB at 0.1; H2 \(quiet.h2) dB at 0.02")
        #expect(moderate.h2 > -30, "H2 \(moderate.h2)")
        #expect(moderate.h2 > moderate.h3 + 6, "H2 \(moderate.h2), H3 \(moderate.h3)")
        // Level-dependent: the distortion grows with the level (about 6 dB of H2 per 6 dB in).
        #expect(moderate.h2 - quiet.h2 > 10, "H2 \(quiet.h2) → \(moderate.h2)")
    }

    @Test(arguments: AmpModel.allCases)
    func outputIsBoundedAtAnySetting(_ model: AmpModel) {
        for gain in [Float(0), 1] {
            for tone in [Float(0), 1] {
                let p = store([.ampModel: Float(model.rawValue), .ampGain: gain, .ampBass: tone, .ampMid: tone,
                               .ampTreble: tone, .ampMaster: 6])
                let amp = prepared(Amp(parameters: p))
                for x in loudInputs {
                    let y = Render.through(amp, x)
                    let finite = Measure.allFinite(y)
                    #expect(finite)
                    #expect(Measure.peak(y) <= 4, "\(model) gain \(gain) tone \(tone): peak \(Measure.peak(y))")
                }
            }
        }
    }

    /// With no stage saturating, the oversampled path is a pure delay of the latency it
    /// reports (5 samples of filters, an eighth for each of the three curves' averaging).
    @Test func theStagesDelayByTheReportedLatency() {
        let o = Oversampler()
        o.prepare(maximumBlockSize: 128)
        var stages = [Oversampler.CurveState(bias: 0.3), .init(bias: 0.2), .init(bias: 0.15)]
        let f = 500.0
        let x = Signal.sine(frequency: f, seconds: 0.2, amplitude: 0.5)
        var y = [Float](repeating: 0, count: x.count)
        for start in stride(from: 0, to: x.count, by: 128) {
            let n = min(128, x.count - start)
            for i in 0..<n { o.input[i] = x[start + i] }
            let up = o.interpolator, out = o.output
            o.forEachGroup(n) { i in
                var q = up.group(i)
                for s in stages.indices { stages[s].straightLine(&q, gain: 1) }
                out[i] = q
            }
            y.withUnsafeMutableBufferPointer { o.downsample(into: $0.baseAddress! + start, count: n) }
        }
        let delay = Amp.latencySamples
        let expected = (0..<x.count).map { i in Float(0.5 * sin(2 * Double.pi * f * (Double(i) - delay) / testRate)) }
        let error = zip(y[4800...], expected[4800...]).map { abs($0 - $1) }.max()!
        #expect(error < 1e-3, "largest difference \(error) from the input \(delay) samples late")
        #expect(Amp.latencySamples == 5.375)
        #expect(PedalKind.amp.latency(testRate) == 5.375)
    }

    /// A new model glides in: no step beyond the signal's own when the switch flips mid-note.
    @Test func switchingTheModelDoesNotClick() {
        let p = store([.ampModel: 0, .ampGain: 0.3, .ampMaster: -12])
        let amp = prepared(Amp(parameters: p))
        let x = Signal.sine(frequency: 110, seconds: 1, amplitude: 0.05)
        var y: [Float] = []
        for (k, start) in stride(from: 0, to: x.count, by: 128).enumerated() {
            if k == 150 { p.set(.ampModel, 2) }
            if k == 300 { p.set(.ampModel, 1) }
            y += Render.through(amp, Array(x[start..<min(start + 128, x.count)]))
        }
        let steady = max(Measure.largestStep(Array(y[9600..<19_200])), Measure.largestStep(Array(y[28_800..<38_400])),
                         Measure.largestStep(Array(y[40_000...])))
        for at in [150 * 128, 300 * 128] {
            let during = Measure.largestStep(Array(y[(at - 1)..<(at + 2400)]))
            #expect(during <= 1.5 * steady + 0.002, "step \(during) at the switch, steady \(steady)")
        }
    }
}

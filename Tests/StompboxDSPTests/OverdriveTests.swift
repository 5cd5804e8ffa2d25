import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

@Suite struct OverdriveTests {
    /// Energy of everything but the harmonics of 2.5 kHz, relative to the harmonics, in dB.
    func nonHarmonicRatio(oversampling: Int, drive: Float = 0.7) -> Double {
        let p = store([.overdriveDrive: drive, .overdriveTone: 1, .overdriveLevel: 0])
        let od = prepared(Overdrive(parameters: p, oversamplingFactor: oversampling))
        let y = Render.through(od, Signal.sine(frequency: 2500, seconds: 1, amplitude: 0.5))
        let e = Spectrum.harmonicAndOtherEnergy(y[9600...], fundamental: 2500)
        return 10 * log10(e.other / e.harmonic)
    }

    @Test func oversamplingLowersAliasingByAtLeast20dB() {
        let plain = nonHarmonicRatio(oversampling: 1)
        let oversampled = nonHarmonicRatio(oversampling: 4)
        print("overdrive 2.5 kHz @ drive 0.7: non-harmonic energy \(plain) dB without, \(oversampled) dB with 4× oversampling")
        // Without oversampling the folded harmonics must be plainly there, or the test proves nothing.
        #expect(plain > -40)
        #expect(plain - oversampled >= 20)
    }

    /// At full drive (+40 dB: nearly a square wave, its harmonics falling only 6 dB an octave)
    /// the harmonics beyond the oversampled rate fold back unless the curve is anti-aliased.
    @Test func aliasingAtFullDriveStaysBelowMinus50dBc() {
        let ratio = nonHarmonicRatio(oversampling: 4, drive: 1)
        print("overdrive 2.5 kHz @ drive 1.0: non-harmonic energy \(ratio) dBc")
        #expect(ratio <= -50)
    }

    @Test func curveIsSmoothBoundedAndAsymmetric() {
        var previous = Overdrive.shape(-10)
        var previousSlope: Float = 0
        var largestSlopeChange: Float = 0
        for i in 1...20_000 {
            let x = -10 + Float(i) * 0.001
            let y = Overdrive.shape(x)
            let slope = (y - previous) / 0.001
            #expect(slope >= -1e-3, "monotonic at \(x)")
            if i > 1 { largestSlopeChange = max(largestSlopeChange, abs(slope - previousSlope)) }
            previous = y
            previousSlope = slope
            #expect(abs(y) <= 1.25)
        }
        // A hard clip would change its slope from ~1 to 0 in one step; this curve bends gently.
        #expect(largestSlopeChange < 0.01)
        #expect(Overdrive.shape(0) == 0)
        #expect(Overdrive.shape(10) < -Overdrive.shape(-10), "asymmetric")
    }

    @Test(arguments: [Float(0), 0.5, 1])
    func outputIsBoundedAtAnyDrive(_ drive: Float) {
        let p = store([.overdriveDrive: drive, .overdriveLevel: 0, .overdriveTone: 1])
        let od = prepared(Overdrive(parameters: p))
        for x in loudInputs {
            let y = Render.through(od, x)
            let finite = Measure.allFinite(y)
            #expect(finite)
            #expect(Measure.peak(y) <= 2.5, "peak \(Measure.peak(y)) at drive \(drive)")
        }
    }

    /// Small-signal gain (the curve's linear region) at one frequency, in dB.
    func smallSignalGain(_ settings: [Parameter: Float], frequency: Double) -> Double {
        let od = prepared(Overdrive(parameters: store(settings)))
        let x = Signal.sine(frequency: frequency, seconds: 0.5, amplitude: 0.0005)
        let y = Render.through(od, x)
        return decibels(Double(Measure.amplitude(of: frequency, in: y[12_000...])
            / Measure.amplitude(of: frequency, in: x[12_000...])))
    }

    @Test func driveIsPreGainOf0To40dB() {
        let base: [Parameter: Float] = [.overdriveTone: 1, .overdriveLevel: 0]
        let g0 = smallSignalGain(base.merging([.overdriveDrive: 0]) { $1 }, frequency: 400)
        let g05 = smallSignalGain(base.merging([.overdriveDrive: 0.5]) { $1 }, frequency: 400)
        let g1 = smallSignalGain(base.merging([.overdriveDrive: 1]) { $1 }, frequency: 400)
        #expect(abs((g05 - g0) - 20) < 0.2, "\(g05 - g0)")
        #expect(abs((g1 - g0) - 40) < 0.2, "\(g1 - g0)")
        // At drive 0 the pedal is near unity below the curve's knee.
        #expect(abs(g0) < 1)
    }

    @Test func levelScalesTheOutput() {
        let a = smallSignalGain([.overdriveDrive: 0, .overdriveLevel: 0], frequency: 300)
        let b = smallSignalGain([.overdriveDrive: 0, .overdriveLevel: -24], frequency: 300)
        let c = smallSignalGain([.overdriveDrive: 0, .overdriveLevel: 6], frequency: 300)
        #expect(abs((a - b) - 24) < 0.05)
        #expect(abs((c - a) - 6) < 0.05)
    }

    @Test(arguments: [(Float(0), 800.0), (0.5, 2529.8), (1, 8000)])
    func toneSetsTheLowPassCutoff(_ tone: Float, _ cutoff: Double) {
        let settings: [Parameter: Float] = [.overdriveDrive: 0, .overdriveLevel: 0, .overdriveTone: tone]
        let passband = smallSignalGain(settings, frequency: 100)
        let atCutoff = smallSignalGain(settings, frequency: cutoff)
        let octaveAbove = smallSignalGain(settings, frequency: min(2 * cutoff, 20_000))
        // A two-pole (Q 0.707) low-pass: −3 dB at the cutoff, about −12 dB an octave above.
        #expect(abs((atCutoff - passband) + 3) < 0.5, "tone \(tone): \(atCutoff - passband) dB at \(cutoff) Hz")
        #expect(octaveAbove - passband < -9)
    }

    @Test func noDCOffsetFromTheAsymmetricCurve() {
        let od = prepared(Overdrive(parameters: store([.overdriveDrive: 1, .overdriveLevel: 0])))
        let y = Render.through(od, Signal.sine(frequency: 220, seconds: 2, amplitude: 0.5))
        let tail = y[48_000...]
        let mean = tail.reduce(0.0) { $0 + Double($1) } / Double(tail.count)
        #expect(abs(mean) < 1e-3, "DC \(mean)")
    }

    @Test func asymmetryAddsEvenHarmonics() {
        // In the knee of the curve (drive 0.3, ×4 pre-gain) a second harmonic is plainly there.
        let od = prepared(Overdrive(parameters: store([.overdriveDrive: 0.3, .overdriveLevel: 0, .overdriveTone: 1])))
        let y = Render.through(od, Signal.sine(frequency: 220, seconds: 1, amplitude: 0.5))
        let tail = y[24_000...]
        let h2 = Measure.amplitude(of: 440, in: tail), h1 = Measure.amplitude(of: 220, in: tail)
        #expect(decibels(Double(h2 / h1)) > -30, "H2 \(decibels(Double(h2 / h1))) dB")
    }

    @Test func silenceGivesExactSilenceAfterSound() {
        let od = prepared(Overdrive(parameters: store([.overdriveDrive: 1])))
        _ = Render.through(od, Signal.noise(length: 24_000))
        let y = Render.through(od, Signal.silence(3 * 48_000))
        // The DC blocker's tail fades below −120 dB within half a second and to exact zero
        // (no lingering denormals) within two.
        #expect(Measure.peak(y[24_000...]) < 1e-6)
        #expect(Measure.peak(y[96_000...]) == 0)
    }

    @Test func nonFiniteInputIsSilencedAndForgotten() {
        let od = prepared(Overdrive(parameters: store([.overdriveDrive: 0.8])))
        var x = Signal.sine(frequency: 200, seconds: 0.5)
        x[1000] = .nan; x[1001] = .infinity; x[1002] = -.infinity
        let y = Render.through(od, x)
        let finite = Measure.allFinite(y)
            #expect(finite)
        let fresh = Render.through(prepared(Overdrive(parameters: store([.overdriveDrive: 0.8]))), Signal.sine(frequency: 200, seconds: 0.5))
        // 100 ms later it behaves as if nothing had happened.
        let late = 1002 + 4800
        let error = zip(y[late...], fresh[late...]).map { abs($0 - $1) }.max()!
        #expect(error < 1e-4)
    }
}

import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

@Suite struct EqualizerTests {
    /// Gain in dB that the EQ with `gains` applies to a sine at `frequency` (measured over the
    /// last half second, a whole number of cycles for every frequency used here).
    func measuredGain(_ gains: [Float], at frequency: Double) -> Double {
        var settings: [Parameter: Float] = [:]
        for (b, g) in gains.enumerated() { settings[Parameter.eqBands[b]] = g }
        let eq = prepared(Equalizer(parameters: store(settings)))
        let x = Signal.sine(frequency: frequency, seconds: 1, amplitude: 0.25)
        let y = Render.through(eq, x)
        return decibels(Double(Measure.amplitude(of: frequency, in: y[24_000...])
            / Measure.amplitude(of: frequency, in: x[24_000...])))
    }

    static let bandsAndGains: [(Int, Float)] = (0..<6).flatMap { b in [Float(-12), -6, 6, 12].map { (b, $0) } }

    @Test(arguments: bandsAndGains)
    func eachBandAloneHitsItsGainAtItsCentre(_ band: Int, _ gain: Float) {
        var gains = [Float](repeating: 0, count: 6)
        gains[band] = gain
        let measured = measuredGain(gains, at: Equalizer.bandFrequencies[band])
        #expect(abs(measured - Double(gain)) <= 0.2, "band \(band + 1) at \(gain) dB: measured \(measured) dB")
    }

    @Test func flatEQPassesTheSignalUnchanged() {
        let eq = prepared(Equalizer(parameters: store([:])))
        let x = Signal.guitarRiff(seconds: 1)
        let y = Render.through(eq, x)
        let error = zip(x, y).map { Double($0 - $1) }
        #expect(decibels(Double(Measure.rms(error.map { Float($0) }) / Measure.rms(x))) < -100 || error.allSatisfy { $0 == 0 })
    }

    @Test func returnsToAnExactPassThroughAfterASliderComesBackToZero() {
        let p = store([:])
        let eq = prepared(Equalizer(parameters: p))
        let x = Signal.guitarRiff(seconds: 2)
        var y = [Float]()
        var i = 0
        while i < x.count {
            if i == 4864 { p.set(.eqBand1, 9); p.set(.eqBand4, -7) }
            if i == 24_064 { p.set(.eqBand1, 0); p.set(.eqBand4, 0) }
            let n = min(256, x.count - i)
            y += Render.through(eq, Array(x[i..<i + n]))
            i += n
        }
        // While boosted it does something…
        #expect(Measure.rms(zip(x[9600..<24_000], y[9600..<24_000]).map { $0 - $1 }) > 0.01)
        // …and half a second after returning to flat the output is the input again.
        let error = zip(x[48_000...], y[48_000...]).map { $0 - $1 }
        let ratio = Double(Measure.rms(error)) / Double(Measure.rms(x[48_000...]))
        #expect(ratio == 0 || decibels(ratio) < -100, "error \(decibels(ratio)) dB")
    }

    @Test func responseCurveAPIMatchesTheMeasuredFilter() {
        let gains: [Float] = [6, -3, 9, -12, 4, -6]
        for f in [50.0, 100, 180, 400, 1000, 2500, 6000, 10000, 16000] {
            let predicted = Equalizer.magnitudeDecibels(atFrequency: f, bandGains: gains.map(Double.init), sampleRate: testRate)
            let measured = measuredGain(gains, at: f)
            #expect(abs(predicted - measured) < 0.1, "\(f) Hz: curve \(predicted) dB, filter \(measured) dB")
        }
        #expect(Equalizer.magnitudeDecibels(atFrequency: 1000, bandGains: [0, 0, 0, 0, 0, 0], sampleRate: testRate) == 0)
        // The bands overlap enough that equal boosts make a smooth plateau, not a comb.
        let plateau = stride(from: 150.0, through: 7000, by: 50).map {
            Equalizer.magnitudeDecibels(atFrequency: $0, bandGains: [6, 6, 6, 6, 6, 6], sampleRate: testRate)
        }
        #expect(plateau.max()! - plateau.min()! < 3, "ripple \(plateau.max()! - plateau.min()!) dB")
    }

    @Test func addsNoLatency() {
        let eq = prepared(Equalizer(parameters: store([.eqBand3: 12, .eqBand5: -12])))
        let y = Render.through(eq, Signal.impulse(length: 4800))
        // A biquad answers in the same sample (b0 ≠ 0): no look-ahead, no block delay.
        #expect(abs(y[0]) > 0.5)
        let peak = y.indices.max { abs(y[$0]) < abs(y[$1]) }!
        #expect(peak == 0)
    }

    /// A slider thrown end to end on each band, under a 1 kHz sine: the coefficients must glide,
    /// not step. A step in a coefficient shows as a corner in the waveform: the largest second
    /// difference during the ramp stays close to the steady signal's own.
    @Test(arguments: 0..<6)
    func aSliderJumpDoesNotZipper(_ band: Int) {
        let p = store([Parameter.eqBands[band]: -12])
        let eq = prepared(Equalizer(parameters: p))
        let x = Signal.sine(frequency: 1000, seconds: 0.6, amplitude: 0.25)
        var y = Render.through(eq, Array(x[..<9600]))
        p.set(Parameter.eqBands[band], 12)
        y += Render.through(eq, Array(x[9600..<19_200]))
        p.set(Parameter.eqBands[band], -12)
        y += Render.through(eq, Array(x[19_200...]))
        func bend(_ r: Range<Int>) -> Float {
            r.dropFirst(2).map { abs(y[$0] - 2 * y[$0 - 1] + y[$0 - 2]) }.max()!
        }
        let steadyLow = bend(4800..<9600), steadyHigh = bend(14_400..<19_200)
        let during = max(bend(9598..<11_520), bend(19_198..<21_120))
        print("EQ band \(band + 1) jump: largest bend \(during), steady \(steadyLow) / \(steadyHigh)")
        #expect(during <= 1.25 * max(steadyLow, steadyHigh), "band \(band + 1): bend \(during)")
    }
}

import Foundation
import StompboxDSP
import StompboxTestSupport

let testRate = 48_000.0

/// A parameter store with `settings` applied on top of the defaults.
func store(_ settings: [Parameter: Float]) -> ParameterStore {
    let s = ParameterStore()
    for (p, v) in settings { s.set(p, v) }
    return s
}

/// Prepares `effect` at 48 kHz for blocks of up to 512 samples.
func prepared<E: AudioEffect>(_ effect: E) -> E {
    effect.prepare(sampleRate: testRate, maximumBlockSize: 512)
    return effect
}

/// A constant signal.
func constant(_ value: Float, seconds: Double) -> [Float] {
    [Float](repeating: value, count: Int(seconds * testRate))
}

/// Times (in samples, interpolated) where `x` crosses `level` going downwards.
func downwardCrossings(_ x: [Float], level: Float, from start: Int = 1) -> [Double] {
    var times: [Double] = []
    for i in max(1, start)..<x.count where x[i - 1] >= level && x[i] < level {
        times.append(Double(i - 1) + Double((x[i - 1] - level) / (x[i - 1] - x[i])))
    }
    return times
}

/// Times where a sampled track (values `y` at times `t`) crosses `level` going upwards.
func upwardCrossings(times t: [Double], values y: [Double], level: Double) -> [Double] {
    var out: [Double] = []
    for i in 1..<t.count where y[i - 1] < level && y[i] >= level {
        out.append(t[i - 1] + (t[i] - t[i - 1]) * (level - y[i - 1]) / (y[i] - y[i - 1]))
    }
    return out
}

/// The mean spacing of a run of event times (first to last over the count of gaps).
func meanPeriod(_ times: [Double]) -> Double {
    guard times.count > 1 else { return .nan }
    return (times.last! - times.first!) / Double(times.count - 1)
}

func decibels(_ ratio: Double) -> Double { 20 * log10(ratio) }

/// Inputs far louder than a guitar (a bass note at +12 dB, a loud high tone, hot noise, the riff
/// at +26 dB, a square of ±10): for tests that a saturating pedal stays bounded.
let loudInputs: [[Float]] = [
    Signal.sine(frequency: 110, seconds: 0.5, amplitude: 4),
    Signal.sine(frequency: 3000, seconds: 0.5, amplitude: 1),
    Signal.noise(length: 24_000, amplitude: 8),
    Signal.guitarRiff(seconds: 1).map { $0 * 20 },
    [Float](repeating: 10, count: 4800) + [Float](repeating: -10, count: 4800),
]

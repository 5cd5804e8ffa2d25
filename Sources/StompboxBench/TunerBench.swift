import Foundation
import StompboxDSP
import StompboxTestSupport

/// The tuner (issue 13): its error over B0…E6 on steady and plucked tones, how soon it reads a
/// plucked note, and what one reading costs.
enum TunerBench {
    static let notes = [(23, "B0"), (28, "E1"), (33, "A1"), (40, "E2"), (45, "A2"), (50, "D3"), (55, "G3"),
                        (59, "B3"), (64, "E4"), (69, "A4"), (76, "E5"), (81, "A5"), (88, "E6")]

    static func run() {
        let detector = PitchDetector(sampleRate: 48_000)
        print("Tuner (B0…E6; steady sines at −37/0/+12.5 cents, plucked notes at +7 cents after 0.25 s of silence):")
        print("  note   steady worst   plucked worst   first reading after the pick")
        var worstSteady = 0.0, worstPluck = 0.0, latestFirst = 0.0
        for (midi, name) in notes {
            var steady = 0.0
            for offset in [-37.0, 0, 12.5] {
                let x = Signal.sine(frequency: Signal.frequency(midi: midi, cents: offset), seconds: 0.5, amplitude: 0.3)
                for (time, reading) in detector.readings(x) where time >= 0.2 {
                    steady = max(steady, reading.map { abs($0.cents - offset) } ?? .infinity)
                }
            }
            let plucked = Signal.silence(12_000) + Signal.pluck(frequency: Signal.frequency(midi: midi, cents: 7), seconds: 2)
            let readings = detector.readings(plucked)
            var pluck = 0.0
            for (time, reading) in readings where time >= 0.4 && time <= 2 {
                pluck = max(pluck, reading.map { abs($0.cents - 7) } ?? .infinity)
            }
            let first = (readings.first { $0.reading != nil }?.time ?? .infinity) - 0.25
            worstSteady = max(worstSteady, steady)
            worstPluck = max(worstPluck, pluck)
            latestFirst = max(latestFirst, first)
            print("  \(name.padding(toLength: 5, withPad: " ", startingAt: 0))  \(String(format: "%6.3f", steady)) cents   \(String(format: "%6.3f", pluck)) cents    \(String(format: "%.0f", first * 1000)) ms")
        }
        // One reading's cost: a low note (both windows) and a high one.
        let low = Signal.pluck(frequency: 41.2, seconds: 1), high = Signal.pluck(frequency: 659.3, seconds: 1)
        func cost(_ x: [Float]) -> Double {
            let start = DispatchTime.now().uptimeNanoseconds
            let count = detector.readings(x).count
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 / Double(count)
        }
        print("  worst: \(String(format: "%.3f", worstSteady)) cents steady (goal ±0.1), \(String(format: "%.3f", worstPluck)) cents plucked (goal ±0.5), first reading \(String(format: "%.0f", latestFirst * 1000)) ms after the pick (goal ≤ 150)")
        print("  one reading: \(String(format: "%.2f", cost(low))) ms for a low E1, \(String(format: "%.2f", cost(high))) ms for an E5")
    }
}

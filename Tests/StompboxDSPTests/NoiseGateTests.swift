import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

@Suite struct NoiseGateTests {
    func gate(_ settings: [Parameter: Float] = [:]) -> NoiseGate { prepared(NoiseGate(parameters: store(settings))) }

    /// A pickup's noise floor: hiss at about -72 dBFS and 50 Hz hum at -66 dBFS.
    func noiseFloor(seconds: Double) -> [Float] {
        zip(Signal.noise(length: Int(seconds * testRate), amplitude: 0.00025, seed: 3),
            Signal.sine(frequency: 50, seconds: seconds, amplitude: 0.0005)).map { $0 + $1 }
    }

    /// A plucked A2: harmonics of 110 Hz with a bright attack, decaying by `decay` (time
    /// constant, s), starting at full amplitude `level` on its first sample.
    func pluck(seconds: Double, level: Float = 0.3, decay: Double = 0.6) -> [Float] {
        (0..<Int(seconds * testRate)).map { i in
            let t = Double(i) / testRate
            var v = 0.0
            for h in 1...8 { v += cos(2 * .pi * 110 * Double(h) * t) / Double(h) * exp(-t * Double(h) / 0.08 * 0.02) }
            return level * Float(v / 2.72 * exp(-t / decay))
        }
    }

    @Test func hissAndHumBelowTheThresholdComeOutAsSilence() {
        let y = Render.through(gate([.gateThreshold: -55]), noiseFloor(seconds: 2))
        // Open at first (switched on as if a note rang), closed after hold + release.
        let after = y[Int(0.4 * testRate)...]
        #expect(Measure.peak(after) == 0, "peak \(Measure.peak(after)) after 0.4 s")
    }

    @Test func aNoteAboveTheThresholdPassesUntouched() {
        let x = zip(noiseFloor(seconds: 1), Signal.sine(frequency: 196, seconds: 1, amplitude: 0.1)).map { $0 + $1 }
        let y = Render.through(gate([.gateThreshold: -40]), x)
        #expect(y == x)
    }

    /// The pick's transient comes through: a note played after the gate has closed reaches its
    /// full level within the first millisecond and keeps 90 % of its first 5 ms of energy.
    @Test func theOnsetOfANoteAfterSilenceKeepsItsTransient() {
        let floor = noiseFloor(seconds: 1)
        let note = pluck(seconds: 0.5)
        let start = floor.count
        let x = floor + zip(note, noiseFloor(seconds: 0.5)).map { $0 + $1 }
        let y = Render.through(gate([.gateThreshold: -50]), x)
        #expect(Measure.peak(y[(start - 4800)..<start]) == 0, "closed before the note")
        let five = start..<(start + 240)
        let energy = y[five].reduce(0) { $0 + $1 * $1 } / x[five].reduce(0) { $0 + $1 * $1 }
        print("gate onset: \(energy) of the first 5 ms of energy kept")
        #expect(energy >= 0.9, "first 5 ms: \(energy) of the energy")
        // 1 ms in, the gate is fully open: from there on the note is the input, sample for sample.
        let open = (start + 48)..<(start + 4800)
        #expect(zip(y[open], x[open]).allSatisfy { $0 == $1 })
    }

    /// A note that decays through the threshold closes the gate once, after it has fallen the
    /// hysteresis below it and the hold has run, and then in `release_ms`; a note hovering
    /// ±3 dB around the threshold (a 6 dB hysteresis) is never chopped.
    @Test func aDecayingNoteClosesOnceWithHoldAndRelease() {
        let x = zip(pluck(seconds: 3, level: 0.3, decay: 0.4), noiseFloor(seconds: 3)).map { $0 + $1 }
        let threshold: Float = -40, release: Float = 200, hold: Float = 50
        let y = Render.through(gate([.gateThreshold: threshold, .gateRelease: release, .gateHold: hold, .gateHysteresis: 6]), x)
        // Untouched until the gate starts closing, then silent after the release.
        let firstPartial = y.indices.first { y[$0] != x[$0] }!
        let lastSound = y.lastIndex { $0 != 0 }!
        let fade = Double(lastSound - firstPartial) / testRate * 1000
        #expect(abs(fade - Double(release)) <= 0.05 * Double(release), "release took \(fade) ms")
        // Closing begins once the input has stayed under threshold − hysteresis for the hold
        // (plus the few ms its detector takes to fall from the last peak).
        let lastAbove = x.lastIndex { abs($0) >= decibelsToGain(threshold - 6) }!
        let wait = Double(firstPartial - lastAbove) / testRate * 1000
        print("gate closing: began \(wait) ms after the last peak above threshold − hysteresis (hold \(hold) ms), faded in \(fade) ms (release \(release) ms)")
        #expect(wait >= Double(hold) && wait <= Double(hold) + 15, "closing began \(wait) ms after the last peak above the closing level")
        #expect(Measure.peak(y[(lastSound + 1)...]) == 0)

        // Hovering: a tone at the threshold with a ±3 dB wobble at 4 Hz.
        let n = Int(2 * testRate)
        let hover: [Float] = (0..<n).map { i in
            let t = Double(i) / testRate
            let db = Double(threshold) + 3 * sin(2 * .pi * 4 * t)
            return Float(pow(10, db / 20) * sin(2 * .pi * 220 * t))
        }
        let h = Render.through(gate([.gateThreshold: threshold, .gateHysteresis: 6]), hover)
        #expect(h == hover, "the gate chopped a note hovering at its threshold")
    }

    /// Closed, nothing can leak: the gain is exactly 0, not a small number.
    @Test func theGainCurveIsExactAtItsEnds() {
        #expect(NoiseGate.gain(0) == 0 && NoiseGate.gain(-0.1) == 0)
        #expect(NoiseGate.gain(1) == 1 && NoiseGate.gain(1.1) == 1)
        #expect(abs(NoiseGate.gain(0.5) - 0.5) < 1e-6)
    }
}

import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// The tuner's pitch detection, B0…E6: steady and plucked tones with known offsets, noise, and
/// the low E whose second harmonic is louder than its fundamental.
@Suite struct TunerTests {
    /// A detector of its own for each test (tests run side by side; a detector is one thread's).
    var detector: PitchDetector { PitchDetector(sampleRate: 48_000) }

    // B0 (23), E1, A1, E2 (40), A2, D3, G3, B3, E4 (64), A4, E5, A5, E6 (88).
    static let notes = [23, 28, 33, 40, 45, 50, 55, 59, 64, 69, 76, 81, 88]

    @Test(arguments: notes)
    func aSteadyToneReadsWithinATenthOfACent(midi: Int) {
        for offset in [-37.0, 0, 12.5] {
            let hz = Signal.frequency(midi: midi, cents: offset)
            let x = Signal.sine(frequency: hz, seconds: 0.5, amplitude: 0.3)
            let readings = detector.readings(x).filter { $0.time >= 0.2 }
            #expect(!readings.isEmpty)
            for (time, reading) in readings {
                guard let reading else { Issue.record("no reading at \(time) s for \(hz) Hz"); continue }
                let expectedName = TunerReading.names[midi % 12] + "\(midi / 12 - 1)"
                #expect(reading.note == expectedName, "\(hz) Hz read as \(reading.note)")
                #expect(abs(reading.cents - offset) <= 0.1, "\(expectedName) \(offset) cents read \(reading.cents) at \(time) s")
            }
        }
    }

    @Test(arguments: notes)
    func aPluckedStringReadsWithinHalfACentAndSoon(midi: Int) {
        let offset = 7.0
        let hz = Signal.frequency(midi: midi, cents: offset)
        let attack = 12_000 // the pluck starts at 0.25 s, after silence
        let x = Signal.silence(attack) + Signal.pluck(frequency: hz, seconds: 2)
        let readings = detector.readings(x)
        let expectedName = TunerReading.names[midi % 12] + "\(midi / 12 - 1)"
        // The first reading comes within 150 ms of the attack…
        let first = readings.first { $0.reading != nil }
        #expect(first != nil && first!.time - 0.25 <= 0.15, "first reading at \(String(describing: first?.time)) s")
        // …and every one from then on, as the note decays, names the note within half a cent.
        for (time, reading) in readings where time >= 0.25 + 0.15 && time <= 2.0 {
            guard let reading else { Issue.record("\(expectedName): no reading at \(time) s"); continue }
            #expect(reading.note == expectedName && abs(reading.cents - offset) <= 0.5,
                    "\(expectedName) +7 read \(reading.note) \(reading.cents) at \(time) s")
        }
    }

    @Test func aLowEWithAStrongSecondHarmonicIsStillE2() {
        let hz = Signal.frequency(midi: 40, cents: -4)
        let x = Signal.pluck(frequency: hz, seconds: 2, secondHarmonic: 2.0)
        for (time, reading) in detector.readings(x) where time >= 0.15 {
            #expect(reading?.note == "E2" && abs((reading?.cents ?? 99) + 4) <= 0.5, "\(String(describing: reading)) at \(time)")
        }
    }

    @Test func noiseAndSilenceGiveNoReading() {
        let noise = Signal.noise(length: 48_000, amplitude: 0.3)
        #expect(detector.readings(noise).allSatisfy { $0.reading == nil })
        #expect(detector.readings(Signal.silence(24_000)).allSatisfy { $0.reading == nil })
    }

    @Test func theReferenceMovesTheNotes() {
        let x = Signal.sine(frequency: 415, seconds: 0.4, amplitude: 0.3)
        let at440 = detector.readings(x).last!.reading!, at415 = detector.readings(x, reference: 415).last!.reading!
        #expect(at440.note == "G#4" && abs(at440.cents - (1200 * log2(415 / 415.30469757994513))) < 0.1)
        #expect(at415.note == "A4" && abs(at415.cents) < 0.1)
    }
}

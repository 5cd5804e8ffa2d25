import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// Tempo, the metronome and tempo-synced delays.
@Suite struct MetronomeTests {
    /// A chain with `board`, the metronome on at `bpm`, rendered in blocks of varying size.
    func render(_ x: [Float], bpm: Float, board: [PedalKind] = [], settings: [Parameter: Float] = [:]) -> [Float] {
        let c = Chain(board: board)
        c.parameters.set(.metronomeEnabled, 1)
        c.parameters.set(.tempo, bpm)
        for (p, v) in settings { c.parameters.set(p, v) }
        c.prepare(sampleRate: testRate, maximumBlockSize: 512)
        var y: [Float] = []
        var start = 0, k = 0
        let sizes = [128, 37, 512, 1, 300]
        while start < x.count {
            let n = min(sizes[k % sizes.count], x.count - start)
            y += Render.through(c, Array(x[start..<start + n]))
            start += n
            k += 1
        }
        return y
    }

    /// Where each click starts: the sample before the first non-zero one after a silence.
    func clickStarts(_ y: [Float]) -> [Int] {
        var starts: [Int] = []
        var quiet = 1_000
        for (i, v) in y.enumerated() {
            if v != 0 {
                if quiet >= 400 { starts.append(i - 1) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        return starts
    }

    @Test(arguments: [Float(120), 97, 300, 30])
    func beatKStartsAtRoundKTimesTheBeatLength(bpm: Float) {
        let y = render(Signal.silence(Int(testRate) * 5), bpm: bpm)
        let starts = clickStarts(y)
        let expected = (0..<starts.count).map { Int((Double($0) * 60 / Double(bpm) * testRate).rounded()) }
        #expect(starts.count == Int((5 * Double(bpm) / 60).rounded(.up)), "\(starts.count) clicks in 5 s at \(bpm)")
        #expect(starts == expected, "at \(bpm) bpm: \(starts.prefix(6)) against \(expected.prefix(6))")
    }

    @Test func theFirstBeatOfEachBarIsAccented() {
        let y = render(Signal.silence(Int(testRate) * 4), bpm: 120, settings: [.metronomeBeats: 3])
        let peaks = clickStarts(y).map { s in y[s..<min(s + 960, y.count)].map(abs).max()! }
        #expect(peaks.count == 8)
        for (k, peak) in peaks.enumerated() {
            let accented = k % 3 == 0
            #expect(accented ? peak > 1.4 * peaks[1] : abs(peak - peaks[1]) < 1e-6, "beat \(k): \(peak)")
        }
        // The level: 6 dB up doubles the clicks.
        let louder = render(Signal.silence(Int(testRate)), bpm: 120, settings: [.metronomeBeats: 3, .metronomeLevel: -6])
        #expect(abs(Double(louder.map(abs).max()! / peaks[0]) - 1.995) < 0.01)
    }

    /// The click is added after the pedals: the guitar through an overdrive plus the clicks is
    /// the overdriven guitar with the clicks added, sample for sample.
    @Test func theClicksNeverGoThroughThePedals() {
        let guitar = Signal.guitarRiff(seconds: 2).map { $0 * 0.2 }
        let settings: [Parameter: Float] = [.overdriveEnabled: 1, .overdriveDrive: 0.8, .overdriveLevel: -12]
        let withClicks = render(guitar, bpm: 120, board: [.overdrive], settings: settings)
        let clicks = render(Signal.silence(guitar.count), bpm: 120)
        let plain = render(guitar, bpm: 120, board: [.overdrive], settings: settings.merging([.metronomeEnabled: 0]) { $1 })
        let worst = zip(withClicks, zip(plain, clicks)).map { abs($0 - ($1.0 + $1.1)) }.max()!
        #expect(Measure.peak(withClicks) < 0.9, "the limiter stays out of it")
        #expect(worst < 1e-6, "\(worst)")
    }

    @Test func tapTempo() {
        let taps = TapTempo()
        #expect(taps.tap(at: 10) == nil)
        #expect(taps.tap(at: 10.5) == 120)
        #expect(taps.tap(at: 11) == 120)
        #expect(taps.tap(at: 11.5) == 120)
        // A pause of more than two seconds starts over.
        #expect(taps.tap(at: 20) == nil)
        #expect(abs(taps.tap(at: 20.4)! - 150) < 1e-9)
    }

    /// A synced delay: at 100 bpm an eighth is 300 ms, a dotted eighth 450 ms, a quarter-note
    /// triplet's eighth 200 ms.
    @Test(arguments: [(Float(2), 300.0), (3, 450), (5, 200), (1, 600)])
    func aSyncedDelayFollowsTheTempo(_ sync: Float, _ milliseconds: Double) {
        let c = Chain(board: [.delay])
        for (p, v) in [(Parameter.delayEnabled, Float(1)), (.delaySync, sync), (.tempo, 100), (.delayFeedback, 0), (.delayMix, 1)] { c.parameters.set(p, v) }
        c.prepare(sampleRate: testRate, maximumBlockSize: 256)
        let y = Render.through(c, Signal.impulse(length: 48_000, amplitude: 0.5))
        let echo = y.indices.dropFirst().first { y[$0] != 0 }
        #expect(echo == Int((milliseconds / 1000 * testRate).rounded()), "echo at \(String(describing: echo))")
    }

    /// A synced tremolo: one cycle per note value. At 100 bpm a quarter lasts 0.6 s, an eighth
    /// 0.3 s, a sixteenth 0.15 s; the troughs of a steady tone's gain come that far apart, and
    /// follow a new tempo.
    @Test(arguments: [(Float(1), 0.6), (2, 0.3), (4, 0.15)])
    func aSyncedTremoloFollowsTheTempo(_ sync: Float, _ seconds: Double) {
        let c = Chain(board: [.tremolo])
        for (p, v) in [(Parameter.tremoloEnabled, Float(1)), (.tremoloSync, sync), (.tempo, 100), (.tremoloDepth, 1),
                       (.tremoloShape, 1), (.tremoloRate, 0.5)] { c.parameters.set(p, v) }
        c.prepare(sampleRate: testRate, maximumBlockSize: 256)
        func troughs(_ y: [Float]) -> [Int] {
            (1..<(y.count - 1)).filter { y[$0] < 0.01 && y[$0] <= y[$0 - 1] && y[$0] < y[$0 + 1] }
        }
        func period(_ y: [Float]) -> Double {
            let t = troughs(y)
            return Double(t.last! - t.first!) / Double(t.count - 1) / testRate
        }
        let y = Render.through(c, [Float](repeating: 0.5, count: 4 * 48_000))
        #expect(abs(period(Array(y[24_000...])) - seconds) < 0.001, "period \(period(Array(y[24_000...])))")
        c.parameters.set(.tempo, 150)
        let z = Render.through(c, [Float](repeating: 0.5, count: 4 * 48_000))
        #expect(abs(period(Array(z[24_000...])) - seconds * 100 / 150) < 0.001, "period \(period(Array(z[24_000...])))")
    }

    /// The CLI's and scripts' `--set delay.sync=1/8.`: note values as musicians write them.
    @Test func syncChoicesReadNoteValues() throws {
        let spec = Parameter.delaySync.spec
        #expect(try ["1/4", "1/8", "1/8.", "1/16", "1/8T", " 1/8t ", "free", "off", "eighth", "3"].map { try spec.parse($0) } == [1, 2, 3, 4, 5, 5, 0, 0, 2, 3])
        #expect(throws: ParameterError.self) { try spec.parse("1/32") }
        #expect(Parameter.looperRoundTo.spec.choiceIndex("1/4") == nil, "only the sync menus read note values")
    }
}

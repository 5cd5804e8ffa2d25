import Foundation
import Synchronization
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// The chain's own stages around the pedals: gains, meters, limiter.
@Suite struct ChainTests {
    func chain(_ settings: [Parameter: Float] = [:]) -> Chain {
        let c = Chain(controls: EngineControls())
        for (p, v) in settings { c.parameters.set(p, v) }
        c.prepare(sampleRate: testRate, maximumBlockSize: 256)
        return c
    }

    @Test func allPedalsOffAtUnityGainPassesTheSignalUntouched() {
        let x = Signal.guitarRiff(seconds: 1).map { $0 * 0.5 }
        let y = Render.through(chain(), x)
        let same = x == y
        #expect(same)
    }

    @Test func inputAndOutputGainsApply() {
        let x = Signal.sine(frequency: 440, seconds: 0.5, amplitude: 0.1)
        let y = Render.through(chain([.inputGain: 6, .outputGain: -12]), x)
        let ratio = Measure.amplitude(of: 440, in: y[4800...]) / Measure.amplitude(of: 440, in: x[4800...])
        #expect(abs(Double(gainToDecibels(ratio)) + 6) < 0.01)
    }

    @Test func aGainChangeGlidesInsteadOfJumping() {
        let c = chain()
        let x = Signal.sine(frequency: 110, seconds: 0.4, amplitude: 0.05)
        var y = Render.through(c, Array(x[..<9600]))
        c.parameters.set(.inputGain, 24)
        y += Render.through(c, Array(x[9600...]))
        // 110 Hz at 0.05 × 16 (+24 dB) steps at most 0.8 · 2π · 110/48000 ≈ 0.0115 per sample.
        #expect(Measure.largestStep(y) < 0.0125)
    }

    @Test func lastOutputPeakIsTheLastCallsOutputPeak() {
        // 600 samples: split into blocks of 256, the peak is over all of them.
        let c = chain([.outputGain: -6])
        var x = Signal.sine(frequency: 220, seconds: 600.0 / testRate, amplitude: 0.05)
        x[500] = 0.6
        var y = x
        y.withUnsafeMutableBufferPointer { c.process($0) }
        #expect(c.lastOutputPeak == y.map(abs).max()!)
        #expect(c.lastOutputPeak > 0.29 && c.lastOutputPeak < 0.31)
        var quiet = [Float](repeating: 0.01, count: 128)
        quiet.withUnsafeMutableBufferPointer { c.process($0) }
        #expect(c.lastOutputPeak < 0.02, "the previous call's peak is not carried over")
    }

    @Test func metersReportInputAndOutputPeaks() {
        let c = chain([.outputGain: -6])
        _ = c.controls.meters.takePeaks()
        _ = Render.through(c, Signal.sine(frequency: 1000, seconds: 0.1, amplitude: 0.5))
        let peaks = c.controls.meters.takePeaks()
        #expect(abs(peaks.input - 0.5) < 0.001)
        #expect(abs(peaks.output - 0.5 * decibelsToGain(-6)) < 0.001)
    }

    @Test func limiterHoldsTheCeilingAndLetsGoAfterwards() {
        let c = chain([.outputGain: 12])
        let loud = Signal.sine(frequency: 200, seconds: 0.5, amplitude: 0.9)
        let quiet = Signal.sine(frequency: 200, seconds: 1, amplitude: 0.05)
        let y = Render.through(c, loud + quiet)
        #expect(Measure.peak(y) <= 1.0)
        #expect(Measure.peak(y[..<24_000]) > 0.95) // it limits, it does not just mute
        // Half a second after the loud part, the quiet part comes out at its full +12 dB.
        let late = y[(24_000 + 24_000)...]
        #expect(abs(Double(gainToDecibels(Measure.amplitude(of: 200, in: late) / 0.05)) - 12) < 0.1)
    }

    /// The output clip light can light: a block the limiter ducks counts as an output clip and
    /// its gain reduction is reported (the limiter's 0.98 ceiling is below any "clip" level, so a
    /// light looking for 0.999 at the output never lit). A level under the ceiling counts nothing.
    @Test func theLimiterActingLightsTheOutputClipAndReportsItsReduction() {
        let c = chain([.outputGain: 12])
        _ = Render.through(c, Signal.sine(frequency: 200, seconds: 0.2, amplitude: 0.2))
        #expect(c.controls.meters.clipCounts.output == 0)
        #expect(c.controls.meters.takeLimiterReduction() == 0)
        // 0.5 · +12 dB = 2.0: the limiter turns it down by about 20·log10(2 / 0.98) = 6.2 dB.
        _ = Render.through(c, Signal.sine(frequency: 200, seconds: 0.2, amplitude: 0.5))
        #expect(c.controls.meters.clipCounts.output > 0)
        let reduction = c.controls.meters.takeLimiterReduction()
        #expect(abs(Double(reduction) - 20 * log10(2 / 0.98)) < 0.3, "reduction \(reduction) dB")
        // Taken once, cleared; a quiet signal after the release adds no clips.
        let clips = c.controls.meters.clipCounts.output
        _ = Render.through(c, Signal.sine(frequency: 200, seconds: 1, amplitude: 0.05))
        _ = c.controls.meters.takeLimiterReduction()
        _ = Render.through(c, Signal.sine(frequency: 200, seconds: 0.2, amplitude: 0.05))
        #expect(c.controls.meters.takeLimiterReduction() == 0)
        #expect(c.controls.meters.clipCounts.output == clips)
    }

    @Test func nonFiniteAndAbsurdInputIsContained() {
        var x = Signal.sine(frequency: 300, seconds: 0.2, amplitude: 0.3)
        x[100] = .nan; x[200] = .infinity; x[300] = -.infinity; x[400] = 1e30
        let y = Render.through(chain([.overdriveEnabled: 1, .delayEnabled: 1, .reverbEnabled: 1]), x)
        let finite = Measure.allFinite(y)
        #expect(finite)
        #expect(Measure.peak(y) <= 1.0)
    }

    /// The control-thread rule: control calls from two threads (the window setting the board
    /// while a live engine's thread prepares the chain for its server) are serialized by the
    /// chain's control lock. A probe pedal notes whether two threads are ever inside the chain's
    /// control code at once: while the board is set (the stereo plan asks it `mayWiden`) and
    /// while the chain is prepared (its `prepare`). Without the lock they overlap within a few
    /// calls.
    @Test func controlCallsFromTwoThreadsAreSerialized() {
        final class Probe: StereoEffect {
            let inside = Atomic<Int>(0), overlaps = Atomic<Int>(0), calls = Atomic<Int>(0)
            func visit() {
                if inside.add(1, ordering: .sequentiallyConsistent).newValue > 1 { overlaps.add(1, ordering: .relaxed) }
                calls.add(1, ordering: .relaxed)
                usleep(100)
                inside.subtract(1, ordering: .sequentiallyConsistent)
            }
            func prepare(sampleRate: Double, maximumBlockSize: Int) { visit() }
            func reset() {}
            func process(_ block: UnsafeMutableBufferPointer<Float>) {}
            func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {}
            var playsInStereo: Bool { false }
            var mayWiden: Bool { visit(); return false }
        }
        nonisolated(unsafe) let probe = Probe()
        let probeKind = PedalKind(id: "probe", name: "Probe", controls: [], plugin: PluginSource(uri: "urn:stompbox:test:probe")) { _ in probe }
        let boards: [[PedalKind]] = [[probeKind, .overdrive, .delay], [.delay, .eq, probeKind], [probeKind, .eq]]
        nonisolated(unsafe) let c = Chain(controls: EngineControls(), board: boards[0])
        c.prepare(sampleRate: testRate, maximumBlockSize: 256)
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            if thread == 0 {
                for i in 0..<300 { try? c.setBoard(boards[i % boards.count]) }
            } else {
                for i in 0..<40 {
                    c.prepare(sampleRate: i % 2 == 0 ? 44_100 : testRate, maximumBlockSize: 256)
                    _ = c.latencySamples
                    _ = c.effects
                }
            }
        }
        #expect(probe.calls.load(ordering: .relaxed) > 300)
        #expect(probe.overlaps.load(ordering: .relaxed) == 0, "two threads were inside the chain's control calls at once")
        #expect(c.board == boards[299 % boards.count])
        c.prepare(sampleRate: testRate, maximumBlockSize: 256)
        for kind in c.board { c.parameters.set(kind.enabledParameter, 1) }
        let y = Render.through(c, Signal.sine(frequency: 300, seconds: 0.2, amplitude: 0.3))
        #expect(Measure.allFinite(y))
        #expect(c.effects.count == c.board.count)
    }
}

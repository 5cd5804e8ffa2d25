import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// The Amp Model pedal with NAM Linear models (outputs known exactly): no model passes the
/// signal through, the gains and the file's levels are exact, a model changed while playing
/// never clicks, a bad file keeps the model playing, a model at another rate is resampled with
/// the latency it reports, a missing file from a preset passes through and says why.
@Suite struct NeuralAmpTests {
    let folder = TemporaryFolder("stompbox-neural")

    func amp(_ settings: [Parameter: Float] = [:], rate: Double = 48_000, block: Int = 512) -> NeuralAmp {
        let amp = NeuralAmp(parameters: store(settings))
        amp.prepare(sampleRate: rate, maximumBlockSize: block)
        return amp
    }

    /// Runs `x` through in blocks of `block`, calling `between(i)` before block `i`.
    func run(_ amp: NeuralAmp, _ x: [Float], block: Int = 128, between: (Int) -> Void = { _ in }) -> [Float] {
        var y = x
        var start = 0, i = 0
        y.withUnsafeMutableBufferPointer { buffer in
            while start < buffer.count {
                between(i)
                let n = min(block, buffer.count - start)
                amp.process(UnsafeMutableBufferPointer(rebasing: buffer[start..<start + n]))
                start += n
                i += 1
            }
        }
        return y
    }

    let sine = Signal.sine(frequency: 220, seconds: 0.5).map { $0 * 0.5 }

    @Test func withoutAModelTheSignalPassesThrough() throws {
        let a = amp([.neuralInput: 12, .neuralOutput: -12])
        #expect(run(a, sine) == sine)
        #expect(a.status.summary == "No model loaded: passes the signal through")
        // A model loaded but `neural.file` set to none: the same.
        try a.load(file: TestModels.write("half.nam", in: folder, taps: [0.5]))
        a.parameters.set(.neuralFile, 0)
        #expect(run(a, sine) == sine)
    }

    @Test func anIdentityModelPlaysTheSignalAsItIs() throws {
        let a = amp()
        try a.load(file: TestModels.write("identity.nam", in: folder, taps: [1], metadata: ["name": "Straight Wire"]))
        #expect(a.parameters.load(.neuralFile) == 1, "loading chooses the file")
        let y = run(a, sine)
        #expect(zip(y, sine).map { abs($0 - $1) }.max()! < 1e-6)
        #expect(a.status.name == "Straight Wire" && a.status.note.isEmpty && a.status.missing == nil)
        #expect(a.status.summary == "Straight Wire (NAM Linear)")
        #expect(a.stateJSON() == FileState.json(file: folder.file("identity.nam")))
    }

    /// After the 20 ms glides: output = model(input × in gain) × out gain.
    func settledGain(_ a: NeuralAmp) -> Float {
        let x = [Float](repeating: 0.25, count: 9_600)
        let y = run(a, x)
        return y.last! / 0.25
    }

    @Test func theKnobsAreExactGains() throws {
        let a = amp([.neuralInput: 6, .neuralOutput: -12, .neuralNormalize: 0])
        try a.load(file: TestModels.write("half.nam", in: folder, taps: [0.5]))
        #expect(abs(settledGain(a) - 0.5 * decibelsToGain(-6)) < 1e-6)
    }

    @Test func normalizeBringsTheFilesLoudnessToMinus18() throws {
        let loud = TestModels.write("loud.nam", in: folder, taps: [1], metadata: ["loudness": -10.5])
        let on = amp([.neuralNormalize: 1])
        try on.load(file: loud)
        #expect(abs(settledGain(on) - decibelsToGain(-18 + 10.5)) < 1e-6)
        let off = amp([.neuralNormalize: 0])
        try off.load(file: loud)
        #expect(abs(settledGain(off) - 1) < 1e-6)
        // A file that does not state its loudness plays as captured either way.
        let plain = amp([.neuralNormalize: 1])
        try plain.load(file: TestModels.write("plain.nam", in: folder, taps: [1]))
        #expect(abs(settledGain(plain) - 1) < 1e-6)
        // Switching normalize glides: no step larger than the signal's own.
        on.parameters.set(.neuralNormalize, 0)
        let y = run(on, sine)
        #expect(Measure.largestStep(y) < Measure.largestStep(sine) * 1.2)
    }

    /// NAM's calibration: input gain + (the interface's level − the capture's input level).
    @Test func theInputIsCalibratedFromTheFilesInputLevel() throws {
        let file = TestModels.write("calibrated.nam", in: folder, taps: [1], metadata: ["input_level_dbu": 12.0])
        let hot = amp([.neuralInputDBu: 18, .neuralNormalize: 0])
        try hot.load(file: file)
        #expect(abs(settledGain(hot) - decibelsToGain(6)) < 1e-6)
        let unset = amp([.neuralInputDBu: 0, .neuralNormalize: 0])
        try unset.load(file: file)
        #expect(abs(settledGain(unset) - 1) < 1e-6, "no interface level set: no calibration")
        let uncalibrated = amp([.neuralInputDBu: 18, .neuralNormalize: 0])
        try uncalibrated.load(file: TestModels.write("plain.nam", in: folder, taps: [1]))
        #expect(abs(settledGain(uncalibrated) - 1) < 1e-6, "a file without an input level: no calibration")
    }

    /// Two models that differ (unity now, a delayed −0.8 next) swapped mid-note: the output glides
    /// from one to the other, never stepping further than the sine itself does.
    @Test func changingTheModelWhilePlayingNeverClicks() throws {
        let a = amp()
        try a.load(file: TestModels.write("a.nam", in: folder, taps: [1]))
        let b = TestModels.write("b.nam", in: folder, taps: TestModels.delay(24, gain: -0.8))
        let x = Signal.sine(frequency: 200, seconds: 0.5).map { $0 * 0.5 }
        let swapBlock = 50
        let y = run(a, x, block: 64) { i in if i == swapBlock { try! a.load(file: b) } }
        let own = Measure.largestStep(x)
        #expect(Measure.largestStep(y) <= own * 1.1, "largest step \(Measure.largestStep(y)), the sine's \(own)")
        // Before: the first model; 25 ms after the swap: the second exactly.
        let swap = swapBlock * 64
        for i in 100..<swap { #expect(abs(y[i] - x[i]) < 1e-6); if abs(y[i] - x[i]) >= 1e-6 { break } }
        let after = swap + Int(0.025 * 48_000) + 64
        let worst = (after..<x.count).map { abs(y[$0] + 0.8 * x[$0 - 24]) }.max()!
        #expect(worst < 1e-6, "after the crossfade: \(worst)")
        // Without the crossfade the swap would have stepped by far more than the sine does.
        #expect(abs(-0.8 * x[swap - 24] - x[swap]) > own * 10)
    }

    @Test func aBadFileKeepsTheModelPlaying() throws {
        let a = amp([.neuralNormalize: 0])
        try a.load(file: TestModels.write("half.nam", in: folder, taps: [0.5]))
        let bad = folder.write("{\"version\": \"0.5.4\", \"architecture\": \"Linear\"}", to: "bad.nam")
        #expect(throws: NeuralModelError.self) { try a.load(file: bad) }
        #expect(throws: NeuralModelError.self) { try a.load(file: folder.file("absent.nam")) }
        #expect(abs(settledGain(a) - 0.5) < 1e-6)
        #expect(a.file == folder.file("half.nam"))
    }

    /// A 44.1 kHz identity model in a 48 kHz session: the sine comes back at its level, exactly
    /// the reported latency late, and the pedal says it resamples.
    @Test(arguments: [(44_100.0, 48_000.0), (48_000.0, 44_100.0), (48_000.0, 96_000.0)])
    func aModelAtAnotherRateIsResampled(modelRate: Double, sessionRate: Double) throws {
        let a = amp(rate: sessionRate, block: 256)
        try a.load(file: TestModels.write("identity-\(Int(modelRate)).nam", in: folder, taps: [1], sampleRate: modelRate))
        let khz = modelRate / 1000
        #expect(a.status.note == "runs at \(khz == khz.rounded() ? String(Int(khz)) : String(format: "%.1f", khz)) kHz (resampled)")
        let x = Signal.sine(frequency: 1_000, seconds: 0.5, sampleRate: sessionRate).map { $0 * 0.5 }
        let y = run(a, x, block: 97)
        let latency = Int(a.latencyCell.pointee.load(ordering: .relaxed))
        #expect(latency > 0 && latency < Int(sessionRate * 0.002), "latency \(latency) samples")
        let settled = Int(sessionRate * 0.05)
        let worst = (settled..<x.count).map { abs(y[$0] - x[$0 - latency]) }.max()!
        print("resampled \(modelRate) in \(sessionRate): latency \(latency) samples, largest difference from the delayed input \(worst)")
        #expect(worst < 2e-3, "output against the input \(latency) samples earlier: \(worst)")
        let level = Measure.decibels(Measure.rms(y[settled...]) / Measure.rms(x[settled...]))
        #expect(abs(level) < 0.05, "level \(level) dB")
    }

    @Test func theChainHearsTheResamplingLatency() throws {
        let chain = Chain(controls: EngineControls(), board: [.neural])
        chain.parameters.set(.neuralEnabled, 1)
        chain.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        let a = try #require(chain.effect(.neural) as? NeuralAmp)
        try a.load(file: TestModels.write("slow.nam", in: folder, taps: [1], sampleRate: 44_100))
        // The new model is taken at the next block.
        _ = Render.through(chain, [Float](repeating: 0, count: 512))
        #expect(chain.latencySamples > 0 && chain.latencySamples == Double(a.latencyCell.pointee.load(ordering: .relaxed)))
    }

    @Test func aPresetsMissingFileLeavesThePedalPassingThrough() throws {
        let a = amp([.neuralFile: 1])
        let gone = folder.file("gone.nam")
        try a.restore(stateJSON: FileState.json(file: gone))
        #expect(a.status.missing == "no such file" && a.status.file == gone)
        #expect(a.status.summary == "gone: no such file; passes the signal through")
        #expect(a.stateJSON() == FileState.json(file: gone), "saved again, the preset keeps naming it")
        #expect(run(a, sine) == sine)
        // The file put back: restoring again plays it.
        TestModels.write("gone.nam", in: folder, taps: [0.5])
        a.parameters.set(.neuralNormalize, 0)
        try a.restore(stateJSON: FileState.json(file: gone))
        #expect(a.status.missing == nil)
        #expect(abs(settledGain(a) - 0.5) < 1e-6)
    }

    /// A model that answers Inf: that block is silence, the network is reset, the next plays.
    @Test func aModelThatBlowsUpIsSilencedForTheBlock() throws {
        let a = amp([.neuralNormalize: 0])
        try a.load(file: TestModels.write("huge.nam", in: folder, taps: [1e38]))
        // (After the 25 ms fade from the dry signal to the model.)
        var x = [Float](repeating: 1e-3, count: 4_096)
        x[2_050] = 100
        let y = run(a, x, block: 128)
        #expect(y[2_048..<2_176].allSatisfy { $0 == 0 }, "the block that overflowed is silent")
        #expect(Measure.allFinite(y) && abs(y[2_400] / 1e35 - 1) < 1e-5 && abs(y[2_000] / 1e35 - 1) < 1e-5, "the blocks around it play")
    }
}

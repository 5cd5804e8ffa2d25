import Foundation
import StompboxDSP
import Testing
@testable import StompboxAudio

/// A server that changes its sample rate (JACK's rate callback, PipeWire's graph forced to
/// another rate) prepares the chain again: the Looper's recording is resampled with libsamplerate
/// and kept, at its pitch and its length in seconds, seamless, and with its undo.
@Suite struct LoopResamplingTests {
    static func looperChain(rate: Double) -> Chain {
        let chain = Chain(board: [.looper])
        chain.parameters.set(.looperEnabled, 1)
        chain.prepare(sampleRate: rate, maximumBlockSize: 256)
        return chain
    }

    /// Runs `input` through the chain in 256-sample blocks, sending `actions` before the block
    /// that starts at their offset (offsets are multiples of 256).
    static func run(_ chain: Chain, _ input: [Float], _ actions: [Int: LooperAction] = [:]) -> [Float] {
        var out = input
        out.withUnsafeMutableBufferPointer { all in
            var start = 0
            while start < all.count {
                if let action = actions[start] { chain.controls.looper.send(action) }
                let end = min(start + 256, all.count)
                chain.process(UnsafeMutableBufferPointer(rebasing: all[start..<end]))
                start = end
            }
        }
        return out
    }

    static func sine(_ hz: Double, rate: Double, count: Int, amplitude: Float = 0.5) -> [Float] {
        (0..<count).map { amplitude * Float(sin(2 * Double.pi * hz * Double($0) / rate)) }
    }

    /// The amplitude of the `hz` component of `x` (a single-bin DFT over the whole slice).
    static func amplitude(_ x: [Float], _ hz: Double, rate: Double) -> Double {
        var re = 0.0, im = 0.0
        for (n, v) in x.enumerated() {
            let w = 2 * Double.pi * hz * Double(n) / rate
            re += Double(v) * cos(w)
            im += Double(v) * sin(w)
        }
        return 2 * (re * re + im * im).squareRoot() / Double(x.count)
    }

    static func rms(_ x: [Float]) -> Double {
        (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
    }

    /// Frequency from the rising zero crossings (interpolated), over the whole slice.
    static func frequency(_ x: [Float], rate: Double) -> Double {
        var crossings: [Double] = []
        for i in 1..<x.count where x[i - 1] < 0 && x[i] >= 0 {
            crossings.append(Double(i - 1) + Double(-x[i - 1] / (x[i] - x[i - 1])))
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * rate / (last - first)
    }

    @Test func aNewRateKeepsTheLoopAtItsPitchAndLengthWithoutAClick() {
        let chain = Self.looperChain(rate: 48_000)
        let looper = chain.controls.looper
        // A 1.3 s loop of a 440 Hz tone (the input goes on past the closing tap, as a player's
        // note does: the seam crossfades the tail into the head).
        let recorded = 62_464
        _ = Self.run(chain, Self.sine(440, rate: 48_000, count: recorded + 4_800), [0: .tap, recorded: .tap])
        #expect(looper.state == .playing && looper.length == recorded)
        let before = Self.run(chain, [Float](repeating: 0, count: 30_000))
        let positionBefore = looper.position

        chain.prepare(sampleRate: 44_100, maximumBlockSize: 256, keepingLoops: libsamplerateLoopResampler)
        let expected = Int((Double(recorded) * 44_100 / 48_000).rounded())
        #expect(looper.state == .playing, "\(looper.state)")
        #expect(looper.length == expected, "length \(looper.length), expected \(expected) (1.3 s at 44 100 Hz)")
        #expect(abs(looper.position - Int((Double(positionBefore) * 44_100 / 48_000).rounded()) % expected) <= 1,
                "position \(looper.position) from \(positionBefore)")

        // Two passes at 44 100 Hz: the same tone, the same level, and no step at the seam.
        let after = Self.run(chain, [Float](repeating: 0, count: 2 * expected))
        let hz = Self.frequency(after, rate: 44_100)
        #expect(abs(hz - 440) < 0.5, "plays at \(hz) Hz (the recording was 440 Hz)")
        let level = Self.rms(after), levelBefore = Self.rms(before)
        #expect(abs(level - levelBefore) < 0.005, "level \(level), was \(levelBefore)")
        let steepest = zip(after.dropFirst(), after).map { abs($0 - $1) }.max()!
        let sineSlope = Float(2 * Double.pi * 440 / 44_100 * 0.5)
        #expect(steepest < 1.1 * sineSlope, "largest step \(steepest) against a 440 Hz sine's \(sineSlope)")
        print("Loop kept across 48 000 → 44 100 Hz: \(recorded) → \(looper.length) samples, \(String(format: "%.3f", hz)) Hz, largest step \(steepest) (sine's \(sineSlope))")
    }

    @Test func anOverdubCanStillBeUndoneAfterANewRate() {
        let chain = Self.looperChain(rate: 48_000)
        let looper = chain.controls.looper
        let recorded = 48_128
        _ = Self.run(chain, Self.sine(300, rate: 48_000, count: recorded + 4_800), [0: .tap, recorded: .tap])
        // Overdub a 500 Hz tone over one whole pass (a loop position is where the pass began).
        let start = looper.position
        let pass = (recorded - start + 255) / 256 * 256
        _ = Self.run(chain, Self.sine(500, rate: 48_000, count: pass + recorded), [0: .tap, pass + recorded - 256: .tap])
        #expect(looper.state == .playing && looper.canUndo)

        chain.prepare(sampleRate: 44_100, maximumBlockSize: 256, keepingLoops: libsamplerateLoopResampler)
        #expect(looper.state == .playing && looper.canUndo, "\(looper.state), undo \(looper.canUndo)")
        let length = looper.length
        let both = Self.run(chain, [Float](repeating: 0, count: length))
        let overdub = Self.amplitude(both, 500, rate: 44_100)
        #expect(overdub > 0.3, "the overdub plays at 44 100 Hz: 500 Hz at \(overdub)")
        _ = Self.run(chain, [Float](repeating: 0, count: 2_048), [0: .undo])
        let undone = Self.run(chain, [Float](repeating: 0, count: length))
        let left = Self.amplitude(undone, 500, rate: 44_100), base = Self.amplitude(undone, 300, rate: 44_100)
        #expect(left < 0.001 && base > 0.45, "after undo: 500 Hz at \(left), 300 Hz at \(base)")
        #expect(!looper.canUndo)
    }

    @Test func aRecordingInProgressGoesOnRecording() {
        let chain = Self.looperChain(rate: 44_100)
        let looper = chain.controls.looper
        _ = Self.run(chain, Self.sine(220, rate: 44_100, count: 22_016), [0: .tap])
        #expect(looper.state == .recording && looper.length == 22_016)
        chain.prepare(sampleRate: 48_000, maximumBlockSize: 256, keepingLoops: libsamplerateLoopResampler)
        #expect(looper.state == .recording && looper.length == Int((22_016.0 * 48_000 / 44_100).rounded()), "\(looper.state) \(looper.length)")
        _ = Self.run(chain, Self.sine(220, rate: 48_000, count: 24_064), [24_064 - 256: .tap])
        #expect(looper.state == .playing)
        let pass = Self.run(chain, [Float](repeating: 0, count: looper.length))
        #expect(abs(Self.frequency(pass, rate: 48_000) - 220) < 1, "\(Self.frequency(pass, rate: 48_000)) Hz")
    }

    @Test func withoutAResamplerANewRateClearsTheLoop() {
        let chain = Self.looperChain(rate: 48_000)
        _ = Self.run(chain, Self.sine(440, rate: 48_000, count: 30_000), [0: .tap, 24_064: .tap])
        #expect(chain.controls.looper.state == .playing)
        chain.prepare(sampleRate: 44_100, maximumBlockSize: 256)
        #expect(chain.controls.looper.state == .stopped && chain.controls.looper.length == 0)
    }
}

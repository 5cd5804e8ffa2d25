import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// The cabinet: partitioned convolution against a direct one, the bundled impulse responses
/// applied exactly and without latency, a change of cabinet that never clicks.
@Suite struct CabinetTests {
    /// y = h * x the slow way.
    func directConvolution(_ x: [Float], _ h: [Float]) -> [Float] {
        var y = [Double](repeating: 0, count: x.count)
        for (m, tap) in h.enumerated() where tap != 0 {
            for n in m..<x.count { y[n] += Double(tap) * Double(x[n - m]) }
        }
        return y.map { Float($0) }
    }

    /// The convolver in the pieces a host hands it (1 to 1024 samples, across partition edges).
    func convolve(_ x: [Float], _ kernel: ConvolutionKernel, _ convolver: Convolver) -> [Float] {
        var out = [Float](repeating: 0, count: x.count)
        let pieces = [1, 7, 64, 128, 200, 1024, 33]
        var start = 0, k = 0
        x.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                while start < x.count {
                    let n = min(pieces[k % pieces.count], x.count - start)
                    convolver.process(input.baseAddress! + start, count: n, first: kernel, into: output.baseAddress! + start)
                    start += n
                    k += 1
                }
            }
        }
        return out
    }

    @Test(arguments: [1, 100, 128, 129, 3_000, 48_000])
    func partitionedConvolutionEqualsTheDirectOne(taps: Int) {
        // (The 1 s response is sparse after its first 1000 taps, so the direct sum stays quick.)
        let h = Signal.noise(length: taps, amplitude: 0.5, seed: 3).enumerated().map { i, v in
            i < 1_000 || i % 97 == 0 || i == taps - 1 ? v * Float(exp(-Double(i) / 8_000)) : 0
        }
        let x = Signal.noise(length: taps > 10_000 ? 60_000 : 9_000, amplitude: 0.5, seed: 4)
        let y = convolve(x, ConvolutionKernel(taps: h), Convolver(longestKernel: taps))
        let reference = directConvolution(x, h)
        let worst = zip(y, reference).map { abs($0 - $1) }.max()!
        let scale = Measure.peak(reference)
        print("convolution with \(taps) taps: largest difference \(worst) (peak \(scale))")
        #expect(worst <= 2e-5 * max(scale, 1), "\(taps) taps: \(worst)")
    }

    /// Other partitions than the default 128 (whose spectrum is one 144-lane run of the sum):
    /// 16 and 64 run only sixteen lanes at a time, 256 one run of 144 and then sixteen at a time.
    @Test(arguments: [16, 64, 256])
    func everyPartitionConvolvesAlike(partition: Int) {
        let taps = 3_000
        let h = Signal.noise(length: taps, amplitude: 0.5, seed: 5).enumerated().map { i, v in v * Float(exp(-Double(i) / 800)) }
        let x = Signal.noise(length: 9_000, amplitude: 0.5, seed: 6)
        let y = convolve(x, ConvolutionKernel(taps: h, partition: partition), Convolver(partition: partition, longestKernel: taps))
        let reference = directConvolution(x, h)
        let worst = zip(y, reference).map { abs($0 - $1) }.max()!
        #expect(worst <= 2e-5 * max(Measure.peak(reference), 1), "partition \(partition): \(worst)")
    }

    /// The transforms run the plans kept as FFTW wisdom with the convolver (`FFTPair.wisdom`)
    /// wherever they apply: with this FFTW, on a processor with AVX (they name AVX codelets).
    /// (That they convolve correctly is the test above.)
    @Test(.enabled(if: processorHasAVX, "no AVX on this processor: the kept FFTW plans do not apply here"))
    func theTransformsRunTheKeptPlans() {
        #expect(Convolver(longestKernel: 2_048).transformsFromWisdom)
    }

    /// A chain with only the cabinet on the board, on.
    func cabinet(_ settings: [Parameter: Float] = [:], block: Int = 128) -> Chain {
        TestCabinets.install()
        let c = Chain(board: [.cab])
        c.parameters.set(.cabEnabled, 1)
        for (p, v) in settings { c.parameters.set(p, v) }
        c.prepare(sampleRate: testRate, maximumBlockSize: block)
        return c
    }

    /// An impulse through each bundled cabinet is its impulse response, from sample 0: no latency.
    @Test(arguments: Cabinet.bundled.indices)
    func anImpulseComesOutAsTheImpulseResponse(_ index: Int) throws {
        let ir = try TestCabinets.files.impulseResponse(cabinet: Cabinet.bundled[index], sampleRate: testRate).channels[0]
        var x = [Float](repeating: 0, count: ir.count + 2_000)
        x[0] = 0.5
        let y = Render.through(cabinet([.cabImpulse: Float(index)]), x)
        let worst = (0..<ir.count).map { abs(y[$0] - 0.5 * ir[$0]) }.max()!
        #expect(worst < 1e-6, "\(Cabinet.bundled[index]): \(worst)")
        #expect(Measure.peak(Array(y[ir.count...])) == 0, "nothing after the response")
        // The response's onset (its first sample above 1 % of its peak) comes out on the same
        // sample: no latency.
        let peak = Measure.peak(ir)
        let onset = try #require(ir.firstIndex { abs($0) > 0.01 * peak })
        #expect(y.firstIndex { abs($0) > 0.005 * peak } == onset)
        #expect(abs(y[onset] - 0.5 * ir[onset]) < 1e-6 * peak)
    }

    @Test func theLevelScalesTheOutput() {
        let x = Signal.noise(length: 9_600, amplitude: 0.2)
        let unity = Render.through(cabinet(), x)
        let lower = Render.through(cabinet([.cabLevel: -6]), x)
        let ratio = Measure.rms(Array(lower[4_800...])) / Measure.rms(Array(unity[4_800...]))
        #expect(abs(Double(gainToDecibels(ratio)) + 6) < 0.01)
    }

    /// A new cabinet: 20 ms after the change the output is exactly what the new cabinet makes of
    /// the same input (both ran from the same history), and the change never steps further
    /// than the signal does.
    @Test func changingTheCabinetCrossfadesWithoutAClick() {
        let x = zip(Signal.sine(frequency: 110, seconds: 1, amplitude: 0.3), Signal.sine(frequency: 440, seconds: 1, amplitude: 0.1)).map { $0 + $1 }
        let change = 24_064
        let c = cabinet([.cabImpulse: 0])
        var y = Render.through(c, Array(x[..<change]))
        c.parameters.set(.cabImpulse, 2)
        y += Render.through(c, Array(x[change...]))
        let after = Render.through(cabinet([.cabImpulse: 2]), x)
        let settled = change + 960
        let worst = zip(y[settled...], after[settled...]).map { abs($0 - $1) }.max()!
        #expect(worst < 1e-5, "after the crossfade: \(worst)")
        let step = Measure.largestStep(Array(y[(change - 1)..<settled]))
        let steady = max(Measure.largestStep(Array(y[12_000..<change])), Measure.largestStep(Array(after[settled...])))
        #expect(step <= 1.2 * steady, "step \(step) in the crossfade, \(steady) steady")
    }

    /// Loud, silent and broken input: finite output, silence after silence.
    @Test func nonFiniteInputIsSilenced() {
        var x = Signal.noise(length: 4_800, amplitude: 0.3)
        x[100] = .nan
        x[200] = .infinity
        let y = Render.through(cabinet(), x + Signal.silence(9_600))
        #expect(Measure.allFinite(y))
        #expect(Measure.peak(Array(y[(4_800 + 4_096)...])) == 0)
    }
}

/// Whether the processor has AVX (its flags in /proc/cpuinfo).
let processorHasAVX: Bool = {
    guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return false }
    return info.split(separator: "\n").contains { $0.hasPrefix("flags") && $0.split(separator: " ").contains("avx") }
}()

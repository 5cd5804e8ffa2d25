import Foundation
import StompboxDSP

/// Test signals and measurements shared by the test targets and the benchmark.
public enum Signal {
    public static func sine(frequency: Double, seconds: Double, sampleRate: Double = 48_000,
                            amplitude: Float = 0.5) -> [Float] {
        let n = Int(seconds * sampleRate)
        return (0..<n).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / sampleRate)) }
    }

    public static func impulse(length: Int, at index: Int = 0, amplitude: Float = 1) -> [Float] {
        var x = [Float](repeating: 0, count: length)
        x[index] = amplitude
        return x
    }

    public static func silence(_ length: Int) -> [Float] { [Float](repeating: 0, count: length) }

    /// A plucked string for the tuner: harmonics 1…8 at 1/k (the second at `secondHarmonic`),
    /// each decaying faster than the one below, from a sharp attack.
    public static func pluck(frequency hz: Double, seconds: Double, sampleRate: Double = 48_000,
                             secondHarmonic: Double = 0.5) -> [Float] {
        let n = Int(seconds * sampleRate)
        return (0..<n).map { i in
            let t = Double(i) / sampleRate
            var v = 0.0
            for k in 1...8 where Double(k) * hz < sampleRate / 2 {
                let amplitude = k == 2 ? secondHarmonic : 1 / Double(k)
                v += amplitude * exp(-t * (1.5 + 0.8 * Double(k))) * sin(2 * Double.pi * Double(k) * hz * t + 0.3 * Double(k))
            }
            return Float(0.3 * v)
        }
    }

    /// The frequency `cents` away from MIDI note `midi`, at A4 = `reference`.
    public static func frequency(midi: Int, cents: Double = 0, reference: Double = 440) -> Double {
        reference * pow(2, (Double(midi - 69) + cents / 100) / 12)
    }

    /// White noise from a fixed seed, so runs repeat exactly.
    public static func noise(length: Int, amplitude: Float = 0.5, seed: UInt64 = 1) -> [Float] {
        var state = seed | 1
        return (0..<length).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return amplitude * (Float(state >> 40) / Float(1 << 24) * 2 - 1)
        }
    }

    /// A guitar-like test signal: plucked notes (Karplus–Strong), each decaying, some overlapping.
    public static func guitarRiff(seconds: Double, sampleRate: Double = 48_000, seed: UInt64 = 7) -> [Float] {
        let n = Int(seconds * sampleRate)
        var out = [Float](repeating: 0, count: n)
        let notes: [Double] = [82.41, 110.0, 146.83, 196.0, 246.94, 329.63, 196.0, 146.83]
        let step = Int(0.25 * sampleRate)
        var rng = seed | 1
        var start = 0
        var k = 0
        while start < n {
            let f = notes[k % notes.count]
            let period = max(2, Int(sampleRate / f))
            var line = (0..<period).map { _ -> Float in
                rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17
                return Float(rng >> 40) / Float(1 << 24) * 2 - 1
            }
            let length = min(n - start, Int(1.2 * sampleRate))
            var idx = 0
            for i in 0..<length {
                let next = line[(idx + 1) % period]
                let y = 0.498 * (line[idx] + next)
                out[start + i] += 0.4 * line[idx]
                line[idx] = y
                idx = (idx + 1) % period
            }
            start += step
            k += 1
        }
        return out
    }
}

public enum Measure {
    public static func peak<C: Collection>(_ x: C) -> Float where C.Element == Float {
        x.reduce(0) { max($0, abs($1)) }
    }

    public static func rms<C: Collection>(_ x: C) -> Float where C.Element == Float {
        guard !x.isEmpty else { return 0 }
        let s = x.reduce(0.0) { $0 + Double($1) * Double($1) }
        return Float((s / Double(x.count)).squareRoot())
    }

    public static func decibels(_ gain: Float) -> Float { gainToDecibels(gain) }

    /// Amplitude of the `frequency` component (a single-bin DFT over the whole slice).
    public static func amplitude(of frequency: Double, in x: ArraySlice<Float>, sampleRate: Double = 48_000) -> Float {
        var re = 0.0, im = 0.0
        let w = 2 * Double.pi * frequency / sampleRate
        for (i, v) in x.enumerated() {
            re += Double(v) * cos(w * Double(i))
            im -= Double(v) * sin(w * Double(i))
        }
        return Float(2 * (re * re + im * im).squareRoot() / Double(x.count))
    }

    /// The largest sample-to-sample step: a click shows as a step far above the signal's own.
    public static func largestStep(_ x: [Float]) -> Float {
        var m: Float = 0
        for i in 1..<max(1, x.count) { m = max(m, abs(x[i] - x[i - 1])) }
        return m
    }

    public static func allFinite<C: Collection>(_ x: C) -> Bool where C.Element == Float {
        x.allSatisfy { $0.isFinite }
    }
}

/// Runs a signal through an effect (or chain) in blocks, as the audio thread would.
public enum Render {
    public static func through(_ effect: AudioEffect, _ input: [Float], block: Int = 128) -> [Float] {
        var buffer = input
        buffer.withUnsafeMutableBufferPointer { all in
            var start = 0
            while start < all.count {
                let n = min(block, all.count - start)
                effect.process(UnsafeMutableBufferPointer(rebasing: all[start..<start + n]))
                start += n
            }
        }
        return buffer
    }

    public static func through(_ chain: Chain, _ input: [Float]) -> [Float] {
        var buffer = input
        buffer.withUnsafeMutableBufferPointer { chain.process($0) }
        return buffer
    }

    /// The chain's stereo output for a mono input, in blocks of `block` (the right side's buffer
    /// starts full of garbage: the chain must not read it).
    public static func stereo(_ chain: Chain, _ input: [Float], block: Int = 256) -> (left: [Float], right: [Float]) {
        var left = input
        var right = [Float](repeating: .nan, count: input.count)
        left.withUnsafeMutableBufferPointer { l in
            right.withUnsafeMutableBufferPointer { r in
                var start = 0
                while start < l.count {
                    let n = min(block, l.count - start)
                    chain.process(left: UnsafeMutableBufferPointer(rebasing: l[start..<start + n]),
                                  right: UnsafeMutableBufferPointer(rebasing: r[start..<start + n]))
                    start += n
                }
            }
        }
        return (left, right)
    }
}

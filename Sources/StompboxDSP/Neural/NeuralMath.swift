/// Eight-lane exp, sigmoid and tanh for the recurrent networks' gates. Accurate to a few units in
/// the last place of a Float over the range a gate sees (the reference engines use libm's `expf`
/// and `tanhf`; these differ from them by about 1e-7, far below the 1e-4 error-to-signal bar), and
/// branch-free, so all eight units of a group go through together.
enum NeuralMath {
    typealias V = SIMD8<Float>

    /// e^x for x in about [-87, 88] (clamped there, so never Inf or a denormal): x = n·ln 2 + r with
    /// |r| ≤ ln 2 / 2, e^r by a polynomial (about 1 ulp), 2^n from the bits.
    @inline(__always) static func exp(_ x: V) -> V {
        // `replacing` becomes one max and one min instruction; `pointwiseMin` stays a call that
        // walks the lanes.
        let low = V(repeating: -87), high = V(repeating: 88)
        var x = x.replacing(with: low, where: x .< low)
        x = x.replacing(with: high, where: x .> high)
        // Adding 1.5·2²³ rounds x·log₂e to the nearest integer and leaves that integer in the
        // low bits of the sum's pattern.
        let shifter = V(repeating: 12_582_912)
        let t = mulAdd(x, V(repeating: 1.442_695_04), shifter)
        let n = t - shifter
        // r = x − n·ln 2, with ln 2 in two parts so r keeps its low bits.
        var r = mulAdd(n, V(repeating: -0.693_145_751_953_125), x)
        r = mulAdd(n, V(repeating: -1.428_606_765_330_187_045e-06), r)
        // e^r = 1 + r + r²·q(r), q of degree 5 (Cephes' minimax coefficients for single
        // precision), evaluated in Estrin's order: the recurrence waits on this chain every
        // sample, and Estrin's is about half as long as Horner's.
        let r2 = r * r, r4 = r2 * r2
        let q01 = mulAdd(r, V(repeating: 1.666_666_545_9e-1), V(repeating: 5.000_000_120_1e-1))
        let q23 = mulAdd(r, V(repeating: 8.333_451_907_3e-3), V(repeating: 4.166_579_589_4e-2))
        let q45 = mulAdd(r, V(repeating: 1.987_569_150_0e-4), V(repeating: 1.398_199_950_7e-3))
        let q = mulAdd(q45, r4, mulAdd(q23, r2, q01))
        let p = mulAdd(q, r2, r + V(repeating: 1))
        let bits = unsafeBitCast(t, to: SIMD8<Int32>.self) &- SIMD8<Int32>(repeating: 0x4B40_0000)
        let scale = unsafeBitCast((bits &+ SIMD8<Int32>(repeating: 127)) &<< SIMD8<Int32>(repeating: 23), to: V.self)
        return p * scale
    }

    /// 1 / (1 + e^−x).
    @inline(__always) static func sigmoid(_ x: V) -> V {
        V(repeating: 1) / (V(repeating: 1) + exp(-x))
    }

    /// 1 − 2 / (e^2x + 1): exact to about 6e-8 absolutely, and exactly ±1 far out.
    @inline(__always) static func tanh(_ x: V) -> V {
        V(repeating: 1) - V(repeating: 2) / (exp(x + x) + V(repeating: 1))
    }

    /// The same on one value (the activations of a layer narrower than a vector).
    @inline(__always) static func tanh(_ x: Float) -> Float { tanh(V(repeating: x))[0] }
    @inline(__always) static func sigmoid(_ x: Float) -> Float { sigmoid(V(repeating: x))[0] }
    @inline(__always) static func exp(_ x: Float) -> Float { exp(V(repeating: x))[0] }
}

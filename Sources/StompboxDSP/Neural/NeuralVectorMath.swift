/// The nonlinear functions the neural networks apply, sixteen samples at a time, accurate to
/// about a millionth so that a model plays as its reference engine's exact `tanh` does (the
/// error-to-signal ratio such an error leaves is below 1e-10) at a fraction of a libm call's cost.
/// Coefficients fitted here (a minimax fit of tanh's odd rational form on [0, 9]; e^r's Taylor
/// series on |r| ≤ ln2/2).
enum NeuralVectorMath {
    typealias V = SIMD16<Float>

    /// tanh(x) as x·P(x²)/Q(x²) on |x| ≤ 9 (beyond that tanh is 1 to single precision):
    /// at most 1.1e-6 from tanh, 2e-7 relative near zero.
    @_transparent static func tanh(_ x: V) -> V {
        let c = clamp(x, -9, 9)
        let x2 = c * c
        var p = V(repeating: 1.0694926240492648e-05)
        p = mulAdd(p, x2, V(repeating: 0.002882945654040923))
        p = mulAdd(p, x2, V(repeating: 0.1286246018425475))
        p = mulAdd(p, x2, V(repeating: 0.9999998211620742))
        var q = V(repeating: 2.2262386349919323e-07)
        q = mulAdd(q, x2, V(repeating: 0.00022904828070545035))
        q = mulAdd(q, x2, V(repeating: 0.023537401992019116))
        q = mulAdd(q, x2, V(repeating: 0.4619563852121061))
        q = mulAdd(q, x2, V(repeating: 1))
        return c * p / q
    }

    /// e^x to about 2 ulp on the range where it is finite in single precision (clamped beyond).
    @inline(__always) static func exp(_ x: V) -> V {
        let c = clamp(x, -87, 88)
        // x = n·ln2 + r, |r| ≤ ln2/2; ln2 split in two so n·ln2 is exact enough.
        let n = (c * 1.4426950408889634).rounded(.toNearestOrEven)
        var r = mulAdd(n, V(repeating: -0.693145751953125), c)
        r = mulAdd(n, V(repeating: -1.428606765330187e-06), r)
        var p = V(repeating: 1.0 / 5040)
        p = mulAdd(p, r, V(repeating: 1.0 / 720))
        p = mulAdd(p, r, V(repeating: 1.0 / 120))
        p = mulAdd(p, r, V(repeating: 1.0 / 24))
        p = mulAdd(p, r, V(repeating: 1.0 / 6))
        p = mulAdd(p, r, V(repeating: 0.5))
        p = mulAdd(p, r, V(repeating: 1))
        p = mulAdd(p, r, V(repeating: 1))
        // 2^n through the exponent bits: n + 2^23 + 127 holds 127 + n in its low mantissa bits
        // (n in [-126, 127] after the clamp), shifted into the exponent's place.
        let biased = unsafeBitCast(n + 8_388_735, to: SIMD16<UInt32>.self)
        return p * unsafeBitCast(biased &<< 23, to: V.self)
    }

    @inline(__always) static func sigmoid(_ x: V) -> V {
        1 / (1 + exp(-x))
    }

    /// NAM's "Fasttanh": its own rational approximation, computed as it does, for files that ask for it.
    @inline(__always) static func fastTanh(_ x: V) -> V {
        let ax = abs(x)
        let x2 = x * x
        let linear: V = 2.45550750702956 + 2.45550750702956 * ax
        let cubic: V = (0.893229853513558 + 0.821226666969744 * ax) * x2
        let numerator: V = x * (linear + cubic)
        let inner: V = x + 0.814642734961073 * x * ax
        let denominator: V = 2.44506634652299 + (2.44506634652299 + x2) * abs(inner)
        return numerator / denominator
    }

    /// x limited to [low, high], lane by lane (`clamped` checks its bounds lane by lane and
    /// does not vectorise).
    @_transparent static func clamp(_ x: V, _ low: Float, _ high: Float) -> V {
        let floor = x.replacing(with: low, where: x .< low)
        return floor.replacing(with: high, where: floor .> high)
    }

    @inline(__always) static func abs(_ x: V) -> V {
        unsafeBitCast(unsafeBitCast(x, to: SIMD16<UInt32>.self) & 0x7FFF_FFFF, to: V.self)
    }
}

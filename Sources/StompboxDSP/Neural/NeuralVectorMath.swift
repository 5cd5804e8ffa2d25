/// The nonlinear functions the neural networks apply, on a vector of any width (sixteen frames of
/// a WaveNet, eight units of a recurrent layer), accurate to under a millionth so that a model
/// plays as its reference engine's exact `tanh` does (the error-to-signal ratio such an error
/// leaves is below 1e-10) at a fraction of a libm call's cost. One set for every network, so they
/// all round the same way.
///
/// Coefficients fitted here: tanh's odd rational form by a linear-programming minimax fit on
/// [0, 9] with P(0) = 1 (so tanh(x) = x exactly near zero); e^r's Taylor series on |r| ≤ ln2/2.
enum NeuralVectorMath {
    /// tanh(x) as x·P(x²)/Q(x²): at most 7e-7 from tanh, 7.3e-7 relative, never beyond ±1.
    /// The fraction peaks at 1 + 6e-7 near x = 8.59 (where tanh is 1 − 7e-8), so x is held
    /// within ±8.59 and the result within ±1: far out it is exactly ±1. The two clamps run on
    /// the adder ports, which the multiply-adds leave idle.
    @_transparent static func tanh(_ x: SIMD16<Float>) -> SIMD16<Float> { clamp(tanhRational(clamp(x, -8.59, 8.59)), -1, 1) }
    @_transparent static func tanh(_ x: SIMD8<Float>) -> SIMD8<Float> { clamp(tanhRational(clamp(x, -8.59, 8.59)), -1, 1) }

    /// σ(2x) = ½ + ½·tanh(x): the recurrent layers' gates, whose weights are halved at load so
    /// a gate costs one tanh and no exp. Within 3.4e-7 of σ.
    @_transparent static func sigmoidOfDouble(_ x: SIMD8<Float>) -> SIMD8<Float> {
        mulAdd(tanh(x), SIMD8(repeating: 0.5), SIMD8(repeating: 0.5))
    }

    /// e^x to about 2 ulp on the range where it is finite in single precision (clamped beyond).
    @_transparent static func exp(_ x: SIMD16<Float>) -> SIMD16<Float> {
        let c = clamp(x, -87, 88)
        let n = (c * 1.4426950408889634).rounded(.toNearestOrEven)
        return expOfRemainder(c, n) * unsafeBitCast(unsafeBitCast(n + 8_388_735, to: SIMD16<UInt32>.self) &<< 23, to: SIMD16<Float>.self)
    }
    @_transparent static func exp(_ x: SIMD8<Float>) -> SIMD8<Float> {
        let c = clamp(x, -87, 88)
        let n = (c * 1.4426950408889634).rounded(.toNearestOrEven)
        return expOfRemainder(c, n) * unsafeBitCast(unsafeBitCast(n + 8_388_735, to: SIMD8<UInt32>.self) &<< 23, to: SIMD8<Float>.self)
    }

    @_transparent static func sigmoid(_ x: SIMD16<Float>) -> SIMD16<Float> { 1 / (1 + exp(-x)) }
    @_transparent static func sigmoid(_ x: SIMD8<Float>) -> SIMD8<Float> { 1 / (1 + exp(-x)) }

    /// The same on one value (a layer narrower than a vector).
    @inline(__always) static func tanh(_ x: Float) -> Float { tanh(SIMD8(repeating: x))[0] }
    @inline(__always) static func sigmoid(_ x: Float) -> Float { sigmoid(SIMD8(repeating: x))[0] }
    @inline(__always) static func exp(_ x: Float) -> Float { exp(SIMD8(repeating: x))[0] }

    // The arithmetic shared by every width is generic; what compares, rounds or reinterprets
    // bits is written per width above, because the generic SIMD comparisons and `rounded` stay
    // lane-by-lane loops with a branch per lane where the concrete ones are single instructions.

    /// x·P(x²)/Q(x²), fitted on [0, 9].
    @_transparent static func tanhRational<V: SIMD>(_ c: V) -> V where V.Scalar == Float {
        let x2 = c * c
        var p = V(repeating: 1.0412186250243489e-05)
        p = mulAdd(p, x2, V(repeating: 0.002853838259141961))
        p = mulAdd(p, x2, V(repeating: 0.12834129264769525))
        p = mulAdd(p, x2, V(repeating: 1))
        var q = V(repeating: 2.1422363352712779e-07)
        q = mulAdd(q, x2, V(repeating: 0.00022511905446637794))
        q = mulAdd(q, x2, V(repeating: 0.023414697458442414))
        q = mulAdd(q, x2, V(repeating: 0.4616721263191713))
        q = mulAdd(q, x2, V(repeating: 1))
        return c * p / q
    }

    /// e^r for x = n·ln2 + r, |r| ≤ ln2/2 (the caller scales by 2^n through the exponent bits:
    /// n + 2^23 + 127 holds 127 + n in its low mantissa bits, n in [-126, 127] after the clamp).
    @_transparent static func expOfRemainder<V: SIMD>(_ x: V, _ n: V) -> V where V.Scalar == Float {
        // ln2 split in two so n·ln2 is exact enough.
        var r = mulAdd(n, V(repeating: -0.693145751953125), x)
        r = mulAdd(n, V(repeating: -1.428606765330187e-06), r)
        var p = V(repeating: 1.0 / 5040)
        p = mulAdd(p, r, V(repeating: 1.0 / 720))
        p = mulAdd(p, r, V(repeating: 1.0 / 120))
        p = mulAdd(p, r, V(repeating: 1.0 / 24))
        p = mulAdd(p, r, V(repeating: 1.0 / 6))
        p = mulAdd(p, r, V(repeating: 0.5))
        p = mulAdd(p, r, V(repeating: 1))
        return mulAdd(p, r, V(repeating: 1))
    }

    /// NAM's "Fasttanh": its own rational approximation, computed as it does, for files that ask for it.
    @inline(__always) static func fastTanh(_ x: SIMD16<Float>) -> SIMD16<Float> {
        let ax = abs(x)
        let x2 = x * x
        let linear: SIMD16<Float> = 2.45550750702956 + 2.45550750702956 * ax
        let cubic: SIMD16<Float> = (0.893229853513558 + 0.821226666969744 * ax) * x2
        let numerator: SIMD16<Float> = x * (linear + cubic)
        let inner: SIMD16<Float> = x + 0.814642734961073 * x * ax
        let denominator: SIMD16<Float> = 2.44506634652299 + (2.44506634652299 + x2) * abs(inner)
        return numerator / denominator
    }

    /// x limited to [low, high], lane by lane (`clamped` checks its bounds lane by lane and
    /// does not vectorise).
    @_transparent static func clamp(_ x: SIMD16<Float>, _ low: Float, _ high: Float) -> SIMD16<Float> {
        let floor = x.replacing(with: low, where: x .< low)
        return floor.replacing(with: high, where: floor .> high)
    }
    @_transparent static func clamp(_ x: SIMD8<Float>, _ low: Float, _ high: Float) -> SIMD8<Float> {
        let floor = x.replacing(with: low, where: x .< low)
        return floor.replacing(with: high, where: floor .> high)
    }

    @inline(__always) static func abs(_ x: SIMD16<Float>) -> SIMD16<Float> {
        unsafeBitCast(unsafeBitCast(x, to: SIMD16<UInt32>.self) & 0x7FFF_FFFF, to: SIMD16<Float>.self)
    }
}

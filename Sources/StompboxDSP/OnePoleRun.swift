/// A first-order recursion over a run of values: `out[i] = pole · out[i − 1] + e[i]`, starting
/// from `y` (the value before the run); returns the last value. `out` may be `e`.
///
/// Step by step, each value waits on the one before (a multiply and an add: about 8 cycles,
/// 3.6 ns on the development host). Here eight values at a time are a prefix sum in one vector
/// (three shift-multiply-adds, which do not wait on the run): Y_{i+k} = pole^(k+1)·Y_{i−1} + v_k.
/// Sixteen at a time, only the value after them waits on the one before them, as one scalar
/// multiply and add: Y_{i+15} = pole¹⁶·Y_{i−1} + (pole⁸·v₇ + w₇).
@inline(__always)
func onePoleRun(_ e: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>, count n: Int, pole a: Float, from y: Float) -> Float {
    let a2 = a * a, a4 = a2 * a2, a8 = a4 * a4, a16 = a8 * a8
    let powers = SIMD8<Float>(a, a2, a2 * a, a4, a4 * a, a4 * a2, a4 * a2 * a, a8)
    @inline(__always) func prefix(_ at: Int) -> SIMD8<Float> {
        var v = UnsafeRawPointer(e + at).loadUnaligned(as: SIMD8<Float>.self)
        v = mulAdd(a, SIMD8<Float>(0, v[0], v[1], v[2], v[3], v[4], v[5], v[6]), v)
        v = mulAdd(a2, SIMD8<Float>(0, 0, v[0], v[1], v[2], v[3], v[4], v[5]), v)
        v = mulAdd(a4, SIMD8<Float>(0, 0, 0, 0, v[0], v[1], v[2], v[3]), v)
        return v
    }
    var y = y
    var i = 0
    while i + 16 <= n {
        let v = prefix(i), w = prefix(i + 8)
        let middle = mulAdd(a8, y, v[7])
        UnsafeMutableRawPointer(out + i).storeBytes(of: mulAdd(powers, SIMD8<Float>(repeating: y), v), as: SIMD8<Float>.self)
        UnsafeMutableRawPointer(out + i + 8).storeBytes(of: mulAdd(powers, SIMD8<Float>(repeating: middle), w), as: SIMD8<Float>.self)
        y = mulAdd(a16, y, mulAdd(a8, v[7], w[7]))
        i += 16
    }
    while i + 8 <= n {
        let v = prefix(i)
        UnsafeMutableRawPointer(out + i).storeBytes(of: mulAdd(powers, SIMD8<Float>(repeating: y), v), as: SIMD8<Float>.self)
        y = mulAdd(a8, y, v[7])
        i += 8
    }
    while i < n {
        y = a * y + e[i]
        out[i] = y
        i += 1
    }
    return y
}

/// `e[i] = x[i] − x[i − 1]` for i < n, with `previous` as x[−1] (a high-pass's input for
/// `onePoleRun`); returns x[n − 1], the next run's `previous`. n ≥ 1; `e` must not be `x`.
@inline(__always)
func differences(_ x: UnsafePointer<Float>, after previous: Float, into e: UnsafeMutablePointer<Float>, count n: Int) -> Float {
    e[0] = x[0] - previous
    for i in 1..<n { e[i] = x[i] - x[i - 1] }
    return x[n - 1]
}

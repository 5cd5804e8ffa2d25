/// `x`, or exact zero when it is too small to matter (−300 dB): a decaying feedback state
/// ends in silence instead of denormals, which are slow on x86 without flush-to-zero.
@inline(__always)
func flushed(_ x: Float) -> Float { abs(x) < 1e-15 ? 0 : x }

/// `flushed` on eight values, in integer arithmetic: |v| − 1e-15 (as bit patterns) wraps to a
/// set top bit exactly where |v| < 1e-15, and (top bit) − 1 is then 0, else all ones. (A mask's
/// `replacing` came out lane by lane in the reverb's network.)
@inline(__always)
func flushed(_ v: SIMD8<Float>) -> SIMD8<Float> {
    let bits = unsafeBitCast(v, to: SIMD8<UInt32>.self)
    let keep = (((bits & 0x7fff_ffff) &- Float(1e-15).bitPattern) &>> 31) &- 1
    return unsafeBitCast(bits & keep, to: SIMD8<Float>.self)
}

/// The same on sixteen values. (Built from two eight-lane halves, the reverb's network was a
/// third slower.)
@inline(__always)
func flushed(_ v: SIMD16<Float>) -> SIMD16<Float> {
    let bits = unsafeBitCast(v, to: SIMD16<UInt32>.self)
    let keep = (((bits & 0x7fff_ffff) &- Float(1e-15).bitPattern) &>> 31) &- 1
    return unsafeBitCast(bits & keep, to: SIMD16<Float>.self)
}

/// `x`, or exact zero when it is too small to matter (−300 dB): a decaying feedback state
/// ends in silence instead of denormals, which are slow on x86 without flush-to-zero.
@inline(__always)
func flushed(_ x: Float) -> Float { abs(x) < 1e-15 ? 0 : x }

/// a·b + c: one fused multiply-add (one rounding) where the build has them (`STOMPBOX_FMA`, set
/// by `Package.swift` for a processor with FMA), else a multiply and an add. For the few loops
/// where a measured gain justifies it; nothing else in the pedals is fused.
#if STOMPBOX_FMA
@inline(__always) func mulAdd(_ a: Float, _ b: Float, _ c: Float) -> Float { c.addingProduct(a, b) }
@inline(__always) func mulAdd(_ a: Float, _ b: SIMD8<Float>, _ c: SIMD8<Float>) -> SIMD8<Float> { c.addingProduct(a, b) }
@inline(__always) func mulAdd<V: SIMD>(_ a: V, _ b: V, _ c: V) -> V where V.Scalar: FloatingPoint { c.addingProduct(a, b) }
#else
@inline(__always) func mulAdd(_ a: Float, _ b: Float, _ c: Float) -> Float { a * b + c }
@inline(__always) func mulAdd(_ a: Float, _ b: SIMD8<Float>, _ c: SIMD8<Float>) -> SIMD8<Float> { a * b + c }
@inline(__always) func mulAdd<V: SIMD>(_ a: V, _ b: V, _ c: V) -> V where V.Scalar: FloatingPoint { a * b + c }
#endif

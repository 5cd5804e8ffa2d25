/// a·b + c: one fused multiply-add (one rounding) where the build has them (`STOMPBOX_FMA`, set
/// by `Package.swift` for a processor with FMA), else a multiply and an add. For the few loops
/// where a measured gain justifies it; nothing else in the pedals is fused.
#if STOMPBOX_FMA
@inline(__always) func mulAdd(_ a: Float, _ b: Float, _ c: Float) -> Float { c.addingProduct(a, b) }
@inline(__always) func mulAdd(_ a: Float, _ b: SIMD8<Float>, _ c: SIMD8<Float>) -> SIMD8<Float> { c.addingProduct(a, b) }
@_specialize(where V == SIMD4<Float>) @_specialize(where V == SIMD8<Float>) @_specialize(where V == SIMD16<Float>)
@inline(__always) func mulAdd<V: SIMD>(_ a: V, _ b: V, _ c: V) -> V where V.Scalar: FloatingPoint { c.addingProduct(a, b) }
// The lane widths the pedals use, named, and the generic one specialised for them: a call the
// optimiser leaves generic (one passing a lane-by-lane initialiser such as `SIMD16(0, v[0], …)`,
// or the flanger's loop over its `FlangerLanes`) otherwise walks the lanes through the SIMD
// protocol's witnesses, and the cabinet's, the reverb's and the flanger's vector loops cost
// most of a core. Calls name their vectors' scalar type too.
@inline(__always) func mulAdd(_ a: SIMD4<Float>, _ b: SIMD4<Float>, _ c: SIMD4<Float>) -> SIMD4<Float> { c.addingProduct(a, b) }
@inline(__always) func mulAdd(_ a: SIMD8<Float>, _ b: SIMD8<Float>, _ c: SIMD8<Float>) -> SIMD8<Float> { c.addingProduct(a, b) }
@inline(__always) func mulAdd(_ a: SIMD16<Float>, _ b: SIMD16<Float>, _ c: SIMD16<Float>) -> SIMD16<Float> { c.addingProduct(a, b) }
// The EQ's two-lane recursion: lane by lane, as the vector's `addingProduct` instantiates type
// metadata the first time it runs (heap allocations on the audio thread's first blocks).
@inline(__always) func mulAdd(_ a: SIMD2<Double>, _ b: SIMD2<Double>, _ c: SIMD2<Double>) -> SIMD2<Double> {
    SIMD2(c.x.addingProduct(a.x, b.x), c.y.addingProduct(a.y, b.y))
}
#else
@inline(__always) func mulAdd(_ a: Float, _ b: Float, _ c: Float) -> Float { a * b + c }
@_specialize(where V == SIMD4<Float>) @_specialize(where V == SIMD8<Float>) @_specialize(where V == SIMD16<Float>)
@inline(__always) func mulAdd<V: SIMD>(_ a: V, _ b: V, _ c: V) -> V where V.Scalar: FloatingPoint { a * b + c }
@inline(__always) func mulAdd(_ a: Float, _ b: SIMD8<Float>, _ c: SIMD8<Float>) -> SIMD8<Float> { a * b + c }
@inline(__always) func mulAdd(_ a: SIMD4<Float>, _ b: SIMD4<Float>, _ c: SIMD4<Float>) -> SIMD4<Float> { a * b + c }
@inline(__always) func mulAdd(_ a: SIMD8<Float>, _ b: SIMD8<Float>, _ c: SIMD8<Float>) -> SIMD8<Float> { a * b + c }
@inline(__always) func mulAdd(_ a: SIMD16<Float>, _ b: SIMD16<Float>, _ c: SIMD16<Float>) -> SIMD16<Float> { a * b + c }
@inline(__always) func mulAdd(_ a: SIMD2<Double>, _ b: SIMD2<Double>, _ c: SIMD2<Double>) -> SIMD2<Double> { a * b + c }
#endif

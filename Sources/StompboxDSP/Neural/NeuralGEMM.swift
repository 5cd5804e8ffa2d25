/// A dense layer over a block: `out[o][t] = bias[o] + addend[o][t] + Σ_l W[o][l] · x_l[t]`, the
/// time-major matrix product that every convolution of a WaveNet comes down to (a dilated
/// convolution's taps are row offsets into its history, a 1×1 a single segment of rows).
/// Weights are packed at load in panels of six (or four, two, one) output rows, so each inner
/// step broadcasts six weights against one vector of sixteen frames (twelve AVX accumulators); frames run in tiles of sixteen (callers
/// round a block up to sixteen and keep the extra frames out of what they read back).
///
/// A trivial value: its memory is owned by the network that made it (`NeuralArena`).
struct NeuralGEMM {
    /// Where the inner rows come from: `count` rows of a time-major matrix, `stride` floats
    /// apart, starting at `base` (already at the block's first frame).
    struct Segment {
        var base: UnsafePointer<Float>
        var stride: Int
        var count: Int
    }

    let rows: Int
    let inner: Int
    /// Panels: rows in tiles of 6 or 4 (`tileHeight`), then 2 and 1 for the rest; each tile's
    /// weights for inner row l are `height` consecutive floats.
    let panels: UnsafeMutablePointer<Float>
    let bias: UnsafeMutablePointer<Float>?

    /// `weights[o][l]` (row-major, rows × inner) and an optional bias, copied into `arena`.
    init(rows: Int, inner: Int, weights: [Float], bias: [Float]?, arena: NeuralArena) {
        precondition(weights.count == rows * inner)
        self.rows = rows
        self.inner = inner
        let panels = arena.floats(rows * inner)
        var position = 0
        var row = 0
        while row < rows {
            let height = Self.tileHeight(rows - row)
            for l in 0..<inner {
                for r in 0..<height { panels[position + l * height + r] = weights[(row + r) * inner + l] }
            }
            position += inner * height
            row += height
        }
        self.panels = panels
        if let bias {
            let pointer = arena.floats(rows)
            for o in 0..<rows { pointer[o] = bias[o] }
            self.bias = pointer
        } else {
            self.bias = nil
        }
    }

    /// Computes `frames` (a multiple of 16) frames into `out` (row stride `outStride`).
    /// `addend` (row stride `addendStride`) is added when given. `out` may be `addend`.
    func run(_ segments: UnsafePointer<Segment>, _ segmentCount: Int, frames: Int,
             out: UnsafeMutablePointer<Float>, outStride: Int,
             addend: UnsafePointer<Float>? = nil, addendStride: Int = 0) {
        var row = 0
        var panel = UnsafePointer(panels)
        while row < rows {
            let height = Self.tileHeight(rows - row)
            var t = 0
            while t < frames {
                switch height {
                case 6: tile6(panel, row, t, segments, segmentCount, out, outStride, addend, addendStride)
                case 4: tile4(panel, row, t, segments, segmentCount, out, outStride, addend, addendStride)
                case 2: tile2(panel, row, t, segments, segmentCount, out, outStride, addend, addendStride)
                default: tile1(panel, row, t, segments, segmentCount, out, outStride, addend, addendStride)
                }
                t += 16
            }
            panel += inner * height
            row += height
        }
    }

    typealias V = SIMD16<Float>

    /// Six rows a tile where that leaves no pair behind (16 = 6 + 6 + 4, 8 = 4 + 4).
    static func tileHeight(_ remaining: Int) -> Int {
        remaining == 8 ? 4 : remaining >= 6 ? 6 : remaining >= 4 ? 4 : remaining >= 2 ? 2 : 1
    }

    @inline(__always) private func start(_ row: Int, _ t: Int, _ addend: UnsafePointer<Float>?, _ addendStride: Int) -> V {
        var value = V(repeating: bias?[row] ?? 0)
        if let addend { value += load(addend + row * addendStride + t) }
        return value
    }

    @inline(__always) private func finish(_ value: V, _ row: Int, _ t: Int, _ out: UnsafeMutablePointer<Float>, _ outStride: Int) {
        store(value, out + row * outStride + t)
    }

    @inline(__always) private func tile6(_ panel: UnsafePointer<Float>, _ row: Int, _ t: Int, _ segments: UnsafePointer<Segment>, _ segmentCount: Int,
                                         _ out: UnsafeMutablePointer<Float>, _ outStride: Int, _ addend: UnsafePointer<Float>?, _ addendStride: Int) {
        var a0 = start(row, t, addend, addendStride), a1 = start(row + 1, t, addend, addendStride)
        var a2 = start(row + 2, t, addend, addendStride), a3 = start(row + 3, t, addend, addendStride)
        var a4 = start(row + 4, t, addend, addendStride), a5 = start(row + 5, t, addend, addendStride)
        var w = panel
        for s in 0..<segmentCount {
            let segment = segments[s]
            var x = segment.base + t
            for _ in 0..<segment.count {
                let v = load(x)
                a0 = mulAdd(V(repeating: w[0]), v, a0)
                a1 = mulAdd(V(repeating: w[1]), v, a1)
                a2 = mulAdd(V(repeating: w[2]), v, a2)
                a3 = mulAdd(V(repeating: w[3]), v, a3)
                a4 = mulAdd(V(repeating: w[4]), v, a4)
                a5 = mulAdd(V(repeating: w[5]), v, a5)
                w += 6
                x += segment.stride
            }
        }
        finish(a0, row, t, out, outStride)
        finish(a1, row + 1, t, out, outStride)
        finish(a2, row + 2, t, out, outStride)
        finish(a3, row + 3, t, out, outStride)
        finish(a4, row + 4, t, out, outStride)
        finish(a5, row + 5, t, out, outStride)
    }

    @inline(__always) private func tile4(_ panel: UnsafePointer<Float>, _ row: Int, _ t: Int, _ segments: UnsafePointer<Segment>, _ segmentCount: Int,
                                         _ out: UnsafeMutablePointer<Float>, _ outStride: Int, _ addend: UnsafePointer<Float>?, _ addendStride: Int) {
        var a0 = start(row, t, addend, addendStride), a1 = start(row + 1, t, addend, addendStride)
        var a2 = start(row + 2, t, addend, addendStride), a3 = start(row + 3, t, addend, addendStride)
        var w = panel
        for s in 0..<segmentCount {
            let segment = segments[s]
            var x = segment.base + t
            for _ in 0..<segment.count {
                let v = load(x)
                a0 = mulAdd(V(repeating: w[0]), v, a0)
                a1 = mulAdd(V(repeating: w[1]), v, a1)
                a2 = mulAdd(V(repeating: w[2]), v, a2)
                a3 = mulAdd(V(repeating: w[3]), v, a3)
                w += 4
                x += segment.stride
            }
        }
        finish(a0, row, t, out, outStride)
        finish(a1, row + 1, t, out, outStride)
        finish(a2, row + 2, t, out, outStride)
        finish(a3, row + 3, t, out, outStride)
    }

    @inline(__always) private func tile2(_ panel: UnsafePointer<Float>, _ row: Int, _ t: Int, _ segments: UnsafePointer<Segment>, _ segmentCount: Int,
                                         _ out: UnsafeMutablePointer<Float>, _ outStride: Int, _ addend: UnsafePointer<Float>?, _ addendStride: Int) {
        var a0 = start(row, t, addend, addendStride), a1 = start(row + 1, t, addend, addendStride)
        var w = panel
        for s in 0..<segmentCount {
            let segment = segments[s]
            var x = segment.base + t
            for _ in 0..<segment.count {
                let v = load(x)
                a0 = mulAdd(V(repeating: w[0]), v, a0)
                a1 = mulAdd(V(repeating: w[1]), v, a1)
                w += 2
                x += segment.stride
            }
        }
        finish(a0, row, t, out, outStride)
        finish(a1, row + 1, t, out, outStride)
    }

    @inline(__always) private func tile1(_ panel: UnsafePointer<Float>, _ row: Int, _ t: Int, _ segments: UnsafePointer<Segment>, _ segmentCount: Int,
                                         _ out: UnsafeMutablePointer<Float>, _ outStride: Int, _ addend: UnsafePointer<Float>?, _ addendStride: Int) {
        var a0 = start(row, t, addend, addendStride)
        var w = panel
        for s in 0..<segmentCount {
            let segment = segments[s]
            var x = segment.base + t
            for _ in 0..<segment.count {
                a0 = mulAdd(V(repeating: w[0]), load(x), a0)
                w += 1
                x += segment.stride
            }
        }
        finish(a0, row, t, out, outStride)
    }
}

@inline(__always) func load(_ pointer: UnsafePointer<Float>) -> SIMD16<Float> {
    UnsafeRawPointer(pointer).loadUnaligned(as: SIMD16<Float>.self)
}

@inline(__always) func load(_ pointer: UnsafeMutablePointer<Float>) -> SIMD16<Float> {
    UnsafeRawPointer(pointer).loadUnaligned(as: SIMD16<Float>.self)
}

@inline(__always) func store(_ value: SIMD16<Float>, _ pointer: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(pointer).storeBytes(of: value, as: SIMD16<Float>.self)
}

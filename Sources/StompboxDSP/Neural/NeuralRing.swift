/// A layer's input history, time-major (`rows` rows of `stride` floats): a power-of-two ring
/// of `period` frames followed by a mirror of its first `pad` frames, so that any window of up
/// to `pad` frames starting anywhere in the ring reads contiguously — a dilated convolution's
/// taps are then plain offsets, and nothing is copied per sample. A trivial value: the storage
/// belongs to the network's arena.
struct NeuralRing {
    let rows: Int
    let period: Int
    let pad: Int
    let storage: UnsafeMutablePointer<Float>
    /// Where the current block's first frame goes (0 ..< period).
    private(set) var position = 0

    var stride: Int { period + pad }

    /// Room for `lookback` past frames plus blocks of up to `pad` frames (a multiple of 16).
    init(rows: Int, lookback: Int, pad: Int, arena: NeuralArena) {
        var period = 16
        while period < lookback + pad { period <<= 1 }
        self.rows = rows
        self.period = period
        self.pad = pad
        storage = arena.floats(rows * (period + pad))
    }

    /// Row 0 of the current block's frames (written by the layer before), `back` frames ago.
    @inline(__always) func window(back: Int = 0) -> UnsafeMutablePointer<Float> {
        storage + ((position - back) & (period - 1))
    }

    /// After `frames` frames were written at `window()`: keeps the mirror and the ring equal.
    @inline(__always) func mirror(frames: Int) {
        let start = position
        let end = position + frames
        for row in 0..<rows {
            let base = storage + row * stride
            // Written past the ring's end: those frames belong at its start too.
            if end > period {
                let from = max(start, period)
                (base + from - period).update(from: base + from, count: end - from)
            }
            // Written at the ring's start: the mirror after its end holds them too.
            if start < pad {
                let to = min(end, pad)
                (base + start + period).update(from: base + start, count: to - start)
            }
        }
    }

    @inline(__always) mutating func advance(_ frames: Int) {
        position = (position + frames) & (period - 1)
    }

    func clear() { storage.update(repeating: 0, count: rows * stride) }
}

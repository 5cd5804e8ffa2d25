/// An LSTM layer as NAM and Keras/RTNeural define it: gates i, f, g, o from the input and the
/// previous hidden state, c ← σ(f)·c + σ(i)·tanh(g), h ← σ(o)·tanh(c); the output is h.
///
/// Laid out at load for speed on one core, where a sample's work is a 4·hidden × (hidden + input)
/// matrix times a vector and five activations per unit:
/// - Units go eight to a group (one SIMD8), groups three to a chunk. For each column of
///   [previous h, input], a chunk's twelve gate vectors lie next to each other, so one broadcast
///   of the column's value feeds twelve independent multiply-adds (two broadcasts per eight, as a
///   group-at-a-time loop needs, runs at half the rate here).
/// - The i, f and o weights and biases are halved (exact in binary), so each σ is ½ + ½·tanh of
///   the sum (`sigmoidOfDouble`): five rational tanhs per unit, no exp.
/// - h is kept in two buffers, the one being read and the one being written, so nothing is copied
///   between samples; units past the last (hidden size not a multiple of eight) have zero weights
///   and stay at zero.
final class NeuralLSTMLayer: NeuralLayer {
    let hiddenSize: Int
    private let groups: Int
    private let columns: Int
    /// By chunk of up to three groups: [column: h's, then the input's][group in chunk][gate i, f, g, o].
    private let weights: UnsafeMutablePointer<SIMD8<Float>>
    /// [group][gate].
    private let bias: UnsafeMutablePointer<SIMD8<Float>>
    /// h, by group, twice: `current` is the one the next sample reads.
    private let state: UnsafeMutablePointer<SIMD8<Float>>
    private var current = 0
    /// The cell state, by group.
    private let cell: UnsafeMutablePointer<SIMD8<Float>>
    private let initialHidden: [Float]
    private let initialCell: [Float]

    static let groupsPerChunk = 3

    /// `weights` has 4·hidden rows (gates i, f, g, o, each `hiddenSize` rows) of
    /// `inputSize + hiddenSize` columns (the input's, then the previous h's), row after row;
    /// `bias` 4·hidden values. The state starts (and resets) at `initialHidden`, `initialCell`.
    init(inputSize: Int, hiddenSize: Int, weights rows: [Float], bias rowBias: [Float],
         initialHidden: [Float]? = nil, initialCell: [Float]? = nil) {
        precondition(rows.count == 4 * hiddenSize * (inputSize + hiddenSize) && rowBias.count == 4 * hiddenSize)
        self.hiddenSize = hiddenSize
        let groups = (hiddenSize + 7) / 8
        self.groups = groups
        let columns = inputSize + hiddenSize
        self.columns = columns
        weights = .zeroed(groups * columns * 4)
        bias = .zeroed(groups * 4)
        state = .zeroed(2 * groups)
        cell = .zeroed(groups)
        self.initialHidden = initialHidden ?? [Float](repeating: 0, count: hiddenSize)
        self.initialCell = initialCell ?? [Float](repeating: 0, count: hiddenSize)
        super.init(inputSize: inputSize, outputSize: hiddenSize)
        for gate in 0..<4 {
            let scale: Float = gate == 2 ? 1 : 0.5
            for unit in 0..<hiddenSize {
                let row = gate * hiddenSize + unit
                let group = unit / 8, lane = unit % 8
                let first = group / Self.groupsPerChunk * Self.groupsPerChunk
                let width = min(Self.groupsPerChunk, groups - first)
                bias[group * 4 + gate][lane] = rowBias[row] * scale
                for column in 0..<columns {
                    let source = column < hiddenSize ? inputSize + column : column - hiddenSize
                    weights[first * columns * 4 + (column * width + group - first) * 4 + gate][lane] = rows[row * columns + source] * scale
                }
            }
        }
        reset()
    }

    deinit {
        weights.deallocate(); bias.deallocate(); state.deallocate(); cell.deallocate()
    }

    override var isRecurrent: Bool { true }

    override func reset() {
        current = 0
        state.update(repeating: SIMD8(), count: 2 * groups)
        cell.update(repeating: SIMD8(), count: groups)
        for unit in 0..<hiddenSize {
            state[unit / 8][unit % 8] = initialHidden[unit]
            cell[unit / 8][unit % 8] = initialCell[unit]
        }
    }

    override func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, frames: Int) {
        let inputSize = inputSize, hiddenSize = hiddenSize, groups = groups, columns = columns
        let weights = weights, bias = UnsafePointer(bias), cell = cell
        var from = state + current * groups, to = state + (1 - current) * groups
        for frame in 0..<frames {
            let h = UnsafePointer(UnsafeMutableRawPointer(from).assumingMemoryBound(to: Float.self))
            let x = input + frame * inputSize
            var first = 0
            while first < groups {
                let w = UnsafePointer(weights + first * columns * 4)
                switch groups - first {
                case 1: NeuralLSTMKernel.chunk(1, first: first, weights: w, bias: bias, cell: cell, h: h, hiddenSize: hiddenSize, x: x, inputSize: inputSize, to: to)
                case 2: NeuralLSTMKernel.chunk(2, first: first, weights: w, bias: bias, cell: cell, h: h, hiddenSize: hiddenSize, x: x, inputSize: inputSize, to: to)
                default: NeuralLSTMKernel.chunk(3, first: first, weights: w, bias: bias, cell: cell, h: h, hiddenSize: hiddenSize, x: x, inputSize: inputSize, to: to)
                }
                first += Self.groupsPerChunk
            }
            let y = output + frame * hiddenSize
            if hiddenSize & 7 == 0 {
                for group in 0..<groups { UnsafeMutableRawPointer(y).storeBytes(of: to[group], toByteOffset: group * 32, as: SIMD8<Float>.self) }
            } else {
                y.update(from: UnsafeRawPointer(to).assumingMemoryBound(to: Float.self), count: hiddenSize)
            }
            swap(&from, &to)
        }
        current = from == state ? 0 : 1
    }
}

/// The layer's per-sample arithmetic.
private enum NeuralLSTMKernel {
    /// One sample of `width` groups from `first` on; `width` is a constant where it is inlined,
    /// so the unused accumulators fold away. (Transparent, so always inlined: as a method, even
    /// marked `@inline(__always)`, the optimiser kept it as a call with `width` a variable.)
    @_transparent static func chunk(_ width: Int, first: Int, weights: UnsafePointer<SIMD8<Float>>,
                                                bias: UnsafePointer<SIMD8<Float>>, cell: UnsafeMutablePointer<SIMD8<Float>>,
                                                h: UnsafePointer<Float>, hiddenSize: Int, x: UnsafePointer<Float>, inputSize: Int,
                                                to: UnsafeMutablePointer<SIMD8<Float>>) {
        let zero = SIMD8<Float>()
        let b = bias + first * 4
        var i0 = b[0], f0 = b[1], g0 = b[2], o0 = b[3]
        var i1 = width > 1 ? b[4] : zero, f1 = width > 1 ? b[5] : zero, g1 = width > 1 ? b[6] : zero, o1 = width > 1 ? b[7] : zero
        var i2 = width > 2 ? b[8] : zero, f2 = width > 2 ? b[9] : zero, g2 = width > 2 ? b[10] : zero, o2 = width > 2 ? b[11] : zero
        var w = weights
        for k in 0..<(hiddenSize + inputSize) {
            let a = k < hiddenSize ? h[k] : x[k - hiddenSize]
            i0 = mulAdd(a, w[0], i0); f0 = mulAdd(a, w[1], f0); g0 = mulAdd(a, w[2], g0); o0 = mulAdd(a, w[3], o0)
            if width > 1 { i1 = mulAdd(a, w[4], i1); f1 = mulAdd(a, w[5], f1); g1 = mulAdd(a, w[6], g1); o1 = mulAdd(a, w[7], o1) }
            if width > 2 { i2 = mulAdd(a, w[8], i2); f2 = mulAdd(a, w[9], f2); g2 = mulAdd(a, w[10], g2); o2 = mulAdd(a, w[11], o2) }
            w += 4 * width
        }
        // All the groups' gates first, then their cells, then their outputs: in this order the
        // twelve independent tanhs overlap (group by group, each waited on the last one's
        // chain), about a tenth faster.
        let one = gates(i0, f0, g0, o0)
        let two = width > 1 ? gates(i1, f1, g1, o1) : (i: zero, f: zero, g: zero, o: zero)
        let three = width > 2 ? gates(i2, f2, g2, o2) : (i: zero, f: zero, g: zero, o: zero)
        let c0 = mulAdd(one.f, cell[first], one.i * one.g)
        let c1 = width > 1 ? mulAdd(two.f, cell[first + 1], two.i * two.g) : zero
        let c2 = width > 2 ? mulAdd(three.f, cell[first + 2], three.i * three.g) : zero
        cell[first] = c0
        if width > 1 { cell[first + 1] = c1 }
        if width > 2 { cell[first + 2] = c2 }
        to[first] = one.o * NeuralVectorMath.tanh(c0)
        if width > 1 { to[first + 1] = two.o * NeuralVectorMath.tanh(c1) }
        if width > 2 { to[first + 2] = three.o * NeuralVectorMath.tanh(c2) }
    }

    /// σ(i), σ(f), tanh(g), σ(o) from the sums (i, f and o on halved weights).
    @_transparent static func gates(_ i: SIMD8<Float>, _ f: SIMD8<Float>, _ g: SIMD8<Float>, _ o: SIMD8<Float>)
        -> (i: SIMD8<Float>, f: SIMD8<Float>, g: SIMD8<Float>, o: SIMD8<Float>) {
        (NeuralVectorMath.sigmoidOfDouble(i), NeuralVectorMath.sigmoidOfDouble(f), NeuralVectorMath.tanh(g),
         NeuralVectorMath.sigmoidOfDouble(o))
    }
}

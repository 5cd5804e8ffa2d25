/// An LSTM layer as NAM and Keras/RTNeural define it: gates i, f, g, o from the input and the
/// previous hidden state, c ← σ(f)·c + σ(i)·tanh(g), h ← σ(o)·tanh(c); the output is h.
///
/// Laid out at load for eight units at a time: for each group of eight units and each column of
/// [input, previous h], the four gates' eight weights lie next to each other, so one pass down
/// the columns computes all four gates of the group with eight-lane multiply-adds, and the
/// activations run on the eight lanes together. Units past the last (when the hidden size is not
/// a multiple of eight) have zero weights and stay at zero.
final class NeuralLSTMLayer: NeuralLayer {
    let hiddenSize: Int
    private let groups: Int
    private let columns: Int
    /// [group][column][gate i, f, g, o] vectors of eight units.
    private let weights: UnsafeMutablePointer<SIMD8<Float>>
    /// [group][gate].
    private let bias: UnsafeMutablePointer<SIMD8<Float>>
    /// [input, h]: the column vector the weights multiply.
    private let xh: UnsafeMutablePointer<Float>
    /// The cell state, by group.
    private let cell: UnsafeMutablePointer<SIMD8<Float>>
    /// The new h, by group, until every group has read the old one.
    private let hidden: UnsafeMutablePointer<SIMD8<Float>>
    private let initialHidden: [Float]
    private let initialCell: [Float]

    /// `weights` has 4·hidden rows (gates i, f, g, o, each `hiddenSize` rows) of
    /// `inputSize + hiddenSize` columns (the input's, then the previous h's), row after row;
    /// `bias` 4·hidden values. The state starts (and resets) at `initialHidden`, `initialCell`.
    init(inputSize: Int, hiddenSize: Int, weights rows: [Float], bias rowBias: [Float],
         initialHidden: [Float]? = nil, initialCell: [Float]? = nil) {
        precondition(rows.count == 4 * hiddenSize * (inputSize + hiddenSize) && rowBias.count == 4 * hiddenSize)
        self.hiddenSize = hiddenSize
        groups = (hiddenSize + 7) / 8
        columns = inputSize + hiddenSize
        weights = .zeroed(groups * columns * 4)
        bias = .zeroed(groups * 4)
        xh = .zeroed(columns)
        cell = .zeroed(groups)
        hidden = .zeroed(groups)
        self.initialHidden = initialHidden ?? [Float](repeating: 0, count: hiddenSize)
        self.initialCell = initialCell ?? [Float](repeating: 0, count: hiddenSize)
        super.init(inputSize: inputSize, outputSize: hiddenSize)
        for gate in 0..<4 {
            for unit in 0..<hiddenSize {
                let row = gate * hiddenSize + unit
                let group = unit / 8, lane = unit % 8
                bias[group * 4 + gate][lane] = rowBias[row]
                for column in 0..<columns {
                    weights[(group * columns + column) * 4 + gate][lane] = rows[row * columns + column]
                }
            }
        }
        reset()
    }

    deinit {
        weights.deallocate(); bias.deallocate(); xh.deallocate(); cell.deallocate(); hidden.deallocate()
    }

    override var isRecurrent: Bool { true }

    override func reset() {
        for unit in 0..<hiddenSize {
            xh[inputSize + unit] = initialHidden[unit]
            cell[unit / 8][unit % 8] = initialCell[unit]
        }
    }

    override func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, frames: Int) {
        let inputSize = inputSize, hiddenSize = hiddenSize, columns = columns
        let hiddenFloats = UnsafeMutableRawPointer(hidden).assumingMemoryBound(to: Float.self)
        for frame in 0..<frames {
            xh.update(from: input + frame * inputSize, count: inputSize)
            for group in 0..<groups {
                let w = weights + group * columns * 4
                var i0 = bias[group * 4], f0 = bias[group * 4 + 1], g0 = bias[group * 4 + 2], o0 = bias[group * 4 + 3]
                // Two sets of sums (even and odd columns) so the multiply-adds do not wait on
                // one another.
                var i1 = SIMD8<Float>(), f1 = SIMD8<Float>(), g1 = SIMD8<Float>(), o1 = SIMD8<Float>()
                var column = 0
                while column + 1 < columns {
                    let a = xh[column], b = xh[column + 1]
                    let wa = w + column * 4, wb = wa + 4
                    i0 = mulAdd(a, wa[0], i0); f0 = mulAdd(a, wa[1], f0); g0 = mulAdd(a, wa[2], g0); o0 = mulAdd(a, wa[3], o0)
                    i1 = mulAdd(b, wb[0], i1); f1 = mulAdd(b, wb[1], f1); g1 = mulAdd(b, wb[2], g1); o1 = mulAdd(b, wb[3], o1)
                    column += 2
                }
                if column < columns {
                    let a = xh[column]
                    let wa = w + column * 4
                    i0 = mulAdd(a, wa[0], i0); f0 = mulAdd(a, wa[1], f0); g0 = mulAdd(a, wa[2], g0); o0 = mulAdd(a, wa[3], o0)
                }
                let c = NeuralMath.sigmoid(f0 + f1) * cell[group] + NeuralMath.sigmoid(i0 + i1) * NeuralMath.tanh(g0 + g1)
                cell[group] = c
                hidden[group] = NeuralMath.sigmoid(o0 + o1) * NeuralMath.tanh(c)
            }
            (xh + inputSize).update(from: hiddenFloats, count: hiddenSize)
            (output + frame * hiddenSize).update(from: hiddenFloats, count: hiddenSize)
        }
    }
}

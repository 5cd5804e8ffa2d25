/// A GRU layer as Keras (with `reset_after`, its default) and RTNeural define it, gates z, r and
/// the candidate c:
///   z = σ(Wz·x + Uz·h + bz + b'z),  r = σ(Wr·x + Ur·h + br + b'r),
///   c = tanh(Wc·x + bc + r·(Uc·h + b'c)),  h ← (1 − z)·c + z·h.
/// Laid out like `NeuralLSTMLayer`: eight units per group, the gates' weights of one column next
/// to each other; the candidate's input and recurrent parts are summed apart, as r weighs only
/// the second.
final class NeuralGRULayer: NeuralLayer {
    let hiddenSize: Int
    private let groups: Int
    /// [group][input column][z, r, c].
    private let inputWeights: UnsafeMutablePointer<SIMD8<Float>>
    /// [group][hidden column][z, r, c].
    private let recurrentWeights: UnsafeMutablePointer<SIMD8<Float>>
    /// [group][z (both biases), r (both), c's input bias, c's recurrent bias].
    private let bias: UnsafeMutablePointer<SIMD8<Float>>
    /// h by group (lanes past the last unit stay zero), and the new h until all groups have run.
    private let state: UnsafeMutablePointer<SIMD8<Float>>
    private let hidden: UnsafeMutablePointer<SIMD8<Float>>

    /// `inputWeights`: 3·hidden rows (z, r, c) of `inputSize` columns; `recurrentWeights`: 3·hidden
    /// rows of `hiddenSize`; `inputBias`, `recurrentBias`: 3·hidden values each.
    init(inputSize: Int, hiddenSize: Int, inputWeights w: [Float], recurrentWeights u: [Float],
         inputBias: [Float], recurrentBias: [Float]) {
        precondition(w.count == 3 * hiddenSize * inputSize && u.count == 3 * hiddenSize * hiddenSize)
        precondition(inputBias.count == 3 * hiddenSize && recurrentBias.count == 3 * hiddenSize)
        self.hiddenSize = hiddenSize
        groups = (hiddenSize + 7) / 8
        inputWeights = .zeroed(groups * inputSize * 3)
        recurrentWeights = .zeroed(groups * hiddenSize * 3)
        bias = .zeroed(groups * 4)
        state = .zeroed(groups)
        hidden = .zeroed(groups)
        super.init(inputSize: inputSize, outputSize: hiddenSize)
        for gate in 0..<3 {
            // z and r are halved (exact) so their σ is ½ + ½·tanh (`sigmoidOfDouble`), no exp.
            let scale: Float = gate < 2 ? 0.5 : 1
            for unit in 0..<hiddenSize {
                let row = gate * hiddenSize + unit
                let group = unit / 8, lane = unit % 8
                for column in 0..<inputSize {
                    inputWeights[(group * inputSize + column) * 3 + gate][lane] = w[row * inputSize + column] * scale
                }
                for column in 0..<hiddenSize {
                    recurrentWeights[(group * hiddenSize + column) * 3 + gate][lane] = u[row * hiddenSize + column] * scale
                }
                if gate < 2 {
                    bias[group * 4 + gate][lane] = (inputBias[row] + recurrentBias[row]) * scale
                } else {
                    bias[group * 4 + 2][lane] = inputBias[row]
                    bias[group * 4 + 3][lane] = recurrentBias[row]
                }
            }
        }
    }

    deinit {
        inputWeights.deallocate(); recurrentWeights.deallocate(); bias.deallocate(); state.deallocate(); hidden.deallocate()
    }

    override var isRecurrent: Bool { true }

    override func reset() { state.update(repeating: SIMD8(), count: groups) }

    override func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, frames: Int) {
        let inputSize = inputSize, hiddenSize = hiddenSize
        let hiddenFloats = UnsafeMutableRawPointer(hidden).assumingMemoryBound(to: Float.self)
        let stateFloats = UnsafeMutableRawPointer(state).assumingMemoryBound(to: Float.self)
        for frame in 0..<frames {
            let x = input + frame * inputSize
            for group in 0..<groups {
                var z = bias[group * 4], r = bias[group * 4 + 1], cx = bias[group * 4 + 2], ch = bias[group * 4 + 3]
                let wx = inputWeights + group * inputSize * 3
                for column in 0..<inputSize {
                    let a = x[column], wa = wx + column * 3
                    z = mulAdd(a, wa[0], z); r = mulAdd(a, wa[1], r); cx = mulAdd(a, wa[2], cx)
                }
                // The recurrent part in a second set of sums, so the two chains interleave.
                var z1 = SIMD8<Float>(), r1 = SIMD8<Float>()
                let wh = recurrentWeights + group * hiddenSize * 3
                for column in 0..<hiddenSize {
                    let a = stateFloats[column], wa = wh + column * 3
                    z1 = mulAdd(a, wa[0], z1); r1 = mulAdd(a, wa[1], r1); ch = mulAdd(a, wa[2], ch)
                }
                let zg = NeuralVectorMath.sigmoidOfDouble(z + z1)
                let rg = NeuralVectorMath.sigmoidOfDouble(r + r1)
                let c = NeuralVectorMath.tanh(mulAdd(rg, ch, cx))
                hidden[group] = mulAdd(zg, state[group] - c, c)
            }
            state.update(from: hidden, count: groups)
            (output + frame * hiddenSize).update(from: hiddenFloats, count: hiddenSize)
        }
    }
}

/// A fully connected layer: out = W·in + b, for every frame (Keras's dense and
/// time-distributed dense, NAM's LSTM head).
final class NeuralDenseLayer: NeuralLayer {
    /// [output][input], each row padded to a multiple of eight with zeros.
    private let weights: UnsafeMutablePointer<Float>
    private let bias: [Float]
    private let stride: Int
    /// One frame's input, padded like a row.
    private let scratch: UnsafeMutablePointer<Float>

    /// `weights`: `outputSize` rows of `inputSize`, row after row.
    init(inputSize: Int, outputSize: Int, weights rows: [Float], bias: [Float]) {
        precondition(rows.count == inputSize * outputSize && bias.count == outputSize)
        stride = (inputSize + 7) / 8 * 8
        weights = .zeroed(stride * outputSize)
        scratch = .zeroed(stride)
        self.bias = bias
        super.init(inputSize: inputSize, outputSize: outputSize)
        for row in 0..<outputSize {
            for column in 0..<inputSize { weights[row * stride + column] = rows[row * inputSize + column] }
        }
    }

    deinit { weights.deallocate(); scratch.deallocate() }

    override func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, frames: Int) {
        let inputSize = inputSize, outputSize = outputSize, stride = stride
        let x = UnsafeRawPointer(scratch)
        bias.withUnsafeBufferPointer { bias in
            for frame in 0..<frames {
                scratch.update(from: input + frame * inputSize, count: inputSize)
                for row in 0..<outputSize {
                    let w = UnsafeRawPointer(weights + row * stride)
                    var sum = SIMD8<Float>()
                    var column = 0
                    while column < stride {
                        sum = mulAdd(w.loadUnaligned(fromByteOffset: column * 4, as: SIMD8<Float>.self),
                                     x.loadUnaligned(fromByteOffset: column * 4, as: SIMD8<Float>.self), sum)
                        column += 8
                    }
                    output[frame * outputSize + row] = sum.sum() + bias[row]
                }
            }
        }
    }
}

/// A function applied to each value on its own: an activation (tanh, sigmoid, ReLU, ELU,
/// softmax across a frame), a PReLU with one slope per channel, or a batch normalisation (one
/// scale and offset per channel).
final class NeuralElementwiseLayer: NeuralLayer {
    enum Function: Equatable {
        case tanh, sigmoid, relu, elu, softmax
        /// x ≥ 0 ? x : slope·x, a slope per channel.
        case prelu([Float])
        /// scale·x + offset per channel.
        case affine(scale: [Float], offset: [Float])
    }

    let function: Function
    private let first: [Float]
    private let second: [Float]

    init(size: Int, function: Function) {
        self.function = function
        switch function {
        case .prelu(let slopes): first = slopes; second = []
        case .affine(let scale, let offset): first = scale; second = offset
        default: first = []; second = []
        }
        super.init(inputSize: size, outputSize: size)
    }

    /// An activation named as Keras/RTNeural files name them ("" or "linear": none, nil).
    static func activation(named name: String, size: Int) throws -> NeuralElementwiseLayer? {
        switch name {
        case "", "linear": return nil
        case "tanh": return NeuralElementwiseLayer(size: size, function: .tanh)
        case "sigmoid": return NeuralElementwiseLayer(size: size, function: .sigmoid)
        case "relu": return NeuralElementwiseLayer(size: size, function: .relu)
        case "elu": return NeuralElementwiseLayer(size: size, function: .elu)
        case "softmax": return NeuralElementwiseLayer(size: size, function: .softmax)
        default: throw NeuralModelProblem("has an activation \"\(name)\" this Stompbox does not play")
        }
    }

    override func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, frames: Int) {
        let size = outputSize, count = frames * size
        switch function {
        case .tanh: Self.map(input, output, count) { NeuralVectorMath.tanh($0) }
        case .sigmoid: Self.map(input, output, count) { NeuralVectorMath.sigmoid($0) }
        case .relu: for n in 0..<count { output[n] = max(input[n], 0) }
        case .elu: for n in 0..<count { let x = input[n]; output[n] = x > 0 ? x : NeuralVectorMath.exp(x) - 1 }
        case .softmax:
            for frame in 0..<frames {
                let x = input + frame * size, y = output + frame * size
                var largest = -Float.greatestFiniteMagnitude
                for k in 0..<size { largest = max(largest, x[k]) }
                var total: Float = 0
                for k in 0..<size { y[k] = NeuralVectorMath.exp(x[k] - largest); total += y[k] }
                for k in 0..<size { y[k] /= total }
            }
        case .prelu:
            first.withUnsafeBufferPointer { slope in
                for n in 0..<count { let x = input[n]; output[n] = x >= 0 ? x : slope[n % size] * x }
            }
        case .affine:
            first.withUnsafeBufferPointer { scale in
                second.withUnsafeBufferPointer { offset in
                    for n in 0..<count { output[n] = mulAdd(scale[n % size], input[n], offset[n % size]) }
                }
            }
        }
    }

    /// Eight values at a time, the rest one by one.
    @inline(__always) private static func map(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, _ count: Int,
                                              _ f: (SIMD8<Float>) -> SIMD8<Float>) {
        var n = 0
        let source = UnsafeRawPointer(input), target = UnsafeMutableRawPointer(output)
        while n + 8 <= count {
            target.storeBytes(of: f(source.loadUnaligned(fromByteOffset: n * 4, as: SIMD8<Float>.self)), toByteOffset: n * 4, as: SIMD8<Float>.self)
            n += 8
        }
        while n < count { output[n] = f(SIMD8(repeating: input[n]))[0]; n += 1 }
    }
}

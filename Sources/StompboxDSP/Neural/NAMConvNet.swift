import Foundation

/// NAM's "ConvNet" architecture: blocks of a two-tap dilated convolution (`channels` wide, the
/// first from the input's one channel), each followed by a batch normalisation (when `batchnorm`,
/// in which case the convolution has no bias) and the activation; then a head from the last
/// block's channels to one output with a bias.
///
/// Weights in the order NAM's trainer writes them, block after block: the convolution's, by
/// group, output channel, input channel, then tap (the older sample first); its bias (without
/// batch normalisation) or the normalisation's running mean, running variance, weight, bias
/// (a value per channel each) and epsilon; then the head's weights and its bias.
final class NAMConvNet: NeuralNetwork {
    enum Activation: Equatable {
        case tanh, hardtanh, relu, leakyReLU(Float), sigmoid, silu, softsign
    }

    struct Block {
        let inputs: Int
        let dilation: Int
        /// [tap][output][input]: tap 0 weighs the sample `dilation` back, tap 1 the current one.
        let weights: [Float]
        /// After the convolution: scale·y + offset (the bias, or the batch normalisation).
        let scale: [Float]
        let offset: [Float]
    }

    let channels: Int
    let blocks: [Block]
    let activation: Activation
    let head: [Float]
    let headBias: Float
    /// Each block's input: its last `dilation` frames, then a block's.
    private var histories: [UnsafeMutablePointer<Float>] = []
    private var capacity = 0
    private var last: UnsafeMutablePointer<Float>

    static func build(config: [String: Any], weights: [Float]) throws -> any NeuralNetwork {
        let channels = try NeuralJSON.int(config["channels"], "channels")
        let dilations = try NeuralJSON.array(config["dilations"], "dilations").map { try NeuralJSON.int($0, "dilations") }
        let batchnorm = try NeuralJSON.bool(config["batchnorm"], "batchnorm")
        let groups = config["groups"] == nil ? 1 : try NeuralJSON.int(config["groups"], "groups")
        let inChannels = config["in_channels"] == nil ? 1 : try NeuralJSON.int(config["in_channels"], "in_channels")
        let outChannels = config["out_channels"] == nil ? 1 : try NeuralJSON.int(config["out_channels"], "out_channels")
        guard inChannels == 1, outChannels == 1 else {
            throw NeuralModelProblem("is a ConvNet with \(inChannels) input and \(outChannels) output channels; only mono (1 in, 1 out) models play")
        }
        guard (1...1024).contains(channels) else { throw NeuralModelProblem("is a ConvNet of \(channels) channels") }
        guard !dilations.isEmpty, dilations.allSatisfy({ (1...65_536).contains($0) }) else {
            throw NeuralModelProblem("is a ConvNet with dilations \(dilations)")
        }
        guard groups >= 1, channels % groups == 0, groups == 1 else {
            // The first block's single input channel can only be split into one group (NAM
            // refuses the others when it builds the model).
            throw NeuralModelProblem("is a ConvNet of \(groups) groups; its first block has one input channel, which one group takes")
        }
        let activation = try Self.activation(config["activation"])
        var reader = WeightReader(weights)
        var blocks = [Block]()
        for (index, dilation) in dilations.enumerated() {
            let inputs = index == 0 ? 1 : channels
            var w = [Float](repeating: 0, count: 2 * channels * inputs)
            for output in 0..<channels {
                for input in 0..<inputs {
                    for tap in 0..<2 { w[(tap * channels + output) * inputs + input] = try reader.next() }
                }
            }
            var scale = [Float](repeating: 1, count: channels), offset = [Float](repeating: 0, count: channels)
            if batchnorm {
                let mean = Array(try reader.take(channels)), variance = Array(try reader.take(channels))
                let weight = Array(try reader.take(channels)), bias = Array(try reader.take(channels))
                let epsilon = try reader.next()
                for c in 0..<channels {
                    scale[c] = weight[c] / (epsilon + variance[c]).squareRoot()
                    offset[c] = bias[c] - scale[c] * mean[c]
                }
            } else {
                offset = Array(try reader.take(channels))
            }
            blocks.append(Block(inputs: inputs, dilation: dilation, weights: w, scale: scale, offset: offset))
        }
        let head = Array(try reader.take(channels))
        let headBias = try reader.next()
        try reader.finish()
        return NAMConvNet(channels: channels, blocks: blocks, activation: activation, head: head, headBias: headBias)
    }

    /// An activation as NAM's config names it: a name, or an object with a "type" (and a
    /// LeakyReLU's "negative_slope", 0.01 when absent).
    static func activation(_ value: Any?) throws -> Activation {
        let object = value as? [String: Any]
        let name = try NeuralJSON.string(object?["type"] ?? value, "activation")
        switch name {
        case "Tanh": return .tanh
        case "Hardtanh": return .hardtanh
        case "ReLU": return .relu
        case "LeakyReLU": return .leakyReLU(Float(NeuralJSON.number(object?["negative_slope"]) ?? 0.01))
        case "Sigmoid": return .sigmoid
        case "SiLU": return .silu
        case "Softsign": return .softsign
        default: throw NeuralModelProblem("has an activation \"\(name)\" this Stompbox's ConvNet does not play")
        }
    }

    init(channels: Int, blocks: [Block], activation: Activation, head: [Float], headBias: Float) {
        self.channels = channels
        self.blocks = blocks
        self.activation = activation
        self.head = head
        self.headBias = headBias
        last = .zeroed(channels)
        prepare(maximumBlockSize: 1)
    }

    deinit {
        for history in histories { history.deallocate() }
        last.deallocate()
    }

    var receptiveField: Int { 1 + blocks.reduce(0) { $0 + $1.dilation } }
    var isRecurrent: Bool { false }

    func prepare(maximumBlockSize: Int) {
        for history in histories { history.deallocate() }
        last.deallocate()
        capacity = max(1, maximumBlockSize)
        histories = blocks.map { .zeroed(($0.dilation + capacity) * $0.inputs) }
        last = .zeroed(capacity * channels)
    }

    func reset() {
        for (block, history) in zip(blocks, histories) { history.update(repeating: 0, count: (block.dilation + capacity) * block.inputs) }
    }

    func process(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, count: Int) {
        var done = 0
        while done < count {
            let frames = min(capacity, count - done)
            run(input + done, output + done, frames: frames)
            done += frames
        }
    }

    private func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, frames: Int) {
        let channels = channels
        // The input goes into the first block's history after its past.
        histories[0].advanced(by: blocks[0].dilation).update(from: input, count: frames)
        for index in blocks.indices {
            let block = blocks[index]
            let history = histories[index]
            let inputs = block.inputs, dilation = block.dilation
            // This block's output is the next block's input, after that one's past; the last's
            // goes to the head.
            let target = index + 1 < blocks.count ? histories[index + 1] + blocks[index + 1].dilation * channels : last
            block.weights.withUnsafeBufferPointer { w in
                block.scale.withUnsafeBufferPointer { scale in
                    block.offset.withUnsafeBufferPointer { offset in
                        for frame in 0..<frames {
                            let now = history + (dilation + frame) * inputs
                            let before = history + frame * inputs
                            let y = target + frame * channels
                            for out in 0..<channels {
                                let older = w.baseAddress! + out * inputs, current = w.baseAddress! + (channels + out) * inputs
                                var sum: Float = 0
                                for k in 0..<inputs { sum = mulAdd(older[k], before[k], sum); sum = mulAdd(current[k], now[k], sum) }
                                y[out] = mulAdd(scale[out], sum, offset[out])
                            }
                        }
                    }
                }
            }
            apply(target, count: frames * channels)
            // Keep the last `dilation` frames of this block's input as the next call's past.
            history.update(from: history + frames * inputs, count: dilation * inputs)
        }
        head.withUnsafeBufferPointer { head in
            for frame in 0..<frames {
                var sum = headBias
                for c in 0..<channels { sum = mulAdd(head[c], last[frame * channels + c], sum) }
                output[frame] = sum
            }
        }
    }

    private func apply(_ values: UnsafeMutablePointer<Float>, count: Int) {
        switch activation {
        case .tanh, .sigmoid, .silu:
            var n = 0
            let raw = UnsafeMutableRawPointer(values)
            while n < count {
                var v = SIMD8<Float>()
                let lanes = min(8, count - n)
                if lanes == 8 { v = raw.loadUnaligned(fromByteOffset: n * 4, as: SIMD8<Float>.self) } else { for l in 0..<lanes { v[l] = values[n + l] } }
                switch activation {
                case .tanh: v = NeuralVectorMath.tanh(v)
                case .sigmoid: v = NeuralVectorMath.sigmoid(v)
                default: v = v * NeuralVectorMath.sigmoid(v)
                }
                if lanes == 8 { raw.storeBytes(of: v, toByteOffset: n * 4, as: SIMD8<Float>.self) } else { for l in 0..<lanes { values[n + l] = v[l] } }
                n += 8
            }
        case .hardtanh: for n in 0..<count { values[n] = min(max(values[n], -1), 1) }
        case .relu: for n in 0..<count { values[n] = max(values[n], 0) }
        case .leakyReLU(let slope): for n in 0..<count { let x = values[n]; values[n] = x > 0 ? x : slope * x }
        case .softsign: for n in 0..<count { let x = values[n]; values[n] = x / (1 + abs(x)) }
        }
    }
}

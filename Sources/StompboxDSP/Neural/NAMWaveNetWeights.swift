/// A WaveNet's weights read from the file's flat list in the order NAM consumes them, each
/// convolution as a dense matrix (a grouped one with zeros off its blocks): what the network
/// lays out for SIMD when it is prepared.
struct NAMWaveNetWeights {
    /// `rows × inner`, row-major; for a convolution the inner index is tap-major (`k · inputs + j`,
    /// the oldest tap first), as the network's segments run.
    struct Dense {
        var rows: Int
        var inner: Int
        var weights: [Float]
        var bias: [Float]?

        /// This matrix with `other`'s columns appended (a layer's input mixin after its taps).
        func appending(_ other: Dense) -> Dense {
            var weights = [Float]()
            weights.reserveCapacity(rows * (inner + other.inner))
            for o in 0..<rows {
                weights += self.weights[(o * inner)..<((o + 1) * inner)]
                weights += other.weights[(o * other.inner)..<((o + 1) * other.inner)]
            }
            return Dense(rows: rows, inner: inner + other.inner, weights: weights, bias: bias)
        }
    }

    struct Layer {
        var conv: Dense
        var mixin: Dense
        var layer1x1: Dense?
        var head1x1: Dense?
        var films: [Dense?]
    }

    struct LayerArray {
        var rechannel: Dense
        var layers: [Layer]
        var head: Dense
    }

    var arrays: [LayerArray] = []
    var postHead: [Dense] = []
    var headScale: Float = 1

    init(config: NAMWaveNetConfig, weights: [Float]) throws {
        var reader = WeightReader(weights)
        for (index, array) in config.arrays.enumerated() {
            let key = "layers[\(index)]"
            let rechannel = try Self.conv(&reader, inputs: array.inputSize, outputs: array.channels, kernel: 1, groups: 1, bias: false, key: key)
            var layers = [Layer]()
            for (l, gating) in array.gating.enumerated() {
                let bg = gating == .none ? array.bottleneck : 2 * array.bottleneck
                let conv = try Self.conv(&reader, inputs: array.channels, outputs: bg, kernel: array.kernelSizes[l], groups: array.groupsInput, bias: true, key: "\(key).groups_input")
                let mixin = try Self.conv(&reader, inputs: array.conditionSize, outputs: bg, kernel: 1, groups: array.groupsMixin, bias: false, key: "\(key).groups_input_mixin")
                let layer1x1 = array.layer1x1 ? try Self.conv(&reader, inputs: array.bottleneck, outputs: array.channels, kernel: 1, groups: array.layer1x1Groups, bias: true, key: "\(key).layer1x1.groups") : nil
                let head1x1 = array.head1x1 ? try Self.conv(&reader, inputs: array.bottleneck, outputs: array.head1x1Channels, kernel: 1, groups: array.head1x1Groups, bias: true, key: "\(key).head1x1.groups") : nil
                // What each FiLM modulates: the layer's input, the convolution's and the mixin's
                // outputs, the activation's input and output, layer1x1's and head1x1's outputs.
                let dimensions = [array.channels, bg, array.conditionSize, bg, bg, array.bottleneck, array.channels, array.head1x1Channels]
                var films = [Dense?]()
                for (f, film) in array.films.enumerated() {
                    guard film.active else { films.append(nil); continue }
                    films.append(try Self.conv(&reader, inputs: array.conditionSize, outputs: (film.shift ? 2 : 1) * dimensions[f], kernel: 1,
                                               groups: film.groups, bias: true, key: "\(key).\(NAMWaveNetConfig.filmKeys[f]).groups"))
                }
                layers.append(Layer(conv: conv, mixin: mixin, layer1x1: layer1x1, head1x1: head1x1, films: films))
            }
            let head = try Self.conv(&reader, inputs: array.headInputs, outputs: array.headSize, kernel: array.headKernelSize, groups: 1, bias: array.headBias, key: key)
            arrays.append(LayerArray(rechannel: rechannel, layers: layers, head: head))
        }
        if let head = config.postHead {
            var inputs = config.arrays.last!.headSize
            for (i, kernel) in head.kernelSizes.enumerated() {
                let outputs = i == head.kernelSizes.count - 1 ? head.outChannels : head.channels
                postHead.append(try Self.conv(&reader, inputs: inputs, outputs: outputs, kernel: kernel, groups: 1, bias: true, key: "head"))
                inputs = outputs
            }
        }
        headScale = try reader.next()
        try reader.finish()
    }

    /// A convolution's weights in NAM's order: for each group, each output, each input, each
    /// tap; then the bias.
    static func conv(_ reader: inout WeightReader, inputs: Int, outputs: Int, kernel: Int, groups: Int, bias: Bool, key: String) throws -> Dense {
        guard inputs % groups == 0, outputs % groups == 0 else {
            throw NeuralModelProblem("\"\(key)\" is \(groups), which does not divide \(inputs) inputs and \(outputs) outputs")
        }
        let (inPer, outPer) = (inputs / groups, outputs / groups)
        let inner = kernel * inputs
        var dense = [Float](repeating: 0, count: outputs * inner)
        let flat = try reader.take(groups * outPer * inPer * kernel)
        var index = flat.startIndex
        for g in 0..<groups {
            for i in 0..<outPer {
                for j in 0..<inPer {
                    for k in 0..<kernel {
                        dense[(g * outPer + i) * inner + k * inputs + g * inPer + j] = flat[index]
                        index += 1
                    }
                }
            }
        }
        return Dense(rows: outputs, inner: inner, weights: dense, bias: bias ? Array(try reader.take(outputs)) : nil)
    }
}

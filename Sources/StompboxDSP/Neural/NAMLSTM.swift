/// NAM's "LSTM" architecture: `num_layers` LSTM layers of `hidden_size` units (the first takes
/// `input_size` values, 1 for a mono capture), then a dense head to one output.
///
/// The weights, in the order NAM's trainer writes them: for each layer, its 4·hidden × (input +
/// hidden) matrix row after row (gates i, f, g, o; the input's columns, then the hidden state's),
/// its 4·hidden biases, then its initial hidden state and initial cell state (hidden values
/// each; the state it starts and resets to); then the head's hidden weights and its bias.
enum NAMLSTM {
    static func build(config: [String: Any], weights: [Float]) throws -> any NeuralNetwork {
        let layers = try NeuralJSON.int(config["num_layers"], "num_layers")
        let inputSize = try NeuralJSON.int(config["input_size"], "input_size")
        let hiddenSize = try NeuralJSON.int(config["hidden_size"], "hidden_size")
        let inChannels = config["in_channels"] == nil ? 1 : try NeuralJSON.int(config["in_channels"], "in_channels")
        let outChannels = config["out_channels"] == nil ? 1 : try NeuralJSON.int(config["out_channels"], "out_channels")
        guard inChannels == 1, outChannels == 1, inputSize == 1 else {
            throw NeuralModelProblem("is an LSTM with \(inputSize) inputs, \(inChannels) input and \(outChannels) output channels; only mono (1 in, 1 out) models play")
        }
        guard (1...64).contains(layers) else { throw NeuralModelProblem("is an LSTM of \(layers) layers (1 to 64 play)") }
        guard (1...1024).contains(hiddenSize) else { throw NeuralModelProblem("is an LSTM with a hidden size of \(hiddenSize) (1 to 1024 play)") }
        var reader = WeightReader(weights)
        var stack = [NeuralLayer]()
        for layer in 0..<layers {
            let input = layer == 0 ? inputSize : hiddenSize
            let matrix = Array(try reader.take(4 * hiddenSize * (input + hiddenSize)))
            let bias = Array(try reader.take(4 * hiddenSize))
            let hidden = Array(try reader.take(hiddenSize))
            let cell = Array(try reader.take(hiddenSize))
            stack.append(NeuralLSTMLayer(inputSize: input, hiddenSize: hiddenSize, weights: matrix, bias: bias,
                                         initialHidden: hidden, initialCell: cell))
        }
        let head = Array(try reader.take(hiddenSize))
        let headBias = try reader.next()
        try reader.finish()
        stack.append(NeuralDenseLayer(inputSize: hiddenSize, outputSize: 1, weights: head, bias: [headBias]))
        return NeuralLayerStack(layers: stack)
    }
}

import Foundation

/// AIDA-X / RTNeural models: the JSON RTNeural's Keras exporter writes (`.json`, `.aidax`). An
/// `in_shape` (its last value: inputs per sample, 1 for a mono model) and a list of `layers`,
/// each with a `type`, a `shape` (its last value: its output size), its `weights` as Keras holds
/// them, and an `activation` for dense layers:
/// - `dense`, `time-distributed-dense`: weights [kernel (in × out), bias (out), optional];
/// - `lstm`: [kernel (in × 4h), recurrent (h × 4h), bias (4h)], gates i, f, c, o;
/// - `gru`: [kernel (in × 3h), recurrent (h × 3h), bias (2 × 3h)], gates z, r, h, Keras's
///   `reset_after` form (the only one RTNeural reads);
/// - `activation`, `prelu` ([[slopes]]), `batchnorm` ([γ, β,] mean, variance; `epsilon`).
/// A recurrent layer's own `activation` is tanh whatever it says, as in RTNeural.
/// AIDA-X's own keys: `in_gain` and `out_gain` in dB (as its plugin reads them; −90 dB or less is
/// silence), `in_skip` 1 to add the (scaled) input to the network's output before `out_gain`.
enum NeuralKerasModel {
    static func build(_ json: [String: Any]) throws -> NeuralModel {
        let shape = try NeuralJSON.array(json["in_shape"], "in_shape")
        let inputs = try NeuralJSON.int(shape.last, "in_shape")
        guard inputs == 1 else {
            throw NeuralModelProblem("takes \(inputs) values per sample (a conditioned model); only models of one input play")
        }
        let layerList = try NeuralJSON.array(json["layers"], "layers")
        guard !layerList.isEmpty else { throw NeuralModelProblem("has no layers") }
        var layers = [NeuralLayer]()
        var size = inputs
        var architecture: String?
        for (index, entry) in layerList.enumerated() {
            let where_ = "layer \(index + 1)"
            let layer = try NeuralJSON.object(entry, where_)
            let type = try NeuralJSON.string(layer["type"], "\(where_) type")
            let shapeList = try NeuralJSON.array(layer["shape"], "\(where_) shape")
            let dims = try NeuralJSON.int(shapeList.last, "\(where_) shape")
            guard (1...1024).contains(dims) else { throw NeuralModelProblem("has a \(type) layer (\(where_)) of \(dims) values") }
            let weights = layer["weights"] as? [Any] ?? []
            let context = "\(where_) (\(type))"
            switch type {
            case "dense", "time-distributed-dense":
                guard weights.count >= 1 else { throw NeuralModelProblem("\(context) has no weights") }
                let kernel = try matrix(weights[0], rows: size, columns: dims, "\(context) kernel")
                let bias = weights.count >= 2 ? try vector(weights[1], dims, "\(context) bias") : [Float](repeating: 0, count: dims)
                layers.append(NeuralDenseLayer(inputSize: size, outputSize: dims, weights: transpose(kernel, rows: size, columns: dims), bias: bias))
                if let activation = try NeuralElementwiseLayer.activation(named: layer["activation"] as? String ?? "", size: dims) {
                    layers.append(activation)
                }
            case "lstm":
                guard weights.count == 3 else { throw NeuralModelProblem("\(context) has \(weights.count) weight arrays where 3 are needed") }
                let kernel = try matrix(weights[0], rows: size, columns: 4 * dims, "\(context) kernel")
                let recurrent = try matrix(weights[1], rows: dims, columns: 4 * dims, "\(context) recurrent kernel")
                let bias = try vector(weights[2], 4 * dims, "\(context) bias")
                // Keras holds columns (one per gate row); the layer takes rows of [input, h].
                var rows = [Float](repeating: 0, count: 4 * dims * (size + dims))
                for row in 0..<(4 * dims) {
                    for column in 0..<size { rows[row * (size + dims) + column] = kernel[column * 4 * dims + row] }
                    for column in 0..<dims { rows[row * (size + dims) + size + column] = recurrent[column * 4 * dims + row] }
                }
                layers.append(NeuralLSTMLayer(inputSize: size, hiddenSize: dims, weights: rows, bias: bias))
                architecture = architecture ?? "LSTM"
            case "gru":
                guard weights.count == 3 else { throw NeuralModelProblem("\(context) has \(weights.count) weight arrays where 3 are needed") }
                let kernel = try matrix(weights[0], rows: size, columns: 3 * dims, "\(context) kernel")
                let recurrent = try matrix(weights[1], rows: dims, columns: 3 * dims, "\(context) recurrent kernel")
                guard let biasRows = weights[2] as? [Any], biasRows.count == 2, biasRows.allSatisfy({ $0 is [Any] }) else {
                    throw NeuralModelProblem("\(context) has one bias per gate, a GRU without reset_after, which RTNeural and this Stompbox do not play (2 × \(3 * dims) biases are needed)")
                }
                let inputBias = try vector(biasRows[0], 3 * dims, "\(context) input bias")
                let recurrentBias = try vector(biasRows[1], 3 * dims, "\(context) recurrent bias")
                layers.append(NeuralGRULayer(inputSize: size, hiddenSize: dims,
                                             inputWeights: transpose(kernel, rows: size, columns: 3 * dims),
                                             recurrentWeights: transpose(recurrent, rows: dims, columns: 3 * dims),
                                             inputBias: inputBias, recurrentBias: recurrentBias))
                architecture = architecture ?? "GRU"
            case "activation":
                guard dims == size else { throw NeuralModelProblem("\(context) has \(dims) values after a layer of \(size)") }
                let name = try NeuralJSON.string(layer["activation"], "\(where_) activation")
                if let activation = try NeuralElementwiseLayer.activation(named: name, size: dims) { layers.append(activation) }
            case "prelu":
                guard dims == size else { throw NeuralModelProblem("\(context) has \(dims) values after a layer of \(size)") }
                guard let first = weights.first as? [Any], first.count >= 1 else { throw NeuralModelProblem("\(context) has no slopes") }
                layers.append(NeuralElementwiseLayer(size: dims, function: .prelu(try vector(first[0], dims, "\(context) slopes"))))
            case "batchnorm":
                guard dims == size else { throw NeuralModelProblem("\(context) has \(dims) values after a layer of \(size)") }
                guard weights.count == 4 || weights.count == 2 else { throw NeuralModelProblem("\(context) has \(weights.count) weight arrays where 2 or 4 are needed") }
                let epsilon = try NeuralJSON.double(layer["epsilon"], "\(where_) epsilon")
                let affine = weights.count == 4
                let gamma = affine ? try vector(weights[0], dims, "\(context) gamma") : [Float](repeating: 1, count: dims)
                let beta = affine ? try vector(weights[1], dims, "\(context) beta") : [Float](repeating: 0, count: dims)
                let mean = try vector(weights[affine ? 2 : 0], dims, "\(context) mean")
                let variance = try vector(weights[affine ? 3 : 1], dims, "\(context) variance")
                var scale = [Float](), offset = [Float]()
                for k in 0..<dims {
                    let s = gamma[k] / (variance[k] + Float(epsilon)).squareRoot()
                    scale.append(s)
                    offset.append(beta[k] - s * mean[k])
                }
                layers.append(NeuralElementwiseLayer(size: dims, function: .affine(scale: scale, offset: offset)))
            default:
                throw NeuralModelProblem("has a layer of type \"\(type)\" (\(where_)) this Stompbox does not play")
            }
            size = dims
        }
        guard size == 1 else { throw NeuralModelProblem("gives \(size) values per sample; only models of one output play") }
        let inputGain = try decibels(json["in_gain"], "in_gain")
        let outputGain = try decibels(json["out_gain"], "out_gain")
        var addsInput = false
        if json["in_skip"] != nil {
            let skip = try NeuralJSON.int(json["in_skip"], "in_skip")
            guard skip == 0 || skip == 1 else { throw NeuralModelProblem("has an in_skip of \(skip) (0 or 1 play)") }
            addsInput = skip == 1
        }
        var info = NeuralModelInfo(format: "AIDA-X", architecture: architecture ?? "Dense")
        let metadata = json["metadata"] as? [String: Any] ?? [:]
        if let rate = NeuralJSON.number(json["samplerate"] ?? json["sample_rate"] ?? metadata["samplerate"] ?? metadata["sample_rate"]) {
            guard rate.isFinite, rate >= 8_000, rate <= 384_000 else { throw NeuralModelProblem("has a sample rate \(rate) no interface plays") }
            info.sampleRate = rate
        }
        info.name = metadata["name"] as? String
        info.modeledBy = metadata["author"] as? String ?? metadata["modeled_by"] as? String
        let network = NeuralLayerStack(layers: layers, inputGain: inputGain, outputGain: outputGain, addsInput: addsInput)
        return NeuralModel(info: info, network: network)
    }

    /// A gain in dB as AIDA-X applies it: 10^(dB/20), and nothing at −90 dB or below; 1 when absent.
    private static func decibels(_ value: Any?, _ key: String) throws -> Float {
        guard value != nil else { return 1 }
        let db = Float(try NeuralJSON.double(value, key))
        return db > -90 ? Float(pow(10, Double(db) * 0.05)) : 0
    }

    /// A list of lists `rows` × `columns`, flattened row after row.
    private static func matrix(_ value: Any, rows: Int, columns: Int, _ name: String) throws -> [Float] {
        guard let list = value as? [Any], list.count == rows else {
            throw NeuralModelProblem("has a \(name) of \((value as? [Any])?.count ?? 0) rows where \(rows) × \(columns) are needed")
        }
        var flat = [Float]()
        flat.reserveCapacity(rows * columns)
        for row in list {
            let values = try NeuralJSON.floats(row, name)
            guard values.count == columns else { throw NeuralModelProblem("has a \(name) with rows of \(values.count) where \(rows) × \(columns) are needed") }
            flat += values
        }
        return flat
    }

    private static func vector(_ value: Any, _ count: Int, _ name: String) throws -> [Float] {
        let values = try NeuralJSON.floats(value, name)
        guard values.count == count else { throw NeuralModelProblem("has a \(name) of \(values.count) values where \(count) are needed") }
        return values
    }

    private static func transpose(_ flat: [Float], rows: Int, columns: Int) -> [Float] {
        var result = [Float](repeating: 0, count: flat.count)
        for row in 0..<rows { for column in 0..<columns { result[column * rows + row] = flat[row * columns + column] } }
        return result
    }
}

import Foundation

/// Builds NAM's WaveNet (file format 0.5 to 0.7, with a slimmable WaveNet played at its full
/// size) and its SlimmableContainer ("A2") files.
enum NAMWaveNet {
    static func build(config: [String: Any], weights: [Float]) throws -> any NeuralNetwork {
        let network = try network(config: config, weights: weights)
        guard network.config.outputChannels == 1 else {
            throw NeuralModelProblem("has \(network.config.outputChannels) output channels; a pedal plays one")
        }
        return network
    }

    static func network(config json: [String: Any], weights: [Float]) throws -> NAMWaveNetNetwork {
        let config = try NAMWaveNetConfig(json)
        var condition: NAMWaveNetNetwork?
        if let model = config.conditionModel {
            let architecture = try NeuralJSON.string(model["architecture"], "condition_dsp.architecture")
            guard architecture == "WaveNet" else {
                throw NeuralModelProblem("has a condition_dsp of architecture \"\(architecture)\"; this Stompbox conditions on a WaveNet only")
            }
            condition = try network(config: try NeuralJSON.object(model["config"], "condition_dsp.config"),
                                    weights: try NeuralJSON.floats(model["weights"], "condition_dsp.weights"))
            let conditionRows = condition!.config.outputChannels
            for (index, array) in config.arrays.enumerated() where array.conditionSize != conditionRows {
                throw NeuralModelProblem("layers[\(index)] has condition_size \(array.conditionSize) where its condition_dsp gives \(conditionRows)")
            }
        } else {
            for (index, array) in config.arrays.enumerated() where array.conditionSize != 1 {
                throw NeuralModelProblem("layers[\(index)] has condition_size \(array.conditionSize) with no condition_dsp (the input is one channel)")
            }
        }
        let weights = try NAMWaveNetWeights(config: config, weights: weights)
        return NAMWaveNetNetwork(config: config, weights: weights, condition: condition)
    }
}

extension NAMWaveNet {
    /// A SlimmableContainer plays its full-size submodel (the last, as NeuralAmpModelerCore
    /// does by default); the others are checked for order only.
    static func buildContainer(config: [String: Any], sampleRate: Double?) throws -> any NeuralNetwork {
        try NAMWaveNetConfig.allowOnly(config, ["submodels"], in: "config")
        let submodels = try NeuralJSON.array(config["submodels"], "submodels")
        guard !submodels.isEmpty else { throw NeuralModelProblem("has no submodels") }
        var previous = -Double.infinity
        var last: [String: Any] = [:]
        for (index, value) in submodels.enumerated() {
            let submodel = try NeuralJSON.object(value, "submodels[\(index)]")
            try NAMWaveNetConfig.allowOnly(submodel, ["max_value", "model"], in: "submodels[\(index)]")
            let maxValue = try NeuralJSON.double(submodel["max_value"], "submodels[\(index)].max_value")
            guard maxValue > previous else { throw NeuralModelProblem("has submodels not in rising max_value order") }
            previous = maxValue
            last = try NeuralJSON.object(submodel["model"], "submodels[\(index)].model")
        }
        guard previous >= 1 else { throw NeuralModelProblem("has no submodel for the full size (the last max_value is \(previous), under 1)") }
        let model = try NeuralModels.nam(last)
        if let rate = model.info.sampleRate, let sampleRate, rate != sampleRate {
            throw NeuralModelProblem("has a submodel trained at \(Int(rate)) Hz in a container at \(Int(sampleRate)) Hz")
        }
        return model.network
    }
}

// Placeholder until the WaveNet network is written: files of this architecture are refused by name.
enum NAMWaveNet {
    static func build(config: [String: Any], weights: [Float]) throws -> any NeuralNetwork {
        throw NeuralModelProblem("has an architecture \"WaveNet\" this Stompbox does not play yet")
    }
}

extension NAMWaveNet {
    static func buildContainer(config: [String: Any], sampleRate: Double?) throws -> any NeuralNetwork {
        throw NeuralModelProblem("has an architecture \"SlimmableContainer\" this Stompbox does not play yet")
    }
}

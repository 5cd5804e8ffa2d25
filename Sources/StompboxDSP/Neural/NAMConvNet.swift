// Placeholder until the ConvNet network is written: files of this architecture are refused by name.
enum NAMConvNet {
    static func build(config: [String: Any], weights: [Float]) throws -> any NeuralNetwork {
        throw NeuralModelProblem("has an architecture \"ConvNet\" this Stompbox does not play yet")
    }
}

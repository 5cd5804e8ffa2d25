// Placeholder until AIDA-X / RTNeural models are read: refused by name.
enum NeuralKerasModel {
    static func build(_ json: [String: Any]) throws -> NeuralModel {
        throw NeuralModelProblem("is an AIDA-X/RTNeural model, which this Stompbox does not play yet")
    }
}

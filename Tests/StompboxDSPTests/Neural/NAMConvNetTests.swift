import Foundation
import Testing
@testable import StompboxDSP

/// NAM's ConvNet against the network written out in Double from its description, in several
/// block sizes, and its wrong files refused by name.
@Suite struct NAMConvNetTests {
    static func file(channels: Int, dilations: [Int], batchnorm: Bool, activation: String, weights: [Double]) -> Data {
        let list = weights.map { String(Float($0)) }.joined(separator: ",")
        return Data(#"{"version": "0.5.4", "architecture": "ConvNet", "config": {"channels": \#(channels), "dilations": \#(dilations), "batchnorm": \#(batchnorm), "activation": \#(activation)}, "weights": [\#(list)]}"#.utf8)
    }

    static func weightCount(channels: Int, dilations: [Int], batchnorm: Bool) -> Int {
        dilations.indices.reduce(0) { sum, index in
            sum + 2 * channels * (index == 0 ? 1 : channels) + (batchnorm ? 4 * channels + 1 : channels)
        } + channels + 1
    }

    /// The ConvNet from its description: y_b[t] = act(norm(W1·x[t] + W0·x[t − d])).
    static func direct(channels: Int, dilations: [Int], batchnorm: Bool, activation: (Double) -> Double,
                       weights w: [Double], input: [Float]) -> [Double] {
        var position = 0
        func next() -> Double { defer { position += 1 }; return w[position] }
        var signal: [[Double]] = input.map { [Double($0)] }
        for (index, d) in dilations.enumerated() {
            let inputs = index == 0 ? 1 : channels
            var weight = [[[Double]]](repeating: [[Double]](repeating: [0, 0], count: inputs), count: channels)
            for o in 0..<channels { for i in 0..<inputs { for k in 0..<2 { weight[o][i][k] = next() } } }
            var scale = [Double](repeating: 1, count: channels), offset = [Double](repeating: 0, count: channels)
            if batchnorm {
                let mean = (0..<channels).map { _ in next() }, variance = (0..<channels).map { _ in next() }
                let gamma = (0..<channels).map { _ in next() }, beta = (0..<channels).map { _ in next() }
                let epsilon = next()
                for c in 0..<channels { scale[c] = gamma[c] / (variance[c] + epsilon).squareRoot(); offset[c] = beta[c] - scale[c] * mean[c] }
            } else {
                offset = (0..<channels).map { _ in next() }
            }
            signal = signal.indices.map { t in
                (0..<channels).map { o in
                    var sum = 0.0
                    for i in 0..<inputs {
                        sum += weight[o][i][1] * signal[t][i]
                        if t >= d { sum += weight[o][i][0] * signal[t - d][i] }
                    }
                    return activation(scale[o] * sum + offset[o])
                }
            }
        }
        let head = (0..<channels).map { _ in next() }, bias = next()
        precondition(position == w.count)
        return signal.map { zip(head, $0).reduce(bias) { $0 + $1.0 * $1.1 } }
    }

    @Test(arguments: [(false, #""Tanh""#), (true, #""ReLU""#), (false, #"{"type": "LeakyReLU", "negative_slope": 0.2}"#), (true, #""SiLU""#)])
    func convNetMatchesItsDescription(batchnorm: Bool, activation: String) throws {
        let channels = 6, dilations = [1, 2, 4, 8, 16, 3]
        let count = Self.weightCount(channels: channels, dilations: dilations, batchnorm: batchnorm)
        var w = NeuralRecurrentTests.weights(count, seed: 11, scale: 0.9).map { Double(Float($0)) }
        if batchnorm {
            // Variances and epsilons positive, as a trained network's are.
            var position = 0
            for (index, _) in dilations.enumerated() {
                position += 2 * channels * (index == 0 ? 1 : channels) + channels
                for c in 0..<channels { w[position + c] = abs(w[position + c]) + 0.1 }
                position += 3 * channels
                w[position] = 1e-5
                position += 1
            }
        }
        let f: (Double) -> Double
        switch activation {
        case #""Tanh""#: f = { Foundation.tanh($0) }
        case #""ReLU""#: f = { max($0, 0) }
        case #""SiLU""#: f = { $0 / (1 + Foundation.exp(-$0)) }
        default: f = { $0 > 0 ? $0 : 0.2 * $0 }
        }
        let model = try NeuralModels.parse(Self.file(channels: channels, dilations: dilations, batchnorm: batchnorm, activation: activation, weights: w), file: "c.nam")
        #expect(model.info.architecture == "ConvNet")
        #expect(model.network.receptiveField == 1 + dilations.reduce(0, +))
        let input = NeuralRecurrentTests.signal(1_500)
        let reference = Self.direct(channels: channels, dilations: dilations, batchnorm: batchnorm, activation: f, weights: w, input: input)
        for block in [1, 37, 64, 256] {
            let output = NeuralRecurrentTests.run(model.network, input, block: block)
            let worst = zip(output, reference).map { abs(Double($0) - $1) }.max()!
            #expect(worst < 1e-5, "block \(block): largest difference \(worst)")
        }
    }

    @Test func wrongConvNetsAreRefusedByName() {
        let count = Self.weightCount(channels: 3, dilations: [1, 2], batchnorm: false)
        for (weights, expected) in [(count - 1, "fewer"), (count + 1, "\(count + 1) weights")] {
            let data = Self.file(channels: 3, dilations: [1, 2], batchnorm: false, activation: #""Tanh""#,
                                 weights: NeuralRecurrentTests.weights(weights, seed: 2))
            do { _ = try NeuralModels.parse(data, file: "c.nam"); Issue.record("accepted \(weights) weights") } catch let error as NeuralModelError {
                #expect(error.file == "c.nam" && error.problem.contains(expected), "\(error)")
            } catch { Issue.record("\(error)") }
        }
        let odd = Self.file(channels: 3, dilations: [1], batchnorm: false, activation: #""Gelu""#, weights: [])
        do { _ = try NeuralModels.parse(odd, file: "c.nam"); Issue.record("accepted Gelu") } catch let error as NeuralModelError {
            #expect(error.problem.contains("\"Gelu\""))
        } catch { Issue.record("\(error)") }
    }
}

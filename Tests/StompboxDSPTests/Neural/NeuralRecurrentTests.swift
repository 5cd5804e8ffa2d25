import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// NAM's LSTM and AIDA-X / RTNeural's LSTM and GRU models: against a direct, slow LSTM and GRU
/// cell in Double, against RTNeural's own reference data (Keras's outputs for its test models),
/// across block sizes, with AIDA-X's gains and skip, and with a message for each wrong file.
@Suite struct NeuralRecurrentTests {
    static let models = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("neural-models")

    /// A repeatable signal with a guitar's range of levels.
    static func signal(_ count: Int, seed: UInt64 = 7) -> [Float] {
        var state = seed
        return (0..<count).map { n in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let noise = Float(Int64(bitPattern: state) >> 40) / Float(1 << 23)
            return 0.6 * sin(Float(n) * 0.031) * (0.3 + 0.7 * abs(sin(Float(n) * 0.0007))) + 0.2 * noise
        }
    }

    static func weights(_ count: Int, seed: UInt64, scale: Double = 0.5) -> [Double] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return scale * (Double(Int64(bitPattern: state) >> 11) / Double(1 << 52))
        }
    }

    static func run(_ network: any NeuralNetwork, _ input: [Float], block: Int) -> [Float] {
        network.prepare(maximumBlockSize: block)
        network.reset()
        return TestModels.play(network, input, blocks: [block])
    }

    static func esr(_ output: [Float], _ reference: [Double]) -> Double {
        var error = 0.0, energy = 0.0
        for (y, r) in zip(output, reference) { error += (Double(y) - r) * (Double(y) - r); energy += r * r }
        return error / max(energy, 1e-30)
    }

    static func sigmoid(_ x: Double) -> Double { 1 / (1 + Foundation.exp(-x)) }

    // MARK: NAM LSTM

    /// NAM's LSTM straight from its definition, in Double: weights in the file's order.
    static func namLSTM(_ w: [Double], layers: Int, hidden: Int, input: [Float]) -> [Double] {
        var position = 0
        func take(_ n: Int) -> [Double] { defer { position += n }; return Array(w[position..<(position + n)]) }
        var cells = [(matrix: [Double], bias: [Double], h: [Double], c: [Double])]()
        for layer in 0..<layers {
            let inputs = layer == 0 ? 1 : hidden
            cells.append((take(4 * hidden * (inputs + hidden)), take(4 * hidden), take(hidden), take(hidden)))
        }
        let head = take(hidden), headBias = take(1)[0]
        precondition(position == w.count)
        return input.map { sample in
            var x = [Double(sample)]
            for l in cells.indices {
                let xh = x + cells[l].h
                var gates = cells[l].bias
                for row in 0..<(4 * hidden) { for k in xh.indices { gates[row] += cells[l].matrix[row * xh.count + k] * xh[k] } }
                for u in 0..<hidden {
                    cells[l].c[u] = sigmoid(gates[hidden + u]) * cells[l].c[u] + sigmoid(gates[u]) * Foundation.tanh(gates[2 * hidden + u])
                    cells[l].h[u] = sigmoid(gates[3 * hidden + u]) * Foundation.tanh(cells[l].c[u])
                }
                x = cells[l].h
            }
            return zip(head, x).reduce(headBias) { $0 + $1.0 * $1.1 }
        }
    }

    static func namFile(layers: Int, hidden: Int, weights: [Double]) -> Data {
        let list = weights.map { String(Float($0)) }.joined(separator: ",")
        return Data(#"{"version": "0.5.4", "architecture": "LSTM", "config": {"num_layers": \#(layers), "input_size": 1, "hidden_size": \#(hidden)}, "weights": [\#(list)], "sample_rate": 44100}"#.utf8)
    }

    static func namWeightCount(layers: Int, hidden: Int) -> Int {
        (0..<layers).reduce(0) { sum, layer in sum + 4 * hidden * ((layer == 0 ? 1 : hidden) + hidden) + 6 * hidden } + hidden + 1
    }

    // Sizes for every way the units fall in chunks of three groups: one group, two, three, a
    // partial group, three and one, three and two.
    @Test(arguments: [(1, 3), (2, 5), (1, 12), (2, 17), (2, 24), (1, 32), (1, 40)])
    func namLSTMMatchesTheCellWrittenOut(layers: Int, hidden: Int) throws {
        let count = Self.namWeightCount(layers: layers, hidden: hidden)
        // Rounded to Float first, as the file holds them; scaled as a trained network's are (a
        // random wide one with large weights is chaotic, and Float and Double part ways).
        let scale = min(1.2, 3 / Double(hidden + 1).squareRoot())
        let w = Self.weights(count, seed: UInt64(layers * 100 + hidden), scale: scale).map { Double(Float($0)) }
        let model = try NeuralModels.parse(Self.namFile(layers: layers, hidden: hidden, weights: w), file: "lstm.nam")
        #expect(model.info.architecture == "LSTM" && model.info.sampleRate == 44_100)
        #expect(model.network.isRecurrent)
        let input = Self.signal(3_000)
        let reference = Self.namLSTM(w, layers: layers, hidden: hidden, input: input)
        let output = Self.run(model.network, input, block: 64)
        let worst = zip(output, reference).map { abs(Double($0) - $1) }.max()!
        #expect(worst < 2e-5, "largest difference \(worst)")
        #expect(Self.esr(output, reference) < 1e-9)
    }

    @Test func namExampleLSTMIsTheSameInEveryBlockSizeAndAfterReset() throws {
        let model = try NeuralModels.load(file: Self.models.appendingPathComponent("nam/lstm.nam").path)
        #expect(model.info.format == "NAM" && model.info.architecture == "LSTM" && model.info.name == "Test LSTM")
        let input = Self.signal(4_000)
        let first = Self.run(model.network, input, block: 64)
        #expect(first.allSatisfy { $0.isFinite })
        for block in [1, 37, 256] { #expect(Self.run(model.network, input, block: block) == first, "block \(block)") }
        // The initial state comes back with reset: the same output again.
        #expect(Self.run(model.network, input, block: 64) == first)
        // And it is the file's state, not zero: the direct cell agrees.
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.models.appendingPathComponent("nam/lstm.nam"))) as! [String: Any]
        let w = (json["weights"] as! [NSNumber]).map { Double(Float($0.doubleValue)) }
        let reference = Self.namLSTM(w, layers: 1, hidden: 3, input: input)
        // The activations are within 7e-7 of libm's.
        #expect(Self.esr(first, reference) < 1e-9)
    }

    @Test func namLSTMWithTheWrongNumberOfWeightsIsRefusedByName() {
        let count = Self.namWeightCount(layers: 2, hidden: 4)
        for wrong in [count - 1, count + 1] {
            let data = Self.namFile(layers: 2, hidden: 4, weights: Self.weights(wrong, seed: 1))
            #expect(throws: NeuralModelError.self) { try NeuralModels.parse(data, file: "amp.nam") }
            do { _ = try NeuralModels.parse(data, file: "amp.nam") } catch let error as NeuralModelError {
                #expect(error.file == "amp.nam" && error.problem.contains("\(wrong) weights"), "\(error)")
            } catch {}
        }
        let stereo = Data(#"{"version": "0.5.4", "architecture": "LSTM", "config": {"num_layers": 1, "input_size": 2, "hidden_size": 3}, "weights": []}"#.utf8)
        #expect(throws: NeuralModelError.self) { try NeuralModels.parse(stereo, file: "amp.nam") }
    }

    // MARK: AIDA-X / RTNeural

    static func csv(_ name: String) throws -> [Double] {
        try String(contentsOf: models.appendingPathComponent("rtneural/\(name)"), encoding: .utf8)
            .split(whereSeparator: \.isNewline).map { Double($0.trimmingCharacters(in: .whitespaces))! }
    }

    /// Keras's outputs for RTNeural's test models (its own test tolerance is 1e-6 in Double).
    @Test(arguments: [("lstm", "LSTM"), ("lstm_1d", "LSTM"), ("gru", "GRU"), ("gru_1d", "GRU")])
    func rtneuralModelsMatchKeras(name: String, architecture: String) throws {
        let model = try NeuralModels.load(file: Self.models.appendingPathComponent("rtneural/\(name).json").path)
        #expect(model.info.format == "AIDA-X" && model.info.architecture == architecture && model.info.sampleRate == nil)
        let x = try Self.csv("\(name)_x_python.csv").map(Float.init)
        let y = try Self.csv("\(name)_y_python.csv")
        for block in [1, 37, 64] {
            let output = Self.run(model.network, x, block: block)
            let worst = zip(output, y).map { abs(Double($0) - $1) }.max()!
            #expect(worst < 1e-5, "\(name) block \(block): largest difference \(worst)")
        }
    }

    /// A GRU of 11 units (a group of eight and a partial one) after a dense layer, in Double.
    @Test func kerasGRUMatchesTheCellWrittenOut() throws {
        let h = 11, d = 3
        let dense = Self.weights(d, seed: 3, scale: 2).map { Double(Float($0)) }, denseBias = Self.weights(d, seed: 4, scale: 0.2).map { Double(Float($0)) }
        let kernel = Self.weights(d * 3 * h, seed: 5, scale: 1).map { Double(Float($0)) }
        let recurrent = Self.weights(h * 3 * h, seed: 6, scale: 0.6).map { Double(Float($0)) }
        let bias = Self.weights(2 * 3 * h, seed: 8, scale: 0.3).map { Double(Float($0)) }
        let head = Self.weights(h, seed: 9, scale: 0.8).map { Double(Float($0)) }
        func rows(_ w: [Double], _ r: Int, _ c: Int) -> String {
            "[" + (0..<r).map { i in "[" + (0..<c).map { String(w[i * c + $0]) }.joined(separator: ",") + "]" }.joined(separator: ",") + "]"
        }
        let json = """
        {"in_shape": [null, null, 1], "in_gain": 3.5, "out_gain": -2, "layers": [
          {"type": "dense", "activation": "tanh", "shape": [null, null, \(d)], "weights": [\(rows(dense, 1, d)), \(rows(denseBias, 1, d).dropFirst().dropLast())]},
          {"type": "gru", "activation": "tanh", "shape": [null, null, \(h)], "weights": [\(rows(kernel, d, 3 * h)), \(rows(recurrent, h, 3 * h)), \(rows(bias, 2, 3 * h))]},
          {"type": "dense", "activation": "", "shape": [null, null, 1], "weights": [\(rows(head, h, 1))]}]}
        """
        let model = try NeuralModels.parse(Data(json.utf8), file: "amp.json")
        #expect(model.info.architecture == "GRU")
        let input = Self.signal(2_000)
        let inGain = pow(10, 3.5 / 20), outGain = pow(10, -2.0 / 20)
        var state = [Double](repeating: 0, count: h)
        let reference: [Double] = input.map { sample in
            let x = (0..<d).map { Foundation.tanh(dense[$0] * Double(Float(Double(sample) * inGain)) + denseBias[$0]) }
            var next = state
            for u in 0..<h {
                func gate(_ g: Int, _ withState: Bool) -> (Double, Double) {
                    var a = bias[g * h + u], b = bias[3 * h + g * h + u]
                    for k in 0..<d { a += kernel[k * 3 * h + g * h + u] * x[k] }
                    for k in 0..<h { b += recurrent[k * 3 * h + g * h + u] * state[k] }
                    return (a, b)
                }
                let (za, zb) = gate(0, true), (ra, rb) = gate(1, true), (ca, cb) = gate(2, true)
                let z = Self.sigmoid(za + zb), r = Self.sigmoid(ra + rb)
                let c = Foundation.tanh(ca + r * cb)
                next[u] = (1 - z) * c + z * state[u]
            }
            state = next
            return zip(head, state).reduce(0) { $0 + $1.0 * $1.1 } * outGain
        }
        let output = Self.run(model.network, input, block: 128)
        let worst = zip(output, reference).map { abs(Double($0) - $1) }.max()!
        #expect(worst < 2e-5, "largest difference \(worst)")
    }

    /// AIDA-X's plugin: the input times 10^(in_gain/20) into the network; with in_skip that
    /// input is added to the network's output; the result times 10^(out_gain/20).
    @Test func aidaGainsAreDecibelsAndSkipAddsTheScaledInput() throws {
        func model(_ extra: String) throws -> any NeuralNetwork {
            try NeuralModels.parse(Data(#"{"in_shape": [null, null, 1], \#(extra) "layers": [{"type": "dense", "activation": "", "shape": [null, null, 1], "weights": [[[2.0]], [0.1]]}]}"#.utf8), file: "a.json").network
        }
        let x: [Float] = [0, 0.5, -0.25, 1]
        let g = Float(pow(10, 6.0 / 20)), o = Float(pow(10, -12.0 / 20))
        let plain = Self.run(try model(""), x, block: 4)
        let gains = Self.run(try model(#""in_gain": 6, "out_gain": -12,"#), x, block: 4)
        let skip = Self.run(try model(#""in_gain": 6, "out_gain": -12, "in_skip": 1,"#), x, block: 4)
        for n in x.indices {
            #expect(abs(plain[n] - (2 * x[n] + 0.1)) < 1e-6)
            #expect(abs(gains[n] - (2 * x[n] * g + 0.1) * o) < 1e-5)
            #expect(abs(skip[n] - (x[n] * g + 2 * x[n] * g + 0.1) * o) < 1e-5)
        }
        let silent = Self.run(try model(#""out_gain": -120,"#), x, block: 4)
        #expect(silent == [0, 0, 0, 0])
    }

    @Test func wrongAIDAModelsAreRefusedByName() {
        func problem(_ json: String) -> String? {
            do { _ = try NeuralModels.parse(Data(json.utf8), file: "amp.json"); return nil } catch let error as NeuralModelError {
                return error.file == "amp.json" ? error.problem : "wrong file \(error.file)"
            } catch { return "\(error)" }
        }
        let dense = #"{"type": "dense", "activation": "", "shape": [null, null, 1], "weights": [[[1.0], [1.0]], [0.0]]}"#
        #expect(problem(#"{"in_shape": [null, null, 2], "layers": [\#(dense)]}"#)?.contains("conditioned") == true)
        #expect(problem(#"{"in_shape": [null, null, 1], "layers": [{"type": "conv1d", "shape": [null, null, 1], "weights": []}]}"#)?.contains("\"conv1d\"") == true)
        #expect(problem(#"{"in_shape": [null, null, 1], "layers": [\#(dense)]}"#)?.contains("kernel") == true)
        #expect(problem(#"{"in_shape": [null, null, 1], "layers": [{"type": "lstm", "shape": [null, null, 1], "weights": [[[1,2,3,4]], [[1,2,3]], [0,0,0,0]]}]}"#)?.contains("recurrent kernel") == true)
        #expect(problem(#"{"in_shape": [null, null, 1], "layers": [{"type": "gru", "shape": [null, null, 1], "weights": [[[1,2,3]], [[1,2,3]], [0,0,0]]}]}"#)?.contains("reset_after") == true)
        #expect(problem(#"{"in_shape": [null, null, 1], "layers": [{"type": "dense", "activation": "swish", "shape": [null, null, 1], "weights": [[[1.0]], [0.0]]}]}"#)?.contains("swish") == true)
        #expect(problem(#"{"in_shape": [null, null, 1], "layers": [{"type": "dense", "activation": "", "shape": [null, null, 2], "weights": [[[1.0, 1.0]], [0.0, 0.0]]}]}"#)?.contains("2 values per sample") == true)
        #expect(problem(#"{"in_shape": [null, null, 1], "layers": []}"#)?.contains("no layers") == true)
    }

    /// The vector tanh and sigmoids against Double's, over the range gates see.
    @Test func vectorActivationsAreAccurate() {
        var worstTanh = 0.0, worstSigmoid = 0.0, worstGate = 0.0, worstExp = 0.0, beyondOne = false
        var x = -30.0
        while x < 30 {
            let v = SIMD8<Float>((0..<8).map { Float(x + Double($0) * 0.000_37) })
            let t = NeuralVectorMath.tanh(v), s = NeuralVectorMath.sigmoid(v), gate = NeuralVectorMath.sigmoidOfDouble(v * 0.5)
            let e = NeuralVectorMath.exp(v)
            for lane in 0..<8 {
                let exact = Double(v[lane])
                worstTanh = max(worstTanh, abs(Double(t[lane]) - Foundation.tanh(exact)))
                beyondOne = beyondOne || abs(t[lane]) > 1
                worstSigmoid = max(worstSigmoid, abs(Double(s[lane]) - Self.sigmoid(exact)))
                worstGate = max(worstGate, abs(Double(gate[lane]) - Self.sigmoid(exact)))
                worstExp = max(worstExp, abs(Double(e[lane]) / Foundation.exp(exact) - 1))
            }
            x += 0.0031
        }
        #expect(worstTanh < 7e-7, "tanh \(worstTanh)")
        #expect(!beyondOne)
        #expect(worstSigmoid < 2e-7, "sigmoid \(worstSigmoid)")
        #expect(worstGate < 4e-7, "sigmoid through tanh \(worstGate)")
        #expect(worstExp < 4e-7, "exp, relative \(worstExp)")
        #expect(NeuralVectorMath.tanh(SIMD8<Float>(repeating: 1e30)) == SIMD8(repeating: 1))
        #expect(NeuralVectorMath.tanh(SIMD8<Float>(repeating: -1e30)) == SIMD8(repeating: -1))
        #expect(NeuralVectorMath.sigmoid(SIMD8<Float>(repeating: -1e30)).max() < 1e-37)
        #expect(NeuralVectorMath.tanh(SIMD8<Float>(repeating: 1e-20)) == SIMD8(repeating: 1e-20))
    }
}

import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// NAM's WaveNet: single layers computed by hand (plain, gated, blended; the weights in NAM's
/// order), each activation against its formula, the same output whatever the block size, weight
/// counts and unknown keys refused by name, a SlimmableContainer playing its full-size model.
@Suite struct NAMWaveNetTests {
    func file(_ config: String, _ weights: [Float], version: String = "0.5.4") -> Data {
        let list = weights.map { "\($0)" }.joined(separator: ", ")
        return Data(#"{"version": "\#(version)", "architecture": "WaveNet", "config": \#(config), "weights": [\#(list)]}"#.utf8)
    }

    func problem(_ data: Data) -> String? {
        do { _ = try NeuralModels.parse(data, file: "amp.nam"); return nil } catch let error as NeuralModelError {
            return error.problem
        } catch { return "\(error)" }
    }

    func render(_ network: any NeuralNetwork, _ input: [Float], block: Int) -> [Float] {
        network.prepare(maximumBlockSize: block)
        NeuralModels.prewarm(network, rate: 48_000, maximumBlockSize: block)
        return TestModels.play(network, input, blocks: [block])
    }

    func signal(_ count: Int) -> [Float] {
        (0..<count).map { n -> Float in
            let t = Double(n)
            let slow: Double = 0.6 * sin(t * 0.05)
            let fast: Double = 0.3 * sin(t * 0.31 + 1)
            return Float(slow + fast)
        }
    }

    /// One layer of one channel, kernel 2: y = s·(h·a + hb) with a the activation of
    /// w0·r[t-1] + w1·r[t] + b + m·x[t] and r = wr·x; gated and blended layers have a second
    /// convolution row whose secondary activation (sigmoid) gates or blends.
    @Test(arguments: ["none", "gated", "blended"])
    func aSingleLayerIsWhatTheFormulaSays(gating: String) throws {
        let rows = gating == "none" ? 1 : 2
        let config = #"{"layers": [{"input_size": 1, "condition_size": 1, "head_size": 1, "channels": 1, "kernel_size": 2, "dilations": [1], "activation": "Tanh", "gating_mode": "\#(gating)", "head_bias": true}], "head": null, "head_scale": 0.02}"#
        // rechannel; conv (out, in, tap: oldest first) and bias; mixin; layer1x1 and bias; head and bias; head_scale.
        let (wr, w0, w1, b, m) = (Float(0.9), Float(-0.7), Float(1.3), Float(0.1), Float(0.4))
        let (v0, v1, c, n) = (Float(0.5), Float(-0.8), Float(-0.2), Float(0.6))
        let (h, hb, scale) = (Float(1.5), Float(-0.05), Float(3))
        var weights: [Float] = [wr]
        weights += rows == 1 ? [w0, w1, b] : [w0, w1, v0, v1, b, c]
        weights += rows == 1 ? [m] : [m, n]
        weights += [0.8, 0.01, h, hb, scale]
        let network = try NeuralModels.parse(file(config, weights), file: "one.nam").network
        #expect(network.receptiveField == 2)
        let x = signal(300)
        let y = render(network, x, block: 64)
        for t in x.indices {
            let previous: Float = t > 0 ? wr * x[t - 1] : 0
            let current: Float = wr * x[t]
            let z: Float = w0 * previous + w1 * current + b + m * x[t]
            let g: Float = v0 * previous + v1 * current + c + n * x[t]
            let alpha: Float = 1 / (1 + exp(-g))
            let a: Float = switch gating {
            case "gated": tanh(z) * alpha
            case "blended": alpha * tanh(z) + (1 - alpha) * z
            default: tanh(z)
            }
            let expected: Float = scale * (h * a + hb)
            #expect(abs(y[t] - expected) < 1e-5, "sample \(t)")
        }
    }

    /// A post-stack head (0.6 on): head_scale, then its activation and a kernel-2 convolution
    /// over the layers' output, y = c0·relu(s·f[t-1]) + c1·relu(s·f[t]) + cb, f = relu(x) here.
    @Test func aPostStackHeadConvolvesTheScaledOutput() throws {
        let config = #"{"layers": [{"input_size": 1, "condition_size": 1, "head_size": 1, "channels": 1, "kernel_size": 2, "dilations": [1], "activation": "ReLU", "gated": false, "head_bias": false}], "head": {"channels": 1, "out_channels": 1, "kernel_sizes": [2], "activation": "ReLU"}, "head_scale": 2}"#
        let (c0, c1, cb, s) = (Float(-0.5), Float(0.75), Float(0.1), Float(2))
        // rechannel; conv and bias; mixin; layer1x1 and bias; head rechannel; post head (c0 c1, bias); head_scale.
        let weights: [Float] = [1, 0, 1, 0, 0, 0, 0, 1, c0, c1, cb, s]
        let network = try NeuralModels.parse(file(config, weights, version: "0.7.0"), file: "head.nam").network
        #expect(network.receptiveField == 3)
        let x = signal(200)
        let y = render(network, x, block: 32)
        for t in x.indices {
            let previous: Float = t > 0 ? max(s * max(x[t - 1], 0), 0) : 0
            let current: Float = max(s * max(x[t], 0), 0)
            let expected: Float = c0 * previous + c1 * current + cb
            #expect(abs(y[t] - expected) < 1e-6, "sample \(t)")
        }
    }

    @Test func everyActivationIsItsFormula() throws {
        let xs = (0..<16 * 40).map { Float($0 - 320) / 32 }
        let formulas: [(String, (Float) -> Float, Float)] = [
            (#""Tanh""#, { tanh($0) }, 2e-6),
            (#""Hardtanh""#, { min(max($0, -1), 1) }, 0),
            (#""ReLU""#, { max($0, 0) }, 0),
            (#""LeakyReLU""#, { $0 > 0 ? $0 : 0.01 * $0 }, 1e-7),
            (#"{"type": "LeakyReLU", "negative_slope": 0.2}"#, { $0 > 0 ? $0 : 0.2 * $0 }, 1e-6),
            (#"{"type": "PReLU", "negative_slope": 0.3}"#, { $0 > 0 ? $0 : 0.3 * $0 }, 1e-6),
            (#""Sigmoid""#, { 1 / (1 + exp(-$0)) }, 1e-6),
            (#""SiLU""#, { $0 / (1 + exp(-$0)) }, 1e-5),
            (#""Hardswish""#, { $0 * min(max($0 + 3, 0), 6) / 6 }, 1e-6),
            (#"{"type": "LeakyHardtanh", "min_val": -0.5, "max_val": 2, "min_slope": 0.1, "max_slope": 0.05}"#,
             { $0 < -0.5 ? ($0 + 0.5) * 0.1 - 0.5 : $0 > 2 ? ($0 - 2) * 0.05 + 2 : $0 }, 1e-6),
            (#""Softsign""#, { $0 / (1 + abs($0)) }, 1e-6),
            (#""Fasttanh""#, { tanh($0) }, 5e-3),
        ]
        for (json, formula, tolerance) in formulas {
            let value = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
            let (activation, _) = try NAMActivation.parse(value, channels: 1, key: "activation")
            var worst: Float = 0
            for start in stride(from: 0, to: xs.count, by: 16) {
                let v = xs.withUnsafeBufferPointer { load($0.baseAddress! + start) }
                let y = activation.apply(v, channel: 0)
                for lane in 0..<16 { worst = max(worst, abs(y[lane] - formula(xs[start + lane]))) }
            }
            #expect(worst <= tolerance, "\(json): \(worst)")
        }
        let slopes = try JSONSerialization.jsonObject(with: Data(#"{"type": "PReLU", "negative_slopes": [0.1, 0.2]}"#.utf8))
        #expect(throws: NeuralModelProblem.self) { try NAMActivation.parse(slopes, channels: 3, key: "activation") }
    }

    /// Two arrays, gated and plain layers, a head convolution over the skip sum: the same
    /// output in blocks of 1, 37, 64 and 256.
    @Test func theOutputDoesNotDependOnTheBlockSize() throws {
        let config = #"{"layers": [{"input_size": 1, "condition_size": 1, "head": {"out_channels": 3, "kernel_size": 3, "bias": true}, "channels": 5, "bottleneck": 4, "kernel_sizes": [3, 2, 4], "dilations": [1, 7, 33], "activation": [{"type": "LeakyReLU", "negative_slope": 0.05}, "Tanh", "SiLU"], "gating_mode": ["none", "gated", "blended"], "secondary_activation": "Sigmoid", "layer1x1": {"active": true, "groups": 1}, "head1x1": {"active": false, "out_channels": 1, "groups": 1}}, {"input_size": 5, "condition_size": 1, "head_size": 1, "channels": 3, "kernel_size": 3, "dilations": [2, 5], "activation": "Tanh", "gated": false, "head_bias": false}], "head": null, "head_scale": 0.5}"#
        var weights = [Float]()
        var seed: UInt64 = 7
        let counts = NAMWaveNetTests.weightCount(config)
        for _ in 0..<counts {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            weights.append(Float(Int64(bitPattern: seed >> 11) % 1000) / 1500)
        }
        let x = signal(1500)
        var outputs = [[Float]]()
        for block in [1, 37, 64, 256] {
            let network = try NeuralModels.parse(file(config, weights, version: "0.7.0"), file: "two.nam").network
            outputs.append(render(network, x, block: block))
        }
        #expect(outputs[0].allSatisfy { $0.isFinite } && outputs[0].contains { abs($0) > 1e-3 })
        for output in outputs.dropFirst() {
            let worst = zip(output, outputs[0]).map { abs($0 - $1) }.max()!
            #expect(worst < 1e-5)
        }
    }

    /// How many weights the test network above takes: the builder's own message says so.
    static func weightCount(_ config: String) -> Int {
        let data = Data(#"{"version": "0.7.0", "architecture": "WaveNet", "config": \#(config), "weights": [0, 0]}"#.utf8)
        guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return 0 }
        for count in 1..<5000 {
            if (try? NAMWaveNet.build(config: json["config"] as! [String: Any], weights: [Float](repeating: 0, count: count))) != nil { return count }
        }
        return 0
    }

    @Test func wrongWeightCountsAndUnknownKeysAreRefusedByName() {
        let config = #"{"layers": [{"input_size": 1, "condition_size": 1, "head_size": 1, "channels": 1, "kernel_size": 2, "dilations": [1], "activation": "Tanh", "gated": false, "head_bias": true}], "head": null, "head_scale": 0.02}"#
        let right: [Float] = [1, 1, 1, 0, 1, 1, 0, 1, 0, 0.02]
        #expect(problem(file(config, right)) == nil)
        #expect(problem(file(config, Array(right.dropLast())))?.contains("fewer than its architecture needs") == true)
        #expect(problem(file(config, right + [1]))?.contains("needs 10") == true)
        let unknownKey = config.replacingOccurrences(of: #""gated": false"#, with: #""gated": false, "wobble": 3"#)
        #expect(problem(file(unknownKey, right))?.contains("layers[0].wobble") == true)
        let unknownActivation = config.replacingOccurrences(of: #""Tanh""#, with: #""Gelu""#)
        #expect(problem(file(unknownActivation, right))?.contains("\"Gelu\"") == true)
        let unknownGating = config.replacingOccurrences(of: #""gated": false"#, with: #""gating_mode": "sometimes""#)
        #expect(problem(file(unknownGating, right))?.contains("\"sometimes\"") == true)
        let topKey = config.replacingOccurrences(of: #""head": null"#, with: #""head": null, "turbo": true"#)
        #expect(problem(file(topKey, right))?.contains("config.turbo") == true)
    }

    /// A SlimmableContainer ("A2") plays its last, full-size submodel.
    @Test func aContainerPlaysItsFullSizeModel() throws {
        let config = #"{"layers": [{"input_size": 1, "condition_size": 1, "head_size": 1, "channels": 1, "kernel_size": 2, "dilations": [1], "activation": "ReLU", "gated": false, "head_bias": false}], "head": null, "head_scale": 1}"#
        func model(_ gain: Float) -> String {
            String(decoding: file(config, [1, 0, 1, 0, 0, 0, 0, 1, gain], version: "0.7.0"), as: UTF8.self)
        }
        let container = #"{"version": "0.7.0", "architecture": "SlimmableContainer", "sample_rate": 48000, "config": {"submodels": [{"max_value": 0.5, "model": \#(model(2))}, {"max_value": 1.0, "model": \#(model(3))}]}, "weights": []}"#
        let network = try NeuralModels.parse(Data(container.utf8), file: "a2.nam").network
        let y = render(network, [0.5, -0.5, 0.25], block: 16)
        #expect(y == [1.5, 0, 0.75])
        let unordered = container.replacingOccurrences(of: #""max_value": 0.5"#, with: #""max_value": 2"#)
        #expect(problem(Data(unordered.utf8))?.contains("max_value") == true)
    }
}

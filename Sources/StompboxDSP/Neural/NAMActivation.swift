/// One of the activation functions a NAM file names ("Tanh", or an object such as
/// `{"type": "LeakyReLU", "negative_slope": 0.01}`), applied sixteen samples of one channel at a
/// time. A trivial value (its per-channel slopes live in memory the network owns), so the audio
/// thread copies it without reference counting.
struct NAMActivation {
    enum Kind: UInt8 {
        case identity, tanh, hardtanh, fasttanh, relu, leakyReLU, preLU, sigmoid, silu, hardswish, leakyHardtanh, softsign
    }

    var kind: Kind
    /// LeakyReLU's and single-slope PReLU's negative slope; LeakyHardtanh's min_val.
    var a: Float = 0
    /// LeakyHardtanh's max_val, min_slope, max_slope.
    var b: Float = 0
    var c: Float = 0
    var d: Float = 0
    /// PReLU's slope per channel (nil: `a` for every channel).
    var slopes: UnsafePointer<Float>? = nil

    static var identity: NAMActivation { NAMActivation(kind: .identity) }

    @inline(__always) func apply(_ x: SIMD16<Float>, channel: Int) -> SIMD16<Float> {
        typealias V = SIMD16<Float>
        switch kind {
        case .identity: return x
        case .tanh: return NeuralVectorMath.tanh(x)
        case .fasttanh: return NeuralVectorMath.fastTanh(x)
        case .hardtanh: return NeuralVectorMath.clamp(x, -1, 1)
        case .relu: return x.replacing(with: 0, where: x .<= 0)
        case .leakyReLU: return x.replacing(with: x * a, where: x .<= 0)
        case .preLU:
            let slope = slopes.map { $0[channel] } ?? a
            return x.replacing(with: x * slope, where: x .<= 0)
        case .sigmoid: return NeuralVectorMath.sigmoid(x)
        case .silu: return x * NeuralVectorMath.sigmoid(x)
        case .hardswish:
            let t = NeuralVectorMath.clamp(x + 3, 0, 6)
            return x * t * (1 / 6)
        case .leakyHardtanh:
            var y = x
            y.replace(with: (x - a) * c + a, where: x .< a)
            y.replace(with: (x - b) * d + b, where: x .> b)
            return y
        case .softsign: return x / (1 + NeuralVectorMath.abs(x))
        }
    }

    /// Applies itself in place to `rows` rows (`stride` apart, channels `firstChannel`…) of
    /// `frames` frames (a multiple of 16), adding the results into `sum` (`sumStride` apart)
    /// when given: a WaveNet layer's activation and skip sum in one pass.
    func apply(_ base: UnsafeMutablePointer<Float>, stride: Int, rows: Int, frames: Int,
               sum: UnsafeMutablePointer<Float>? = nil, sumStride: Int = 0) {
        switch kind {
        case .tanh:
            // Written out rather than through `each`: the closure keeps tanh from being inlined.
            for r in 0..<rows {
                let row = base + r * stride
                let target = sum.map { $0 + r * sumStride }
                for t in Swift.stride(from: 0, to: frames, by: 16) {
                    let y = NeuralVectorMath.tanh(load(row + t))
                    store(y, row + t)
                    if let target { store(load(target + t) + y, target + t) }
                }
            }
        case .leakyReLU:
            for r in 0..<rows {
                let row = base + r * stride
                let target = sum.map { $0 + r * sumStride }
                for t in Swift.stride(from: 0, to: frames, by: 16) {
                    let x = load(row + t)
                    let y = x.replacing(with: x * a, where: x .<= 0)
                    store(y, row + t)
                    if let target { store(load(target + t) + y, target + t) }
                }
            }
        default: Self.each(base, stride, rows, frames, sum, sumStride) { x, channel in self.apply(x, channel: channel) }
        }
    }

    @inline(__always) private static func each(_ base: UnsafeMutablePointer<Float>, _ stride: Int, _ rows: Int, _ frames: Int,
                                               _ sum: UnsafeMutablePointer<Float>?, _ sumStride: Int,
                                               _ function: (SIMD16<Float>, Int) -> SIMD16<Float>) {
        for r in 0..<rows {
            let row = base + r * stride
            if let sum {
                let target = sum + r * sumStride
                for t in Swift.stride(from: 0, to: frames, by: 16) {
                    let y = function(load(row + t), r)
                    store(y, row + t)
                    store(load(target + t) + y, target + t)
                }
            } else {
                for t in Swift.stride(from: 0, to: frames, by: 16) { store(function(load(row + t), r), row + t) }
            }
        }
    }

    /// The activation the JSON value names: a name, or an object with "type" and its
    /// parameters. `channels` is how many channels it is applied to (a PReLU's slope list must
    /// match it); `key` names the value in messages.
    static func parse(_ value: Any?, channels: Int, key: String) throws -> (NAMActivation, [Float]) {
        let names: [String: Kind] = [
            "Tanh": .tanh, "Hardtanh": .hardtanh, "Fasttanh": .fasttanh, "ReLU": .relu, "LeakyReLU": .leakyReLU,
            "PReLU": .preLU, "Sigmoid": .sigmoid, "SiLU": .silu, "Hardswish": .hardswish,
            "LeakyHardtanh": .leakyHardtanh, "LeakyHardTanh": .leakyHardtanh, "Softsign": .softsign,
        ]
        func kind(_ name: String) throws -> Kind {
            guard let kind = names[name] else { throw NeuralModelProblem("has an activation \"\(name)\" (\(key)) this Stompbox does not know") }
            return kind
        }
        if let name = value as? String {
            let activation = NAMActivation(kind: try kind(name))
            return (activation.withDefaults(), [])
        }
        guard let object = value as? [String: Any] else { throw NeuralModelProblem("\"\(key)\" is not an activation (a name or an object with \"type\")") }
        var activation = NAMActivation(kind: try kind(try NeuralJSON.string(object["type"], "\(key).type"))).withDefaults()
        var allowed: Set<String> = ["type"]
        var slopes = [Float]()
        switch activation.kind {
        case .leakyReLU:
            allowed.insert("negative_slope")
            if object["negative_slope"] != nil { activation.a = Float(try NeuralJSON.double(object["negative_slope"], "\(key).negative_slope")) }
        case .preLU:
            allowed.formUnion(["negative_slope", "negative_slopes"])
            if object["negative_slope"] != nil {
                activation.a = Float(try NeuralJSON.double(object["negative_slope"], "\(key).negative_slope"))
            } else if object["negative_slopes"] != nil {
                slopes = try NeuralJSON.floats(object["negative_slopes"], "\(key).negative_slopes")
                if slopes.count == 1 {
                    activation.a = slopes[0]
                    slopes = []
                } else if slopes.count != channels {
                    throw NeuralModelProblem("\"\(key).negative_slopes\" has \(slopes.count) slopes for \(channels) channels")
                }
            }
        case .leakyHardtanh:
            allowed.formUnion(["min_val", "max_val", "min_slope", "max_slope"])
            if object["min_val"] != nil { activation.a = Float(try NeuralJSON.double(object["min_val"], "\(key).min_val")) }
            if object["max_val"] != nil { activation.b = Float(try NeuralJSON.double(object["max_val"], "\(key).max_val")) }
            if object["min_slope"] != nil { activation.c = Float(try NeuralJSON.double(object["min_slope"], "\(key).min_slope")) }
            if object["max_slope"] != nil { activation.d = Float(try NeuralJSON.double(object["max_slope"], "\(key).max_slope")) }
        default: break
        }
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw NeuralModelProblem("has a key \"\(key).\(unknown)\" this Stompbox does not know")
        }
        return (activation, slopes)
    }

    /// NAM's defaults: LeakyReLU's and PReLU's slope 0.01; LeakyHardtanh between -1 and 1 with
    /// slopes 0.01 outside.
    private func withDefaults() -> NAMActivation {
        var activation = self
        switch kind {
        case .leakyReLU, .preLU: activation.a = 0.01
        case .leakyHardtanh: (activation.a, activation.b, activation.c, activation.d) = (-1, 1, 0.01, 0.01)
        default: break
        }
        return activation
    }
}

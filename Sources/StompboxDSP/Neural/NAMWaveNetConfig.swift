import Foundation

/// A NAM WaveNet's configuration as the file gives it (format 0.5 to 0.7): its layer arrays,
/// the optional post-stack head, the optional conditioning network. Every key is checked; one
/// this Stompbox does not know is refused by name rather than silently ignored.
struct NAMWaveNetConfig {
    enum Gating { case none, gated, blended }

    /// Feature-wise linear modulation of one point in a layer by the condition.
    struct FiLM {
        var active = false
        var shift = true
        var groups = 1
    }

    struct LayerArray {
        var inputSize = 1, conditionSize = 1, channels = 1, bottleneck = 1
        var headSize = 1, headKernelSize = 1, headDilation = 1, headBias = false
        var kernelSizes: [Int] = [], dilations: [Int] = []
        var activations: [(NAMActivation, [Float])] = []
        var gating: [Gating] = []
        var secondary: [(NAMActivation, [Float])] = []
        var groupsInput = 1, groupsMixin = 1
        var layer1x1 = true, layer1x1Groups = 1
        var head1x1 = false, head1x1Channels = 1, head1x1Groups = 1
        /// conv_pre, conv_post, input_mixin_pre, input_mixin_post, activation_pre,
        /// activation_post, layer1x1_post, head1x1_post — the order NAM reads their weights in.
        var films = [FiLM](repeating: FiLM(), count: 8)
        /// What each layer sends to the head: head1x1's channels, or the bottleneck.
        var headInputs: Int { head1x1 ? head1x1Channels : bottleneck }
    }

    struct PostHead {
        var channels = 1, outChannels = 1
        var kernelSizes: [Int] = []
        var activation = (NAMActivation.identity, [Float]())
    }

    static let filmKeys = ["conv_pre_film", "conv_post_film", "input_mixin_pre_film", "input_mixin_post_film",
                           "activation_pre_film", "activation_post_film", "layer1x1_post_film", "head1x1_post_film"]

    var arrays: [LayerArray] = []
    var postHead: PostHead?
    var headScale: Float = 1
    /// The conditioning network's whole NAM model object, when there is one.
    var conditionModel: [String: Any]?

    var outputChannels: Int { postHead?.outChannels ?? arrays.last!.headSize }

    init(_ config: [String: Any]) throws {
        try Self.allowOnly(config, ["layers", "head", "head_scale", "condition_dsp", "in_channels"], in: "config")
        if config["in_channels"] != nil {
            let inChannels = try NeuralJSON.int(config["in_channels"], "in_channels")
            guard inChannels == 1 else { throw NeuralModelProblem("has \(inChannels) input channels; a pedal plays one") }
        }
        if let condition = config["condition_dsp"], !(condition is NSNull) {
            conditionModel = try NeuralJSON.object(condition, "condition_dsp")
        }
        let layers = try NeuralJSON.array(config["layers"], "layers")
        guard !layers.isEmpty else { throw NeuralModelProblem("has no layer arrays in \"layers\"") }
        for (index, value) in layers.enumerated() {
            arrays.append(try Self.layerArray(try NeuralJSON.object(value, "layers[\(index)]"), key: "layers[\(index)]"))
        }
        headScale = Float(try NeuralJSON.double(config["head_scale"], "head_scale"))
        if let head = config["head"], !(head is NSNull) {
            postHead = try Self.postHead(try NeuralJSON.object(head, "head"), inChannels: arrays.last!.headSize)
        }
        for index in arrays.indices.dropFirst() {
            let (previous, array) = (arrays[index - 1], arrays[index])
            guard array.inputSize == previous.channels else {
                throw NeuralModelProblem("layers[\(index)] has input_size \(array.inputSize) where layers[\(index - 1)] has \(previous.channels) channels")
            }
            guard array.channels == previous.headSize, array.headInputs == previous.headSize else {
                throw NeuralModelProblem("layers[\(index)] takes \(array.headInputs) head channels where layers[\(index - 1)] gives \(previous.headSize)")
            }
        }
    }

    static func allowOnly(_ object: [String: Any], _ keys: Set<String>, in key: String) throws {
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            throw NeuralModelProblem("has a key \"\(key).\(unknown)\" this Stompbox does not know")
        }
    }

    private static func positive(_ value: Any?, _ key: String, limit: Int = 4096) throws -> Int {
        let number = try NeuralJSON.int(value, key)
        guard number >= 1, number <= limit else { throw NeuralModelProblem("\"\(key)\" is \(number), outside 1…\(limit)") }
        return number
    }

    private static func layerArray(_ json: [String: Any], key: String) throws -> LayerArray {
        try allowOnly(json, Set(["input_size", "condition_size", "head_size", "head_bias", "head", "channels", "bottleneck",
                                  "kernel_size", "kernel_sizes", "dilations", "activation", "gated", "gating_mode",
                                  "secondary_activation", "groups_input", "groups_input_mixin", "layer1x1", "head1x1",
                                  "slimmable"] + filmKeys), in: key)
        var array = LayerArray()
        array.inputSize = try positive(json["input_size"], "\(key).input_size")
        array.conditionSize = try positive(json["condition_size"], "\(key).condition_size")
        array.channels = try positive(json["channels"], "\(key).channels")
        array.bottleneck = json["bottleneck"] == nil ? array.channels : try positive(json["bottleneck"], "\(key).bottleneck")
        if let head = json["head"], !(head is NSNull) {
            let head = try NeuralJSON.object(head, "\(key).head")
            try allowOnly(head, ["out_channels", "kernel_size", "bias", "head_dilation"], in: "\(key).head")
            array.headSize = try positive(head["out_channels"], "\(key).head.out_channels")
            array.headKernelSize = try positive(head["kernel_size"], "\(key).head.kernel_size")
            array.headBias = try NeuralJSON.bool(head["bias"], "\(key).head.bias")
            if head["head_dilation"] != nil { array.headDilation = try positive(head["head_dilation"], "\(key).head.head_dilation", limit: 1 << 16) }
        } else {
            array.headSize = try positive(json["head_size"], "\(key).head_size")
            array.headBias = try NeuralJSON.bool(json["head_bias"], "\(key).head_bias")
        }
        let dilations = try NeuralJSON.array(json["dilations"], "\(key).dilations")
        guard !dilations.isEmpty else { throw NeuralModelProblem("\"\(key).dilations\" is empty") }
        array.dilations = try dilations.enumerated().map { try positive($0.element, "\(key).dilations[\($0.offset)]", limit: 1 << 16) }
        let count = dilations.count
        switch (json["kernel_size"], json["kernel_sizes"]) {
        case (nil, nil): throw NeuralModelProblem("\"\(key)\" has neither kernel_size nor kernel_sizes")
        case (.some, .some): throw NeuralModelProblem("\"\(key)\" has both kernel_size and kernel_sizes")
        case (let single?, nil): array.kernelSizes = Array(repeating: try positive(single, "\(key).kernel_size", limit: 256), count: count)
        case (nil, let list?):
            let sizes = try NeuralJSON.array(list, "\(key).kernel_sizes")
            guard sizes.count == count else { throw NeuralModelProblem("\"\(key).kernel_sizes\" has \(sizes.count) entries for \(count) dilations") }
            array.kernelSizes = try sizes.enumerated().map { try positive($0.element, "\(key).kernel_sizes[\($0.offset)]", limit: 256) }
        }
        array.groupsInput = json["groups_input"] == nil ? 1 : try positive(json["groups_input"], "\(key).groups_input")
        array.groupsMixin = json["groups_input_mixin"] == nil ? 1 : try positive(json["groups_input_mixin"], "\(key).groups_input_mixin")
        if let layer1x1 = json["layer1x1"] {
            let object = try NeuralJSON.object(layer1x1, "\(key).layer1x1")
            try allowOnly(object, ["active", "groups"], in: "\(key).layer1x1")
            array.layer1x1 = try NeuralJSON.bool(object["active"], "\(key).layer1x1.active")
            array.layer1x1Groups = try positive(object["groups"], "\(key).layer1x1.groups")
        }
        if let head1x1 = json["head1x1"] {
            let object = try NeuralJSON.object(head1x1, "\(key).head1x1")
            try allowOnly(object, ["active", "out_channels", "groups"], in: "\(key).head1x1")
            array.head1x1 = try NeuralJSON.bool(object["active"], "\(key).head1x1.active")
            array.head1x1Channels = try positive(object["out_channels"], "\(key).head1x1.out_channels")
            array.head1x1Groups = try positive(object["groups"], "\(key).head1x1.groups")
        }
        if !array.layer1x1 && array.bottleneck != array.channels {
            throw NeuralModelProblem("\"\(key)\" has no layer1x1 but a bottleneck (\(array.bottleneck)) unlike its channels (\(array.channels))")
        }
        // Activations: one for every layer, or a list of one per layer.
        if let list = json["activation"] as? [Any] {
            guard list.count == count else { throw NeuralModelProblem("\"\(key).activation\" has \(list.count) entries for \(count) dilations") }
            array.activations = try list.enumerated().map { try NAMActivation.parse($0.element, channels: array.bottleneck, key: "\(key).activation[\($0.offset)]") }
        } else {
            array.activations = Array(repeating: try NAMActivation.parse(json["activation"], channels: array.bottleneck, key: "\(key).activation"), count: count)
        }
        try gating(json, key: key, into: &array)
        for (index, filmKey) in filmKeys.enumerated() {
            guard let value = json[filmKey] else { continue }
            if let flag = value as? Bool, !flag { continue }
            let object = try NeuralJSON.object(value, "\(key).\(filmKey)")
            try allowOnly(object, ["active", "shift", "groups"], in: "\(key).\(filmKey)")
            var film = FiLM()
            film.active = object["active"] == nil ? true : try NeuralJSON.bool(object["active"], "\(key).\(filmKey).active")
            film.shift = object["shift"] == nil ? true : try NeuralJSON.bool(object["shift"], "\(key).\(filmKey).shift")
            film.groups = object["groups"] == nil ? 1 : try positive(object["groups"], "\(key).\(filmKey).groups")
            array.films[index] = film
        }
        if array.films[6].active && !array.layer1x1 {
            throw NeuralModelProblem("\"\(key)\" has a layer1x1_post_film but no layer1x1")
        }
        if array.films[7].active && !array.head1x1 {
            throw NeuralModelProblem("\"\(key)\" has a head1x1_post_film but no head1x1")
        }
        if let slimmable = json["slimmable"], !(slimmable is NSNull) {
            try checkSlimmable(try NeuralJSON.object(slimmable, "\(key).slimmable"), channels: array.channels, key: "\(key).slimmable")
        }
        return array
    }

    /// "gating_mode" (one or a list), or the older "gated"; a gated or blended layer's
    /// secondary activation defaults to Sigmoid.
    private static func gating(_ json: [String: Any], key: String, into array: inout LayerArray) throws {
        let count = array.dilations.count
        let sigmoid = (NAMActivation(kind: .sigmoid), [Float]())
        func mode(_ value: Any?, _ key: String) throws -> Gating {
            switch try NeuralJSON.string(value, key) {
            case "none": return .none
            case "gated": return .gated
            case "blended": return .blended
            case let other: throw NeuralModelProblem("has a gating_mode \"\(other)\" (\(key)) this Stompbox does not know")
            }
        }
        let secondary = json["secondary_activation"]
        if let modes = json["gating_mode"] as? [Any] {
            guard modes.count == count else { throw NeuralModelProblem("\"\(key).gating_mode\" has \(modes.count) entries for \(count) dilations") }
            array.gating = try modes.enumerated().map { try mode($0.element, "\(key).gating_mode[\($0.offset)]") }
            let list = secondary as? [Any]
            if let list, list.count != count {
                throw NeuralModelProblem("\"\(key).secondary_activation\" has \(list.count) entries for \(count) dilations")
            }
            array.secondary = try array.gating.enumerated().map { index, gating in
                guard gating != .none else { return (NAMActivation.identity, []) }
                guard let secondary, !(secondary is NSNull) else { return sigmoid }
                if let list { return try NAMActivation.parse(list[index], channels: array.bottleneck, key: "\(key).secondary_activation[\(index)]") }
                return try NAMActivation.parse(secondary, channels: array.bottleneck, key: "\(key).secondary_activation")
            }
        } else if json["gating_mode"] != nil {
            let gating = try mode(json["gating_mode"], "\(key).gating_mode")
            array.gating = Array(repeating: gating, count: count)
            let activation = gating == .none ? (NAMActivation.identity, [Float]())
                : secondary == nil || secondary is NSNull ? sigmoid
                : try NAMActivation.parse(secondary, channels: array.bottleneck, key: "\(key).secondary_activation")
            array.secondary = Array(repeating: activation, count: count)
        } else {
            let gated = json["gated"] == nil ? false : try NeuralJSON.bool(json["gated"], "\(key).gated")
            array.gating = Array(repeating: gated ? .gated : .none, count: count)
            array.secondary = Array(repeating: gated ? sigmoid : (NAMActivation.identity, []), count: count)
        }
    }

    /// A slimmable WaveNet plays at its full size (as NAM does until a host picks a smaller
    /// one); its description is checked all the same.
    private static func checkSlimmable(_ json: [String: Any], channels: Int, key: String) throws {
        try allowOnly(json, ["method", "kwargs"], in: key)
        let method = json["method"] == nil ? "" : try NeuralJSON.string(json["method"], "\(key).method")
        if method.isEmpty { return }
        guard method == "slice_channels_uniform" else { throw NeuralModelProblem("has a slimming method \"\(method)\" (\(key).method) this Stompbox does not know") }
        guard let kwargs = json["kwargs"], !(kwargs is NSNull) else { return }
        let object = try NeuralJSON.object(kwargs, "\(key).kwargs")
        try allowOnly(object, ["allowed_channels"], in: "\(key).kwargs")
        guard let list = object["allowed_channels"] else { return }
        let allowed = try NeuralJSON.array(list, "\(key).kwargs.allowed_channels").enumerated().map {
            try positive($0.element, "\(key).kwargs.allowed_channels[\($0.offset)]")
        }
        guard !allowed.isEmpty, zip(allowed, allowed.dropFirst()).allSatisfy({ $0 < $1 }), allowed.last == channels else {
            throw NeuralModelProblem("\"\(key).kwargs.allowed_channels\" must rise to the array's \(channels) channels")
        }
    }

    private static func postHead(_ json: [String: Any], inChannels: Int) throws -> PostHead {
        try allowOnly(json, ["in_channels", "channels", "out_channels", "kernel_sizes", "activation"], in: "head")
        if let value = json["in_channels"], !(value is NSNull) {
            let declared = try NeuralJSON.int(value, "head.in_channels")
            guard declared == inChannels else { throw NeuralModelProblem("\"head.in_channels\" is \(declared) where the last layer array gives \(inChannels)") }
        }
        var head = PostHead()
        head.channels = try positive(json["channels"], "head.channels")
        head.outChannels = try positive(json["out_channels"], "head.out_channels")
        let sizes = try NeuralJSON.array(json["kernel_sizes"], "head.kernel_sizes")
        guard !sizes.isEmpty else { throw NeuralModelProblem("\"head.kernel_sizes\" is empty") }
        head.kernelSizes = try sizes.enumerated().map { try positive($0.element, "head.kernel_sizes[\($0.offset)]", limit: 256) }
        head.activation = try NAMActivation.parse(json["activation"], channels: inChannels, key: "head.activation")
        if !head.activation.1.isEmpty && head.kernelSizes.count > 1 && head.channels != inChannels {
            throw NeuralModelProblem("\"head.activation\" has a slope per channel, but the head's convolutions take \(inChannels) and \(head.channels) channels")
        }
        return head
    }
}

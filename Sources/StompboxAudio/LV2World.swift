import CLilv
import CLV2Host
import Foundation

/// The installed LV2 plugins, read once through lilv (off the audio thread).
///
/// lilv's world is not thread-safe, so every query goes through one lock. Plugins are found
/// where lilv looks: `LV2_PATH` if set (a missing or broken folder in it is skipped, and a
/// bundle lilv cannot parse is left out), else `~/.lv2`, `/usr/local/lib/lv2` and `/usr/lib/lv2`.
public final class LV2World: @unchecked Sendable {
    /// The world of the process's own `LV2_PATH`, loaded on first use.
    public static let shared = LV2World()

    let world: OpaquePointer
    private let lock = NSLock()
    private let nodes: Nodes
    private let capturesMessages: Bool
    private var capturedMessages: [String] = []

    /// Loads every bundle on `path` (a colon-separated list of folders; nil: `LV2_PATH` or lilv's
    /// defaults). With `capturingMessages`, what lilv and its Turtle parser print to stderr while
    /// loading and reading is kept in `messages` instead (the whole process's stderr is redirected
    /// meanwhile, so only a command-line tool should ask for it).
    public init(path: String? = nil, capturingMessages: Bool = false) {
        world = lilv_world_new()!
        capturesMessages = capturingMessages
        nodes = Nodes(world)
        if let path {
            let value = lilv_new_string(world, path)
            lilv_world_set_option(world, LILV_OPTION_LV2_PATH, value)
            lilv_node_free(value)
        }
        captured { lilv_world_load_all(world) }
    }

    deinit {
        nodes.free()
        lilv_world_free(world)
    }

    /// What lilv printed while loading and reading (only with `capturingMessages`).
    public var messages: [String] {
        lock.lock()
        defer { lock.unlock() }
        return capturedMessages
    }

    /// Every installed plugin, sorted by name (then URI).
    public func plugins() -> [LV2PluginInfo] {
        withLock {
            var list: [LV2PluginInfo] = []
            captured {
                let all = lilv_world_get_all_plugins(world)
                var i = lilv_plugins_begin(all)
                while !lilv_plugins_is_end(all, i) {
                    if let plugin = lilv_plugins_get(all, i) { list.append(describe(plugin).info) }
                    i = lilv_plugins_next(all, i)
                }
            }
            return list.sorted { ($0.name.lowercased(), $0.uri) < ($1.name.lowercased(), $1.uri) }
        }
    }

    /// The plugin with this URI. Throws `LV2Error` naming the URI when there is none.
    public func plugin(uri: String) throws(LV2Error) -> LV2PluginInfo {
        try withLock { () throws(LV2Error) -> LV2PluginInfo in
            let plugin = try find(uri)
            var info: LV2PluginInfo?
            captured { info = describe(plugin).info }
            return info!
        }
    }

    // MARK: For LV2Pedal (internal)

    /// Runs `body` with the lilv plugin and what the pedal needs to know of its ports, under the lock.
    func withPlugin<T>(uri: String, _ body: (OpaquePointer, LV2PluginInfo, LV2PortLayout) throws(LV2Error) -> T) throws(LV2Error) -> T {
        try withLock { () throws(LV2Error) -> T in
            let plugin = try find(uri)
            let (info, layout) = describe(plugin)
            return try body(plugin, info, layout)
        }
    }

    /// Frees an instance made by `lilv_plugin_instantiate` on this world, under the lock. lilv
    /// keeps each plugin library's users in the world's own table (closing the library with the
    /// last one), and that table is not thread-safe: an instance freed on one thread while another
    /// thread makes one can close a library under an instance still in use. (A parallel unit-test
    /// run crashed so, connecting the ports of an instance just made;
    /// `LV2ThreadTests.pedalsMadeAndLetGoOnManyThreadsAtOnce` crashed in 6 runs of 6 without the
    /// lock.) Not on the audio thread.
    func free(_ instance: UnsafeMutablePointer<LilvInstance>) {
        withLock { lilv_instance_free(instance) }
    }

    // MARK: Private

    private func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// lilv and serd print their complaints to stderr; a command-line listing keeps them aside.
    private func captured(_ body: () -> Void) {
        guard capturesMessages else { return body() }
        let text = StderrCapture.run(body)
        capturedMessages += text.split(separator: "\n").map(String.init)
    }

    private func find(_ uri: String) throws(LV2Error) -> OpaquePointer {
        guard let colon = uri.firstIndex(of: ":"), colon != uri.startIndex,
              uri[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }),
              !uri.contains(where: \.isWhitespace) else {
            throw .invalidURI(uri)
        }
        guard let node = lilv_new_uri(world, uri) else { throw .invalidURI(uri) }
        defer { lilv_node_free(node) }
        if let plugin = lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), node) {
            return plugin
        }
        if lilv_world_ask(world, node, nil, nil) || lilv_world_ask(world, nil, nil, node) {
            throw .notAPlugin(uri: uri)
        }
        throw .notFound(uri: uri)
    }

    /// Reads a plugin's ports and requirements from its data.
    private func describe(_ plugin: OpaquePointer) -> (info: LV2PluginInfo, layout: LV2PortLayout) {
        let n = nodes
        let uri = string(lilv_plugin_get_uri(plugin)) ?? ""
        let nameNode = lilv_plugin_get_name(plugin)
        let name = string(nameNode) ?? uri
        if let nameNode { lilv_node_free(nameNode) }

        var problems: [String] = []
        if !lilv_plugin_verify(plugin) { problems.append("its LV2 data is incomplete (lilv cannot verify it)") }

        var layout = LV2PortLayout()
        var controls: [LV2ControlPort] = []
        let count = lilv_plugin_get_num_ports(plugin)
        for index in 0..<count {
            guard let port = lilv_plugin_get_port_by_index(plugin, index) else { continue }
            let symbol = string(lilv_port_get_symbol(plugin, port)) ?? "port\(index)"
            let isInput = lilv_port_is_a(plugin, port, n.input)
            let isOutput = lilv_port_is_a(plugin, port, n.output)
            let optional = lilv_port_has_property(plugin, port, n.connectionOptional)
            if lilv_port_is_a(plugin, port, n.audio) {
                if isInput { layout.audioInputs.append(index) } else if isOutput { layout.audioOutputs.append(index) }
            } else if lilv_port_is_a(plugin, port, n.control) {
                if isInput {
                    let control = describeControl(plugin, port, index: Int(index), symbol: symbol)
                    controls.append(control)
                    layout.controlInputs.append(index)
                } else {
                    layout.controlOutputs.append(index)
                }
            } else if lilv_port_is_a(plugin, port, n.cv) {
                if isInput {
                    var def: OpaquePointer?, lo: OpaquePointer?, hi: OpaquePointer?
                    lilv_port_get_range(plugin, port, &def, &lo, &hi)
                    layout.cvInputs.append((index, number(def) ?? 0))
                    for node in [def, lo, hi] { if let node { lilv_node_free(node) } }
                } else {
                    layout.cvOutputs.append(index)
                }
            } else if lilv_port_is_a(plugin, port, n.atomPort) {
                if isInput { layout.atomInputs.append(index) } else { layout.atomOutputs.append(index) }
            } else if optional {
                layout.unconnected.append(index)
            } else {
                problems.append("its port '\(symbol)' is of a kind Stompbox cannot connect (only audio, control, CV and atom ports)")
            }
        }
        if lilv_plugin_has_latency(plugin) {
            layout.latencyOutput = layout.controlOutputs.firstIndex(of: lilv_plugin_get_latency_port_index(plugin))
        }
        if layout.audioInputs.isEmpty { problems.append("it has no audio input") }
        if layout.audioOutputs.isEmpty { problems.append("it has no audio output") }

        if let required = lilv_plugin_get_required_features(plugin) {
            forEach(required) { node in
                if let feature = string(node), clv2_feature_is_supported(feature) == 0 {
                    problems.append("it needs the LV2 feature <\(feature)>, which Stompbox does not provide")
                }
            }
            lilv_nodes_free(required)
        }
        if let options = lilv_plugin_get_value(plugin, n.requiredOption) {
            forEach(options) { node in
                if let option = string(node), clv2_option_is_supported(option) == 0 {
                    problems.append("it needs the option <\(option)>, which Stompbox does not pass")
                }
            }
            lilv_nodes_free(options)
        }

        let info = LV2PluginInfo(
            uri: uri, name: name,
            audioInputs: layout.audioInputs.count, audioOutputs: layout.audioOutputs.count,
            controls: controls,
            hasStateInterface: lilv_plugin_has_extension_data(plugin, n.stateInterface),
            usesWorker: lilv_plugin_has_extension_data(plugin, n.workerInterface),
            problems: problems)
        return (info, layout)
    }

    private func describeControl(_ plugin: OpaquePointer, _ port: OpaquePointer, index: Int, symbol: String) -> LV2ControlPort {
        let n = nodes
        let nameNode = lilv_port_get_name(plugin, port)
        let name = string(nameNode) ?? symbol
        if let nameNode { lilv_node_free(nameNode) }

        var def: OpaquePointer?, lo: OpaquePointer?, hi: OpaquePointer?
        lilv_port_get_range(plugin, port, &def, &lo, &hi)
        defer { for node in [def, lo, hi] { if let node { lilv_node_free(node) } } }
        let isToggle = lilv_port_has_property(plugin, port, n.toggled)
        var minimum = number(lo) ?? 0
        var maximum = number(hi) ?? (isToggle ? 1 : max(minimum, 1))
        if maximum < minimum { swap(&minimum, &maximum) }
        let defaultValue = number(def).map { min(max($0, minimum), maximum) } ?? min(max(0, minimum), maximum)

        var points: [LV2ScalePoint] = []
        if let scalePoints = lilv_port_get_scale_points(plugin, port) {
            var i = lilv_scale_points_begin(scalePoints)
            while !lilv_scale_points_is_end(scalePoints, i) {
                if let point = lilv_scale_points_get(scalePoints, i),
                   let value = number(lilv_scale_point_get_value(point)) {
                    points.append(LV2ScalePoint(value: value, label: string(lilv_scale_point_get_label(point)) ?? "\(value)"))
                }
                i = lilv_scale_points_next(scalePoints, i)
            }
            lilv_scale_points_free(scalePoints)
        }
        points.sort { $0.value < $1.value }

        return LV2ControlPort(
            index: index, symbol: symbol, name: name,
            minimum: minimum, maximum: maximum, defaultValue: defaultValue,
            unit: unit(plugin, port),
            isToggle: isToggle,
            isInteger: lilv_port_has_property(plugin, port, n.integer),
            isLogarithmic: lilv_port_has_property(plugin, port, n.logarithmic),
            isSampleRateRelative: lilv_port_has_property(plugin, port, n.sampleRate),
            isEnumeration: lilv_port_has_property(plugin, port, n.enumeration),
            scalePoints: points)
    }

    /// The unit's symbol: `units:symbol` of the port's `units:unit` (a unit of the units
    /// vocabulary, or one the plugin defines itself), else a name for the well-known ones.
    private func unit(_ plugin: OpaquePointer, _ port: OpaquePointer) -> String? {
        guard let unitNode = lilv_port_get(plugin, port, nodes.unit) else { return nil }
        defer { lilv_node_free(unitNode) }
        if let symbolNode = lilv_world_get(world, unitNode, nodes.unitSymbol, nil) {
            defer { lilv_node_free(symbolNode) }
            if let symbol = string(symbolNode), !symbol.isEmpty { return symbol }
        }
        let vocabulary = "http://lv2plug.in/ns/extensions/units#"
        if lilv_node_is_uri(unitNode), let uri = string(unitNode), uri.hasPrefix(vocabulary) {
            // units:coef has no symbol: a plain factor shows no unit.
            let name = String(uri.dropFirst(vocabulary.count))
            let symbol = Self.unitSymbols[name] ?? name
            return symbol.isEmpty ? nil : symbol
        }
        if let labelNode = lilv_world_get(world, unitNode, nodes.label, nil) {
            defer { lilv_node_free(labelNode) }
            if let label = string(labelNode), !label.isEmpty { return label }
        }
        return nil
    }

    /// The symbols of the LV2 units vocabulary, for when its data is not installed.
    private static let unitSymbols: [String: String] = [
        "bar": "bars", "beat": "beats", "bpm": "BPM", "cent": "ct", "cm": "cm", "coef": "",
        "db": "dB", "degree": "°", "frame": "frames", "hz": "Hz", "inch": "in", "khz": "kHz",
        "km": "km", "m": "m", "mhz": "MHz", "midiNote": "note", "mile": "mi", "min": "min",
        "mm": "mm", "ms": "ms", "oct": "oct", "pc": "%", "s": "s", "semitone12TET": "semi",
    ]

    private func string(_ node: OpaquePointer?) -> String? {
        guard let node, let text = lilv_node_as_string(node) else { return nil }
        return String(cString: text)
    }

    private func number(_ node: OpaquePointer?) -> Float? {
        guard let node else { return nil }
        if lilv_node_is_float(node) || lilv_node_is_int(node) { return lilv_node_as_float(node) }
        if lilv_node_is_bool(node) { return lilv_node_as_bool(node) ? 1 : 0 }
        return nil
    }

    private func forEach(_ collection: UnsafeRawPointer, _ body: (OpaquePointer) -> Void) {
        var i = lilv_nodes_begin(collection)
        while !lilv_nodes_is_end(collection, i) {
            if let node = lilv_nodes_get(collection, i) { body(node) }
            i = lilv_nodes_next(collection, i)
        }
    }
}

/// Which port is what, for connecting them.
struct LV2PortLayout {
    var audioInputs: [UInt32] = []
    var audioOutputs: [UInt32] = []
    var controlInputs: [UInt32] = []
    var controlOutputs: [UInt32] = []
    /// CV inputs are held at their default value.
    var cvInputs: [(index: UInt32, value: Float)] = []
    var cvOutputs: [UInt32] = []
    var atomInputs: [UInt32] = []
    var atomOutputs: [UInt32] = []
    /// Optional ports of other kinds, left unconnected (NULL).
    var unconnected: [UInt32] = []
    /// Where in `controlOutputs` the plugin reports its latency in samples (lv2:reportsLatency).
    var latencyOutput: Int?
}

/// The URIs the world's queries need, made once.
private struct Nodes {
    let input, output, audio, control, cv, atomPort: OpaquePointer
    let connectionOptional, toggled, integer, enumeration, logarithmic, sampleRate: OpaquePointer
    let unit, unitSymbol, label, requiredOption, stateInterface, workerInterface: OpaquePointer

    init(_ world: OpaquePointer) {
        func uri(_ text: String) -> OpaquePointer { lilv_new_uri(world, text)! }
        let lv2 = "http://lv2plug.in/ns/lv2core#"
        input = uri(lv2 + "InputPort")
        output = uri(lv2 + "OutputPort")
        audio = uri(lv2 + "AudioPort")
        control = uri(lv2 + "ControlPort")
        cv = uri(lv2 + "CVPort")
        atomPort = uri("http://lv2plug.in/ns/ext/atom#AtomPort")
        connectionOptional = uri(lv2 + "connectionOptional")
        toggled = uri(lv2 + "toggled")
        integer = uri(lv2 + "integer")
        enumeration = uri(lv2 + "enumeration")
        logarithmic = uri("http://lv2plug.in/ns/ext/port-props#logarithmic")
        sampleRate = uri(lv2 + "sampleRate")
        unit = uri("http://lv2plug.in/ns/extensions/units#unit")
        unitSymbol = uri("http://lv2plug.in/ns/extensions/units#symbol")
        label = uri("http://www.w3.org/2000/01/rdf-schema#label")
        requiredOption = uri("http://lv2plug.in/ns/ext/options#requiredOption")
        stateInterface = uri("http://lv2plug.in/ns/ext/state#interface")
        workerInterface = uri("http://lv2plug.in/ns/ext/worker#interface")
    }

    func free() {
        for node in [input, output, audio, control, cv, atomPort, connectionOptional, toggled, integer,
                     enumeration, logarithmic, sampleRate, unit, unitSymbol, label, requiredOption,
                     stateInterface, workerInterface] {
            lilv_node_free(node)
        }
    }
}

/// Runs a closure with the process's stderr sent to a temporary file, and returns what was written.
enum StderrCapture {
    static func run(_ body: () -> Void) -> String {
        fflush(stderr)
        var template = Array((NSTemporaryDirectory() + "/stompbox-lv2-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            body()
            return ""
        }
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        unlink(path)
        let saved = dup(STDERR_FILENO)
        dup2(fd, STDERR_FILENO)
        body()
        fflush(stderr)
        dup2(saved, STDERR_FILENO)
        close(saved)
        lseek(fd, 0, SEEK_SET)
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
            if n <= 0 { break }
            data.append(contentsOf: chunk[0..<n])
        }
        close(fd)
        return String(decoding: data, as: UTF8.self)
    }
}

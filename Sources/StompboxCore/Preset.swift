import Foundation
import StompboxDSP

/// One complete setup: which pedals are on the board and in what order, and all parameters of
/// the table, on/off states included.
///
/// File form (`.json`), version 2:
/// `{"format":"stompbox-preset","version":2,"name":"…","chain":["overdrive","delay",…],"parameters":{"delay.enabled":true,…}}`.
/// Ids left out take their defaults; a version-1 file (no `chain`) has the seven pedals of its
/// day in the classic order (`PedalKind.classic`). An unknown id or pedal, a pedal twice, a value of the wrong type or out of
/// range, or a newer version is an error that names it. Nothing is clamped silently.
///
/// `states` (any version; written only when there is one) keeps what a built-in pedal holds
/// beyond its parameters, by pedal id: `{"cab":{"file":"/home/me/ir.wav"}}` (the cabinet's own
/// impulse response file).
///
/// Version 3 (written only when the board has a plugin pedal) adds plugin pedals to `chain` as
/// objects: `{"id":"fil","lv2":"<plugin URI>","name":"…","enabled":true,"controls":{"<symbol>":0.5,…},"state":{…}}`
/// (`state`: the plugin's `LV2PedalState`, when it has one). A preset holds them as
/// `PedalKind.saved` pedals (read below the layer that finds plugins);
/// `PedalKind.resolvingPlugins` makes them live, and one whose plugin is missing is written back
/// as it was read.
public struct Preset: Equatable, Sendable {
    public static let format = "stompbox-preset"
    public static let version = 3
    /// The version written when no plugin pedal is on the board (readers before plugins read it).
    static let versionWithoutPlugins = 2

    public var name: String
    /// One value per `Parameter`, in table order.
    public private(set) var values: [Float]
    /// The pedals on the board, in signal order.
    public private(set) var board: [PedalKind]
    /// The built-in pedals' own states (JSON text) by pedal id (`Chain.pedalStates`).
    public var states: [String: String] = [:]

    /// Every parameter at its default, every pedal on the board in the registry's order.
    public init(name: String) {
        self.name = name
        values = Parameter.allCases.map { $0.spec.defaultValue }
        board = PedalKind.builtIn
    }

    /// The store's current values and a board; its plugin pedals are saved as they stand now,
    /// with `states` (their plugins' own state as JSON text, by pedal id: `Chain.pedalStates`).
    public init(name: String, from store: ParameterStore, board: [PedalKind] = PedalKind.builtIn, states: [String: String] = [:]) {
        self.name = name
        values = store.snapshot()
        self.board = board.map { Preset.saved($0, state: states[$0.id]) }
        self.states = states.filter { PedalKind(id: $0.key) != nil }
    }

    /// Puts `board` in the preset (a pedal twice is an error); its plugin pedals as they stand now.
    public mutating func setBoard(_ board: [PedalKind], states: [String: String] = [:]) throws(PresetError) {
        do { try PedalKind.checkDistinct(board) } catch { throw .pedal(error) }
        self.board = board.map { Preset.saved($0, state: states[$0.id]) }
        self.states = states.filter { PedalKind(id: $0.key) != nil }
    }

    /// True when `store` and `board` are what this preset sets (a plugin pedal: the same plugin,
    /// switch and control values, a control the preset leaves out at its default).
    public func matches(_ store: ParameterStore, board: [PedalKind], states: [String: String]? = nil) -> Bool {
        values == store.snapshot() && self.board.count == board.count
            && (states.map { Preset.sameStates(self.states, $0.filter { PedalKind(id: $0.key) != nil }) } ?? true)
            && zip(self.board, board).allSatisfy { mine, theirs in
                guard let saved = mine.plugin?.saved, theirs.values != nil, !theirs.isMissing else { return mine == theirs }
                return theirs.id == mine.id && theirs.plugin?.uri == mine.plugin?.uri
                    && (theirs.enabledParameter.pedalValue! >= 0.5) == saved.enabled
                    && theirs.controls.allSatisfy { p in
                        let key = String(p.id.dropFirst(theirs.id.count + 1))
                        return p.pedalValue == p.spec.clamp(saved.controls[key] ?? p.spec.defaultValue)
                    }
            }
    }

    /// Two sets of states alike as JSON (not as text: key order and spacing may differ).
    static func sameStates(_ a: [String: String], _ b: [String: String]) -> Bool {
        a.keys.sorted() == b.keys.sorted() && a.allSatisfy { key, text in
            (try? JSONValue.parse(Data(text.utf8))) == (try? JSONValue.parse(Data(b[key]!.utf8)))
        }
    }

    /// A plugin pedal as a preset keeps it: its switch, controls and state now, and its entry.
    /// Built-in pedals and pedals already saved are returned as they are.
    static func saved(_ kind: PedalKind, state: String?) -> PedalKind {
        guard let plugin = kind.plugin, plugin.saved == nil else { return kind }
        var controlsJSON: [String: JSONValue] = [:]
        for p in kind.controls { controlsJSON[String(p.id.dropFirst(kind.id.count + 1))] = .shortest(p.pedalValue!) }
        let enabled = kind.enabledParameter.pedalValue! >= 0.5
        var entry: [String: JSONValue] = [
            "id": .string(kind.id), "lv2": .string(plugin.uri), "name": .string(kind.name),
            "enabled": .bool(enabled), "controls": .object(controlsJSON),
        ]
        if let state, let value = try? JSONValue.parse(Data(state.utf8)) { entry["state"] = value }
        // Read as a file's entry would be, so that reading the file back gives the same pedal
        // (the entry is well formed: it cannot fail).
        return (try? Preset.plugin(.object(entry))) ?? kind
    }

    /// A plugin pedal's `chain` entry: read into a saved pedal that keeps it verbatim.
    private static func plugin(_ item: JSONValue) throws(PresetError) -> PedalKind {
        guard case .object(let fields) = item else { throw .wrongType(field: "chain", expected: "pedal ids or plugin pedal objects, found \(item.kindName)") }
        guard case .string(let id)? = fields["id"] else { throw .missingField("chain: a plugin pedal's id") }
        guard case .string(let uri)? = fields["lv2"] else { throw .missingField("chain: \(id): lv2 (the plugin's URI)") }
        var name = uri
        if case .string(let n)? = fields["name"] { name = n }
        var enabled = false
        if let value = fields["enabled"] {
            guard case .bool(let b) = value else { throw .wrongType(field: "\(id).enabled", expected: "true or false, found \(value.kindName)") }
            enabled = b
        }
        var controls: [String: Float] = [:]
        if let value = fields["controls"] {
            guard case .object(let entries) = value else { throw .wrongType(field: "\(id).controls", expected: "an object") }
            for (symbol, v) in entries {
                guard case .number(let n) = v, n.isFinite else { throw .wrongType(field: "\(id).\(symbol)", expected: "a number, found \(v.kindName)") }
                controls[symbol] = Float(n)
            }
        }
        let state = fields["state"].map { String(decoding: $0.serialized(), as: UTF8.self) }
        let entry = String(decoding: item.serialized(), as: UTF8.self)
        return .saved(id: id, uri: uri, SavedPlugin(name: name, enabled: enabled, controls: controls, state: state, entry: entry))
    }

    public subscript(_ p: Parameter) -> Float {
        get { values[p.rawValue] }
        set { values[p.rawValue] = p.spec.clamp(newValue) }
    }

    /// Sets every parameter of `store` (the chain's smoothing makes the change click-free).
    public func apply(to store: ParameterStore) {
        store.restore(values)
    }

    // MARK: JSON

    /// The `parameters` object: booleans for switches, names for choices, numbers otherwise.
    public var parametersJSON: JSONValue {
        var object: [String: JSONValue] = [:]
        for p in Parameter.allCases {
            let spec = p.spec
            let v = values[p.rawValue]
            switch spec.scale {
            case .toggle: object[spec.id] = .bool(v >= 0.5)
            case .choice(let names): object[spec.id] = .string(names[Int(v)])
            case .linear, .logarithmic: object[spec.id] = .shortest(v)
            }
        }
        return .object(object)
    }

    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "format": .string(Preset.format),
            "version": .number(Double(board.contains { $0.plugin != nil } ? Preset.version : Preset.versionWithoutPlugins)),
            "name": .string(name),
            "chain": .array(board.map { kind in
                guard let entry = kind.plugin?.saved?.entry, let value = try? JSONValue.parse(Data(entry.utf8)) else { return .string(kind.id) }
                return value
            }),
            "parameters": parametersJSON,
        ]
        var saved: [String: JSONValue] = [:]
        for (id, text) in states { if let value = try? JSONValue.parse(Data(text.utf8)) { saved[id] = value } }
        if !saved.isEmpty { object["states"] = .object(saved) }
        return .object(object)
    }

    public func jsonData() -> Data { json.serialized() }

    public init(jsonData data: Data) throws(PresetError) {
        let value: JSONValue
        do { value = try JSONValue.parse(data) } catch {
            throw .notJSON(error.description)
        }
        try self.init(json: value)
    }

    public init(json: JSONValue) throws(PresetError) {
        guard case .object(let top) = json else { throw .wrongType(field: "preset", expected: "an object") }
        guard case .string(let format)? = top["format"] else { throw .missingField("format") }
        guard format == Preset.format else { throw .wrongFormat(found: format, expected: Preset.format) }
        guard case .number(let version)? = top["version"] else { throw .missingField("version") }
        guard version == version.rounded(), version >= 1 else { throw .wrongType(field: "version", expected: "a whole number ≥ 1") }
        // Compared as a Double: a huge version number must not trap converting to Int.
        guard version <= Double(Preset.version) else {
            throw .newerVersion(Int(exactly: version) ?? Int.max, supported: Preset.version)
        }
        guard case .string(let name)? = top["name"] else { throw .missingField("name") }
        self.init(name: name)
        if let chain = top["chain"] {
            guard case .array(let items) = chain else { throw .wrongType(field: "chain", expected: "a list of pedal ids") }
            var kinds: [PedalKind] = []
            for item in items {
                guard case .string(let id) = item else {
                    let plugin = try Preset.plugin(item)
                    guard !PedalKind.isReserved(plugin.id) else { throw .pedal(.reserved(plugin.id)) }
                    kinds.append(plugin)
                    continue
                }
                do { kinds.append(try PedalKind.named(id)) } catch { throw .pedal(error) }
            }
            try setBoard(kinds)
        } else {
            board = PedalKind.classic
        }
        if let saved = top["states"] {
            guard case .object(let entries) = saved else { throw .wrongType(field: "states", expected: "an object of pedal states by pedal id") }
            for (id, value) in entries {
                guard PedalKind(id: id) != nil else { throw .pedal(.unknownPedal(id)) }
                guard case .object = value else { throw .wrongType(field: "states.\(id)", expected: "an object") }
                states[id] = String(decoding: value.serialized(), as: UTF8.self)
            }
        }
        guard let params = top["parameters"] else { return }
        guard case .object(let entries) = params else { throw .wrongType(field: "parameters", expected: "an object") }
        for (id, value) in entries.sorted(by: { $0.key < $1.key }) {
            let p: Parameter
            do { p = try Parameter.named(id) } catch { throw .parameter(error) }
            values[p.rawValue] = try Preset.decode(value, for: p.spec)
        }
    }

    private static func decode(_ value: JSONValue, for spec: ParameterSpec) throws(PresetError) -> Float {
        switch (spec.scale, value) {
        case (.toggle, .bool(let b)):
            return b ? 1 : 0
        case (.toggle, _):
            throw .wrongType(field: spec.id, expected: "true or false, found \(value.kindName)")
        case (.choice, .string(let s)):
            guard let i = spec.choiceIndex(s) else {
                throw .parameter(.badValue(id: spec.id, value: s, expected: spec.choiceWords))
            }
            return Float(i)
        case (.choice(let names), _):
            throw .wrongType(field: spec.id, expected: "one of \(names.joined(separator: ", ")), found \(value.kindName)")
        case (_, .number(let n)):
            let v = Float(n)
            do { try spec.check(v) } catch { throw .parameter(error) }
            return v
        default:
            throw .wrongType(field: spec.id, expected: "a number, found \(value.kindName)")
        }
    }
}

public enum PresetError: Error, Equatable, CustomStringConvertible {
    case notJSON(String)
    case wrongFormat(found: String, expected: String)
    case newerVersion(Int, supported: Int)
    case missingField(String)
    case wrongType(field: String, expected: String)
    case parameter(ParameterError)
    case pedal(PedalError)

    public var description: String {
        switch self {
        case .notJSON(let detail): "not valid JSON (\(detail))"
        case .wrongFormat(let found, let expected): "format is '\(found)', expected '\(expected)'"
        case .newerVersion(let v, let supported):
            "written by a newer Stompbox (version \(v); this one reads up to version \(supported))"
        case .missingField(let field): "the field '\(field)' is missing"
        case .wrongType(let field, let expected): "\(field): expected \(expected)"
        case .parameter(let e): e.description
        case .pedal(let e): e.description
        }
    }
}

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
public struct Preset: Equatable, Sendable {
    public static let format = "stompbox-preset"
    public static let version = 2

    public var name: String
    /// One value per `Parameter`, in table order.
    public private(set) var values: [Float]
    /// The pedals on the board, in signal order.
    public private(set) var board: [PedalKind]

    /// Every parameter at its default, every pedal on the board in the registry's order.
    public init(name: String) {
        self.name = name
        values = Parameter.allCases.map { $0.spec.defaultValue }
        board = PedalKind.builtIn
    }

    /// The store's current values and a board.
    public init(name: String, from store: ParameterStore, board: [PedalKind] = PedalKind.builtIn) {
        self.name = name
        values = store.snapshot()
        self.board = board
    }

    /// Puts `board` in the preset (a pedal twice is an error).
    public mutating func setBoard(_ board: [PedalKind]) throws(PresetError) {
        do { try PedalKind.checkDistinct(board) } catch { throw .pedal(error) }
        self.board = board
    }

    /// True when `store` and `board` are what this preset sets.
    public func matches(_ store: ParameterStore, board: [PedalKind]) -> Bool {
        values == store.snapshot() && self.board == board
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
        .object([
            "format": .string(Preset.format),
            "version": .number(Double(Preset.version)),
            "name": .string(name),
            "chain": .array(board.map { .string($0.id) }),
            "parameters": parametersJSON,
        ])
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
                guard case .string(let id) = item else { throw .wrongType(field: "chain", expected: "a list of pedal ids, found \(item.kindName)") }
                do { kinds.append(try PedalKind.named(id)) } catch { throw .pedal(error) }
            }
            try setBoard(kinds)
        } else {
            board = PedalKind.classic
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
        case (.choice(let names), .string(let s)):
            guard let i = names.firstIndex(of: s) else {
                throw .parameter(.badValue(id: spec.id, value: s, expected: names.joined(separator: ", ")))
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

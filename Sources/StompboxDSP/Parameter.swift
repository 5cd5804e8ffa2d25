import Foundation
import Synchronization

public enum ParameterUnit: String, Sendable {
    case none = ""
    case decibels = "dB"
    case hertz = "Hz"
    case milliseconds = "ms"

    /// The unit's name as a screen reader says it ("milliseconds").
    public var spoken: String {
        switch self {
        case .none: ""
        case .decibels: "decibels"
        case .hertz: "hertz"
        case .milliseconds: "milliseconds"
        }
    }
}

/// How a control maps its travel onto the range, and how values are written.
public enum ParameterScale: Sendable, Equatable {
    case linear
    /// Equal travel multiplies the value by equal ratios (times and rates). Needs min > 0.
    case logarithmic
    /// A switch: 0 is off, 1 is on.
    case toggle
    /// Named positions 0, 1, 2… (stored as their index).
    case choice([String])
}

/// One parameter, described once: the DSP, the CLI `--set`, presets, the GUI and the tests read it.
public struct ParameterSpec: Sendable, Equatable {
    public let id: String
    /// The owning pedal's id (`PedalKind.id`); nil for the master gains.
    public let pedal: String?
    /// Full name for status lines and accessibility ("Delay Time").
    public let name: String
    /// Label printed beside the knob ("Time").
    public let shortName: String
    public let unit: ParameterUnit
    public let minimum: Float
    public let maximum: Float
    public let defaultValue: Float
    public let scale: ParameterScale
    /// For a choice: other names its choices are known by, in the same order (the sync menus'
    /// note values as musicians write them); empty for none.
    public let choiceAliases: [String]

    public init(id: String, pedal: String?, name: String, shortName: String, unit: ParameterUnit,
                minimum: Float, maximum: Float, defaultValue: Float, scale: ParameterScale, choiceAliases: [String] = []) {
        self.id = id
        self.pedal = pedal
        self.name = name
        self.shortName = shortName
        self.unit = unit
        self.minimum = minimum
        self.maximum = maximum
        self.defaultValue = defaultValue
        self.scale = scale
        self.choiceAliases = choiceAliases
    }

    public var isToggle: Bool { scale == .toggle }
    public var choices: [String]? {
        if case .choice(let names) = scale { return names }
        return nil
    }
    /// True for values stored as whole numbers (switches and choices).
    public var isDiscrete: Bool {
        switch scale {
        case .toggle, .choice: true
        case .linear, .logarithmic: false
        }
    }

    /// The nearest legal value (NaN becomes the default).
    public func clamp(_ value: Float) -> Float {
        guard !value.isNaN else { return defaultValue }
        let v = Swift.min(Swift.max(value, minimum), maximum)
        return isDiscrete ? v.rounded() : v
    }

    public func contains(_ value: Float) -> Bool {
        value.isFinite && value >= minimum && value <= maximum
            && (!isDiscrete || value == value.rounded())
    }

    /// Control travel 0…1 for a value (logarithmic parameters travel in ratios).
    public func normalized(_ value: Float) -> Float {
        let v = clamp(value)
        guard maximum > minimum else { return 0 }
        if scale == .logarithmic {
            return log(v / minimum) / log(maximum / minimum)
        }
        return (v - minimum) / (maximum - minimum)
    }

    /// The value at control travel 0…1.
    public func value(normalized t: Float) -> Float {
        let t = Swift.min(Swift.max(t.isFinite ? t : 0, 0), 1)
        if scale == .logarithmic {
            return clamp(minimum * pow(maximum / minimum, t))
        }
        return clamp(minimum + t * (maximum - minimum))
    }

    /// The value as a person reads it: "420 ms", "-6.0 dB", "on", "triangle", "0.50".
    public func format(_ value: Float) -> String {
        let v = clamp(value)
        switch scale {
        case .toggle: return v >= 0.5 ? "on" : "off"
        case .choice(let names): return names[Int(v)]
        case .linear, .logarithmic: break
        }
        let number: String
        switch unit {
        case .milliseconds where v >= 10, .hertz where v >= 100:
            number = String(Int(v.rounded()))
        case .decibels:
            number = formatDecimal(v, places: 1)
        case .hertz, .milliseconds:
            number = formatDecimal(v, places: 2)
        case .none:
            number = formatDecimal(v, places: 2)
        }
        return unit == .none ? number : "\(number) \(unit.rawValue)"
    }

    /// The value as a screen reader says it: "420 milliseconds", "-6.0 decibels", "on".
    public func spokenText(_ value: Float) -> String {
        let written = format(value)
        guard unit != .none, written.hasSuffix(" " + unit.rawValue) else { return written }
        return String(written.dropLast(unit.rawValue.count)) + unit.spoken
    }

    /// Reads a value as the CLI and presets write it: a number, on/off/true/false for switches,
    /// a choice's name (or index). Out-of-range numbers are an error, not clamped.
    public func parse(_ text: String) throws(ParameterError) -> Float {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        switch scale {
        case .toggle:
            switch t {
            case "on", "true", "1", "yes": return 1
            case "off", "false", "0", "no": return 0
            default: throw .badValue(id: id, value: text, expected: "on or off")
            }
        case .choice(let names):
            if let i = choiceIndex(t) { return Float(i) }
            if let i = Int(t), names.indices.contains(i) { return Float(i) }
            throw .badValue(id: id, value: text, expected: choiceWords)
        case .linear, .logarithmic:
            guard let v = Float(t), v.isFinite else {
                throw .badValue(id: id, value: text, expected: "a number")
            }
            try check(v)
            return v
        }
    }

    /// A choice's index from its name or its other name (`choiceAliases`); nil when it is
    /// neither, or this is not a choice.
    public func choiceIndex(_ text: String) -> Int? {
        guard case .choice(let names) = scale else { return nil }
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        return names.firstIndex(of: t) ?? choiceAliases.firstIndex(of: t)
    }

    /// What a choice accepts, for a message.
    public var choiceWords: String {
        guard let names = choices else { return "" }
        return names.joined(separator: ", ") + (choiceAliases.isEmpty ? "" : " (or " + choiceAliases.joined(separator: ", ") + ")")
    }

    /// Throws `outOfRange` naming this parameter when `value` is not legal.
    public func check(_ value: Float) throws(ParameterError) {
        guard contains(value) else {
            throw .outOfRange(id: id, value: value, minimum: minimum, maximum: maximum)
        }
    }
}

public enum ParameterError: Error, Equatable, CustomStringConvertible {
    case unknownID(String)
    case badValue(id: String, value: String, expected: String)
    case outOfRange(id: String, value: Float, minimum: Float, maximum: Float)
    /// A plugin pedal on the board has no control with this key (its port symbol).
    case unknownControl(id: String, plugin: String, controls: [String])

    public var description: String {
        switch self {
        case .unknownID(let id):
            "unknown parameter '\(id)' (see 'stompbox params' for the list)"
        case .unknownControl(let id, let plugin, let controls):
            "unknown parameter '\(id)': the LV2 plugin <\(plugin)> has no control port '\(id.split(separator: ".", maxSplits: 1).last ?? "")'"
                + (controls.isEmpty ? " (it has no controls)" : " (its controls: \(controls.joined(separator: ", ")))")
        case .badValue(let id, let value, let expected):
            "bad value '\(value)' for \(id): expected \(expected)"
        case .outOfRange(let id, let value, let minimum, let maximum):
            "value \(value) for \(id) is out of range \(minimum)…\(maximum)"
        }
    }
}

/// A parameter of the table: the master gains, then each registered pedal's parameters in
/// registry order (`PedalKind.builtIn`). The raw value indexes `ParameterStore`. Each pedal
/// names its own parameters next to its DSP (`Parameter.delayTime` in Delay.swift).
///
/// A plugin pedal's parameters cannot be in the static table: such a `Parameter` names a cell of
/// its kind's `PedalValues` instead (`isInTable` is false), and `ParameterStore` reads and
/// writes that cell. It is valid while its `PedalKind` lives (the chain's board, a render plan or
/// a window's pedal keeps it).
public struct Parameter: Hashable, @unchecked Sendable, CaseIterable, CustomStringConvertible {
    /// Its index in the table; for a plugin pedal's parameter, -1 minus its index in its kind's specs.
    public let rawValue: Int
    /// A plugin pedal's parameter: its cell (read on the audio thread without counting references)
    /// and the values that hold it.
    let cell: UnsafeMutablePointer<Atomic<Float>>?
    private let owner: Unmanaged<PedalValues>?

    public init?(rawValue: Int) {
        guard Parameter.table.indices.contains(rawValue) else { return nil }
        self.rawValue = rawValue
        cell = nil
        owner = nil
    }

    /// The parameter at `index` of a plugin pedal's own values.
    init(_ owner: PedalValues, _ index: Int) {
        rawValue = -1 - index
        cell = owner.cell(at: index)
        self.owner = Unmanaged.passUnretained(owner)
    }

    /// False for a plugin pedal's parameter, which lives in its kind, not in a `ParameterStore`.
    public var isInTable: Bool { cell == nil }

    /// A plugin pedal's parameter's value (nil for a table parameter: that lives in a `ParameterStore`).
    public var pedalValue: Float? { cell?.pointee.load(ordering: .relaxed) }

    /// Sets a plugin pedal's parameter, clamped (a table parameter is set through a `ParameterStore`).
    public func setPedalValue(_ value: Float) {
        precondition(!isInTable, "\(id) lives in a ParameterStore")
        cell!.pointee.store(spec.clamp(value), ordering: .relaxed)
    }

    public static func == (a: Parameter, b: Parameter) -> Bool { a.rawValue == b.rawValue && a.cell == b.cell }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// The table, built once from the master gains and the pedal registry.
    public static let table: [ParameterSpec] = [
        ParameterSpec(id: "master.input_db", pedal: nil, name: "Input Gain", shortName: "Input", unit: .decibels,
                      minimum: -24, maximum: 24, defaultValue: 0, scale: .linear),
        ParameterSpec(id: "master.output_db", pedal: nil, name: "Output Gain", shortName: "Output", unit: .decibels,
                      minimum: -24, maximum: 12, defaultValue: 0, scale: .linear),
    ] + PedalKind.builtIn.flatMap(\.parameterSpecs) + Metronome.specs

    public static let allCases: [Parameter] = table.indices.map { Parameter(index: $0) }

    private init(index: Int) {
        rawValue = index
        cell = nil
        owner = nil
    }

    public static let inputGain = Parameter(index: 0)
    public static let outputGain = Parameter(index: 1)

    public var spec: ParameterSpec {
        guard let owner else { return Parameter.table[rawValue] }
        return owner._withUnsafeGuaranteedRef { $0.specs[-1 - rawValue] }
    }
    public var id: String { spec.id }
    public var description: String { id }

    public init?(id: String) {
        guard let i = Parameter.table.firstIndex(where: { $0.id == id }) else { return nil }
        self.init(index: i)
    }

    /// Looks an id up, throwing an error that names it.
    public static func named(_ id: String) throws(ParameterError) -> Parameter {
        guard let p = Parameter(id: id) else { throw .unknownID(id) }
        return p
    }
}

/// Tremolo LFO shapes, in the order of `tremolo.shape`'s choices.
public enum TremoloShape: Int, CaseIterable, Sendable {
    case sine, triangle, square
    public var name: String {
        switch self {
        case .sine: "sine"
        case .triangle: "triangle"
        case .square: "square"
        }
    }
}

/// A decimal with a fixed number of places, without Foundation's formatters.
func formatDecimal(_ value: Float, places: Int) -> String {
    var scale: Float = 1
    for _ in 0..<places { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    let fraction = Int(scaled) - whole * Int(scale)
    let sign = value < 0 && scaled > 0 ? "-" : ""
    guard places > 0 else { return "\(sign)\(whole)" }
    var digits = String(fraction)
    while digits.count < places { digits = "0" + digits }
    return "\(sign)\(whole).\(digits)"
}

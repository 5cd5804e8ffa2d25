import Foundation

/// The pedals in chain order (master gains stand before and after them).
public enum EffectKind: String, CaseIterable, Sendable {
    case overdrive, eq, flanger, tremolo, delay, reverb, looper

    /// The name printed on the pedal.
    public var displayName: String {
        switch self {
        case .overdrive: "Overdrive"
        case .eq: "EQ"
        case .flanger: "Flanger"
        case .tremolo: "Tremolo"
        case .delay: "Delay"
        case .reverb: "Reverb"
        case .looper: "Looper"
        }
    }

    /// The `<effect>.enabled` switch of this pedal.
    public var enabledParameter: Parameter {
        switch self {
        case .overdrive: .overdriveEnabled
        case .eq: .eqEnabled
        case .flanger: .flangerEnabled
        case .tremolo: .tremoloEnabled
        case .delay: .delayEnabled
        case .reverb: .reverbEnabled
        case .looper: .looperEnabled
        }
    }

    /// The pedal's knobs and sliders (everything but its on/off switch), in table order.
    public var controls: [Parameter] {
        Parameter.allCases.filter { $0.spec.effect == self && $0 != enabledParameter }
    }
}

public enum ParameterUnit: String, Sendable {
    case none = ""
    case decibels = "dB"
    case hertz = "Hz"
    case milliseconds = "ms"
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
    /// The owning pedal; nil for the master gains.
    public let effect: EffectKind?
    /// Full name for status lines and accessibility ("Delay Time").
    public let name: String
    /// Label printed beside the knob ("Time").
    public let shortName: String
    public let unit: ParameterUnit
    public let minimum: Float
    public let maximum: Float
    public let defaultValue: Float
    public let scale: ParameterScale

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
            if let i = names.firstIndex(of: t) { return Float(i) }
            if let i = Int(t), names.indices.contains(i) { return Float(i) }
            throw .badValue(id: id, value: text, expected: names.joined(separator: ", "))
        case .linear, .logarithmic:
            guard let v = Float(t), v.isFinite else {
                throw .badValue(id: id, value: text, expected: "a number")
            }
            try check(v)
            return v
        }
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

    public var description: String {
        switch self {
        case .unknownID(let id):
            "unknown parameter '\(id)' (see 'stompbox params' for the list)"
        case .badValue(let id, let value, let expected):
            "bad value '\(value)' for \(id): expected \(expected)"
        case .outOfRange(let id, let value, let minimum, let maximum):
            "value \(value) for \(id) is out of range \(minimum)…\(maximum)"
        }
    }
}

/// Every parameter of the chain. The raw value indexes `ParameterStore`.
public enum Parameter: Int, CaseIterable, Sendable {
    case inputGain, outputGain
    case overdriveEnabled, overdriveDrive, overdriveTone, overdriveLevel
    case eqEnabled, eqBand1, eqBand2, eqBand3, eqBand4, eqBand5, eqBand6
    case flangerEnabled, flangerRate, flangerDepth, flangerDelay, flangerFeedback, flangerMix
    case tremoloEnabled, tremoloRate, tremoloDepth, tremoloShape
    case delayEnabled, delayTime, delayFeedback, delayMix
    case reverbEnabled, reverbSize, reverbDamping, reverbMix
    case looperEnabled, looperLevel

    /// The table, built once.
    public static let table: [ParameterSpec] = allCases.map { $0.makeSpec() }

    public var spec: ParameterSpec { Parameter.table[rawValue] }
    public var id: String { spec.id }

    public init?(id: String) {
        guard let i = Parameter.table.firstIndex(where: { $0.id == id }) else { return nil }
        self.init(rawValue: i)
    }

    /// Looks an id up, throwing an error that names it.
    public static func named(_ id: String) throws(ParameterError) -> Parameter {
        guard let p = Parameter(id: id) else { throw .unknownID(id) }
        return p
    }

    /// The six EQ bands in order.
    public static let eqBands: [Parameter] = [.eqBand1, .eqBand2, .eqBand3, .eqBand4, .eqBand5, .eqBand6]

    private func makeSpec() -> ParameterSpec {
        func spec(_ id: String, _ effect: EffectKind?, _ name: String, _ short: String,
                  _ unit: ParameterUnit, _ range: ClosedRange<Float>, _ def: Float,
                  _ scale: ParameterScale = .linear) -> ParameterSpec {
            ParameterSpec(id: id, effect: effect, name: name, shortName: short, unit: unit,
                          minimum: range.lowerBound, maximum: range.upperBound,
                          defaultValue: def, scale: scale)
        }
        func enabled(_ e: EffectKind) -> ParameterSpec {
            spec("\(e.rawValue).enabled", e, "\(e.displayName) On", "On", .none, 0...1, 0, .toggle)
        }
        func band(_ n: Int) -> ParameterSpec {
            let hz = Equalizer.bandFrequencies[n - 1]
            let label = hz >= 1000 ? "\(formatDecimal(Float(hz) / 1000, places: hz.truncatingRemainder(dividingBy: 1000) == 0 ? 0 : 1)) kHz" : "\(Int(hz)) Hz"
            return spec("eq.band\(n)_db", .eq, "EQ \(label)", label, .decibels, -12...12, 0)
        }
        switch self {
        case .inputGain: return spec("master.input_db", nil, "Input Gain", "Input", .decibels, -24...24, 0)
        case .outputGain: return spec("master.output_db", nil, "Output Gain", "Output", .decibels, -24...12, 0)

        case .overdriveEnabled: return enabled(.overdrive)
        case .overdriveDrive: return spec("overdrive.drive", .overdrive, "Overdrive Drive", "Drive", .none, 0...1, 0.5)
        case .overdriveTone: return spec("overdrive.tone", .overdrive, "Overdrive Tone", "Tone", .none, 0...1, 0.5)
        case .overdriveLevel: return spec("overdrive.level_db", .overdrive, "Overdrive Level", "Level", .decibels, -24...6, -6)

        case .eqEnabled: return enabled(.eq)
        case .eqBand1: return band(1)
        case .eqBand2: return band(2)
        case .eqBand3: return band(3)
        case .eqBand4: return band(4)
        case .eqBand5: return band(5)
        case .eqBand6: return band(6)

        case .flangerEnabled: return enabled(.flanger)
        case .flangerRate: return spec("flanger.rate_hz", .flanger, "Flanger Rate", "Rate", .hertz, 0.05...5, 0.3, .logarithmic)
        case .flangerDepth: return spec("flanger.depth", .flanger, "Flanger Depth", "Depth", .none, 0...1, 0.7)
        case .flangerDelay: return spec("flanger.delay_ms", .flanger, "Flanger Delay", "Delay", .milliseconds, 0.5...10, 2, .logarithmic)
        case .flangerFeedback: return spec("flanger.feedback", .flanger, "Flanger Feedback", "Feedback", .none, -0.95...0.95, 0.5)
        case .flangerMix: return spec("flanger.mix", .flanger, "Flanger Mix", "Mix", .none, 0...1, 0.5)

        case .tremoloEnabled: return enabled(.tremolo)
        case .tremoloRate: return spec("tremolo.rate_hz", .tremolo, "Tremolo Rate", "Rate", .hertz, 0.5...15, 5, .logarithmic)
        case .tremoloDepth: return spec("tremolo.depth", .tremolo, "Tremolo Depth", "Depth", .none, 0...1, 1)
        case .tremoloShape:
            return spec("tremolo.shape", .tremolo, "Tremolo Shape", "Shape", .none, 0...2, 1,
                        .choice(TremoloShape.allCases.map(\.name)))

        case .delayEnabled: return enabled(.delay)
        case .delayTime: return spec("delay.time_ms", .delay, "Delay Time", "Time", .milliseconds, 20...2000, 350, .logarithmic)
        case .delayFeedback: return spec("delay.feedback", .delay, "Delay Feedback", "Feedback", .none, 0...0.95, 0.4)
        case .delayMix: return spec("delay.mix", .delay, "Delay Mix", "Mix", .none, 0...1, 0.35)

        case .reverbEnabled: return enabled(.reverb)
        case .reverbSize: return spec("reverb.size", .reverb, "Reverb Size", "Size", .none, 0...1, 0.5)
        case .reverbDamping: return spec("reverb.damping", .reverb, "Reverb Damping", "Damping", .none, 0...1, 0.5)
        case .reverbMix: return spec("reverb.mix", .reverb, "Reverb Mix", "Mix", .none, 0...1, 0.3)

        case .looperEnabled: return enabled(.looper)
        case .looperLevel: return spec("looper.level", .looper, "Looper Level", "Level", .none, 0...1, 1)
        }
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

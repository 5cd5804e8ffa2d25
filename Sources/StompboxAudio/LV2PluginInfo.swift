import Foundation

/// What Stompbox knows of one installed LV2 plugin: enough to list it, build its controls and
/// say whether it can be a pedal. Read from the plugin's Turtle data only (nothing is
/// instantiated), so listing is safe whatever the plugin's code does.
public struct LV2PluginInfo: Codable, Equatable, Sendable {
    public var uri: String
    public var name: String
    public var audioInputs: Int
    public var audioOutputs: Int
    /// The control input ports (the knobs), in port order.
    public var controls: [LV2ControlPort]
    /// The plugin saves and restores state beyond its control ports (LV2 state interface).
    public var hasStateInterface: Bool
    /// The plugin schedules work off the audio thread (LV2 worker interface).
    public var usesWorker: Bool
    /// True when Stompbox can run it as a pedal; otherwise `problems` says why.
    public var canHost: Bool
    /// Why it cannot be hosted (empty when `canHost`): a feature or option Stompbox does not
    /// provide, no audio input or output, a required port of a kind it cannot connect.
    public var problems: [String]

    public init(uri: String, name: String, audioInputs: Int, audioOutputs: Int, controls: [LV2ControlPort],
                hasStateInterface: Bool, usesWorker: Bool, problems: [String]) {
        self.uri = uri
        self.name = name
        self.audioInputs = audioInputs
        self.audioOutputs = audioOutputs
        self.controls = controls
        self.hasStateInterface = hasStateInterface
        self.usesWorker = usesWorker
        self.canHost = problems.isEmpty
        self.problems = problems
    }

    /// The control input port with this symbol.
    public func control(_ symbol: String) -> LV2ControlPort? { controls.first { $0.symbol == symbol } }
}

/// One control input port, as its Turtle describes it.
public struct LV2ControlPort: Codable, Equatable, Sendable {
    /// The port's index in the plugin (what `connect_port` takes).
    public var index: Int
    /// The port's symbol: its stable id (presets and `setControl` use it).
    public var symbol: String
    public var name: String
    /// The range as written in the plugin's data (multiplied by the sample rate when the port
    /// has `lv2:sampleRate`; see `isSampleRateRelative`). A port without a range gets 0…1.
    public var minimum: Float
    public var maximum: Float
    /// `lv2:default`, or the value in the range nearest to 0 when the plugin gives none.
    public var defaultValue: Float
    /// The unit's symbol ("dB", "Hz", "ms", "%") when the port names a unit.
    public var unit: String?
    /// `lv2:toggled`: on (≥ 0.5) or off.
    public var isToggle: Bool
    /// `lv2:integer`: whole numbers only.
    public var isInteger: Bool
    /// `pprops:logarithmic`: a knob should move through the range logarithmically.
    public var isLogarithmic: Bool
    /// `lv2:sampleRate`: minimum, maximum and default are fractions of the sample rate.
    public var isSampleRateRelative: Bool
    /// `lv2:enumeration`: only the values of `scalePoints` are meaningful.
    public var isEnumeration: Bool
    /// The labelled values (`lv2:scalePoint`), sorted by value. For an enumeration these are
    /// its choices; otherwise marks on the scale.
    public var scalePoints: [LV2ScalePoint]

    public init(index: Int, symbol: String, name: String, minimum: Float, maximum: Float, defaultValue: Float,
                unit: String? = nil, isToggle: Bool = false, isInteger: Bool = false, isLogarithmic: Bool = false,
                isSampleRateRelative: Bool = false, isEnumeration: Bool = false, scalePoints: [LV2ScalePoint] = []) {
        self.index = index
        self.symbol = symbol
        self.name = name
        self.minimum = minimum
        self.maximum = maximum
        self.defaultValue = defaultValue
        self.unit = unit
        self.isToggle = isToggle
        self.isInteger = isInteger
        self.isLogarithmic = isLogarithmic
        self.isSampleRateRelative = isSampleRateRelative
        self.isEnumeration = isEnumeration
        self.scalePoints = scalePoints
    }

    /// The enumeration's choices as (value, label) pairs; empty unless `isEnumeration`.
    public var enumeration: [(value: Float, label: String)] {
        isEnumeration ? scalePoints.map { ($0.value, $0.label) } : []
    }

    /// The default at `sampleRate` (rate-relative ports scale it).
    public func defaultValue(sampleRate: Double) -> Float {
        clamp(defaultValue * (isSampleRateRelative ? Float(sampleRate) : 1), sampleRate: sampleRate)
    }

    /// `value` brought into the port's range (at `sampleRate` for rate-relative ports), rounded
    /// for integer and enumeration ports and snapped to 0 or 1 for toggles. NaN gives the default.
    public func clamp(_ value: Float, sampleRate: Double) -> Float {
        let scale: Float = isSampleRateRelative ? Float(sampleRate) : 1
        let low = minimum * scale, high = maximum * scale
        guard !value.isNaN else { return min(max(defaultValue * scale, low), high) }
        if isToggle { return value >= 0.5 * (low + high) ? high : low }
        var v = min(max(value, low), high)
        if isInteger || isEnumeration { v = min(max(v.rounded(), low), high) }
        return v
    }

    enum CodingKeys: String, CodingKey {
        case index, symbol, name, minimum, maximum, unit, isToggle, isInteger, isLogarithmic
        case isSampleRateRelative, isEnumeration, scalePoints
        case defaultValue = "default"
    }
}

/// A labelled value of a control port.
public struct LV2ScalePoint: Codable, Equatable, Sendable {
    public var value: Float
    public var label: String

    public init(value: Float, label: String) {
        self.value = value
        self.label = label
    }
}

/// Everything that can go wrong finding, building or driving an LV2 pedal, with the plugin's URI.
public enum LV2Error: Error, Equatable, CustomStringConvertible {
    /// The text is not a URI at all.
    case invalidURI(String)
    /// No installed plugin has this URI.
    case notFound(uri: String)
    /// The LV2 data knows this URI, but as something other than a plugin (a preset, a class…).
    case notAPlugin(uri: String)
    /// The plugin is installed but needs what Stompbox does not provide.
    case cannotHost(uri: String, reasons: [String])
    /// The plugin's own code refused to start (its instantiate returned nothing).
    case instantiationFailed(uri: String)
    /// No control input port with this symbol.
    case unknownControl(uri: String, symbol: String)
    /// A saved state of another plugin.
    case stateOfAnotherPlugin(uri: String, stateURI: String)
    /// The plugin's state save or restore reported a failure (LV2_State_Status).
    case stateFailed(uri: String, operation: String, status: Int)

    public var description: String {
        switch self {
        case .invalidURI(let text): "'\(text)' is not an LV2 plugin URI (it has no scheme such as http: or urn:)"
        case .notFound(let uri): "no LV2 plugin '\(uri)' is installed"
        case .notAPlugin(let uri): "'\(uri)' is in the LV2 data but is not a plugin"
        case .cannotHost(let uri, let reasons): "LV2 plugin '\(uri)' cannot be a pedal: \(reasons.joined(separator: "; "))"
        case .instantiationFailed(let uri): "LV2 plugin '\(uri)' failed to start (its instantiate returned nothing)"
        case .unknownControl(let uri, let symbol): "LV2 plugin '\(uri)' has no control port '\(symbol)'"
        case .stateOfAnotherPlugin(let uri, let stateURI): "the state of '\(stateURI)' cannot be restored into '\(uri)'"
        case .stateFailed(let uri, let operation, let status): "LV2 plugin '\(uri)': state \(operation) failed (status \(status))"
        }
    }
}

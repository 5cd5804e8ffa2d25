import Foundation

/// A kind of pedal, described once: its id and name, its parameters, how to build its DSP,
/// its latency and its face (artwork and control layout). The chain, the window, presets,
/// `params`, `--set`/`--at`, `--chain` and the property tests all read this description.
///
/// Adding a built-in pedal: its DSP file (with its `PedalKind` and `Parameter` names) and one
/// line in `PedalKind.builtIn`, plus its artwork.
public struct PedalKind: Sendable, Hashable, CustomStringConvertible {
    /// Also the prefix of its parameter ids ("delay" → "delay.time_ms") and of its artwork.
    public let id: String
    /// The name printed on the pedal.
    public let name: String
    /// Its parameters, its on/off switch (`<id>.enabled`) first.
    public let parameterSpecs: [ParameterSpec]
    /// Whether switching it on clears its state (no stale echoes); the Looper keeps its loop.
    public let resetsWhenSwitchedOn: Bool
    /// Its trails switch, for a pedal whose output is its input plus its own sound (a delay, a
    /// reverb): while that switch is on, switching the pedal off mutes only what goes into it,
    /// and its echoes or tail ring out.
    public var trailsParameter: Parameter? { trailsKey.map(parameter) }
    private let trailsKey: String?
    /// How many samples its output lags its input, at a sample rate.
    public let latency: @Sendable (Double) -> Double
    public let face: PedalFace
    /// For a plugin pedal: the plugin it stands for (nil for a built-in pedal).
    public let plugin: PluginSource?
    /// For a plugin pedal: the live values of its parameters, which the static table cannot hold.
    /// Each plugin pedal made is a kind of its own, with its own values.
    public let values: PedalValues?
    private let make: @Sendable (EngineControls) -> AudioEffect

    /// `controls` are the pedal's own parameters, without the on/off switch, which every pedal
    /// has. `trails` names the control that is its trails switch (a toggle among `controls`;
    /// only for a pedal without latency whose dry signal passes at unity).
    public init(id: String, name: String, controls: [PedalControl], face: PedalFace,
                resetsWhenSwitchedOn: Bool = true, trails: String? = nil,
                latency: @escaping @Sendable (Double) -> Double = { _ in 0 },
                make: @escaping @Sendable (EngineControls) -> AudioEffect) {
        self.id = id
        self.name = name
        let specs = PedalKind.specs(id: id, name: name, controls: controls)
        precondition(trails.map { key in specs.contains { $0.id == "\(id).\(key)" && $0.scale == .toggle } } ?? true,
                     "\(id): its trails control must be one of its switches")
        parameterSpecs = specs
        self.resetsWhenSwitchedOn = resetsWhenSwitchedOn
        trailsKey = trails
        self.latency = latency
        self.face = face
        plugin = nil
        values = nil
        self.make = make
    }

    /// A plugin pedal: its parameters live in its own `PedalValues` (handed to `make`), its
    /// latency is what its DSP last reported there, and it is laid out as rows of controls.
    /// Switching it on does not clear it: a plugin is cleared only by deactivating and
    /// activating it off the audio thread, which leaves it dry meanwhile (a gap in the effect
    /// each time it is switched on); it resumes where it stopped instead.
    public init(id: String, name: String, controls: [PedalControl], plugin: PluginSource,
                make: @escaping @Sendable (PedalValues) -> AudioEffect) {
        self.id = id
        self.name = name
        let specs = PedalKind.specs(id: id, name: name, controls: controls)
        parameterSpecs = specs
        resetsWhenSwitchedOn = false
        trailsKey = nil
        let values = PedalValues(specs: specs)
        self.values = values
        latency = { _ in values.reportedLatency }
        face = PedalFace.generic(controls: controls.count)
        self.plugin = plugin
        self.make = { _ in make(values) }
    }

    private static func specs(id: String, name: String, controls: [PedalControl]) -> [ParameterSpec] {
        let enabled = ParameterSpec(id: "\(id).enabled", pedal: id, name: "\(name) On", shortName: "On", unit: .none,
                                    minimum: 0, maximum: 1, defaultValue: 0, scale: .toggle)
        return [enabled] + controls.map { $0.spec(pedal: id, pedalName: name) }
    }

    /// The registry: every built-in pedal, in the order of a new board.
    public static let builtIn: [PedalKind] = [.gate, .overdrive, .amp, .neural, .cab, .eq, .flanger, .tremolo, .delay, .reverb, .looper]

    /// The ids no plugin pedal may take: every built-in pedal's and every other prefix of the
    /// parameter table's ids (a plugin pedal's parameters are `<id>.<port>`, so it would shadow
    /// or be shadowed by those), and the tuner's. The one list the window and `--add` check.
    public static let reservedIDs: Set<String> = Set(builtIn.map(\.id) + ["master", "tempo", "metronome", "tuner"])

    /// Whether `id` is taken by Stompbox itself (see `reservedIDs`).
    public static func isReserved(_ id: String) -> Bool { reservedIDs.contains(id) }

    /// The first seven, in their order: the board of a version-1 preset, which knew no others.
    public static let classic: [PedalKind] = [.overdrive, .eq, .flanger, .tremolo, .delay, .reverb, .looper]

    public init?(id: String) {
        guard let kind = PedalKind.builtIn.first(where: { $0.id == id }) else { return nil }
        self = kind
    }

    /// Looks a pedal up by id among the built-in ones and `others` (plugin pedals already made),
    /// throwing an error that names it.
    public static func named(_ id: String, among others: [PedalKind] = []) throws(PedalError) -> PedalKind {
        guard let kind = others.first(where: { $0.id == id }) ?? PedalKind(id: id) else { throw .unknownPedal(id) }
        return kind
    }

    /// A board as the command line writes it: pedal ids separated by commas, in signal order
    /// ("overdrive,delay"; an empty text is an empty board). `others` are plugin pedals it may name.
    public static func board(parsing text: String, among others: [PedalKind] = []) throws(PedalError) -> [PedalKind] {
        let ids = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        if ids == [""] { return [] }
        var board: [PedalKind] = []
        for id in ids { board.append(try named(id, among: others)) }
        try checkDistinct(board)
        return board
    }

    /// Throws `duplicate` naming the first pedal that stands on `board` twice.
    public static func checkDistinct(_ board: [PedalKind]) throws(PedalError) {
        var seen = Set<String>()
        for kind in board where !seen.insert(kind.id).inserted { throw .duplicate(kind.id) }
    }

    /// Throws `notOnBoard` when `parameter` belongs to a pedal that is not on `board`.
    public static func check(_ parameter: Parameter, on board: [PedalKind]) throws(PedalError) {
        guard let pedal = parameter.spec.pedal, !board.contains(where: { $0.id == pedal }) else { return }
        throw .notOnBoard(pedal: pedal, parameter: parameter.id)
    }

    /// A parameter by id: one of the table's, else one of a plugin pedal on `board`. An id of a
    /// plugin pedal that has no such control is an error naming the plugin and its controls.
    public static func parameter(named id: String, on board: [PedalKind]) throws(ParameterError) -> Parameter {
        if let p = Parameter(id: id) { return p }
        for kind in board where kind.values != nil && id.hasPrefix(kind.id + ".") {
            if let p = kind.parameterIfAny(String(id.dropFirst(kind.id.count + 1))) { return p }
            throw .unknownControl(id: id, plugin: kind.plugin?.uri ?? kind.id, controls: kind.parameterSpecs.dropFirst().map(\.id))
        }
        throw .unknownID(id)
    }

    /// A new instance of its DSP (not prepared). Not on the audio thread.
    public func makeEffect(_ controls: EngineControls) -> AudioEffect { make(controls) }

    /// Its `<id>.enabled` switch.
    public var enabledParameter: Parameter { parameter("enabled") }

    /// Every parameter, its switch first, in table order.
    public var parameters: [Parameter] { parameterSpecs.indices.map(parameter(at:)) }

    /// Its knobs, sliders and switches (everything but its on/off switch), in table order.
    public var controls: [Parameter] { Array(parameters.dropFirst()) }

    /// One of its parameters by its own name ("time_ms" for `delay.time_ms`).
    public func parameter(_ key: String) -> Parameter {
        guard let p = parameterIfAny(key) else { preconditionFailure("\(id) has no parameter \(key)") }
        return p
    }

    /// One of its parameters by its own name, or nil.
    public func parameterIfAny(_ key: String) -> Parameter? {
        parameterSpecs.firstIndex { $0.id == "\(id).\(key)" }.map(parameter(at:))
    }

    private func parameter(at index: Int) -> Parameter {
        if let values { return Parameter(values, index) }
        return Parameter(id: parameterSpecs[index].id)!
    }

    /// True for a plugin pedal whose plugin is not installed (or not looked up yet).
    public var isMissing: Bool { plugin?.saved != nil }

    public var description: String { id }
    /// Two live plugin pedals with one id are the same pedal only if they share their values;
    /// two saved ones, if they were saved alike.
    public static func == (a: PedalKind, b: PedalKind) -> Bool {
        a.id == b.id && (a.isMissing || b.isMissing ? a.plugin == b.plugin : a.values === b.values)
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// The LV2 plugin a plugin pedal stands for.
public struct PluginSource: Sendable, Equatable {
    public let uri: String
    /// Set when the pedal does not run the plugin: a preset named it and it is not installed (or
    /// not looked up yet: presets are read below the layer that finds plugins). The pedal then
    /// passes its input through, and saving the preset again writes this back unchanged.
    public let saved: SavedPlugin?

    public init(uri: String, saved: SavedPlugin? = nil) {
        self.uri = uri
        self.saved = saved
    }
}

/// A plugin pedal as a preset stores it.
public struct SavedPlugin: Sendable, Equatable {
    /// The plugin's name when it was saved (shown while it is missing).
    public var name: String
    public var enabled: Bool
    /// Control values by port symbol.
    public var controls: [String: Float]
    /// The plugin's own state (JSON text), if it has one.
    public var state: String?
    /// The preset's whole entry for the pedal, verbatim (JSON text).
    public var entry: String

    public init(name: String, enabled: Bool, controls: [String: Float], state: String?, entry: String) {
        self.name = name
        self.enabled = enabled
        self.controls = controls
        self.state = state
        self.entry = entry
    }
}

extension PedalKind {
    /// A plugin pedal as a preset saved it, not running its plugin (see `PluginSource.saved`):
    /// no controls, its input passed through, its switch as saved.
    public static func saved(id: String, uri: String, _ saved: SavedPlugin) -> PedalKind {
        let kind = PedalKind(id: id, name: saved.name, controls: [], plugin: PluginSource(uri: uri, saved: saved)) { _ in PassThrough() }
        kind.enabledParameter.setPedalValue(saved.enabled ? 1 : 0)
        return kind
    }
}

/// One control of a pedal, as its DSP file declares it; the full `ParameterSpec` adds the
/// pedal's id and name ("time_ms", "Time" → `delay.time_ms`, "Delay Time").
public struct PedalControl: Sendable {
    public let key: String
    public let shortName: String
    public let unit: ParameterUnit
    public let range: ClosedRange<Float>
    public let defaultValue: Float
    public let scale: ParameterScale
    /// The full name, when it is not "<pedal name> <short name>".
    public let name: String?
    /// A choice's other names (`ParameterSpec.choiceAliases`).
    public let choiceAliases: [String]

    public init(_ key: String, _ shortName: String, _ unit: ParameterUnit = .none, _ range: ClosedRange<Float>,
                default defaultValue: Float, _ scale: ParameterScale = .linear, name: String? = nil, choiceAliases: [String] = []) {
        self.key = key
        self.shortName = shortName
        self.unit = unit
        self.range = range
        self.defaultValue = defaultValue
        self.scale = scale
        self.name = name
        self.choiceAliases = choiceAliases
    }

    func spec(pedal: String, pedalName: String) -> ParameterSpec {
        ParameterSpec(id: "\(pedal).\(key)", pedal: pedal, name: name ?? "\(pedalName) \(shortName)", shortName: shortName,
                      unit: unit, minimum: range.lowerBound, maximum: range.upperBound, defaultValue: defaultValue, scale: scale,
                      choiceAliases: choiceAliases)
    }
}

public enum PedalError: Error, Equatable, CustomStringConvertible {
    case unknownPedal(String)
    case duplicate(String)
    /// A plugin pedal named with an id that a built-in pedal or a parameter prefix owns.
    case reserved(String)
    case notOnBoard(pedal: String, parameter: String)

    public var description: String {
        switch self {
        case .unknownPedal(let id):
            "unknown pedal '\(id)' (the pedals are \(PedalKind.builtIn.map(\.id).joined(separator: ", ")))"
        case .duplicate(let id): "the pedal '\(id)' is on the board twice"
        case .reserved(let id): "the plugin pedal's id '\(id)' is reserved (a built-in pedal's id or a parameter prefix)"
        case .notOnBoard(let pedal, let parameter): "\(parameter) belongs to \(pedal), which is not on the board (see --chain)"
        }
    }
}


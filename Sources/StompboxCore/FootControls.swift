import Foundation
import StompboxDSP

/// What a footswitch does: a key typed by a USB or Bluetooth pedal, or a MIDI message.
///
/// Written in `controls.json` as short words: `preset:1`…`preset:3`, `preset:next`,
/// `preset:previous`, `looper:tap`, `looper:<gesture>` (`record_next`, `undo`, `redo`, `clear`:
/// the selected loop track's, `record_next` the first empty one's), `pedal:selected`, `pedal:<id>` (a pedal on or off),
/// `board:<n>` (the n-th pedal on the board, from 1), `tuner`, `tempo:tap`, `metronome`,
/// `param:<parameter id>` (a knob, for a MIDI controller's knob or expression pedal).
public enum FootAction: Hashable, Sendable, CustomStringConvertible {
    case preset(Int)
    case nextPreset
    case previousPreset
    case looperTap
    /// A Looper gesture other than the tap (`LooperAction`).
    case looper(LooperAction)
    case selectedPedal
    case pedal(String)
    case boardPosition(Int)
    case tuner
    case tapTempo
    case metronome
    case parameter(String)

    public init(parsing text: String) throws(FootControlsError) {
        let word = text.trimmingCharacters(in: .whitespaces)
        let parts = word.split(separator: ":", maxSplits: 1).map(String.init)
        switch (parts.first ?? "", parts.count > 1 ? parts[1] : nil) {
        case ("preset", "next"): self = .nextPreset
        case ("preset", "previous"): self = .previousPreset
        case ("preset", let n?) where Int(n).map({ (1...PresetBank.slotCount).contains($0) }) == true: self = .preset(Int(n)!)
        case ("looper", "tap"): self = .looperTap
        case ("looper", let g?) where LooperAction(rawValue: g) != nil: self = .looper(LooperAction(rawValue: g)!)
        case ("pedal", "selected"): self = .selectedPedal
        case ("pedal", let id?) where !id.isEmpty: self = .pedal(id)
        case ("board", let n?) where (Int(n) ?? 0) >= 1: self = .boardPosition(Int(n)!)
        case ("tuner", nil): self = .tuner
        case ("tempo", "tap"): self = .tapTempo
        case ("metronome", nil): self = .metronome
        case ("param", let id?) where !id.isEmpty: self = .parameter(id)
        default: throw .badAction(text)
        }
    }

    public var description: String {
        switch self {
        case .preset(let n): "preset:\(n)"
        case .nextPreset: "preset:next"
        case .previousPreset: "preset:previous"
        case .looperTap: "looper:tap"
        case .looper(let gesture): "looper:\(gesture.rawValue)"
        case .selectedPedal: "pedal:selected"
        case .pedal(let id): "pedal:\(id)"
        case .boardPosition(let n): "board:\(n)"
        case .tuner: "tuner"
        case .tapTempo: "tempo:tap"
        case .metronome: "metronome"
        case .parameter(let id): "param:\(id)"
        }
    }
}

/// A MIDI channel message, as the controls read it (channels 1…16).
public enum MIDIMessage: Equatable, Sendable {
    case programChange(channel: Int, program: Int)
    case controlChange(channel: Int, controller: Int, value: Int)
    case noteOn(channel: Int, note: Int, velocity: Int)
    case noteOff(channel: Int, note: Int)

    /// One complete message (status byte first, as JACK MIDI and raw MIDI deliver them); nil for
    /// what the controls do not use (clock, sysex, pitch bend, …) and for malformed bytes.
    public init?(bytes: UnsafeBufferPointer<UInt8>) {
        guard let status = bytes.first, status & 0x80 != 0, status < 0xF0 else { return nil }
        let channel = Int(status & 0x0F) + 1
        func data(_ i: Int) -> Int? { i < bytes.count && bytes[i] < 0x80 ? Int(bytes[i]) : nil }
        switch status & 0xF0 {
        case 0xC0:
            guard let program = data(1) else { return nil }
            self = .programChange(channel: channel, program: program)
        case 0xB0:
            guard let controller = data(1), let value = data(2) else { return nil }
            self = .controlChange(channel: channel, controller: controller, value: value)
        case 0x90:
            guard let note = data(1), let velocity = data(2) else { return nil }
            self = velocity == 0 ? .noteOff(channel: channel, note: note) : .noteOn(channel: channel, note: note, velocity: velocity)
        case 0x80:
            guard let note = data(1), data(2) != nil else { return nil }
            self = .noteOff(channel: channel, note: note)
        default:
            return nil
        }
    }

    public init?(bytes: [UInt8]) {
        guard let m = bytes.withUnsafeBufferPointer({ MIDIMessage(bytes: $0) }) else { return nil }
        self = m
    }

    /// The trigger it matches in a mapping (on its channel), and what it says: a press
    /// (program change, note on) or a level 0…127 (a controller); a note off says nothing.
    public var trigger: MIDITrigger {
        switch self {
        case .programChange(let c, let p): MIDITrigger(.programChange, p, channel: c)
        case .controlChange(let c, let n, _): MIDITrigger(.controlChange, n, channel: c)
        case .noteOn(let c, let n, _), .noteOff(let c, let n): MIDITrigger(.note, n, channel: c)
        }
    }

    public var input: FootInput? {
        switch self {
        case .programChange, .noteOn: .press
        case .controlChange(_, _, let value): .level(value)
        case .noteOff: nil
        }
    }
}

/// What arrives with an action: a press (a key, a program change, a note), or a controller's
/// level 0…127 (a switch sends 127 and 0, a knob or expression pedal anything between).
public enum FootInput: Equatable, Sendable {
    case press
    case level(Int)
}

/// A MIDI message a mapping listens for: `pc 0`, `cc 80`, `note 60`, each optionally on one
/// channel (`cc 80 ch 2`); without a channel, any.
public struct MIDITrigger: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable { case programChange = "pc", controlChange = "cc", note }
    public let kind: Kind
    public let number: Int
    public let channel: Int?

    public init(_ kind: Kind, _ number: Int, channel: Int? = nil) {
        self.kind = kind
        self.number = number
        self.channel = channel
    }

    public init(parsing text: String) throws(FootControlsError) {
        let words = text.split(separator: " ").map(String.init)
        guard words.count == 2 || (words.count == 4 && words[2] == "ch"),
              let kind = Kind(rawValue: words[0]), let number = Int(words[1]), (0...127).contains(number) else {
            throw .badMIDI(text)
        }
        var channel: Int?
        if words.count == 4 {
            guard let c = Int(words[3]), (1...16).contains(c) else { throw .badMIDI(text) }
            channel = c
        }
        self.init(kind, number, channel: channel)
    }

    public var description: String { "\(kind.rawValue) \(number)" + (channel.map { " ch \($0)" } ?? "") }

    /// True when `other` (a received message's trigger, with its channel) matches this one.
    public func matches(_ other: MIDITrigger) -> Bool {
        kind == other.kind && number == other.number && (channel == nil || channel == other.channel)
    }
}

public enum FootControlsError: Error, Equatable, Sendable, CustomStringConvertible {
    case badAction(String)
    case badMIDI(String)
    case badKey(String)
    case badFile(String)

    public var description: String {
        switch self {
        case .badAction(let a): "'\(a)' is not an action (use preset:1-3, preset:next, preset:previous, looper:tap, looper:record_next, looper:undo, looper:redo, looper:clear, pedal:selected, pedal:<id>, board:<n>, tuner, tempo:tap, metronome or param:<id>)"
        case .badMIDI(let m): "'\(m)' is not a MIDI message (use pc N, cc N or note N with N 0-127, optionally followed by ch 1-16)"
        case .badKey(let k): "'\(k)' is not a key name"
        case .badFile(let why): why
        }
    }
}

/// The footswitch bindings: keys (by their X key names, as `xev` and GDK print them: `1`,
/// `Page_Up`, `space`, `Return`) and MIDI messages, each to an action. Kept in
/// `$XDG_CONFIG_HOME/stompbox/controls.json`:
///
///     {"version": 1,
///      "keys": [{"key": "1", "action": "preset:1"}, …],
///      "midi": [{"message": "pc 0", "action": "preset:1"}, {"message": "cc 80", "action": "board:1"}, …]}
///
/// An entry this version cannot read (a typo in an action) is kept as written, said once, and
/// otherwise ignored; a file that is not JSON at all is moved aside and the defaults are used.
public struct FootControls: Equatable, Sendable {
    public struct Binding<Trigger: Hashable & Sendable>: Equatable, Sendable {
        public var trigger: Trigger
        public var action: FootAction
    }

    public var keys: [Binding<String>]
    public var midi: [Binding<MIDITrigger>]
    /// Entries kept as written that this version could not read, and why.
    public private(set) var unreadable: [(section: String, entry: JSONValue, problem: String)] = []

    public static func == (a: FootControls, b: FootControls) -> Bool {
        a.keys == b.keys && a.midi == b.midi && a.unreadable.map(\.entry) == b.unreadable.map(\.entry)
    }

    public init(keys: [Binding<String>], midi: [Binding<MIDITrigger>]) {
        self.keys = keys
        self.midi = midi
    }

    /// The defaults: keys 1/2/3 play presets 1/2/3, Page Up/Down step through them, Space taps
    /// the Looper, B switches the selected pedal, T opens the tuner, Enter taps the tempo;
    /// Program Change 0/1/2 plays presets 1/2/3 and CC 80…86 switch the board's first seven pedals.
    public static let defaults = FootControls(
        keys: [("1", FootAction.preset(1)), ("2", .preset(2)), ("3", .preset(3)),
               ("Page_Up", .previousPreset), ("Page_Down", .nextPreset), ("space", .looperTap),
               ("b", .selectedPedal), ("t", .tuner), ("Return", .tapTempo)].map { Binding(trigger: $0.0, action: $0.1) },
        midi: (0..<3).map { Binding(trigger: MIDITrigger(.programChange, $0), action: .preset($0 + 1)) }
            + (0..<7).map { Binding(trigger: MIDITrigger(.controlChange, 80 + $0), action: .boardPosition($0 + 1)) })

    /// The action of a key (its X name). A letter matches in either case, so Shift or Caps
    /// Lock does not change what a pedal that types "b" does; keypad Enter is Return.
    public func action(forKey name: String) -> FootAction? {
        let key = name == "KP_Enter" ? "Return" : name
        if let hit = keys.first(where: { $0.trigger == key }) { return hit.action }
        guard key.count == 1 else { return nil }
        return keys.first { $0.trigger.count == 1 && $0.trigger.lowercased() == key.lowercased() }?.action
    }

    /// The actions a MIDI message triggers, with what it says.
    public func actions(for message: MIDIMessage) -> [(action: FootAction, input: FootInput)] {
        guard let input = message.input else { return [] }
        let trigger = message.trigger
        return midi.filter { $0.trigger.matches(trigger) }.map { ($0.action, input) }
    }

    /// MIDI learn: `trigger` now does `action` (whatever it did before is replaced; the
    /// action's other triggers stay).
    public mutating func learn(_ trigger: MIDITrigger, for action: FootAction) {
        midi.removeAll { $0.trigger == trigger || trigger.matches($0.trigger) }
        midi.append(Binding(trigger: trigger, action: action))
    }

    /// Key learn: the key `name` now does `action` (what it did before is replaced; the
    /// action's other keys stay).
    public mutating func learnKey(_ name: String, for action: FootAction) {
        keys.removeAll { $0.trigger == name }
        keys.append(Binding(trigger: name, action: action))
    }

    /// The keys bound to `action`.
    public func keys(for action: FootAction) -> [String] {
        keys.filter { $0.action == action }.map(\.trigger)
    }

    /// Removes every MIDI message bound to `action`.
    public mutating func forget(_ action: FootAction) {
        midi.removeAll { $0.action == action }
    }

    /// The triggers bound to `action`.
    public func triggers(for action: FootAction) -> [MIDITrigger] {
        midi.filter { $0.action == action }.map(\.trigger)
    }

    // MARK: The file

    public init(jsonData data: Data) throws(FootControlsError) {
        let root: JSONValue
        do { root = try JSONValue.parse(data) } catch { throw .badFile("it is not JSON: \(error)") }
        guard case .object(let object) = root else { throw .badFile("it is \(root.kindName), not an object") }
        if let version = object["version"], version != .number(1) {
            throw .badFile("it is version \(version), this Stompbox reads version 1")
        }
        keys = []
        midi = []
        func entries(_ name: String) throws(FootControlsError) -> [JSONValue] {
            guard let list = object[name] else { return [] }
            guard case .array(let items) = list else { throw .badFile("\"\(name)\" is \(list.kindName), not a list") }
            return items
        }
        for entry in try entries("keys") {
            do throws(FootControlsError) {
                guard case .object(let o) = entry, case .string(let key)? = o["key"], !key.isEmpty,
                      case .string(let action)? = o["action"] else { throw .badFile("a key entry needs \"key\" and \"action\"") }
                keys.append(Binding(trigger: key, action: try FootAction(parsing: action)))
            } catch {
                unreadable.append(("keys", entry, error.description))
            }
        }
        for entry in try entries("midi") {
            do throws(FootControlsError) {
                guard case .object(let o) = entry, case .string(let message)? = o["message"],
                      case .string(let action)? = o["action"] else { throw .badFile("a MIDI entry needs \"message\" and \"action\"") }
                midi.append(Binding(trigger: try MIDITrigger(parsing: message), action: try FootAction(parsing: action)))
            } catch {
                unreadable.append(("midi", entry, error.description))
            }
        }
    }

    public func jsonData() -> Data {
        let keyEntries = keys.map { JSONValue.object(["key": .string($0.trigger), "action": .string($0.action.description)]) }
        let midiEntries = midi.map { JSONValue.object(["message": .string($0.trigger.description), "action": .string($0.action.description)]) }
        func kept(_ section: String) -> [JSONValue] { unreadable.filter { $0.section == section }.map(\.entry) }
        let object: [String: JSONValue] = [
            "version": .number(1),
            "keys": .array(keyEntries + kept("keys")),
            "midi": .array(midiEntries + kept("midi")),
        ]
        return JSONValue.object(object).serialized()
    }
}

/// `controls.json` in the config folder: read at start (defaults when it is missing), written
/// atomically when a mapping is learned. A file that cannot be read at all is moved aside
/// (`controls.json.corrupt-<date>`) and said; entries it cannot read are said and kept.
public final class FootControlsFile {
    public static let fileName = "controls.json"
    public let url: URL
    public private(set) var controls: FootControls
    /// Problems found on reading, one sentence each, for the window's notice or stderr.
    public private(set) var notices: [String] = []

    public init(directories: UserDirectories = UserDirectories()) {
        url = directories.config.appendingPathComponent(FootControlsFile.fileName)
        controls = .defaults
        let data: Data?
        do { data = try SafeFile.read(url) } catch {
            notices.append("The foot controls in \(url.path) cannot be read (\(error)); the default keys and MIDI messages are used.")
            return
        }
        guard let data else { return }
        do {
            controls = try FootControls(jsonData: data)
            for (_, _, problem) in controls.unreadable {
                notices.append("An entry of \(url.path) is ignored: \(problem).")
            }
        } catch {
            let moved = try? SafeFile.moveAside(url, tag: "corrupt")
            notices.append("The foot controls in \(url.path) could not be used (\(error))"
                + (moved.map { "; the file was moved to \($0.path)" } ?? "")
                + "; the default keys and MIDI messages are used.")
        }
    }

    /// Learns a mapping and writes the file.
    public func learn(_ trigger: MIDITrigger, for action: FootAction) throws(FileError) {
        try change { $0.learn(trigger, for: action) }
    }

    /// Binds a key and writes the file.
    public func learnKey(_ name: String, for action: FootAction) throws(FileError) {
        try change { $0.learnKey(name, for: action) }
    }

    /// Forgets the MIDI messages bound to an action and writes the file.
    public func forget(_ action: FootAction) throws(FileError) {
        try change { $0.forget(action) }
    }

    /// Writes the changed bindings atomically (the previous file kept as `.bak`), then uses them.
    private func change(_ body: (inout FootControls) -> Void) throws(FileError) {
        var next = controls
        body(&next)
        try SafeFile.write(next.jsonData(), to: url, backup: true)
        controls = next
    }
}

/// Carries out the actions that need only the engine: pedals on and off, knobs, the Looper's
/// footswitch, the tempo and the metronome. What belongs to the caller (presets, the tuner) it
/// hands back. The window and `stompbox run` share it.
public final class FootControlDispatcher {
    private let controls: EngineControls
    private let board: () -> [PedalKind]
    private let tapTempo = TapTempo()
    private let clock: () -> Double
    /// The pedal `pedal:selected` switches (the window's last touched pedal).
    public var selectedPedal: () -> PedalKind? = { nil }
    /// A pedal the store keeps locked is never switched on; this runs instead.
    public var isLocked: (PedalKind) -> Bool = { _ in false }
    public var onLocked: ((PedalKind) -> Void)?
    /// Controller levels last seen per action, so a switch's 127 acts once per press.
    private var lastLevels: [FootAction: Int] = [:]
    /// When each action's controller last rose to 64 or above, and the actions whose controller
    /// has shown itself momentary (see `switchMove`).
    private var lastRises: [FootAction: Double] = [:]
    private var momentary: Set<FootAction> = []
    /// A controller that falls back below 64 sooner than this after rising is a momentary
    /// footswitch's release, not a second press of a latching one.
    public static let releaseWithin = 0.6

    public init(controls: EngineControls, board: @escaping () -> [PedalKind],
                clock: @escaping () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.controls = controls
        self.board = board
        self.clock = clock
    }

    /// Does `action`; returns it when it is the caller's to do (preset and tuner actions).
    @discardableResult
    public func perform(_ action: FootAction, _ input: FootInput = .press) -> FootAction? {
        var pressed = true
        // What a switch does: a press toggles it.
        var move = SwitchMove.toggle
        if case .level(let v) = input {
            let before = lastLevels[action] ?? 0
            lastLevels[action] = v
            pressed = v >= 64 && before < 64
            move = switchMove(action, level: v, before: before)
        }
        switch action {
        case .preset, .nextPreset, .previousPreset, .tuner:
            return pressed ? action : nil
        case .looperTap:
            if pressed { tapLooper() }
        case .looper(let gesture):
            if pressed { tapLooper(gesture) }
        case .tapTempo:
            if pressed, let bpm = tapTempo.tap(at: clock()) { controls.parameters.set(.tempo, Float(bpm)) }
        case .metronome:
            switchParameter(.metronomeEnabled, move)
        case .selectedPedal:
            if let kind = selectedPedal() { switchPedal(kind, move) }
        case .pedal(let id):
            if let kind = board().first(where: { $0.id == id }) { switchPedal(kind, move) }
        case .boardPosition(let n):
            let kinds = board()
            if n >= 1 && n <= kinds.count { switchPedal(kinds[n - 1], move) }
        case .parameter(let id):
            guard let p = parameter(id) else { return nil }
            if case .level(let v) = input {
                controls.parameters.set(p, p.spec.value(normalized: Float(v) / 127))
            } else if p.spec.isDiscrete {
                // A press steps a switch or a menu to its next choice.
                let next = controls.parameters.load(p) + 1
                controls.parameters.set(p, next > p.spec.maximum ? p.spec.minimum : next)
            }
        }
        return nil
    }

    /// The parameter with `id`, on the board's pedals or global (tempo, gains, metronome).
    public func parameter(_ id: String) -> Parameter? {
        for kind in board() { if let p = kind.parameters.first(where: { $0.id == id }) { return p } }
        return Parameter(id: id)
    }

    /// What a controller's level does to a switch. A latching footswitch sends 127 on one press
    /// and 0 on the next: the level is the state. A momentary one sends 127 while held and 0 on
    /// release: each press toggles, and a release does nothing. Which kind a controller is shows when it falls back within
    /// `releaseWithin` of rising (a foot's press); from then on its rises toggle, until it
    /// stays up longer (a latching switch again).
    private func switchMove(_ action: FootAction, level v: Int, before: Int) -> SwitchMove {
        let now = clock()
        if v >= 64 && before < 64 {
            lastRises[action] = now
            return momentary.contains(action) ? .toggle : .set(true)
        }
        if v < 64 && before >= 64, let rise = lastRises[action] {
            if now - rise < FootControlDispatcher.releaseWithin {
                momentary.insert(action)
                return .stay
            }
            momentary.remove(action)
            return .set(false)
        }
        // No edge (the same side again, or a first level): a latching switch's state.
        return momentary.contains(action) ? .stay : .set(v >= 64)
    }

    private enum SwitchMove {
        case toggle, set(Bool), stay
    }

    /// Where `move` takes a switch that stands at `on`, or nil for nowhere.
    private static func target(_ move: SwitchMove, from on: Bool) -> Bool? {
        switch move {
        case .toggle: !on
        case .set(let value): value
        case .stay: nil
        }
    }

    private func switchPedal(_ kind: PedalKind, _ move: SwitchMove) {
        let p = kind.enabledParameter
        guard let on = FootControlDispatcher.target(move, from: controls.parameters.isOn(p)) else { return }
        if on && isLocked(kind) { onLocked?(kind); return }
        controls.parameters.set(p, on ? 1 : 0)
    }

    private func switchParameter(_ p: Parameter, _ move: SwitchMove) {
        guard let on = FootControlDispatcher.target(move, from: controls.parameters.isOn(p)) else { return }
        controls.parameters.set(p, on ? 1 : 0)
    }

    private func tapLooper(_ gesture: LooperAction = .tap) {
        guard let looper = board().first(where: { $0 == .looper }) else { return }
        if isLocked(looper) { onLocked?(looper); return }
        // The looper has to be in the chain to be heard; a gesture that records switches it in.
        if gesture == .tap || gesture == .recordNext, !controls.parameters.isOn(.looperEnabled) {
            controls.parameters.set(.looperEnabled, 1)
        }
        controls.looper.send(gesture)
    }
}

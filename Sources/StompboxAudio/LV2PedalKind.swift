import Foundation
import StompboxDSP
import Synchronization

extension PedalKind {
    /// An installed LV2 plugin as pedal `id` (switched off; `--add` and "Add pedal…" switch it
    /// on). Its parameters are `<id>.enabled` and one `<id>.<port symbol>` per control input
    /// port, described from the port's properties: a toggle (0 or 1) is a switch, an enumeration of the
    /// values 0, 1, 2… is a choice (a switch or a menu), anything else a knob (logarithmic when
    /// the port says so). Rate-relative ranges are given at 48 kHz (the pedal clamps again at its
    /// own rate). The plugin is started once here, so a plugin that refuses to start is an error
    /// naming it now, not a silent pass-through later; that first instance is the pedal's.
    /// `state` (from `LV2Pedal.stateJSON()`) restores the plugin's own properties. Not on the audio thread.
    public static func lv2(id: String, uri: String, state: String? = nil, world: LV2World = .shared) throws(LV2Error) -> PedalKind {
        let info = try world.plugin(uri: uri)
        guard info.canHost else { throw .cannotHost(uri: info.uri, reasons: info.problems) }
        let first = FirstInstance()
        let kind = PedalKind(id: id, name: info.name, controls: info.controls.map(PedalControl.init(port:)),
                             plugin: PluginSource(uri: info.uri)) { values in
            if let pedal = first.take() { return pedal }
            guard let pedal = try? LV2Pedal(uri: uri, sampleRate: 48_000, maximumBlockSize: 512, world: world, values: values) else {
                return PassThrough()
            }
            if let state { try? pedal.restoreProperties(json: state) }
            return pedal
        }
        let pedal = try LV2Pedal(uri: uri, sampleRate: 48_000, maximumBlockSize: 512, world: world, values: kind.values)
        if let state { try pedal.restoreProperties(json: state) }
        first.put(pedal)
        return kind
    }

    /// `board` with each plugin pedal a preset named (`PluginSource.saved`) looked up and made
    /// live, its switch, controls and state as saved. One that is not installed or cannot start
    /// stays on the board as it was (passing its input through, its entry kept for saving), and
    /// a notice names it and its URI. Not on the audio thread. The LV2 world (every installed
    /// plugin's description, 10 ms and more to read) is loaded only when the board has a plugin.
    public static func resolvingPlugins(_ board: [PedalKind], world: @autoclosure () -> LV2World = .shared) -> (board: [PedalKind], notices: [String]) {
        var notices: [String] = []
        let resolved = board.map { kind -> PedalKind in
            guard let uri = kind.plugin?.uri, let saved = kind.plugin?.saved else { return kind }
            do throws(LV2Error) {
                let live = try lv2(id: kind.id, uri: uri, state: saved.state, world: world())
                live.enabledParameter.setPedalValue(saved.enabled ? 1 : 0)
                for (symbol, value) in saved.controls { live.parameterIfAny(symbol)?.setPedalValue(value) }
                return live
            } catch {
                notices.append("pedal '\(kind.id)' is missing and bypassed: \(error.description)")
                return kind
            }
        }
        return (resolved, notices)
    }
}

/// The instance a plugin pedal's kind made to check that the plugin starts, handed to the
/// chain the first time it asks.
private final class FirstInstance: Sendable {
    private let pedal = Mutex<LV2Pedal?>(nil)
    func put(_ p: LV2Pedal) { pedal.withLock { $0 = p } }
    func take() -> LV2Pedal? { pedal.withLock { p in defer { p = nil }; return p } }
}

extension PedalControl {
    /// A control input port as a pedal's control (see `PedalKind.lv2`).
    init(port: LV2ControlPort) {
        let rate: Float = port.isSampleRateRelative ? 48_000 : 1
        let low = port.minimum * rate, high = port.maximum * rate
        let choices = port.enumeration
        let scale: ParameterScale
        if port.isToggle, low == 0, high == 1 {
            scale = .toggle
        } else if !choices.isEmpty, choices.enumerated().allSatisfy({ Float($0.offset) == $0.element.value }),
                  low == 0, high == Float(choices.count - 1) {
            scale = .choice(choices.map(\.label))
        } else if port.isLogarithmic, low > 0 {
            scale = .logarithmic
        } else {
            scale = .linear
        }
        let unit = ParameterUnit(rawValue: port.unit ?? "") ?? .none
        // The label beside a knob is short: the port's symbol when its name is long (the full
        // name is the parameter's name, for the readout and accessibility).
        let label = port.name.count <= 10 || port.symbol.count >= port.name.count ? port.name : port.symbol
        self.init(port.symbol, label, unit, low...max(low, high), default: port.defaultValue(sampleRate: 48_000), scale,
                  name: port.name)
    }
}

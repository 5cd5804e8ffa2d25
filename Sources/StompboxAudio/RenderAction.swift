import Foundation
import StompboxDSP

/// `ID=VALUE`: one parameter set to one value, as `--set` and `--at` write it.
public struct ParameterAssignment: Equatable, Sendable, CustomStringConvertible {
    public var parameter: Parameter
    /// Already checked against the parameter's range (never clamped silently).
    public var value: Float

    public init(_ parameter: Parameter, _ value: Float) {
        self.parameter = parameter
        self.value = value
    }

    /// Parses `delay.time_ms=500`, `reverb.enabled=on`, `tremolo.shape=square`; with `board`, also
    /// the parameters of its plugin pedals (`fil.gain=3`).
    public init(parsing text: String, board: [PedalKind] = []) throws(RenderActionError) {
        guard let eq = text.firstIndex(of: "=") else { throw .notAnAssignment(text) }
        let id = text[..<eq].trimmingCharacters(in: .whitespaces)
        let valueText = String(text[text.index(after: eq)...])
        do throws(ParameterError) {
            let p = try PedalKind.parameter(named: id, on: board)
            guard !valueText.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw .badValue(id: id, value: valueText, expected: RenderActionError.expectation(for: p.spec))
            }
            self.init(p, try p.spec.parse(valueText))
        } catch {
            throw .parameter(error)
        }
    }

    public var description: String { "\(parameter.id)=\(parameter.spec.format(value))" }
}

/// What `--at` can do: set a parameter, press the looper's pedal, or tap the tempo.
public enum RenderActionKind: Equatable, Sendable {
    case set(ParameterAssignment)
    case looper(LooperAction)
    /// A tap of tap tempo (`tempo.tap`): from the second tap, `tempo.bpm` follows the taps.
    case tempoTap
}

/// `SECONDS:ACTION` — an action at a time in the render, e.g. `2.5:looper.tap`,
/// `4:delay.time_ms=500`, `6:reverb.enabled=on`.
public struct RenderAction: Equatable, Sendable, CustomStringConvertible {
    /// Seconds from the start of the input, ≥ 0.
    public var time: Double
    public var kind: RenderActionKind

    public init(time: Double, _ kind: RenderActionKind) {
        precondition(time.isFinite && time >= 0)
        self.time = time
        self.kind = kind
    }

    /// With `board`, its plugin pedals' parameters can be set too.
    public init(parsing text: String, board: [PedalKind] = []) throws(RenderActionError) {
        guard let colon = text.firstIndex(of: ":") else { throw .notAnAction(text) }
        let timeText = text[..<colon].trimmingCharacters(in: .whitespaces)
        let actionText = String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        guard let time = Double(timeText), time.isFinite else { throw .badTime(text) }
        guard time >= 0 else { throw .negativeTime(text) }
        if actionText == "tempo.tap" {
            self.init(time: time, .tempoTap)
        } else if actionText.hasPrefix("looper."), !actionText.contains("=") {
            let name = String(actionText.dropFirst("looper.".count))
            guard let action = LooperAction(rawValue: name) else { throw .unknownAction(actionText) }
            self.init(time: time, .looper(action))
        } else if actionText.contains("=") {
            self.init(time: time, .set(try ParameterAssignment(parsing: actionText, board: board)))
        } else {
            throw .unknownAction(actionText)
        }
    }

    /// The first sample the action applies to at `sampleRate`.
    public func sampleIndex(sampleRate: Double) -> Int {
        Int((time * sampleRate).rounded())
    }

    public var description: String {
        switch kind {
        case .set(let a): "\(formatSeconds(time)):\(a)"
        case .looper(let action): "\(formatSeconds(time)):looper.\(action.rawValue)"
        case .tempoTap: "\(formatSeconds(time)):tempo.tap"
        }
    }
}

public enum RenderActionError: Error, Equatable, CustomStringConvertible {
    case notAnAssignment(String)
    case notAnAction(String)
    case badTime(String)
    case negativeTime(String)
    case unknownAction(String)
    case parameter(ParameterError)

    public var description: String {
        switch self {
        case .notAnAssignment(let text):
            "'\(text)' is not ID=VALUE (for example delay.time_ms=500; see 'stompbox params')"
        case .notAnAction(let text):
            "'\(text)' is not SECONDS:ACTION (for example 2.5:looper.tap or 4:delay.time_ms=500)"
        case .badTime(let text):
            "'\(text)': the time before ':' must be a number of seconds"
        case .negativeTime(let text):
            "'\(text)': the time must not be negative"
        case .unknownAction(let action):
            "unknown action '\(action)': use ID=VALUE, looper.tap, looper.hold, looper.undo, looper.redo, looper.clear or looper.record_next"
        case .parameter(let e): e.description
        }
    }

    static func expectation(for spec: ParameterSpec) -> String {
        switch spec.scale {
        case .toggle: "on or off"
        case .choice(let names): names.joined(separator: ", ")
        case .linear, .logarithmic: "a number"
        }
    }
}

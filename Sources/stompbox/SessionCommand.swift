import ArgumentParser
import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP
import StompboxSession

/// `stompbox session …`: session files (`NAME.stompsession`) from the command line.
struct SessionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Makes, reads, adds to, re-amps and mixes down session files.",
        discussion: """
            A session file (NAME.stompsession) is one ZIP file to mail or share: session.json and \
            the tracks' audio (FLAC, 24-bit). Each track keeps its author, where it starts, its \
            gain, pan and mute, and the board it was played through. Saving keeps every earlier \
            track's audio byte for byte; a damaged or unsafe file is refused whole. \
            'stompbox render IN OUT --session S' saves a render as a session.
            """,
        subcommands: [SessionNewCommand.self, SessionInfoCommand.self, SessionAddCommand.self,
                      SessionMixdownCommand.self, SessionReampCommand.self, SessionRecoverCommand.self])
}

/// What the session commands share: one line for every failure, as `render` does.
enum SessionCLI {
    static func open(_ path: String) -> Session {
        do { return try Session.open(path) } catch { fail(error.description) }
    }

    static func save(_ session: Session) {
        do { try session.save() } catch { fail(error.description) }
    }

    /// A number option, or one line naming the mistake.
    static func number(_ text: String?, option: String, default value: Double, in range: ClosedRange<Double>) -> Double {
        guard let text else { return value }
        guard let n = Double(text.trimmingCharacters(in: .whitespaces)), n.isFinite else {
            fail("\(option) '\(text)' is not a number")
        }
        guard range.contains(n) else { fail("\(option) must be \(formatted(range.lowerBound))…\(formatted(range.upperBound)) (got \(text))") }
        return n
    }

    static func whole(_ text: String?, option: String, default value: Int, in range: ClosedRange<Int>) -> Int {
        guard let text else { return value }
        guard let n = Int(text.trimmingCharacters(in: .whitespaces)) else { fail("\(option) '\(text)' is not a whole number") }
        guard range.contains(n) else { fail("\(option) must be \(range.lowerBound)…\(range.upperBound) (got \(text))") }
        return n
    }

    static func formatted(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e15 ? String(Int(x)) : String(x)
    }

    /// The plan as a track records it: a preset (board, every parameter, the pedals' states), so
    /// the track can be played through it again.
    static func board(of plan: RenderPlan) -> JSONValue {
        var preset = Preset(name: "session")
        for p in Parameter.allCases { preset[p] = plan.parameters[p.rawValue] }
        do { try preset.setBoard(plan.board, states: plan.states) } catch { fail(error.description) }
        return preset.json
    }

    /// True for anything at the path, a dangling link included.
    static func exists(_ path: String) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: path)) != nil
    }

    /// Who made a track when the command does not say: the login name.
    static var defaultAuthor: String {
        let name = ProcessInfo.processInfo.environment["USER"] ?? ""
        return name.isEmpty ? "unknown" : name
    }
}

extension SessionCLI {
    /// `--format`: how a new track's audio is stored.
    static func audioFormat(_ text: String?) -> SessionAudioFormat {
        guard let text else { return .flac }
        guard let f = SessionAudioFormat(rawValue: text.trimmingCharacters(in: .whitespaces)) else {
            fail("--format must be \(SessionAudioFormat.allCases.map(\.rawValue).joined(separator: " or ")) (got '\(text)')")
        }
        return f
    }
}

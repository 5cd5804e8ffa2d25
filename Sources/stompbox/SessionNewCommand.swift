import ArgumentParser
import Foundation
import StompboxDSP
import StompboxSession

/// `stompbox session new S [--rate HZ] [--tempo BPM]`
struct SessionNewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new", abstract: "Makes an empty session file (an existing file is left as it is).")

    @Argument(help: "The session file to make (NAME.stompsession).")
    var session: String

    @Option(name: .long, help: ArgumentHelp("Its sample rate (default 48000).", valueName: "hz"))
    var rate: String?

    @Option(name: .long, help: ArgumentHelp("Its tempo (default \(SessionNewCommand.defaultTempo)).", valueName: "bpm"))
    var tempo: String?

    static let defaultTempo = Int(Parameter.tempo.spec.defaultValue)

    func run() throws {
        let r = SessionCLI.whole(rate, option: "--rate", default: 48_000, in: SessionManifest.sampleRates)
        let t = SessionCLI.number(tempo, option: "--tempo", default: Double(Self.defaultTempo), in: SessionManifest.tempos)
        let made: Session
        do { made = try Session(path: session, sampleRate: r, tempoBPM: t) } catch { fail(error.description) }
        // Never over an existing file: a session holds work that is not elsewhere.
        if SessionCLI.exists(session) { fail(SessionError(path: session, .exists).description) }
        SessionCLI.save(made)
        print("wrote \(session): \(r) Hz, \(SessionCLI.formatted(t)) BPM, no tracks")
    }
}

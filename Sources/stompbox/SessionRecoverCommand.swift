import ArgumentParser
import Foundation
import StompboxDSP
import StompboxSession

/// `stompbox session recover S`
struct SessionRecoverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Saves into S a recording that 'run --record S' left unsaved (killed, or the machine lost power).",
        discussion: "The recording waits in S.recording/ beside the session; its audio reads up to the last half second before the run ended. 'run --record S' does this by itself before it records again.")

    @Argument(help: "The session file the recording was made for.")
    var session: String

    @Option(help: ArgumentHelp("How the tracks are stored: flac (24-bit) or wav-float.", valueName: "flac|wav-float"))
    var format: String?

    func run() throws {
        guard SessionRecording.isPending(session) else {
            fail("no recording waits for '\(session)' (no '\(SessionRecording.folder(for: session))')")
        }
        do {
            let packed = try SessionRecording.pack(into: session, tempoBPM: Double(Parameter.tempo.spec.defaultValue), board: nil,
                                                   format: SessionCLI.audioFormat(format))
            print("saved \(String(format: "%.1f", packed.seconds)) s\(packed.recovered ? " (a recording that was not stopped)" : "") into '\(session)': \(packed.tracks.map(\.id).joined(separator: ", "))")
        } catch {
            fail("\(error.description); the recording is left in '\(SessionRecording.folder(for: session))'")
        }
    }
}

import ArgumentParser
import StompboxAudio
import StompboxSession

/// `stompbox session add S FILE --author NAME [--start FRAME] [--gain-db G] [--pan P]`
struct SessionAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Adds an audio file to a session as an import track.",
        discussion: "A file at another sample rate is resampled to the session's. The session is saved only when the track was added.")

    @Argument(help: "The session file.")
    var session: String

    @Argument(help: "The audio file to add (any format libsndfile reads).")
    var file: String

    @Option(name: .long, help: ArgumentHelp("Who made it.", valueName: "name"))
    var author: String

    @Option(name: .long, help: ArgumentHelp("Where it starts in the session, in frames at the session's rate (default 0).", valueName: "frame"))
    var start: String?

    @Option(name: .customLong("gain-db"), parsing: .unconditional, help: ArgumentHelp("Its gain in the mix, in dB (default 0).", valueName: "db"))
    var gainDB: String?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Its place in the mix, -1 (left) to 1 (right) (default 0).", valueName: "pan"))
    var pan: String?

    @Option(name: .long, help: ArgumentHelp("How its audio is stored: flac (24-bit, default) or wav-float.", valueName: "format"))
    var format: String?

    func run() throws {
        let s = SessionCLI.open(session)
        let startFrame = SessionCLI.whole(start, option: "--start", default: 0, in: 0...SessionTrack.maximumFrames)
        let gain = SessionCLI.number(gainDB, option: "--gain-db", default: 0, in: SessionTrack.gains)
        let place = SessionCLI.number(pan, option: "--pan", default: 0, in: SessionTrack.pans)
        let storage = SessionCLI.audioFormat(format)
        let audio: AudioBuffer
        do { audio = try AudioFile.read(file) } catch { fail("cannot add to session '\(session)': \(error.description)") }
        let track: SessionTrack
        do {
            track = try s.addTrack(audio, kind: .import, author: author, start: startFrame, gainDB: gain, pan: place, format: storage)
        } catch { fail(error.description) }
        SessionCLI.save(s)
        print("added \(track.id) to \(session): \(track.frames) frames, \(track.channels) ch"
              + (audio.sampleRate == s.manifest.sampleRate ? "" : " (resampled from \(audio.sampleRate) Hz)"))
    }
}

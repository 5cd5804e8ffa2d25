import Foundation
import StompboxAudio
import StompboxCore
import StompboxSession

/// `render --session S`: the session the render is saved in, opened (or begun) before the render
/// so a session that cannot take it fails before any audio is made.
struct RenderSession {
    let session: Session

    /// A new session takes IN's rate and the plan's tempo.
    init(path: String, input: String, tempo: Double) throws(CommandLineError) {
        let rate: Int
        do { rate = try AudioFileReader(path: input).sampleRate } catch { throw CommandLineError(error.description) }
        if SessionCLI.exists(path) {
            do { session = try Session.open(path) } catch { throw CommandLineError(error.description) }
            // The DI must keep its samples to be re-amped into the same wet track: no resampling.
            guard session.manifest.sampleRate == rate else {
                throw CommandLineError("session '\(path)' is at \(session.manifest.sampleRate) Hz and '\(input)' at \(rate) Hz; render into a session at \(rate) Hz")
            }
        } else {
            do { session = try Session(path: path, sampleRate: rate, tempoBPM: tempo) } catch { throw CommandLineError(error.description) }
        }
    }

    /// Adds IN as a `di` track (muted, so the mix plays what the board made of it) and OUT as a
    /// `wet` track, both with the board and `--at` actions they were played through, and saves.
    ///
    /// The Looper's scripted tracks (`--at T:looper.…`) are not saved as `loop` tracks yet: they
    /// are heard in OUT only. Each one can be read after the render (`Looper.trackAudio`) and
    /// belongs here as a `loop` track.
    func save(input: String, output: String, plan: RenderPlan, actions: [String], author: String) throws(CommandLineError) {
        let board = SessionCLI.board(of: plan)
        do {
            let dry = try AudioFile.read(input)
            let wet = try AudioFile.read(output)
            try session.addTrack(dry, kind: .di, author: author, mute: true, board: board, actions: actions)
            try session.addTrack(wet, kind: .wet, author: author, board: board, actions: actions)
            try session.save()
        } catch let error as SessionError {
            throw CommandLineError(error.description)
        } catch let error as AudioFileError {
            throw CommandLineError(error.description)
        } catch {
            throw CommandLineError("\(error)")
        }
    }
}

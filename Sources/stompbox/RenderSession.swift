import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP
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

    /// The Looper's tracks as the render left them, with their mix settings and the cycle.
    struct Loops {
        var tracks: [(audio: LoopTrackAudio, gainDB: Double, pan: Double, mute: Bool)] = []
        var cycleFrames = 0

        init() {}

        init(of chain: Chain) {
            let p = chain.parameters
            for t in 0..<LooperControl.trackCount {
                guard let audio = chain.looperTrackAudio(t) else { continue }
                tracks.append((audio, Double(p.load(.looperTrackGain(t))), Double(p.load(.looperTrackPan(t))), p.isOn(.looperTrackMute(t))))
            }
            cycleFrames = tracks.isEmpty ? 0 : chain.controls.looper.cycle
        }
    }

    /// Adds IN as a `di` track (muted, so the mix plays what the board made of it), OUT as a
    /// `wet` track, and each loop track the scripted Looper made (`--at T:looper.…`) as a `loop`
    /// track starting where it started in IN, all with the board and `--at` actions they were
    /// played through, and saves. A `loop` track is saved muted, as the DI is: OUT holds the
    /// loops already, and the mix plays OUT; unmuting a loop (with OUT's loops re-amped away, or
    /// for a stem) is the player's choice.
    func save(input: String, output: String, plan: RenderPlan, actions: [String], author: String,
              loops: Loops = Loops()) throws(CommandLineError) {
        let board = SessionCLI.board(of: plan)
        do {
            let dry = try AudioFile.read(input)
            let wet = try AudioFile.read(output)
            try session.addTrack(dry, kind: .di, author: author, mute: true, board: board, actions: actions)
            try session.addTrack(wet, kind: .wet, author: author, board: board, actions: actions)
            for loop in loops.tracks {
                try session.addTrack(AudioBuffer(loop: loop.audio, sampleRate: dry.sampleRate),
                                     kind: .loop, author: author, start: loop.audio.start, gainDB: loop.gainDB, pan: loop.pan,
                                     mute: true, board: board, actions: actions)
            }
            if loops.cycleFrames > 0 && session.cycleFrames == 0 { session.cycleFrames = loops.cycleFrames }
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

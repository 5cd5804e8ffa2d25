import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP
import StompboxSession

/// `run --record S`: records the dry input and the board's output from the moment the live
/// loop runs until it stops, into `S.recording/`, and packs that into the session `S` (with
/// the Looper's loop tracks) when it stops. A recording left by a killed run is packed first.
final class RunRecording {
    let path: String
    let author: String
    let format: SessionAudioFormat
    private(set) var recorder: Recorder?
    /// The session as it was when the run began (nil: made by the take); its tracks play along.
    private var session: Session?
    private var clockAtStart = 0
    private var reported: String?

    /// Checks the session (a damaged one is refused before anything plays) and recovers a
    /// recording a killed run left.
    init(path: String, author: String, format: SessionAudioFormat, tempoBPM: Double) throws(CommandLineError) {
        self.path = path
        self.author = author
        self.format = format
        if SessionRecording.isPending(path) {
            do {
                let packed = try SessionRecording.pack(into: path, tempoBPM: tempoBPM, board: nil, format: format)
                warn("a recording of \(String(format: "%.1f", packed.seconds)) s left in '\(SessionRecording.folder(for: path))' by an earlier run was saved into '\(path)' first")
            } catch {
                throw CommandLineError("\(error.description) (the earlier recording in '\(SessionRecording.folder(for: path))' is left as it is)")
            }
        }
        if SessionCLI.exists(path) {
            do { session = try Session.open(path) } catch { throw CommandLineError(error.description) }
        }
    }

    /// Starts once the engine runs.
    func start(engine: LiveEngine) throws(CommandLineError) {
        guard recorder == nil else { return }
        clockAtStart = engine.chain.controls.looper.clock
        do {
            let r = try SessionRecording.begin(path: path, session: session, engine: engine, author: author)
            recorder = r
            warn("recording into '\(path)' (until stopped)" + (r.playsAlong ? ", its tracks playing along" : ""))
        } catch {
            throw CommandLineError(error.description)
        }
        // Packing opens the file again; the copy here is not needed any more.
        session = nil
    }

    /// ` recording_s=S` for the status line, and the reason once, if the recording stopped itself.
    func statusField() -> String {
        guard let recorder else { return "" }
        let s = recorder.status
        if let problem = s.problem, problem != reported {
            warn(problem)
            reported = problem
        }
        return " recording_s=\(String(format: "%.1f", s.seconds)) recording_dropped=\(s.droppedFrames)"
    }

    /// Finishes the files, stops the engine and packs the files with the Looper's tracks.
    func finish(engine: LiveEngine, board: JSONValue?) {
        guard recorder != nil else { return }
        let status = engine.stopRecording()
        if let problem = status?.problem, problem != reported { warn(problem) }
        // The loops are read with no audio thread running.
        engine.stop()
        let chain = engine.chain
        var loops: [LoopTrackAudio] = [], gains: [(gainDB: Double, pan: Double, mute: Bool)] = []
        for t in 0..<LooperControl.trackCount {
            guard let loop = chain.looperTrackAudio(t) else { continue }
            let p = chain.parameters
            loops.append(loop)
            gains.append((Double(p.load(.looperTrackGain(t))), Double(p.load(.looperTrackPan(t))), p.isOn(.looperTrackMute(t))))
        }
        do {
            let packed = try SessionRecording.pack(into: path, tempoBPM: Double(chain.parameters.load(.tempo)), board: board,
                                                   loops: loops, loopGains: gains, clockAtStart: clockAtStart,
                                                   cycleFrames: loops.isEmpty ? 0 : chain.controls.looper.cycle, format: format)
            print("recorded \(String(format: "%.1f", packed.seconds)) s into '\(path)': \(packed.tracks.map(\.id).joined(separator: ", "))")
        } catch {
            warn("\(error.description); the recording is kept in '\(SessionRecording.folder(for: path))' and is saved into the session by the next 'stompbox run --record \(path)' or 'stompbox session recover \(path)'")
        }
        recorder = nil
    }
}

import CGtk
import Foundation
import StompboxAudio
import StompboxDSP
import StompboxSession

/// The Record button: the dry input and the board's output recorded into the session file, as
/// `run --record` does. The Looper's tracks go into the file with Save, as always in the window.
extension TracksPanel {
    /// Starts (`start`) or stops recording; returns whether a recording runs afterwards. The
    /// session is saved first (Save as… when it has no file yet), so its edits are not lost when
    /// the recording is added to the file and the file shown again.
    func liveRecord(_ start: Bool) -> Bool {
        if !start {
            finishRecording()
            return false
        }
        guard engine.recorder == nil else { return true }
        if !sessionHasFile || unsaved {
            // Recording starts once the save is done (the button shows it then).
            saveSession(asNew: !sessionHasFile) { [unowned self] in
                if sessionHasFile, !unsaved, beginTake() { showRecording(true) }
            }
            return false
        }
        return beginTake()
    }

    /// Starts the take into the saved session (packing one an earlier run left first).
    private func beginTake() -> Bool {
        guard let path = session?.path else { return false }
        if SessionRecording.isPending(path) {
            do {
                let packed = try SessionRecording.pack(into: path, tempoBPM: Double(store.load(.tempo)), board: nil)
                say("A recording of \(String(format: "%.1f", packed.seconds)) s left by an earlier run was saved into the session first.")
                reopen(path)
            } catch {
                say("\(error.description); the earlier recording in \(SessionRecording.folder(for: path)) is left as it is.", error: true)
                return false
            }
        }
        do {
            let recorder = try SessionRecording.begin(path: path, session: session, engine: engine, author: Self.author)
            say("Recording into \(URL(fileURLWithPath: path).lastPathComponent)…" + (recorder.playsAlong ? " Its tracks play along." : ""))
            return true
        } catch {
            say(error.description, error: true)
            return false
        }
    }

    /// Called about ten times a second: a recording the disk stopped shows as stopped, with why.
    func pollRecording() {
        guard let recorder = engine.recorder else { return }
        let status = recorder.status
        if !status.isRecording, let problem = status.problem {
            finishRecording(problem: problem)
        }
    }

    /// Stops the recorder and adds what it recorded to the file (on a worker thread: a long take
    /// takes a while to encode), then shows the file again; `problem` is why it stopped by itself.
    private func finishRecording(problem: String? = nil) {
        guard engine.recorder != nil, let path = session?.path else { return }
        let status = engine.stopRecording()
        let board = SessionRecording.board(of: engine.chain), tempo = Double(store.load(.tempo))
        let lost = status?.droppedFrames ?? 0
        let before = problem.map { $0 + " " } ?? ""
        showRecording(false)
        runJob(before + "Saving the take into \(URL(fileURLWithPath: path).lastPathComponent)…", { () throws -> (SessionRecording.Packed, Session) in
            let packed = try SessionRecording.pack(into: path, tempoBPM: tempo, board: board)
            return (packed, try Session.open(path))
        }) { [unowned self] result in
            switch result {
            case .success(let (packed, opened)):
                show(opened)
                say(before + "Recorded \(String(format: "%.1f", packed.seconds)) s: \(packed.tracks.map(\.id).joined(separator: ", "))."
                    + (lost > 0 ? " \(lost) frames were lost: the disk was too slow." : ""), error: problem != nil)
            case .failure(let error):
                say(before + Self.describe(error) + "; the recording is kept in \(SessionRecording.folder(for: path)).", error: true)
            }
        }
    }

    private func reopen(_ path: String) {
        do {
            show(try Session.open(path))
        } catch {
            say(error.description, error: true)
        }
    }
}

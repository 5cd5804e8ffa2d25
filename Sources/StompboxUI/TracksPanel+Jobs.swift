import CGtk
import Foundation
import Synchronization

/// The panel's file work (open, save, packing a take, reading an audio file) runs on a worker
/// thread, one job at a time, so the window keeps drawing and the pedals keep answering while a
/// long session is written. Meanwhile the panel's buttons and session rows are insensitive (the
/// session is the job's alone) and the message says what runs; `poll` hands the outcome back on
/// the GTK thread.
extension TracksPanel {
    /// Runs `work` on a worker thread; `done` gets its value or error on the GTK thread.
    func runJob<T>(_ what: String, _ work: @escaping () throws -> T, done: @escaping (Result<T, any Error>) -> Void) {
        guard !jobRunning else { return }
        jobRunning = true
        showBusy(true)
        say(what)
        let box = JobWork(work)
        jobDone = { outcome in done(outcome.map { $0 as! T }) }
        let inbox = jobOutcome
        PanelFileWork.group.enter()
        Thread.detachNewThread {
            let outcome = box.run()
            inbox.put(JobOutcome(result: outcome))
            PanelFileWork.group.leave()
        }
    }

    /// From `poll`: a finished job's outcome goes to its `done`.
    func pollJob() {
        guard jobRunning, let outcome = jobOutcome.take() else { return }
        jobRunning = false
        showBusy(false)
        let done = jobDone
        jobDone = nil
        done?(outcome.result)
    }

    private func showBusy(_ busy: Bool) {
        for button in [openButton, saveButton, saveAsButton, addButton] { gtk_widget_set_sensitive(button, busy ? 0 : 1) }
        gtk_widget_set_sensitive(recordButton, busy || record == nil ? 0 : 1)
        gtk_widget_set_sensitive(sessionRowsBox, busy ? 0 : 1)
    }
}

/// Waits for the panel's file work, so a save or a take being packed when the window closes is
/// finished before the process ends; but a disk that does not answer does not keep the program
/// from ending (a save goes to a temporary file, so the file it replaces is left whole).
public enum PanelFileWork {
    static let group = DispatchGroup()
    /// Returns false when the work was still running after `seconds`.
    public static func wait(seconds: Double = 60) -> Bool { group.wait(timeout: .now() + seconds) == .success }
}

/// A job's work, handed to its thread: the panel touches nothing the job holds until it is done.
final class JobWork: @unchecked Sendable {
    private let work: () throws -> Any
    init<T>(_ work: @escaping () throws -> T) { self.work = { try work() } }
    func run() -> Result<Any, any Error> { Result { try work() } }
}

/// Where a job's thread leaves its outcome for the GTK thread.
final class JobInbox: Sendable {
    private let outcome = Mutex<JobOutcome?>(nil)
    func put(_ value: JobOutcome) { outcome.withLock { $0 = value } }
    func take() -> JobOutcome? { outcome.withLock { o in defer { o = nil }; return o } }
}

struct JobOutcome: @unchecked Sendable {
    var result: Result<Any, any Error>
}

/// A job's failure told in the panel's words.
struct PanelMessage: Error {
    var text: String
}

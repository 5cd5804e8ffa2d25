import Foundation
import Synchronization

extension LiveEngine {
    /// Starts feeding `recorder` the dry input and the board's output of every block, from the
    /// next block on. A recorder already running is finished first. Not the audio thread.
    public func startRecording(_ recorder: Recorder) {
        _ = stopRecording()
        heldRecorder.withLock { held in
            held = recorder
            recorderAddress.store(Int(bitPattern: Unmanaged.passUnretained(recorder).toOpaque()), ordering: .releasing)
        }
    }

    /// The recorder being fed, if any.
    public var recorder: Recorder? { heldRecorder.withLock { $0 } }

    /// Stops feeding the recorder, finishes it (its files closed and complete) and returns its
    /// last status; nil when none ran. Not the audio thread; waits for the block in progress
    /// (at most 200 ms when no audio runs) and for the disk (see `Recorder.finish`).
    @discardableResult
    public func stopRecording() -> RecordingStatus? {
        let recorder = heldRecorder.withLock { held -> Recorder? in
            let r = held
            recorderAddress.store(0, ordering: .releasing)
            return r
        }
        guard let recorder else { return nil }
        // Two blocks: the one that may have loaded the address before it was cleared has ended.
        let first = blocksPlayed.load(ordering: .acquiring)
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(200)
        while blocksPlayed.load(ordering: .acquiring) - first < 2 && clock.now < deadline {
            Thread.sleep(forTimeInterval: 0.001)
        }
        let status = recorder.finish()
        heldRecorder.withLock { if $0 === recorder { $0 = nil } }
        return status
    }
}

import CAudioShim
import Foundation
import Synchronization

/// What a recording is doing, for a status line or the window. Any thread.
public struct RecordingStatus: Sendable, Equatable {
    public var isRecording: Bool
    /// Seconds on disk so far.
    public var seconds: Double
    /// Frames the writer could not take in time (the ring was full), 0 in a good recording.
    public var droppedFrames: Int
    /// Why the recording stopped by itself (the disk filled, a file could not be written).
    public var problem: String?
}

/// The files a recording leaves in its folder.
public enum RecordingFolder {
    /// The dry input, mono, 32-bit float (re-amping needs its samples as they were).
    public static let di = "di.wav"
    /// The board's output, stereo, 32-bit float.
    public static let wet = "wet.wav"
    /// `{"format":"stompbox-recording","sample_rate":…,"frames":…,"author":…,"complete":…}`,
    /// rewritten (by rename) about twice a second.
    public static let manifest = "recording.json"
}

/// Records the dry input and the board's output of the live loop to a folder, until `finish`.
///
/// The audio thread only copies each block into a lock-free ring (`RecorderRing`, ten seconds
/// deep); a writer thread empties it into two WAV files (RF64 past 4 GB) and, twice a second,
/// updates their headers and the folder's manifest. So a disk that stalls for seconds costs no
/// dropout and no frame, and a process killed at any moment leaves files that read up to the
/// last half second. A disk that fills stops the recording with a message and keeps all that
/// was written; the audio plays on.
public final class Recorder: @unchecked Sendable {
    public let folder: String
    public let sampleRate: Int
    public let author: String
    /// The largest block the audio thread hands over whole (bigger ones are split).
    static let maximumBlock = 4096

    let ring: RecorderRing
    /// The block's dry input, copied before the chain overwrites it (audio thread).
    private let dryScratch: UnsafeMutablePointer<Float>
    private var dryFrames = 0
    private let accepting = Atomic<Bool>(true)
    private let stopRequested = Atomic<Bool>(false)
    private let framesWritten = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)
    private let problem = Mutex<String?>(nil)
    private let writerDone = DispatchSemaphore(value: 0)
    private var di: AudioFileWriter?
    private var wet: AudioFileWriter?
    /// What plays along (a session's mix), from the take's first frame on: made ahead by the
    /// writer thread into a ring the audio thread plays from.
    private let backing: BackingRing?
    /// The engine's latency in frames when the take began: the player hears the backing this
    /// much late, so what they play is this much late against it (`SessionRecording` trims it).
    public let latencyFrames: Int

    /// Creates `folder` and its files and starts the writer. A folder that exists is refused:
    /// it may hold an earlier recording not yet saved. `backing` (interleaved stereo, at
    /// `sampleRate`) plays along from the first frame; `latencyFrames` is noted for the take to
    /// be put in time with it.
    public convenience init(folder: String, sampleRate: Int, author: String, ringSeconds: Double = 10,
                            backing: [Float]?, latencyFrames: Int = 0) throws(AudioFileError) {
        try self.init(folder: folder, sampleRate: sampleRate, author: author, ringSeconds: ringSeconds,
                      backingSource: backing.flatMap { $0.count >= 2 ? ArrayBacking($0) : nil }, latencyFrames: latencyFrames)
    }

    /// As above, the backing made a block at a time by `backingSource` (on the writer thread,
    /// `backingSeconds` ahead of the audio thread; the first of it before this returns).
    public init(folder: String, sampleRate: Int, author: String, ringSeconds: Double = 10,
                backingSource: BackingSource? = nil, backingSeconds: Double = 10, latencyFrames: Int = 0) throws(AudioFileError) {
        self.folder = folder
        self.sampleRate = sampleRate
        self.author = author
        self.latencyFrames = max(0, latencyFrames)
        guard !FileManager.default.fileExists(atPath: folder) else {
            throw .unwritable(path: folder, reason: "a recording is already there (an earlier one not saved into its session)")
        }
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false) } catch {
            throw .unwritable(path: folder, reason: (error as NSError).localizedDescription)
        }
        if let backingSource, backingSource.frames > 0 {
            let ring = BackingRing(backingSource, capacity: Int(backingSeconds * Double(sampleRate)))
            ring.fill()
            backing = ring
        } else {
            backing = nil
        }
        ring = RecorderRing(channels: 3, capacity: max(Recorder.maximumBlock * 4, Int(ringSeconds * Double(sampleRate))))
        dryScratch = .allocate(capacity: Recorder.maximumBlock)
        dryScratch.initialize(repeating: 0, count: Recorder.maximumBlock)
        do {
            di = try AudioFileWriter(path: folder + "/" + RecordingFolder.di, format: .wav, sampleRate: sampleRate,
                                     channels: 1, samples: .float32, large: true)
            wet = try AudioFileWriter(path: folder + "/" + RecordingFolder.wet, format: .wav, sampleRate: sampleRate,
                                      channels: 2, samples: .float32, large: true)
            try writeManifest(complete: false)
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
        let thread = Thread { [self] in
            stompbox_name_thread("stompbox-record")
            writeLoop()
        }
        thread.start()
    }

    // The writer thread holds the recorder until it ends, so this runs after it (or when the
    // files could not be made and no writer started).
    deinit {
        dryScratch.deallocate()
    }

    // MARK: Audio thread

    /// The block's input, before the chain plays it (audio thread: copies only).
    @inline(__always)
    public func takeInput(_ input: UnsafePointer<Float>, frames: Int) {
        dryFrames = min(frames, Recorder.maximumBlock)
        dryScratch.update(from: input, count: dryFrames)
    }

    /// The chain's output for the block `takeInput` had (audio thread: copies only).
    @inline(__always)
    public func takeOutput(left: UnsafePointer<Float>, right: UnsafePointer<Float>, frames: Int) {
        guard accepting.load(ordering: .relaxed) else { return }
        let n = min(frames, dryFrames)
        _ = ring.write((UnsafePointer(dryScratch), left, right), frames: n)
        if frames > n { ring.dropped.add(frames - n, ordering: .relaxed) }
    }

    /// Adds the backing's next `frames` frames to the output, after `takeOutput` took the
    /// board's sound (so the wet track never holds the backing), clipped to ±1 as the chain's
    /// limiter left it. A mono output gets the middle of its sides. Returns the peak of what it
    /// changed (0 when nothing plays along). Audio thread.
    @inline(__always)
    public func playBacking(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frames: Int) -> Float {
        backing?.play(left: left, right: right, frames: frames) ?? 0
    }

    /// Frames of the backing that were not ready when the audio thread played them (heard as
    /// silence; the backing stays in time).
    public var backingMissed: Int { backing?.missed.load(ordering: .relaxed) ?? 0 }

    /// How far the backing is made ahead of the audio thread (frames from its start).
    public var backingMade: Int { backing?.madeFrames ?? 0 }

    // MARK: Control

    public var status: RecordingStatus {
        RecordingStatus(isRecording: running.load(ordering: .acquiring) && accepting.load(ordering: .relaxed),
                        seconds: Double(framesWritten.load(ordering: .relaxed)) / Double(sampleRate),
                        droppedFrames: ring.dropped.load(ordering: .relaxed),
                        problem: problem.withLock { $0 })
    }

    /// True when something plays along with the take.
    public var playsAlong: Bool { backing != nil }

    /// Frames on disk in each file.
    public var frames: Int { framesWritten.load(ordering: .acquiring) }

    /// Stops: the writer empties the ring, closes the files and marks the manifest complete.
    /// Waits at most `timeout` for a disk that does not answer (then the files are left as a
    /// killed process leaves them, and the status says so); the audio path must already have
    /// let go of the recorder (`LiveEngine.stopRecording` does both).
    @discardableResult
    public func finish(timeout: Duration = .seconds(15)) -> RecordingStatus {
        accepting.store(false, ordering: .releasing)
        stopRequested.store(true, ordering: .releasing)
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) * 1e-18
        if writerDone.wait(timeout: .now() + seconds) == .timedOut {
            problem.withLock { $0 = $0 ?? "the disk did not take the recording's last blocks within \(Int(seconds)) s; the files hold what it took" }
        } else {
            writerDone.signal()   // a second `finish` does not wait
        }
        var s = status
        s.isRecording = false
        return s
    }

    // MARK: Writer thread

    private func writeLoop() {
        let chunk = 8192
        let frames = UnsafeMutablePointer<Float>.allocate(capacity: chunk * 3)
        let dry = UnsafeMutablePointer<Float>.allocate(capacity: chunk)
        let sides = UnsafeMutablePointer<Float>.allocate(capacity: chunk * 2)
        defer { frames.deallocate(); dry.deallocate(); sides.deallocate() }
        var lastHeader = ContinuousClock.now
        var failed = false
        while !failed {
            backing?.fill()
            let n = ring.read(into: frames, frames: chunk)
            if n > 0 {
                for j in 0..<n {
                    dry[j] = frames[3 * j]
                    sides[2 * j] = frames[3 * j + 1]
                    sides[2 * j + 1] = frames[3 * j + 2]
                }
                do {
                    try di?.write(dry, frames: n)
                    try wet?.write(sides, frames: n)
                    framesWritten.add(n, ordering: .releasing)
                } catch {
                    stop(because: "recording stopped, the disk took no more: \(error.description); the \(String(format: "%.1f", Double(framesWritten.load(ordering: .relaxed)) / Double(sampleRate))) s recorded before are kept")
                    failed = true
                }
            }
            if !failed, ContinuousClock.now - lastHeader >= .milliseconds(500) {
                di?.updateHeader()
                wet?.updateHeader()
                try? writeManifest(complete: false)
                lastHeader = .now
            }
            if n == 0 {
                if stopRequested.load(ordering: .acquiring) { break }
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        do {
            try di?.close()
            try wet?.close()
            di = nil
            wet = nil
            try writeManifest(complete: !failed)
        } catch {
            if !failed { stop(because: "recording: closing its files failed: \(error)") }
        }
        running.store(false, ordering: .releasing)
        writerDone.signal()
    }

    private func stop(because message: String) {
        accepting.store(false, ordering: .releasing)
        problem.withLock { $0 = $0 ?? message }
    }

    /// Rewrites the manifest whole, by rename: a reader sees the old one or the new one.
    private func writeManifest(complete: Bool) throws(AudioFileError) {
        let path = folder + "/" + RecordingFolder.manifest
        let json: [String: Any] = [
            "format": "stompbox-recording", "version": 1, "sample_rate": sampleRate,
            "frames": framesWritten.load(ordering: .acquiring), "author": author, "complete": complete,
            "dropped_frames": ring.dropped.load(ordering: .relaxed), "latency_frames": latencyFrames,
        ]
        do {
            let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .unwritable(path: path, reason: (error as NSError).localizedDescription)
        }
    }
}

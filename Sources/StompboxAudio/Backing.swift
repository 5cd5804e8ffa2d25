import Synchronization

/// What plays along with a take (a session's mix): stereo frames made a block at a time on the
/// recorder's thread, never on the audio thread, so a session of hours is never whole in memory.
public protocol BackingSource: AnyObject {
    /// How long it is, in frames at the take's rate.
    var frames: Int { get }
    /// Frames `from ..< from + count` (within `frames`), interleaved stereo, into `into`. Calls
    /// come in order, but may skip ahead (after the player outran the recorder's thread).
    func render(into: UnsafeMutablePointer<Float>, from: Int, count: Int)
}

/// A backing held in memory (interleaved stereo).
public final class ArrayBacking: BackingSource {
    private let samples: [Float]
    public init(_ samples: [Float]) { self.samples = Array(samples.prefix(samples.count - samples.count % 2)) }
    public var frames: Int { samples.count / 2 }
    public func render(into: UnsafeMutablePointer<Float>, from: Int, count: Int) {
        samples.withUnsafeBufferPointer { into.update(from: $0.baseAddress! + 2 * from, count: 2 * count) }
    }
}

/// The backing's frames on their way to the audio thread: a single-producer, single-consumer
/// ring indexed by frame of the backing. The recorder's thread keeps it full ahead of the audio
/// thread, which plays from it and moves on by the block whatever it found, so the backing stays
/// in time with the take: frames the producer did not make in time are silence, and the producer
/// then skips to where the audio thread is.
final class BackingRing: @unchecked Sendable {
    let source: BackingSource
    let total: Int
    let capacity: Int
    private let storage: UnsafeMutablePointer<Float>
    /// Frames made (only the producer stores it) and played (only the audio thread).
    private let made = Atomic<Int>(0)
    let played = Atomic<Int>(0)
    /// Frames the audio thread found missing.
    let missed = Atomic<Int>(0)

    init(_ source: BackingSource, capacity: Int) {
        self.source = source
        total = source.frames
        self.capacity = max(1, capacity)
        storage = .allocate(capacity: 2 * self.capacity)
        storage.initialize(repeating: 0, count: 2 * self.capacity)
    }

    deinit { storage.deallocate() }

    /// Producer: makes frames until the ring is full or the backing ends (each chunk handed
    /// over as soon as it is made).
    func fill(chunk: Int = 8192) {
        var m = made.load(ordering: .relaxed)
        let p = played.load(ordering: .acquiring)
        if m < p {
            m = min(p, total)
            made.store(m, ordering: .releasing)
        }
        while m < total {
            let n = min(chunk, capacity - (m - p), total - m, capacity - m % capacity)
            guard n > 0 else { break }
            source.render(into: storage + 2 * (m % capacity), from: m, count: n)
            m += n
            made.store(m, ordering: .releasing)
        }
    }

    /// How far the backing is made (frames from its start).
    var madeFrames: Int { made.load(ordering: .acquiring) }

    /// Audio thread: adds the next `frames` frames to the output (see `Recorder.playBacking`).
    @inline(__always)
    func play(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frames: Int) -> Float {
        let p = played.load(ordering: .relaxed)
        let n = min(frames, total - p)
        guard n > 0 else { return 0 }
        let ready = max(0, min(n, made.load(ordering: .acquiring) - p))
        var peak: Float = 0
        var at = p % capacity
        for j in 0..<ready {
            let from = storage + 2 * at
            if let right {
                left[j] = min(max(left[j] + from[0], -1), 1)
                right[j] = min(max(right[j] + from[1], -1), 1)
                peak = max(peak, abs(left[j]), abs(right[j]))
            } else {
                left[j] = min(max(left[j] + 0.5 * (from[0] + from[1]), -1), 1)
                peak = max(peak, abs(left[j]))
            }
            at += 1
            if at == capacity { at = 0 }
        }
        if ready < n { missed.add(n - ready, ordering: .relaxed) }
        played.store(p + n, ordering: .releasing)
        return peak
    }
}

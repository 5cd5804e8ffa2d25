import Synchronization

/// A single-producer, single-consumer ring of interleaved frames: the audio thread writes, the
/// recorder's writer thread reads. Neither waits: a write that does not fit is dropped whole
/// and counted, so a disk that falls behind costs frames of the recording, never the audio.
final class RecorderRing: @unchecked Sendable {
    let channels: Int
    /// Frames it holds.
    let capacity: Int
    private let storage: UnsafeMutablePointer<Float>
    /// Frames written and read since the start; only the producer stores `written`, only the
    /// consumer `read`.
    private let written = Atomic<Int>(0)
    private let read = Atomic<Int>(0)
    /// Frames dropped because the ring was full.
    let dropped = Atomic<Int>(0)

    init(channels: Int, capacity: Int) {
        precondition(channels > 0 && capacity > 0)
        self.channels = channels
        self.capacity = capacity
        storage = .allocate(capacity: channels * capacity)
        storage.initialize(repeating: 0, count: channels * capacity)
    }

    deinit { storage.deallocate() }

    /// Frames waiting for the consumer.
    var available: Int { written.load(ordering: .acquiring) - read.load(ordering: .relaxed) }

    /// Producer (audio thread): `frames` frames, channel `c`'s samples from `sources[c]`. Returns
    /// false (and counts them dropped) when they do not fit.
    @inline(__always)
    func write(_ sources: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>), frames: Int) -> Bool {
        precondition(channels == 3)
        let w = written.load(ordering: .relaxed)
        guard capacity - (w - read.load(ordering: .acquiring)) >= frames else {
            dropped.add(frames, ordering: .relaxed)
            return false
        }
        var at = w % capacity
        for j in 0..<frames {
            let cell = storage + at * 3
            cell[0] = sources.0[j]
            cell[1] = sources.1[j]
            cell[2] = sources.2[j]
            at += 1
            if at == capacity { at = 0 }
        }
        written.store(w + frames, ordering: .releasing)
        return true
    }

    /// Consumer: copies up to `frames` frames, interleaved, into `into`; returns how many.
    func read(into: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let r = read.load(ordering: .relaxed)
        let n = min(frames, written.load(ordering: .acquiring) - r)
        guard n > 0 else { return 0 }
        let at = r % capacity
        let first = min(n, capacity - at)
        into.update(from: storage + at * channels, count: first * channels)
        if first < n { (into + first * channels).update(from: storage, count: (n - first) * channels) }
        read.store(r + n, ordering: .releasing)
        return n
    }
}

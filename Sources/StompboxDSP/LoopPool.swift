/// What the Looper's tracks share on the audio thread: the undo pool's chunks and the crossfade.
///
/// The pool holds the layers undo can go back to. A track's current layer lives chunk by chunk
/// (`LoopPool.chunkSize` frames) either on its own tape or in a pool chunk; the first time an
/// overdub touches a chunk, the chunk is copied into a fresh pool chunk and the overdub goes on
/// there, so the layer beneath stays intact where it was (see `LoopTrack`). The pool is a stack
/// of free chunks plus a high-water mark: chunks below it have been handed out before and are
/// resident; the tapes' thread keeps the chunks above it resident ahead of use.
///
/// A plain struct of pointers, reached through one pointer from the Looper, so the audio thread
/// touches no reference count.
struct LoopPool {
    static let chunkShift = 12
    static let chunkSize = 1 << chunkShift

    /// Each pool chunk's two sides: chunk `i` starts at `left + i << chunkShift`.
    var left: UnsafeMutablePointer<Float>
    var right: UnsafeMutablePointer<Float>
    var chunks = 0
    /// Free chunks below `highWater` (a stack).
    var free: UnsafeMutablePointer<Int32>
    var freeCount = 0
    /// Chunks handed out at least once.
    var highWater = 0
    /// Whether a stereo track ever took a chunk (then the right side is needed too).
    var stereoUsed = false

    /// Rising crossfade, `fadeLength + 1` values from 0 to 1 (sin²: equal gain, smooth ends).
    var fade: UnsafeMutablePointer<Float>
    var fadeLength = 1
    /// The overdub punch ramp's step per sample.
    var dubStep: Float = 1

    init() {
        left = .allocate(capacity: 1)
        right = .allocate(capacity: 1)
        free = .allocate(capacity: 1)
        fade = .allocate(capacity: 1)
        fade.initialize(to: 0)
    }

    /// A free chunk, or nil when the pool is exhausted. Audio thread.
    @inline(__always)
    mutating func take() -> Int32? {
        if freeCount > 0 {
            freeCount -= 1
            return free[freeCount]
        }
        guard highWater < chunks else { return nil }
        highWater += 1
        return Int32(highWater - 1)
    }

    /// Gives a chunk back. Audio thread.
    @inline(__always)
    mutating func give(_ chunk: Int32) {
        free[freeCount] = chunk
        freeCount += 1
    }

    /// Chunks that can still be taken.
    var available: Int { freeCount + chunks - highWater }

    /// All chunks free again, none handed out (the tapes stay resident as far as they were).
    mutating func clear() {
        freeCount = 0
        highWater = 0
        stereoUsed = false
    }

    @inline(__always)
    func left(_ chunk: Int32) -> UnsafeMutablePointer<Float> { left + (Int(chunk) << Self.chunkShift) }
    @inline(__always)
    func right(_ chunk: Int32) -> UnsafeMutablePointer<Float> { right + (Int(chunk) << Self.chunkShift) }
}

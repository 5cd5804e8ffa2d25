/// One of the Looper's tracks: its tape, its state and the runs that record, play and overdub it.
/// The Looper decides when a recording starts and closes (the cycle, the footswitch); the track
/// carries it out sample-exactly inside a block.
///
/// Storage: the first pass is recorded onto the track's own tape (two sides; a mono track uses
/// the left only). Overdubs go through the chunk map (`slot`): see `LoopPool` and
/// LoopTrack+History.swift.
///
/// Output: each run writes the track's own sound (without the live input, without gain or pan)
/// into `TrackIO.outLeft` (and `outRight` for a stereo track); the Looper mixes it. Every pass
/// plays the recording back sample-exact, except where a short transition runs: the first
/// pass's seam crossfade, overdub punch ramps, the undo/redo crossfade and the fade-out on
/// clear, each `Looper.seamTime` long.
///
/// A plain struct of pointers (no references), so the audio thread mutates it through one
/// pointer without reference counting.
struct LoopTrack {
    /// The track's own tape, `capacity` frames a side.
    var tapeLeft: UnsafeMutablePointer<Float>
    var tapeRight: UnsafeMutablePointer<Float>
    var capacity = 0
    /// The longest loop (the Looper's `maximumLength`, within `capacity`).
    var maximumLength = 0
    var chunkCount = 1
    /// Per chunk: where its current layer lives (-1: the own tape, else a pool chunk).
    var slot: UnsafeMutablePointer<Int32>
    /// Per chunk: the overdub that last saved it (0 = none); layer ids only grow.
    var touchedBy: UnsafeMutablePointer<UInt32>
    /// Per chunk, while an undo or redo crossfade runs: where the layer faded from lives
    /// (valid where `fadeStamp` is the running `stamp`).
    var fadeFrom: UnsafeMutablePointer<Int32>
    var fadeStamp: UnsafeMutablePointer<UInt32>
    var stamp: UInt32 = 0
    var history = LoopHistory()
    /// Where `reclaim` looks next.
    var reclaimCursor = 0

    var state = LooperState.stopped
    /// Two sides recorded (on a stereo board with `looper.stereo` on), else one.
    var stereo = false
    /// Loop length in frames; while recording, the frames recorded so far.
    var length = 0
    var position = 0
    /// Where a recording waits to close (0: it closes at the tap).
    var closeAt = 0
    /// The recording closed at a cycle boundary already passed: once `closeAt` is reached the
    /// frames after the boundary are crossfaded into the head and the loop is `closeAt - fadeLength`.
    var lateClose = false
    /// The longest this recording may grow (the tape, or a whole number of cycles of it).
    var limit = 0
    /// Recording the first pass with no cycle yet: this recording sets the cycle.
    var free = false
    /// Waiting for the next cycle boundary (or the first loop's close) to start recording.
    var armed = false
    /// Frames of count-in left before a free recording starts.
    var countIn = 0
    /// For a recording that starts at a boundary: the fixed length it will close at (0: free).
    var pendingFixed = 0
    /// Frame (on the Looper's clock) at which the recording started.
    var startFrame = 0
    /// In the current block: the frame at which a free first pass closed (-1: it did not).
    var closedAt = -1
    /// After a late close: the playback fades in (the Looper snaps the gains to 0 and ramps).
    var fadeIn = false

    var sealRemaining = 0
    var undoFadeRemaining = 0
    var fadeOutRemaining = 0
    var fadeOutLength = 0
    var fadeOutPosition = 0
    /// After a clear: the pool chunks go back once the fade-out no longer reads them.
    var releaseAfterFade = false
    var dubGain: Float = 0
    var dubTarget: Float = 0

    /// The track's gain on each side (its gain, pan and mute), smoothed by the Looper.
    var gainLeft = SmoothedValue(1)
    var gainRight = SmoothedValue(1)
    var gainDecibels: Float = 0
    var gainLinear: Float = 1
    /// The overview bin being drawn (-1: none) and its peak so far (`Looper+Share.swift`).
    var overviewBin = -1
    var overviewPeak: Float = 0

    init() {
        tapeLeft = .allocate(capacity: 1)
        tapeRight = .allocate(capacity: 1)
        slot = .allocate(capacity: 1)
        touchedBy = .allocate(capacity: 1)
        fadeFrom = .allocate(capacity: 1)
        fadeStamp = .allocate(capacity: 1)
    }

    /// Sets up the chunk map for `capacity` frames on the tapes given (which the Looper owns).
    /// Not on the audio thread.
    mutating func prepare(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, capacity: Int, maximumLength: Int) {
        self.maximumLength = maximumLength
        tapeLeft = left
        tapeRight = right
        self.capacity = capacity
        chunkCount = (capacity + LoopPool.chunkSize - 1) >> LoopPool.chunkShift
        for p in [slot, fadeFrom] { p.deallocate() }
        for p in [touchedBy, fadeStamp] { p.deallocate() }
        slot = .allocate(capacity: chunkCount)
        slot.initialize(repeating: -1, count: chunkCount)
        fadeFrom = .allocate(capacity: chunkCount)
        fadeFrom.initialize(repeating: -1, count: chunkCount)
        touchedBy = .allocate(capacity: chunkCount)
        touchedBy.initialize(repeating: 0, count: chunkCount)
        fadeStamp = .allocate(capacity: chunkCount)
        fadeStamp.initialize(repeating: 0, count: chunkCount)
        history.prepare(chunks: chunkCount)
        forget()
    }

    /// Frees the chunk map and history (not the tapes, which the Looper owns).
    func deallocate() {
        slot.deallocate(); fadeFrom.deallocate(); touchedBy.deallocate(); fadeStamp.deallocate()
        history.free()
    }

    /// Back to an empty track: no loop, no history (the pool's chunks are the Looper's to clear).
    mutating func forget() {
        resetState()
        slot.update(repeating: -1, count: chunkCount)
        history.clear()
    }

    /// Stopped, nothing waiting or fading; the chunk map and history are left alone.
    mutating func resetState() {
        state = .stopped
        length = 0; position = 0; closeAt = 0; lateClose = false; free = false; armed = false
        countIn = 0; pendingFixed = 0; closedAt = -1; fadeIn = false
        sealRemaining = 0; undoFadeRemaining = 0; fadeOutRemaining = 0; releaseAfterFade = false
        dubGain = 0; dubTarget = 0
    }

    var hasLoop: Bool { state == .playing || state == .overdubbing }
    /// True while a short transition runs; requests for this track wait for it.
    var isBusy: Bool { sealRemaining > 0 || undoFadeRemaining > 0 || fadeOutRemaining > 0 }
    /// Nothing to do in a block: no loop, no recording, nothing waiting or fading.
    var isIdle: Bool { state == .stopped && fadeOutRemaining == 0 && !armed && countIn == 0 }

    /// Chunk `c`'s current layer, side `side` (0 left, 1 right).
    @inline(__always)
    func data(_ c: Int, _ side: Int, _ pool: UnsafeMutablePointer<LoopPool>) -> UnsafeMutablePointer<Float> {
        data(slot: slot[c], chunk: c, side, pool)
    }

    @inline(__always)
    func data(slot s: Int32, chunk c: Int, _ side: Int, _ pool: UnsafeMutablePointer<LoopPool>) -> UnsafeMutablePointer<Float> {
        if s < 0 { return (side == 0 ? tapeLeft : tapeRight) + (c << LoopPool.chunkShift) }
        return side == 0 ? pool.pointee.left(s) : pool.pointee.right(s)
    }

    // MARK: Starting and closing

    /// Starts recording at the current frame; `recorded` frames (a late press's, copied in by
    /// the Looper) are already on the tape.
    mutating func beginRecording(recorded: Int, fixed: Int, limit: Int) {
        touchedBy.update(repeating: 0, count: chunkCount)
        slot.update(repeating: -1, count: chunkCount)
        history.clear()
        state = .recording
        armed = false
        length = recorded
        position = 0
        closeAt = fixed
        lateClose = false
        self.limit = limit
    }

    /// The first pass ends here: play from the head, crossfading the input that follows into it.
    /// A free first pass shorter than `shortest` is discarded.
    mutating func closeLoop(at frame: Int, shortest: Int, fadeLength: Int) {
        closeAt = 0
        if free {
            free = false
            guard length >= shortest else {
                state = .stopped
                length = 0
                position = 0
                return
            }
            closedAt = frame
        }
        state = .playing
        position = 0
        sealRemaining = fadeLength
    }

    /// A close at a boundary already `length - loop` frames behind: the frames recorded after it
    /// (at least `fadeLength`) are crossfaded into the head in place, and the loop plays on from
    /// where the cycle is, fading in.
    mutating func closeLate(loop: Int, pool: UnsafeMutablePointer<LoopPool>) {
        let fade = pool.pointee.fade, n = pool.pointee.fadeLength
        for side in 0..<(stereo ? 2 : 1) {
            let t = side == 0 ? tapeLeft : tapeRight
            for k in 0..<n {
                let x = t[loop + k]
                t[k] = x + fade[k] * (t[k] - x)
            }
        }
        position = length - loop
        length = loop
        closeAt = 0
        lateClose = false
        state = .playing
        fadeIn = true
    }

    /// Stop and clear: a loop that plays fades out; its pool chunks go back after that.
    mutating func clear(pool: UnsafeMutablePointer<LoopPool>) {
        if fadeOutRemaining > 0 { releaseChunks(pool) }
        let playing = hasLoop
        let (len, pos) = (length, position)
        resetState()
        if playing {
            // The map stays as it is until the fade-out, which reads it, is over.
            fadeOutRemaining = pool.pointee.fadeLength
            fadeOutLength = len
            fadeOutPosition = pos
            releaseAfterFade = true
        } else {
            releaseChunks(pool)
        }
    }

    /// Gives every pool chunk the track holds (its current layer's and its history's) back.
    mutating func releaseChunks(_ pool: UnsafeMutablePointer<LoopPool>) {
        for c in 0..<chunkCount where slot[c] >= 0 {
            pool.pointee.give(slot[c])
            slot[c] = -1
        }
        history.release(into: pool)
        releaseAfterFade = false
    }
}

/// A block's buffers as a track sees them: the live input (both sides and their middle; on a mono
/// board all three are the block) and the track's own sound, which the Looper mixes.
struct TrackIO {
    var inLeft: UnsafeMutablePointer<Float>
    var inRight: UnsafeMutablePointer<Float>
    var inMiddle: UnsafeMutablePointer<Float>
    var outLeft: UnsafeMutablePointer<Float>
    var outRight: UnsafeMutablePointer<Float>
}

/// Where the cycle stands at the start of a block.
struct LoopCycle {
    /// The cycle in frames (0: no loop yet).
    var length = 0
    /// Frames into the cycle at the block's first frame.
    var position = 0
    /// The Looper's clock at the block's first frame.
    var clock = 0

    /// The first cycle boundary at or after frame `i` of the block (needs a cycle).
    @inline(__always)
    func boundary(atOrAfter i: Int) -> Int {
        let first = position == 0 ? 0 : length - position
        if i <= first { return first }
        return first + (i - first + length - 1) / length * length
    }

    /// The longest whole number of cycles within `frames` (at least one cycle).
    func wholeCycles(_ frames: Int) -> Int { max(1, frames / length) * length }
}

extension LoopTrack {
    /// Runs the track over frames `0..<n` of the block. Returns whether it wrote sound into
    /// `io.outLeft` (and `outRight` when stereo); then all `n` frames are written. Audio thread.
    mutating func process(_ n: Int, _ io: TrackIO, _ pool: UnsafeMutablePointer<LoopPool>, _ cycle: LoopCycle,
                          shortest: Int) -> Bool {
        if isIdle { return false }
        var i = 0
        var sounding = false
        while i < n {
            switch state {
            case .stopped:
                if fadeOutRemaining > 0 {
                    i += fadeOutRun(io, i, n - i, pool)
                    sounding = true
                    if fadeOutRemaining == 0 && releaseAfterFade { releaseChunks(pool) }
                } else if countIn > 0 {
                    let k = min(countIn, n - i)
                    silence(io, i, k)
                    countIn -= k
                    i += k
                    if countIn == 0 {
                        startFrame = cycle.clock + i
                        beginRecording(recorded: 0, fixed: pendingFixed, limit: maximumLength)
                    }
                } else if armed && cycle.length > 0 {
                    let b = min(cycle.boundary(atOrAfter: i), n)
                    silence(io, i, b - i)
                    i = b
                    if b < n {
                        startFrame = cycle.clock + b
                        beginRecording(recorded: 0, fixed: pendingFixed, limit: cycle.wholeCycles(maximumLength))
                    }
                } else {
                    silence(io, i, n - i)
                    i = n
                }
            case .recording:
                i += recordRun(io, i, n - i, pool, shortest: shortest)
            case .playing, .overdubbing:
                i += playRun(io, i, n - i, pool)
                sounding = true
            }
        }
        return sounding
    }

    @inline(__always)
    private func silence(_ io: TrackIO, _ i: Int, _ count: Int) {
        guard count > 0 else { return }
        (io.outLeft + i).update(repeating: 0, count: count)
        if stereo { (io.outRight + i).update(repeating: 0, count: count) }
    }

    private mutating func recordRun(_ io: TrackIO, _ i: Int, _ m: Int, _ pool: UnsafeMutablePointer<LoopPool>,
                                    shortest: Int) -> Int {
        let end = closeAt > 0 ? closeAt : limit
        let count = min(m, end - length)
        (tapeLeft + length).update(from: (stereo ? io.inLeft : io.inMiddle) + i, count: count)
        if stereo { (tapeRight + length).update(from: io.inRight + i, count: count) }
        silence(io, i, count)
        length += count
        // Tape full, the beat or boundary a recording waited for, or a fixed length reached.
        if length == end {
            if lateClose {
                closeLate(loop: end - pool.pointee.fadeLength, pool: pool)
            } else {
                closeLoop(at: i + count, shortest: shortest, fadeLength: pool.pointee.fadeLength)
            }
        }
        return count
    }

    // MARK: Playing (each run stays within one chunk, the loop and one transition)

    private mutating func playRun(_ io: TrackIO, _ i: Int, _ m: Int, _ pool: UnsafeMutablePointer<LoopPool>) -> Int {
        let p = position
        let c = p >> LoopPool.chunkShift
        let offset = p & (LoopPool.chunkSize - 1)
        var run = min(m, length - p, LoopPool.chunkSize - offset)
        if sealRemaining > 0 { run = min(run, sealRemaining) }
        if undoFadeRemaining > 0 { run = min(run, undoFadeRemaining) }

        let dubbing = dubGain > 0 || dubTarget > 0
        // First touch of this chunk by the running overdub: keep the layer beneath.
        if dubbing && touchedBy[c] != history.layer { saveChunk(c, pool) }
        let fade = pool.pointee.fade, fadeLength = pool.pointee.fadeLength
        var ramped = dubGain
        for side in 0..<(stereo ? 2 : 1) {
            let t = data(c, side, pool) + offset
            let x = (stereo ? (side == 0 ? io.inLeft : io.inRight) : io.inMiddle) + i
            let out = (side == 0 ? io.outLeft : io.outRight) + i
            if sealRemaining > 0 {
                // The first pass's seam: the tape's head becomes a crossfade from the input that
                // followed the closing tap (the tail's continuation) into the recorded head. This
                // pass itself fades the head in, as the input already carries the continuation.
                let w = fade + p
                for j in 0..<run {
                    let head = t[j]
                    t[j] = x[j] + w[j] * (head - x[j])
                    out[j] = w[j] * head
                }
            } else if undoFadeRemaining > 0 {
                let from = fadeStamp[c] == stamp ? data(slot: fadeFrom[c], chunk: c, side, pool) + offset : t
                let w = fade + (fadeLength - undoFadeRemaining)
                for j in 0..<run {
                    let before = from[j]
                    out[j] = before + w[j] * (t[j] - before)
                }
            } else if dubbing && dubGain == dubTarget {
                // Steady overdub (the usual case): no ramp, so the loop vectorises.
                let g = dubGain
                for j in 0..<run {
                    let old = t[j]
                    t[j] = old + g * x[j]
                    out[j] = old
                }
            } else if dubbing {
                var g = dubGain
                let target = dubTarget, step = pool.pointee.dubStep
                for j in 0..<run {
                    g = target > g ? min(g + step, target) : max(g - step, target)
                    let old = t[j]
                    t[j] = old + g * x[j]
                    out[j] = old
                }
                ramped = g
            } else {
                (out).update(from: t, count: run)
            }
        }
        if sealRemaining > 0 { sealRemaining -= run }
        if undoFadeRemaining > 0 { undoFadeRemaining -= run }
        dubGain = ramped
        position = p + run
        if position >= length { position = 0 }
        return run
    }

    /// After a clear: the old loop fades out.
    private mutating func fadeOutRun(_ io: TrackIO, _ i: Int, _ m: Int, _ pool: UnsafeMutablePointer<LoopPool>) -> Int {
        let p = fadeOutPosition
        let c = p >> LoopPool.chunkShift
        let offset = p & (LoopPool.chunkSize - 1)
        let run = min(min(m, fadeOutLength - p), min(LoopPool.chunkSize - offset, fadeOutRemaining))
        let w = pool.pointee.fade + (pool.pointee.fadeLength - fadeOutRemaining)
        for side in 0..<(stereo ? 2 : 1) {
            let t = data(c, side, pool) + offset
            let out = (side == 0 ? io.outLeft : io.outRight) + i
            for j in 0..<run { out[j] = (1 - w[j]) * t[j] }
        }
        fadeOutRemaining -= run
        fadeOutPosition = p + run
        if fadeOutPosition >= fadeOutLength { fadeOutPosition = 0 }
        if fadeOutRemaining == 0 { silence(io, i + run, m - run) }
        return fadeOutRemaining == 0 ? m : run
    }
}

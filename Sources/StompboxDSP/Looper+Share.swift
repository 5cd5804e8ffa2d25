import Synchronization

/// What the Looper shares with other threads while it plays: each track's waveform overview,
/// the tap a recorder listens on, and copies of a track's loop (`LoopTrackTap.swift`).
extension Looper {
    /// Frames a copy takes per block: a 120 s loop is copied in under 200 blocks, and one slice
    /// (256 KB a side) costs the block tens of microseconds.
    static let copySlice = 32_768

    /// Audio thread, after track `t` ran `n` frames: when it played its loop from `from` (the
    /// loop index of the first frame; -1 when it played no loop) at the same `length`, draws
    /// the frames into its overview and hands them to the tap.
    @inline(__always)
    func share(_ t: Int, _ n: Int, from: Int, length: Int) {
        let track = tracks + t
        guard from >= 0, length > 0, track.pointee.hasLoop, track.pointee.length == length else {
            if !track.pointee.hasLoop, control.overviewLengths[t].load(ordering: .relaxed) != 0 {
                control.overviewLengths[t].store(0, ordering: .releasing)
                track.pointee.overviewBin = -1
            }
            return
        }
        let left = outLeft.baseAddress!, right = track.pointee.stereo ? outRight.baseAddress! : left
        drawOverview(t, left, right, n, from: from, length: length)
        let address = control.tapAddress.load(ordering: .acquiring)
        guard address != 0, let box = UnsafeRawPointer(bitPattern: address) else { return }
        let first = min(n, length - from), at = clock
        // Borrowed, not retained: the box lives until `setTap` saw this block end.
        Unmanaged<TapBox>.fromOpaque(box)._withUnsafeGuaranteedRef { holder in
            holder.tap.loopTrackBlock(track: t, position: from, length: length, cycleFrame: at,
                                      left: left, right: right, frames: first)
            if first < n {
                holder.tap.loopTrackBlock(track: t, position: 0, length: length, cycleFrame: at + first,
                                          left: left + first, right: right + first, frames: n - first)
            }
        }
    }

    /// Keeps the peak of each bin as the loop plays through it; a bin is stored when the play
    /// position leaves it, so every bin is redrawn once a pass.
    @inline(__always)
    private func drawOverview(_ t: Int, _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>,
                              _ n: Int, from: Int, length: Int) {
        let bins = LooperControl.overviewBins
        let cells = control.overviewCells + t * bins
        if control.overviewLengths[t].load(ordering: .relaxed) != length {
            for b in 0..<bins { cells[b].store(0, ordering: .relaxed) }
            control.overviewLengths[t].store(length, ordering: .releasing)
            tracks[t].overviewBin = -1
        }
        var bin = tracks[t].overviewBin, peak = tracks[t].overviewPeak
        var position = from
        for j in 0..<n {
            let b = position * bins / length
            if b != bin {
                if bin >= 0 { cells[bin].store(min(peak, 1).bitPattern, ordering: .relaxed) }
                bin = b
                peak = 0
            }
            let x = max(abs(left[j]), abs(right[j]))
            if x > peak { peak = x }   // NaN never wins a comparison, so it never lands in a bin
            position += 1
            if position == length { position = 0 }
        }
        tracks[t].overviewBin = bin
        tracks[t].overviewPeak = peak
    }

    /// Audio thread: advances a copy `LooperControl.copyTrack` asked for by one slice.
    func serviceCopy() {
        let (work, began) = SliceHandshake.take(control.copyState)
        guard work else { return }
        if began { copyOffset = 0 }
        let t = control.copyTrackIndex.load(ordering: .relaxed)
        let length = control.copyLength.load(ordering: .relaxed)
        guard (0..<LooperControl.trackCount).contains(t), tracks[t].hasLoop, tracks[t].length == length,
              let left = UnsafeMutablePointer<Float>(bitPattern: control.copyLeft.load(ordering: .relaxed)),
              let right = UnsafeMutablePointer<Float>(bitPattern: control.copyRight.load(ordering: .relaxed)) else {
            finishCopy(.failed)
            return
        }
        let track = tracks[t]
        let end = min(length, copyOffset + Looper.copySlice)
        var frame = copyOffset
        while frame < end {
            let c = frame >> LoopPool.chunkShift
            let within = frame - (c << LoopPool.chunkShift)
            let count = min(LoopPool.chunkSize - within, end - frame)
            (left + frame).update(from: track.data(c, 0, pool) + within, count: count)
            (right + frame).update(from: track.data(c, track.stereo ? 1 : 0, pool) + within, count: count)
            frame += count
        }
        copyOffset = end
        if end == length {
            control.copyStart.store(track.startFrame, ordering: .relaxed)
            control.copyStereo.store(track.stereo, ordering: .relaxed)
            finishCopy(.done)
        }
    }

    private func finishCopy(_ state: CopyState) { SliceHandshake.end(control.copyState, state) }
}

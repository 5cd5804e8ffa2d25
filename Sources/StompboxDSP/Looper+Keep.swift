/// Converts a loop by `ratio` (output rate / input rate) with a high-quality resampler;
/// StompboxAudio supplies libsamplerate's.
public typealias LoopResampler = (_ loop: [Float], _ ratio: Double) -> [Float]

/// One track's loop as it plays now, copied out for a caller that saves it (the session file).
public struct LoopTrackAudio: Sendable, Equatable {
    /// 0-based.
    public var track: Int
    /// Where its recording started, in frames on the Looper's clock (frames processed since
    /// `prepare`): a cycle boundary, so `start` − the first track's `start` is a whole number of
    /// cycles for every track.
    public var start: Int
    /// Its length in frames (a whole number of cycles).
    public var length: Int
    /// The current layer, `length` frames a side (a mono track's two sides are the same).
    public var left: [Float]
    public var right: [Float]
    public var isStereo: Bool
}

extension Looper {
    /// The cycle every loop is a whole number of, in frames (0: no loop). Not while `process` runs.
    public var cycleLength: Int { cycle.length }

    /// Track `track`'s (0-based) audio, where it started and its length; nil while it has no loop
    /// (empty, waiting, or still recording its first pass). Gain, pan and mute are its parameters
    /// (`Parameter.looperTrackGain` …). Off the audio thread, and not while `process` runs (after
    /// an offline render, or with the live loop stopped).
    public func trackAudio(_ track: Int) -> LoopTrackAudio? {
        precondition((0..<LooperControl.trackCount).contains(track), "no track \(track)")
        guard tracks[track].hasLoop, tracks[track].length > 0 else { return nil }
        let (left, right) = copySides(track, previous: false)
        return LoopTrackAudio(track: track, start: tracks[track].startFrame, length: tracks[track].length,
                              left: left, right: right, isStereo: tracks[track].stereo)
    }

    /// Track `t`'s current layer (or, with `previous`, the layer its last undo step goes back to).
    private func copySides(_ t: Int, previous: Bool) -> ([Float], [Float]) {
        let track = tracks[t]
        var sides = [[Float]](repeating: [Float](repeating: 0, count: track.length), count: 2)
        var below = [Int32](repeating: -2, count: track.chunkCount)
        if previous, track.history.undoCount > 0 {
            let l = track.history.ring(track.history.undoCount - 1)
            for e in 0..<track.history.layerEntries[l] {
                let k = track.history.entry(track.history.layerStart[l] + e)
                below[Int(track.history.entryChunk[k])] = track.history.entrySlot[k]
            }
        }
        let used = (track.length + LoopPool.chunkSize - 1) >> LoopPool.chunkShift
        for side in 0..<2 {
            let from = track.stereo ? side : 0
            sides[side].withUnsafeMutableBufferPointer { out in
                for c in 0..<used {
                    let start = c << LoopPool.chunkShift
                    let count = min(LoopPool.chunkSize, track.length - start)
                    let s = below[c] != -2 ? below[c] : track.slot[c]
                    (out.baseAddress! + start).update(from: track.data(slot: s, chunk: c, from, pool), count: count)
                }
            }
        }
        return (sides[0], sides[1])
    }

    /// The loops as they stand, taken before `prepare` at a new sample rate and put back after it
    /// resampled, so a server that changes its rate does not cost the player the loops.
    public struct KeptLoop {
        struct Track {
            var index: Int
            var state: LooperState
            var stereo: Bool
            var length: Int
            var position: Int
            var start: Int
            /// The current layer's two sides, `length` frames each.
            var current: ([Float], [Float])
            /// The layer the last undo step goes back to, where there is one.
            var previous: ([Float], [Float])?
        }
        var tracks: [Track]
        var cycle: Int
        var cyclePosition: Int
        var clock: Int
    }

    /// The loops, copied out (nil when there is none): every track that plays and a first pass
    /// being recorded, each with its last undo step (older steps and recordings of later tracks
    /// still waiting for their close are not kept). Not on the audio thread, and not while it runs.
    public func keepLoop() -> KeptLoop? {
        var kept: [KeptLoop.Track] = []
        for t in 0..<LooperControl.trackCount {
            let track = tracks[t]
            guard track.hasLoop || (track.state == .recording && track.free), track.length > 0 else { continue }
            let previous = track.hasLoop && track.history.canUndo ? copySides(t, previous: true) : nil
            let current = track.hasLoop ? copySides(t, previous: false)
                : (Array(UnsafeBufferPointer(start: track.tapeLeft, count: track.length)),
                   Array(UnsafeBufferPointer(start: track.stereo ? track.tapeRight : track.tapeLeft, count: track.length)))
            kept.append(.init(index: t, state: track.state, stereo: track.stereo, length: track.length,
                              position: track.position, start: track.startFrame, current: current, previous: previous))
        }
        guard !kept.isEmpty else { return nil }
        return KeptLoop(tracks: kept, cycle: cycle.length, cyclePosition: cycle.position, clock: clock)
    }

    /// Puts back loops kept at `fromRate` after `prepare` at this rate, converted by `resample`
    /// (a loop that plays is treated as a cycle, so its seam stays seamless). Every track stays a
    /// whole number of the converted cycle and in step with it; an overdub goes on, a first pass
    /// goes on growing, and the last overdub can still be undone. Not on the audio thread.
    public func restoreLoop(_ kept: KeptLoop, fromRate: Double, toRate: Double, resample: LoopResampler) {
        guard maximumLength > 0 else { return }
        let ratio = toRate / fromRate
        let newCycle = kept.cycle > 0 ? max(1, Int((Double(kept.cycle) * ratio).rounded())) : 0
        let cycles = kept.cycle > 0 ? max(1, maximumLength / newCycle) : 0
        let newCyclePosition = newCycle > 0 ? Int((Double(kept.cyclePosition) * ratio).rounded()) % newCycle : 0
        // Starts and the clock are counted in cycles from one looping track's start, so every
        // track's start stays a whole number of new cycles from the others' and its position
        // agrees with the clock.
        let reference = kept.tracks.first { $0.state != .recording && kept.cycle > 0 }
        let referenceStart = reference.map { Int((Double($0.start) * ratio).rounded()) } ?? 0
        func newStart(_ start: Int) -> Int {
            guard let reference else { return Int((Double(start) * ratio).rounded()) }
            return referenceStart + (start - reference.start) / kept.cycle * newCycle
        }
        for k in kept.tracks {
            let cyclic = k.state != .recording
            let newLength = cyclic && newCycle > 0
                ? min(k.length / kept.cycle, cycles) * newCycle
                : min(maximumLength, max(1, Int((Double(k.length) * ratio).rounded())))
            func convert(_ loop: [Float]) -> [Float] {
                guard ratio != 1 else { return Array(loop.prefix(newLength)) + [Float](repeating: 0, count: max(0, newLength - loop.count)) }
                // Ahead of the loop its tail, after it its head: the converter's filter sees the
                // cycle across the seam instead of silence.
                let pad = cyclic ? min(loop.count, 2048) : 0
                let input = cyclic ? Array(loop[(loop.count - pad)...]) + loop + Array(loop[..<pad]) : loop
                let output = resample(input, ratio)
                let skip = Int((Double(pad) * ratio).rounded())
                var cut = [Float](repeating: 0, count: newLength)
                for i in 0..<min(newLength, max(0, output.count - skip)) {
                    let x = output[skip + i]
                    cut[i] = x.isFinite ? x : 0
                }
                return cut
            }
            let track = tracks + k.index
            track.pointee.forget()
            track.pointee.stereo = k.stereo
            let left = convert(k.current.0)
            left.withUnsafeBufferPointer { track.pointee.tapeLeft.update(from: $0.baseAddress!, count: newLength) }
            if k.stereo {
                convert(k.current.1).withUnsafeBufferPointer { track.pointee.tapeRight.update(from: $0.baseAddress!, count: newLength) }
            }
            track.pointee.touchedBy.update(repeating: 0, count: track.pointee.chunkCount)
            track.pointee.state = k.state
            track.pointee.length = newLength
            track.pointee.limit = track.pointee.capacity
            track.pointee.free = !cyclic
            track.pointee.startFrame = cyclic ? newStart(k.start) : Int((Double(k.start) * ratio).rounded())
            if cyclic && newCycle > 0 {
                // In step with the cycle: the same number of whole cycles into the loop.
                track.pointee.position = (k.position / kept.cycle) * newCycle + newCyclePosition
                if track.pointee.position >= newLength { track.pointee.position %= newLength }
            } else {
                track.pointee.position = 0
            }
            if let previous = k.previous {
                // One layer: every chunk of the loop, its previous content in a pool chunk.
                track.pointee.history.begin(depth: LoopHistory.maximumDepth, pool: pool)
                let before = (convert(previous.0), k.stereo ? convert(previous.1) : [])
                let used = (newLength + LoopPool.chunkSize - 1) >> LoopPool.chunkShift
                for c in 0..<used {
                    guard let p = pool.pointee.take() else { break }
                    let start = c << LoopPool.chunkShift, count = min(LoopPool.chunkSize, newLength - start)
                    before.0.withUnsafeBufferPointer { pool.pointee.left(p).update(from: $0.baseAddress! + start, count: count) }
                    if k.stereo {
                        before.1.withUnsafeBufferPointer { pool.pointee.right(p).update(from: $0.baseAddress! + start, count: count) }
                    }
                    track.pointee.history.note(chunk: c, slot: p)
                    track.pointee.touchedBy[c] = track.pointee.history.layer
                }
            }
            if k.state == .overdubbing {
                // The overdub goes on as a layer of its own (the one restored above, if any).
                if k.previous == nil { track.pointee.history.begin(depth: LoopHistory.maximumDepth, pool: pool) }
                track.pointee.dubGain = 1
                track.pointee.dubTarget = 1
            }
        }
        cycle = LoopCycle(length: newCycle, position: newCyclePosition, clock: 0)
        if let reference {
            let passes = (kept.clock - reference.start) / reference.length
            let length = reference.length / kept.cycle * newCycle
            clock = referenceStart + passes * length + (reference.position / kept.cycle) * newCycle + newCyclePosition
        } else {
            clock = Int((Double(kept.clock) * ratio).rounded())
        }
        control.cycleValue.store(newCycle, ordering: .relaxed)
        publishStatus()
    }
}

/// A track's undo history, kept as layer differences.
///
/// Each overdub is a layer. The first time a layer touches a chunk, the chunk is copied into a
/// pool chunk that becomes current, and the layer records an entry (chunk, where the layer
/// beneath lives). Undo swaps each entry of the top layer with the chunk map, so the map points
/// at the layer beneath again and the entry at the undone layer; redo swaps them back. Nothing is
/// recomputed, so undo and redo restore every sample bit for bit, and each step costs one swap per
/// chunk the layer touched.
///
/// Every pool chunk a track holds is named exactly once: by the chunk map or by one entry; a
/// chunk of the tape is named at most once. Dropping the oldest layer (beyond `depth`, or when
/// the pool runs dry) gives back its entries' chunks (the layer beneath it can no longer be
/// reached); a new overdub after undo drops the layers redo could have put back.
///
/// Where a dropped entry named the tape, the tape's chunk is free while the current layer sits in
/// a pool chunk for good. `LoopTrack.reclaim` copies that layer back onto the tape and gives the
/// pool chunk back, so an overdubbed loop does not hold a whole pass of the pool once its old
/// steps are gone: the pool holds only what undo can still reach.
///
/// Entries live in a ring of `maximumDepth` × chunks (a layer touches each chunk at most once), the
/// layers in a ring of `maximumDepth`: both allocated in `prepare`, nothing on the audio thread.
struct LoopHistory {
    /// The most undo steps a track keeps (`looper.undo_steps` chooses up to this).
    static let maximumDepth = 16

    var entryChunk: UnsafeMutablePointer<Int32>
    var entrySlot: UnsafeMutablePointer<Int32>
    var entryCapacity = 1
    /// Per layer (a ring of `maximumDepth`): its first entry (absolute index) and entry count;
    /// false where the pool ran dry during it (such a layer cannot be undone exactly).
    var layerStart: UnsafeMutablePointer<Int>
    var layerEntries: UnsafeMutablePointer<Int>
    var layerComplete: UnsafeMutablePointer<Bool>
    /// The oldest layer's index in the ring; the layers undo can take back above it, then the
    /// ones redo can put back.
    var bottom = 0
    var undoCount = 0
    var redoCount = 0
    /// The running (or last) overdub's id, compared with `LoopTrack.touchedBy`.
    var layer: UInt32 = 0
    /// Per chunk: nothing names its tape copy any more (`LoopTrack.reclaim` brings the current
    /// layer back there); `reclaimable` counts them.
    var tapeFree: UnsafeMutablePointer<Bool>
    var tapeChunks = 1
    var reclaimable = 0

    init() {
        entryChunk = .allocate(capacity: 1)
        entrySlot = .allocate(capacity: 1)
        layerStart = .allocate(capacity: Self.maximumDepth)
        layerStart.initialize(repeating: 0, count: Self.maximumDepth)
        layerEntries = .allocate(capacity: Self.maximumDepth)
        layerEntries.initialize(repeating: 0, count: Self.maximumDepth)
        layerComplete = .allocate(capacity: Self.maximumDepth)
        layerComplete.initialize(repeating: true, count: Self.maximumDepth)
        tapeFree = .allocate(capacity: 1)
        tapeFree.initialize(to: false)
    }

    mutating func prepare(chunks: Int) {
        entryChunk.deallocate()
        entrySlot.deallocate()
        entryCapacity = Self.maximumDepth * max(1, chunks)
        entryChunk = .allocate(capacity: entryCapacity)
        entryChunk.initialize(repeating: 0, count: entryCapacity)
        entrySlot = .allocate(capacity: entryCapacity)
        entrySlot.initialize(repeating: -1, count: entryCapacity)
        tapeFree.deallocate()
        tapeChunks = max(1, chunks)
        tapeFree = .allocate(capacity: tapeChunks)
        tapeFree.initialize(repeating: false, count: tapeChunks)
        reclaimable = 0
    }

    func free() {
        entryChunk.deallocate(); entrySlot.deallocate()
        layerStart.deallocate(); layerEntries.deallocate(); layerComplete.deallocate()
        tapeFree.deallocate()
    }

    /// Empty; the tape is the track's own again (the chunk map is reset with it).
    mutating func clear() {
        bottom = 0
        undoCount = 0
        redoCount = 0
        if reclaimable > 0 { tapeFree.update(repeating: false, count: tapeChunks) }
        reclaimable = 0
    }

    @inline(__always)
    func ring(_ k: Int) -> Int { (bottom + k) % Self.maximumDepth }
    @inline(__always)
    func entry(_ absolute: Int) -> Int { absolute % entryCapacity }

    var canUndo: Bool { undoCount > 0 && layerComplete[ring(undoCount - 1)] }
    var canRedo: Bool { redoCount > 0 }

    /// Gives back the chunks layer `k` (a ring offset) names in its entries; where an entry
    /// named the tape, that chunk of the tape is free.
    mutating func giveEntries(of k: Int, into pool: UnsafeMutablePointer<LoopPool>) {
        let l = ring(k)
        for e in 0..<layerEntries[l] {
            let i = entry(layerStart[l] + e)
            let s = entrySlot[i]
            if s >= 0 {
                pool.pointee.give(s)
            } else {
                let c = Int(entryChunk[i])
                if !tapeFree[c] { tapeFree[c] = true; reclaimable += 1 }
            }
        }
    }

    /// Forgets the oldest layer undo could take back (not the running one: `keep` layers stay).
    mutating func dropOldest(keeping keep: Int = 0, into pool: UnsafeMutablePointer<LoopPool>) -> Bool {
        guard undoCount > keep else { return false }
        giveEntries(of: 0, into: pool)
        bottom = (bottom + 1) % Self.maximumDepth
        undoCount -= 1
        return true
    }

    /// Gives back everything the history names and empties it.
    mutating func release(into pool: UnsafeMutablePointer<LoopPool>) {
        for k in 0..<(undoCount + redoCount) { giveEntries(of: k, into: pool) }
        clear()
    }

    /// A new overdub: the layers redo could put back go, the oldest beyond `depth - 1` too.
    mutating func begin(depth: Int, pool: UnsafeMutablePointer<LoopPool>) {
        for k in undoCount..<(undoCount + redoCount) { giveEntries(of: k, into: pool) }
        redoCount = 0
        while undoCount >= max(1, depth) { _ = dropOldest(into: pool) }
        let start: Int
        if undoCount > 0 {
            let top = ring(undoCount - 1)
            start = layerStart[top] + layerEntries[top]
        } else {
            start = 0
        }
        let l = ring(undoCount)
        layerStart[l] = start % entryCapacity
        layerEntries[l] = 0
        layerComplete[l] = true
        undoCount += 1
        layer &+= 1
        if layer == 0 { layer = 1 }
    }

    /// Records that the running layer moved chunk `chunk` off `slot`.
    @inline(__always)
    mutating func note(chunk: Int, slot: Int32) {
        let l = ring(undoCount - 1)
        let e = entry(layerStart[l] + layerEntries[l])
        entryChunk[e] = Int32(chunk)
        entrySlot[e] = slot
        layerEntries[l] += 1
    }
}

extension LoopTrack {
    /// Starts an overdub layer (a tap while playing). Audio thread.
    mutating func beginOverdub(depth: Int, pool: UnsafeMutablePointer<LoopPool>) {
        history.begin(depth: depth, pool: pool)
        dubTarget = 1
        state = .overdubbing
    }

    /// Saves chunk `c` for the running layer: its content goes into a fresh pool chunk, which
    /// becomes current (the overdub goes on there), and the layer beneath stays where it was.
    /// When the pool is dry even after dropping this track's older layers, the overdub goes on
    /// in place and the layer can no longer be undone. Audio thread.
    mutating func saveChunk(_ c: Int, _ pool: UnsafeMutablePointer<LoopPool>) {
        touchedBy[c] = history.layer
        // No layer to note it in (every step was dropped): the overdub goes on in place.
        guard history.undoCount > 0 else { return }
        var fresh = pool.pointee.take()
        while fresh == nil, history.dropOldest(keeping: 1, into: pool) { fresh = pool.pointee.take() }
        guard let p = fresh else {
            history.layerComplete[history.ring(history.undoCount - 1)] = false
            return
        }
        if stereo { pool.pointee.stereoUsed = true }
        let start = c << LoopPool.chunkShift
        let count = min(LoopPool.chunkSize, length - start)
        for side in 0..<(stereo ? 2 : 1) {
            data(slot: p, chunk: c, side, pool).update(from: data(c, side, pool), count: count)
        }
        history.note(chunk: c, slot: slot[c])
        slot[c] = p
    }

    /// Where nothing names the tape's copy of a chunk any more, copies the chunk's current layer
    /// back onto the tape and gives its pool chunk back: up to `budget` chunks, returning how many
    /// moved. The samples stay the same, so playback and undo cannot tell. Not while a crossfade
    /// runs (it reads chunks by where they lived). Audio thread, at a block's start.
    mutating func reclaim(_ budget: Int, _ pool: UnsafeMutablePointer<LoopPool>) -> Int {
        guard history.reclaimable > 0, budget > 0, !isBusy else { return 0 }
        var moved = 0, looked = 0
        var c = reclaimCursor
        while moved < budget, history.reclaimable > 0, looked < history.tapeChunks {
            if history.tapeFree[c] {
                history.tapeFree[c] = false
                history.reclaimable -= 1
                let p = slot[c]
                if p >= 0 {
                    let count = max(0, min(LoopPool.chunkSize, length - (c << LoopPool.chunkShift)))
                    for side in 0..<(stereo ? 2 : 1) {
                        data(slot: -1, chunk: c, side, pool).update(from: data(slot: p, chunk: c, side, pool), count: count)
                    }
                    slot[c] = -1
                    pool.pointee.give(p)
                    moved += 1
                }
            }
            c += 1
            if c == history.tapeChunks { c = 0 }
            looked += 1
        }
        reclaimCursor = c
        return moved
    }

    /// Takes the last overdub back (ending a running one), crossfading to the layer beneath.
    mutating func undo(fadeLength: Int) {
        guard hasLoop, history.canUndo else { return }
        history.undoCount -= 1
        swapLayer(history.ring(history.undoCount))
        history.redoCount += 1
        undoFadeRemaining = fadeLength
        dubGain = 0
        dubTarget = 0
        state = .playing
    }

    /// Puts back the overdub the last undo took back, crossfading to it.
    mutating func redo(fadeLength: Int) {
        guard state == .playing, history.canRedo else { return }
        swapLayer(history.ring(history.undoCount))
        history.undoCount += 1
        history.redoCount -= 1
        undoFadeRemaining = fadeLength
    }

    /// Exchanges layer `l`'s entries with the chunk map, noting where each chunk fades from.
    private mutating func swapLayer(_ l: Int) {
        stamp &+= 1
        for e in 0..<history.layerEntries[l] {
            let k = history.entry(history.layerStart[l] + e)
            let c = Int(history.entryChunk[k])
            fadeFrom[c] = slot[c]
            fadeStamp[c] = stamp
            slot[c] = history.entrySlot[k]
            history.entrySlot[k] = fadeFrom[c]
        }
    }
}

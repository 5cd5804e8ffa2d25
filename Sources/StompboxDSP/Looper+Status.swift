import Synchronization

/// What the Looper tells other threads after each block: the status `LooperControl` shows, and
/// how far the tapes' thread must keep each tape resident.
extension Looper {
    func publishStatus() {
        let selected = tracks[selectedTrack]
        control.stateValue.store(selected.state.rawValue, ordering: .releasing)
        control.positionValue.store(selected.state == .recording ? selected.length : selected.position, ordering: .relaxed)
        control.lengthValue.store(selected.length, ordering: .relaxed)
        control.undoAvailableValue.store(selected.history.canUndo, ordering: .relaxed)
        var countingIn = false
        for t in 0..<LooperControl.trackCount {
            let track = tracks[t]
            countingIn = countingIn || track.countIn > 0
            control.status(t, .state).pointee.store(track.state.rawValue, ordering: .relaxed)
            control.status(t, .position).pointee.store(track.state == .recording ? track.length : track.position, ordering: .relaxed)
            control.status(t, .length).pointee.store(track.length, ordering: .relaxed)
            control.status(t, .undoSteps).pointee.store(track.history.canUndo ? track.history.undoCount : 0, ordering: .relaxed)
            control.status(t, .redoSteps).pointee.store(track.history.redoCount, ordering: .relaxed)
            let waiting = track.armed || track.countIn > 0 || (track.state == .recording && track.closeAt > 0)
            control.status(t, .waiting).pointee.store(waiting ? 1 : 0, ordering: .relaxed)
        }
        control.countingInValue.store(countingIn, ordering: .relaxed)
        publishDemand()
    }

    /// Tells the tapes' thread how far each tape must be resident: the selected track's and any
    /// recording's `residentAhead` beyond what is written, a loop's up to its length, and the
    /// pool a loop's length beyond the chunks handed out (room for a whole-pass overdub).
    private func publishDemand() {
        guard let demand else { return }
        let ahead = Int(Looper.residentAhead * rate)
        let selected = selectedTrack
        let stereoWanted = parameters.isOn(p.stereo)
        var longest = 0, longestStereo = 0
        for t in 0..<LooperControl.trackCount {
            let track = tracks[t]
            let active = t == selected || track.state == .recording || track.armed || track.countIn > 0
            let left = track.length + (active ? ahead : 0)
            demand[2 * t].store(left, ordering: .relaxed)
            demand[2 * t + 1].store(track.stereo || (active && stereoWanted) ? left : 0, ordering: .relaxed)
            if track.hasLoop {
                longest = max(longest, track.length)
                if track.stereo { longestStereo = max(longestStereo, track.length) }
            }
        }
        let used = pool.pointee.highWater << LoopPool.chunkShift
        let count = LooperControl.trackCount
        demand[2 * count].store(longest > 0 ? used + longest : 0, ordering: .relaxed)
        demand[2 * count + 1].store(longestStereo > 0 || pool.pointee.stereoUsed ? used + longestStereo : 0, ordering: .relaxed)
    }

    /// How many samples of track 1's tape (left) and of the undo pool (left) are resident (nil
    /// when the tapes are not reserved lazily).
    var residentTape: (a: Int, b: Int)? {
        guard let resident = tapes?.resident else { return nil }
        return (resident[0], resident[2 * LooperControl.trackCount])
    }

    /// One pass of the tapes' background thread, now (tests).
    func updateTapes() { tapes?.update() }
}

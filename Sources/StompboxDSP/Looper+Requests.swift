/// The Looper's gestures, handled on the audio thread at the start of a block, and where the cycle
/// puts a recording's start and close.
extension Looper {
    /// Marks every request sent so far as handled without acting on it (the pedal is off).
    /// Audio thread.
    public func skipPendingRequests() {
        handled = (control.tapRequests.load(ordering: .acquiring), control.holdRequests.load(ordering: .acquiring),
                   control.undoRequests.load(ordering: .acquiring), control.redoRequests.load(ordering: .acquiring),
                   control.recordNextRequests.load(ordering: .acquiring))
        for t in 0..<LooperControl.trackCount {
            for k in 0..<LooperControl.Request.count {
                let kind = LooperControl.Request(rawValue: k)!
                handledTrack[t * LooperControl.Request.count + k] =
                    control.request(t, kind).pointee.load(ordering: .acquiring)
            }
        }
    }

    func handleRequests() {
        keepPoolRoom()
        let selected = selectedTrack
        let taps = control.tapRequests.load(ordering: .acquiring)
        handle(&handled.taps, taps, selected, .tap)
        if !tracks[selected].isBusy {
            handle(&handled.holds, control.holdRequests.load(ordering: .acquiring), selected, .hold)
            handle(&handled.undos, control.undoRequests.load(ordering: .acquiring), selected, .undo)
            handle(&handled.redos, control.redoRequests.load(ordering: .acquiring), selected, .redo)
        }
        let next = control.recordNextRequests.load(ordering: .acquiring)
        while handled.next != next {
            handled.next &+= 1
            recordNext()
        }
        for t in 0..<LooperControl.trackCount {
            for k in 0..<LooperControl.Request.count {
                let kind = LooperControl.Request(rawValue: k)!
                let cell = handledTrack + t * LooperControl.Request.count + k
                handle(&cell.pointee, control.request(t, kind).pointee.load(ordering: .acquiring), t, kind)
            }
        }
    }

    /// Acts on the requests of one kind for track `t` not seen yet (taps one at a time, while the
    /// track is not busy; one hold, undo or redo per request).
    private func handle(_ seen: inout Int, _ sent: Int, _ t: Int, _ kind: LooperControl.Request) {
        while seen != sent {
            if tracks[t].isBusy { return }
            switch kind {
            case .tap:
                // A recording waiting for its close (or a count-in, or a boundary): taps wait.
                if tracks[t].closeAt > 0 || tracks[t].countIn > 0 || tracks[t].armed { return }
                seen &+= 1
                tap(t)
            case .hold:
                seen = sent
                tracks[t].clear(pool: pool)
            case .undo:
                seen &+= 1
                tracks[t].undo(fadeLength: pool.pointee.fadeLength)
            case .redo:
                seen &+= 1
                tracks[t].redo(fadeLength: pool.pointee.fadeLength)
            }
        }
    }

    /// Selects the lowest-numbered empty track and taps it; nothing when every track is in use.
    private func recordNext() {
        for t in 0..<LooperControl.trackCount where tracks[t].isIdle && !tracks[t].isBusy {
            parameters.storeFromAudioThread(p.selected, Float(t))
            tap(t)
            return
        }
    }

    /// One footswitch transition of track `t`.
    private func tap(_ t: Int) {
        let track = tracks + t
        switch track.pointee.state {
        case .stopped:
            start(t)
        case .recording:
            if track.pointee.free { closeFirstPass(t) } else { closeOnCycle(t) }
        case .playing:
            track.pointee.beginOverdub(depth: undoDepth, pool: pool)
        case .overdubbing:
            track.pointee.dubTarget = 0
            track.pointee.state = .playing
        }
    }

    /// How many undo steps each track keeps.
    var undoDepth: Int { min(Int(parameters.load(p.undoSteps)) + 1, LoopHistory.maximumDepth) }

    var firstPassRunning: Bool {
        for t in 0..<LooperControl.trackCount where tracks[t].free { return true }
        return false
    }

    /// One beat at `tempo.bpm`, in frames.
    private var beat: Double { 60 / Double(max(parameters.load(p.tempo), 1)) * rate }
    private var beatsPerBar: Int { Int(parameters.load(p.beatsPerBar)) + 1 }

    /// A tap on an empty track: the first loop starts now (or after its count-in); a later one
    /// on this cycle boundary if the tap is at most `lateTolerance` late, else on the next.
    private func start(_ t: Int) {
        let track = tracks + t
        track.pointee.resetState()
        track.pointee.stereo = blockIsStereo && parameters.isOn(p.stereo)
        let bars = Int(parameters.load(p.bars))
        guard cycle.length > 0 else {
            if firstPassRunning {
                // Another track records the first loop: this one starts where that one closes.
                track.pointee.armed = true
                track.pointee.pendingFixed = 0
                return
            }
            track.pointee.free = true
            let bar = beatsPerBar
            track.pointee.pendingFixed = bars > 0 ? Metronome.start(of: bars * bar, from: 0, at: 0, bpm: Double(parameters.load(p.tempo)), rate: rate) : 0
            let countIn = Int(parameters.load(p.countIn))
            if countIn > 0 {
                track.pointee.countIn = Metronome.start(of: countIn * bar, from: 0, at: 0, bpm: Double(parameters.load(p.tempo)), rate: rate)
            } else {
                track.pointee.startFrame = clock
                track.pointee.beginRecording(recorded: 0, fixed: track.pointee.pendingFixed, limit: maximumLength)
            }
            return
        }
        let c = cycle.length
        var fixed = 0
        if bars > 0 {
            let frames = Double(bars * beatsPerBar) * beat
            fixed = max(1, Int((frames / Double(c)).rounded())) * c
        }
        let late = cycle.position
        if late < min(lateFrames, c / 2) {
            recall(late, onto: t)
            track.pointee.startFrame = clock - late
            track.pointee.beginRecording(recorded: late, fixed: min(fixed, cycle.wholeCycles(maximumLength)),
                                         limit: cycle.wholeCycles(maximumLength))
        } else {
            track.pointee.armed = true
            track.pointee.pendingFixed = min(fixed, cycle.wholeCycles(maximumLength))
        }
    }

    /// The tap that closes the first loop: here, or with `looper.sync` on at the next whole beat
    /// (or bar) counted from the recording's start, recording on until then.
    private func closeFirstPass(_ t: Int) {
        let track = tracks + t
        if parameters.isOn(p.sync) {
            let unit = beat * (parameters.load(p.roundTo) >= 0.5 ? Double(beatsPerBar) : 1)
            let units = max(1, (Double(track.pointee.length) / unit).rounded(.up))
            let end = min(Int((units * unit).rounded()), track.pointee.limit)
            if end > track.pointee.length {
                track.pointee.closeAt = end
                return
            }
        }
        track.pointee.closeLoop(at: 0, shortest: shortestLength, fadeLength: pool.pointee.fadeLength)
    }

    /// The tap that closes a later track: at the next cycle boundary, or at the one just passed
    /// when the tap is at most `lateTolerance` after it (the track is then already a cycle long).
    private func closeOnCycle(_ t: Int) {
        let track = tracks + t
        let c = cycle.length, recorded = track.pointee.length
        let done = recorded / c, late = recorded % c
        if done >= 1 && late < min(lateFrames, c / 2) {
            let loop = done * c
            if late == 0 {
                track.pointee.closeLoop(at: 0, shortest: shortestLength, fadeLength: pool.pointee.fadeLength)
            } else if late >= pool.pointee.fadeLength {
                track.pointee.closeLate(loop: loop, pool: pool)
            } else if loop + pool.pointee.fadeLength > track.pointee.capacity {
                // At the very end of the tape there is no room to record the crossfade: the
                // loop plays on without one, fading in.
                track.pointee.state = .playing
                track.pointee.length = loop
                track.pointee.position = late
                track.pointee.fadeIn = true
            } else {
                // Not yet enough after the boundary to crossfade into the head: record that much.
                track.pointee.closeAt = loop + pool.pointee.fadeLength
                track.pointee.lateClose = true
            }
        } else {
            track.pointee.closeAt = min((done + 1) * c, track.pointee.limit)
        }
    }

    /// 1 while track `t`'s last layer is still being written (overdubbing, or its punch-out
    /// ramp running), else 0: that layer must not be dropped.
    private func runningLayers(_ t: Int) -> Int {
        tracks[t].state == .overdubbing || tracks[t].dubGain > 0 || tracks[t].dubTarget > 0 ? 1 : 0
    }

    /// Keeps room in the undo pool for a whole-pass overdub of the longest loop. First the tracks'
    /// current layers go back onto their tapes where undo no longer needs the tape's copy
    /// (`reclaimPerBlock` chunks a block, more while the pool is nearly dry); those still to go
    /// count as room. Then, while that is short, the oldest undo steps of the track that has the
    /// most are dropped.
    private func keepPoolRoom() {
        var budget = Looper.reclaimPerBlock
        for t in 0..<LooperControl.trackCount { budget -= tracks[t].reclaim(budget, pool) }
        // An overdub takes at most two chunks a block per track: never start one short of that.
        let floor = 2 * LooperControl.trackCount
        var t = 0
        while pool.pointee.available < floor, t < LooperControl.trackCount {
            if tracks[t].reclaim(floor - pool.pointee.available, pool) == 0 { t += 1 }
        }
        var pending = 0
        for t in 0..<LooperControl.trackCount { pending += tracks[t].history.reclaimable }
        var longest = 0
        for t in 0..<LooperControl.trackCount where tracks[t].hasLoop { longest = max(longest, tracks[t].length) }
        let wanted = (longest + LoopPool.chunkSize - 1) >> LoopPool.chunkShift
        while pool.pointee.available + pending < wanted {
            var most = -1, steps = 0
            for t in 0..<LooperControl.trackCount where tracks[t].history.undoCount - runningLayers(t) > steps {
                most = t
                steps = tracks[t].history.undoCount - runningLayers(t)
            }
            guard most >= 0 else { return }
            let before = tracks[most].history.reclaimable
            _ = tracks[most].history.dropOldest(keeping: runningLayers(most), into: pool)
            pending += tracks[most].history.reclaimable - before
        }
    }

    /// Keeps the block's input for a recording that starts on a boundary already passed.
    func remember(_ n: Int, _ io: TrackIO) {
        let size = recentMask + 1
        let from = n > size ? n - size : 0
        for j in from..<n {
            let k = (recentEnd + j - from) & recentMask
            recent[3 * k] = io.inLeft[j]
            recent[3 * k + 1] = io.inRight[j]
            recent[3 * k + 2] = io.inMiddle[j]
        }
        recentEnd = (recentEnd + n - from) & recentMask
    }

    /// Copies the last `frames` frames of input onto track `t`'s tape (from its start).
    func recall(_ frames: Int, onto t: Int) {
        let track = tracks[t]
        for j in 0..<frames {
            let k = (recentEnd - frames + j) & recentMask
            if track.stereo {
                track.tapeLeft[j] = recent[3 * k]
                track.tapeRight[j] = recent[3 * k + 1]
            } else {
                track.tapeLeft[j] = recent[3 * k + 2]
            }
        }
    }
}

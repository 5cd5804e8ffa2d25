import Foundation
import Synchronization

/// The looper pedal: `LooperControl.trackCount` (8) stereo tracks in sync. Output = input +
/// level × the tracks' sum (each track with its gain, pan and mute); while a track records, the
/// input passes through unchanged.
///
/// One track at a time is selected (`looper.track`); the footswitch gestures act on it, as the
/// single Looper's did: `tap` cycles stopped → recording → playing → overdubbing → playing → …,
/// `hold` stops and clears, `undo` takes the last overdub back, `redo` puts it back. A player who
/// never selects another track has the single Looper of before (mono, or the middle of a stereo
/// board's sides), with 16 undo steps where it had one (`looper.undo_steps` sets 1–16).
///
/// The cycle: the first loop recorded sets it. That first pass starts at the tap (after a
/// count-in of `looper.count_in` bars, the metronome clicking) and closes at the tap; with
/// `looper.sync` on, at the next whole bar of `looper.beats_per_bar` beats of `tempo.bpm` counted
/// from its start (or whole beat, with `looper.round_to` = beat); with `looper.bars` > 0, after
/// exactly that many bars. Every later track is a whole number of cycles, in step with the first:
/// its recording starts at a cycle boundary and closes at the first boundary after the closing
/// tap (or after `looper.bars` bars, in whole cycles). A tap up to `lateTolerance` (80 ms) after a
/// boundary counts as on it: a recording starts on that boundary (the input since is kept in a
/// short history and copied in), a closing tap closes on it (the frames since are crossfaded
/// into the head in place). Tracks' positions all advance with one clock, so they stay aligned
/// to the frame however long they play.
///
/// Memory budget: each track's tape is two sides of `maximumLength` frames (at least 120 s), so
/// 8 tracks reserve 8 × 120 s × 2 × 4 bytes = 368 MB at 48 kHz. Undo keeps overdubs as layer
/// differences in a pool of `undoPoolSeconds` (1,440 s) of stereo chunks shared by all tracks:
/// 552 MB at 48 kHz, the undo budget. Each track keeps up to 16 undo steps
/// (`LoopHistory.maximumDepth`, as `looper.undo_steps` asks) while the pool holds them: a step
/// costs only the chunks its overdub touched, so 16 overdubs of 10 s fit on each of 8 full
/// tracks, and 16 whole-pass overdubs on each of 8 loops up to 11 s or on one loop up to 80 s.
/// The pool holds only what undo can reach: once a chunk's oldest reachable layer is gone, its
/// current layer goes back onto the tape (`LoopTrack.reclaim`). It always keeps room for one
/// whole pass of the longest loop: an overdub that finds it short drops its own track's oldest
/// steps, and at each block start the Looper drops the oldest steps of the track that has the
/// most. Everything is reserved in `prepare` and resident only as far as it
/// is used (`LooperTapes`), so an unused track or an unused undo step costs no memory.
///
/// Requests: at the start of each block the audio thread handles the requests it has not seen:
/// the selected track's taps (one transition per tap), hold, undo, redo, then `recordNext`, then
/// requests naming a track, track by track in the same order. While a track runs a short
/// transition (at most `seamTime`) or waits to close, its requests wait. `reset` keeps every
/// recording (only `hold` clears). While the pedal is off, the chain calls
/// `skipPendingRequests`, so gestures made then are ignored, as on a real pedal.
///
/// Thread contract: `prepare` off the audio thread (allocates and reserves everything); `reset`,
/// `process` and `skipPendingRequests` on the audio thread, allocation- and lock-free.
/// `LooperControl` is the only channel to other threads; `trackAudio` reads the tracks off the
/// audio thread while it does not run.
public final class Looper: AudioEffect {
    let parameters: ParameterStore
    let control: LooperControl

    /// Each track's tape holds at least this many seconds at any sample rate (an eighth of it
    /// where the system refuses to reserve that much).
    public static let minimumCapacity = 120.0
    /// The undo pool holds this many seconds of stereo layers, shared by all tracks: 16 steps
    /// of 10 s on each of 8 tracks, and a pass of the longest loop kept free.
    public static let undoPoolSeconds = 1440.0
    /// Seam crossfade, overdub punch ramps, undo crossfade and the fade-out on hold.
    public static let seamTime = 0.005
    /// A first pass shorter than this is discarded.
    public static let shortestLoop = 0.05
    /// A tap this late after a cycle boundary counts as on it.
    public static let lateTolerance = 0.08
    /// Chunks a block may copy back from the undo pool onto the tapes (`keepPoolRoom`): 8 chunks
    /// of 4,096 frames is 256 KB of copying at most, tens of microseconds.
    static let reclaimPerBlock = 8
    /// Seconds of a track's tape kept resident ahead of its recording position.
    static let residentAhead = 10.0
    /// The undo pool this Looper reserves at its next `prepare` (tests make it small to fill it).
    var poolSeconds = Looper.undoPoolSeconds
    /// The most `prepare` may reserve (tests play a system that refuses more).
    var reservableBytes = Int.max

    /// Longest loop in samples (0 before `prepare`).
    public private(set) var maximumLength = 0

    let tracks: UnsafeMutablePointer<LoopTrack>
    let pool: UnsafeMutablePointer<LoopPool>
    /// The tapes' memory when reserved lazily, else nil (`fallback` holds it).
    var tapes: LooperTapes?
    private var fallback: UnsafeMutablePointer<Float>?
    /// The tapes' demand cells (no reference counting on the audio thread; `tapes` owns them).
    var demand: UnsafeMutablePointer<Atomic<Int>>?

    var rate = 48_000.0
    var shortestLength = 2
    var lateFrames = 1
    var maximumBlock = 0
    var cycle = LoopCycle()
    /// Frames processed since `prepare`.
    var clock = 0
    /// How far the copy `LooperControl.copyTrack` asked for has come (`Looper+Share.swift`).
    var copyOffset = 0
    /// How far a load (`Looper+Load.swift`) has come: the item, and the frame within it.
    var loadIndex = 0
    var loadOffset = 0
    /// Whether the block being processed is stereo.
    var blockIsStereo = false
    var level = SmoothedValue(Parameter.looperLevel.spec.defaultValue)

    /// Block buffers: the input's sides and middle, one track's sound, the tracks' sum.
    var inLeft = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    var inRight = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    var inMiddle = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    var outLeft = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    var outRight = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    var busLeft = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    var busRight = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    /// The last input (both sides and the middle), for a recording that starts on a boundary
    /// already passed. A ring of `recentMask + 1` frames.
    var recent = UnsafeMutablePointer<Float>.allocate(capacity: 3)
    var recentMask = 0
    var recentEnd = 0

    /// Requests handled so far: the selected track's, then per track (`LooperControl.Request`).
    var handled = (taps: 0, holds: 0, undos: 0, redos: 0, next: 0)
    let handledTrack: UnsafeMutablePointer<Int>

    /// Read on the audio thread: kept here, so their statics are made in `init`, not there.
    let p: LooperParameters

    public init(parameters: ParameterStore, control: LooperControl) {
        self.parameters = parameters
        self.control = control
        p = LooperParameters()
        let count = LooperControl.trackCount
        tracks = .allocate(capacity: count)
        tracks.initialize(repeating: LoopTrack(), count: count)
        for t in 1..<count { tracks[t] = LoopTrack() }
        pool = .allocate(capacity: 1)
        pool.initialize(to: LoopPool())
        handledTrack = .allocate(capacity: count * LooperControl.Request.count)
        handledTrack.initialize(repeating: 0, count: count * LooperControl.Request.count)
        recent.initialize(repeating: 0, count: 3)
    }

    deinit {
        releaseTapes()
        for t in 0..<LooperControl.trackCount { tracks[t].deallocate() }
        tracks.deinitialize(count: LooperControl.trackCount)
        tracks.deallocate()
        pool.pointee.free.deallocate()
        pool.pointee.fade.deallocate()
        pool.deallocate()
        handledTrack.deallocate()
        for buffer in [inLeft, inRight, inMiddle, outLeft, outRight, busLeft, busRight] { buffer.deallocate() }
        recent.deallocate()
    }

    private func releaseTapes() {
        tapes?.stop()
        tapes = nil
        demand = nil
        fallback?.deallocate()
        fallback = nil
    }

    /// Reserves every track's tape and the undo pool (resident only as they are used), and
    /// clears the looper. Not on the audio thread.
    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        rate = sampleRate
        maximumBlock = max(1, maximumBlockSize)
        for buffer in [\Looper.inLeft, \.inRight, \.inMiddle, \.outLeft, \.outRight, \.busLeft, \.busRight] {
            self[keyPath: buffer].deallocate()
            self[keyPath: buffer] = .allocate(capacity: maximumBlock)
            self[keyPath: buffer].initialize(repeating: 0)
        }
        lateFrames = Int((Looper.lateTolerance * sampleRate).rounded())
        var ring = 1
        while ring < lateFrames + 1 { ring <<= 1 }
        recent.deallocate()
        recent = .allocate(capacity: 3 * ring)
        recent.initialize(repeating: 0, count: 3 * ring)
        recentMask = ring - 1
        recentEnd = 0

        let count = LooperControl.trackCount
        let ahead = Int(Looper.residentAhead * sampleRate)
        let selected = selectedTrack
        releaseTapes()
        // Where the system refuses to reserve the whole (a strict overcommit policy, a limit on
        // address space), shorter tapes and a smaller pool are asked for, down to an eighth: a
        // shorter longest loop rather than no Looper or a crash.
        var scale = 1
        var wanted = 0, capacity = 0, poolChunks = 0
        var capacities: [Int] = []
        var bases: [UnsafeMutablePointer<Float>] = []
        while true {
            wanted = Int((Looper.minimumCapacity * sampleRate / Double(scale)).rounded(.up))
            capacity = ((wanted + LoopPool.chunkSize - 1) >> LoopPool.chunkShift) << LoopPool.chunkShift
            poolChunks = Int((poolSeconds / Double(scale) * sampleRate).rounded(.up) + Double(LoopPool.chunkSize - 1)) >> LoopPool.chunkShift
            let poolFrames = poolChunks << LoopPool.chunkShift
            capacities = [Int](repeating: capacity, count: 2 * count) + [poolFrames, poolFrames]
            var initial = [Int](repeating: 0, count: capacities.count)
            initial[2 * selected] = ahead
            let bytes = capacities.reduce(0, +) * MemoryLayout<Float>.size
            if bytes <= reservableBytes, let reserved = LooperTapes(capacities: capacities, initialDemand: initial) {
                tapes = reserved
                demand = reserved.demand
                bases = reserved.regions.map(\.base)
                reserved.start()
                break
            }
            if scale < 8 { scale *= 2; continue }
            // Not even that reserved: ordinary memory, every page written now so the kernel's
            // first-touch zero fill stays off the audio thread.
            let total = capacities.reduce(0, +)
            let memory = UnsafeMutablePointer<Float>.allocate(capacity: total)
            memory.initialize(repeating: 0, count: total)
            fallback = memory
            var offset = 0
            bases = capacities.map { size in defer { offset += size }; return memory + offset }
            break
        }
        maximumLength = wanted
        for t in 0..<count {
            tracks[t].prepare(left: bases[2 * t], right: bases[2 * t + 1], capacity: capacity, maximumLength: wanted)
        }

        let fadeLength = max(1, Int((Looper.seamTime * sampleRate).rounded()))
        pool.pointee.left = bases[2 * count]
        pool.pointee.right = bases[2 * count + 1]
        pool.pointee.chunks = poolChunks
        pool.pointee.free.deallocate()
        pool.pointee.free = .allocate(capacity: poolChunks)
        pool.pointee.clear()
        pool.pointee.fade.deallocate()
        pool.pointee.fade = .allocate(capacity: fadeLength + 1)
        for k in 0...fadeLength {
            let s = sin(Double.pi / 2 * Double(k) / Double(fadeLength))
            pool.pointee.fade[k] = Float(s * s)
        }
        pool.pointee.fadeLength = fadeLength
        pool.pointee.dubStep = 1 / Float(fadeLength)
        shortestLength = max(2 * fadeLength, Int(Looper.shortestLoop * sampleRate))
        level.prepare(sampleRate: sampleRate)
        for t in 0..<count {
            tracks[t].gainLeft.prepare(sampleRate: sampleRate)
            tracks[t].gainRight.prepare(sampleRate: sampleRate)
        }
        cycle = LoopCycle()
        clock = 0
        skipPendingRequests()
        reset()
        publishStatus()
    }

    /// Snaps the level and the tracks' gains to their parameters. Keeps every recording and its
    /// state (only `hold` clears).
    public func reset() {
        level.snap(to: parameters.load(.looperLevel))
        for t in 0..<LooperControl.trackCount {
            let (l, r) = trackGains(t)
            tracks[t].gainLeft.snap(to: l)
            tracks[t].gainRight.snap(to: r)
        }
    }

    /// A real looper ignores its footswitch while it is off. Audio thread.
    public func bypassed() { skipPendingRequests() }

    /// Audio thread.
    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        guard let io = block.baseAddress, maximumLength > 0 else { return }
        var start = 0
        while start < block.count {
            let n = min(maximumBlock, block.count - start)
            let x = io + start
            for j in 0..<n { inMiddle[j] = x[j].isFinite ? x[j] : 0 }
            blockIsStereo = false
            run(n, TrackIO(inLeft: inMiddle.baseAddress!, inRight: inMiddle.baseAddress!, inMiddle: inMiddle.baseAddress!,
                           outLeft: outLeft.baseAddress!, outRight: outRight.baseAddress!))
            let m = inMiddle, l = busLeft, r = busRight
            if level.isRamping {
                for j in 0..<n { x[j] = m[j] + level.next() * (0.5 * (l[j] + r[j])) }
            } else {
                let g = level.current
                for j in 0..<n { x[j] = m[j] + g * (0.5 * (l[j] + r[j])) }
            }
            start += n
        }
    }

    /// One block of at most `maximumBlock` frames, its input in `io`: requests, every track,
    /// the tracks' sum in `busLeft`/`busRight`.
    private func run(_ n: Int, _ io: TrackIO) {
        level.setTarget(parameters.load(.looperLevel))
        handleRequests()
        serviceLoad()
        busLeft.baseAddress!.update(repeating: 0, count: n)
        busRight.baseAddress!.update(repeating: 0, count: n)
        cycle.clock = clock
        // The first pass that sets the cycle goes first, so tracks waiting for it start where it closes.
        defineCycle()
        var ran: UInt32 = 0
        for t in 0..<LooperControl.trackCount where tracks[t].free {
            ran |= 1 << t
            mix(t, n, io)
            defineCycle()
        }
        for t in 0..<LooperControl.trackCount where ran & (1 << t) == 0 { mix(t, n, io) }
        for t in 0..<LooperControl.trackCount { tracks[t].closedAt = -1 }
        serviceCopy()
        remember(n, io)
        clock += n
        if cycle.length == 0 && !firstPassRunning {
            // The first pass they waited for was discarded (too short) or cleared.
            for t in 0..<LooperControl.trackCount { tracks[t].armed = false }
        }
        if cycle.length > 0 {
            cycle.position = (cycle.position + n) % cycle.length
            var idle = true
            for t in 0..<LooperControl.trackCount where !tracks[t].isIdle { idle = false }
            if idle {
                // Every track cleared: the next loop sets a new cycle.
                cycle = LoopCycle()
                control.cycleValue.store(0, ordering: .relaxed)
            }
        }
        publishStatus()
        control.clockValue.store(clock, ordering: .relaxed)
        control.blocksRun.add(1, ordering: .releasing)
    }

    /// When a first pass closed in this block (at `closedAt`), its length becomes the cycle.
    private func defineCycle() {
        guard cycle.length == 0 else { return }
        for t in 0..<LooperControl.trackCount where tracks[t].closedAt >= 0 {
            cycle.length = tracks[t].length
            cycle.position = (cycle.length - tracks[t].closedAt % cycle.length) % cycle.length
            control.cycleValue.store(cycle.length, ordering: .relaxed)
            return
        }
    }

    /// Runs track `t` and adds its sound, through its gains, to the sum.
    private func mix(_ t: Int, _ n: Int, _ io: TrackIO) {
        let track = tracks + t
        let (gl, gr) = trackGains(t)
        track.pointee.gainLeft.setTarget(gl)
        track.pointee.gainRight.setTarget(gr)
        let playedFrom = track.pointee.hasLoop ? track.pointee.position : -1, loopLength = track.pointee.length
        let sounding = track.pointee.process(n, io, pool, cycle, shortest: shortestLength)
        share(t, n, from: sounding ? playedFrom : -1, length: loopLength)
        if track.pointee.fadeIn {
            // A late close: its playback starts in the middle of the loop, so it fades in.
            track.pointee.fadeIn = false
            track.pointee.gainLeft.snap(to: 0)
            track.pointee.gainRight.snap(to: 0)
            track.pointee.gainLeft.setTarget(gl)
            track.pointee.gainRight.setTarget(gr)
        }
        guard sounding else {
            _ = track.pointee.gainLeft.skip(n)
            _ = track.pointee.gainRight.skip(n)
            return
        }
        let left = outLeft.baseAddress!, right = track.pointee.stereo ? outRight.baseAddress! : left
        Looper.add(left, into: busLeft.baseAddress!, n, &track.pointee.gainLeft)
        Looper.add(right, into: busRight.baseAddress!, n, &track.pointee.gainRight)
    }

    @inline(__always)
    private static func add(_ x: UnsafeMutablePointer<Float>, into bus: UnsafeMutablePointer<Float>, _ n: Int,
                            _ gain: inout SmoothedValue) {
        if gain.isRamping {
            for j in 0..<n { bus[j] += gain.next() * x[j] }
        } else if gain.current == 1 {
            for j in 0..<n { bus[j] += x[j] }
        } else {
            let g = gain.current
            for j in 0..<n { bus[j] += g * x[j] }
        }
    }

    /// Track `t`'s gain on each side: its gain, pan (a balance: centre is full on both sides,
    /// so a mono loop sounds as before) and mute.
    @inline(__always)
    func trackGains(_ t: Int) -> (Float, Float) {
        let cells = p.track + 3 * t
        if parameters.isOn(cells[2]) { return (0, 0) }
        let db = parameters.load(cells[0])
        if db != tracks[t].gainDecibels {
            tracks[t].gainDecibels = db
            tracks[t].gainLinear = decibelsToGain(db)
        }
        let g = tracks[t].gainLinear
        let pan = parameters.load(cells[1])
        return (g * min(1, 1 - pan), g * min(1, 1 + pan))
    }

    /// The selected track (0-based).
    var selectedTrack: Int {
        min(max(Int(parameters.load(p.selected)), 0), LooperControl.trackCount - 1)
    }
}

extension Looper: StereoEffect {
    /// The sides differ after it only if they differed before: it is no reason to make a board stereo.
    public var playsInStereo: Bool { false }

    /// A stereo board: a mono track is recorded from the middle of the two sides (their mean) and
    /// played back on both; a stereo track (`looper.stereo`) records each side. Each side's own
    /// signal passes unchanged: on each side, as in mono, output = input + level × loops.
    public func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {
        guard let l = left.baseAddress, let r = right.baseAddress, maximumLength > 0 else { return }
        var start = 0
        while start < left.count {
            let n = min(maximumBlock, left.count - start)
            let xl = l + start, xr = r + start
            for j in 0..<n {
                let a = xl[j].isFinite ? xl[j] : 0, b = xr[j].isFinite ? xr[j] : 0
                inLeft[j] = a
                inRight[j] = b
                inMiddle[j] = 0.5 * (a + b)
            }
            blockIsStereo = true
            run(n, TrackIO(inLeft: inLeft.baseAddress!, inRight: inRight.baseAddress!, inMiddle: inMiddle.baseAddress!,
                           outLeft: outLeft.baseAddress!, outRight: outRight.baseAddress!))
            // Each side's loop is taken as the middle played through the looper minus the middle,
            // as the single Looper always computed it, so a board that never records a second
            // or stereo track sounds bit for bit as before.
            for j in 0..<n {
                let g = level.next(), m = inMiddle[j]
                xl[j] = inLeft[j] + ((m + g * busLeft[j]) - m)
                xr[j] = inRight[j] + ((m + g * busRight[j]) - m)
            }
            start += n
        }
    }
}

import Foundation
import Synchronization

/// A one-pedal looper: `tap` cycles stopped → recording → playing → overdubbing → playing → …,
/// `hold` stops and clears, `undo` removes the last overdub. Output = input + level × loop
/// (while recording the input passes through unchanged).
///
/// Tapes: two tapes of `maximumLength` samples (at least `minimumCapacity` seconds), reserved
/// in `prepare` and resident only as far as they are used (`LooperTapes`). The tapes are split
/// into chunks of `chunkSize` samples, and each chunk's current layer lives in one of the two
/// tapes (`owner`). The first time an overdub touches a chunk, the chunk is copied to the other tape and the overdub goes on there, so the previous
/// layer stays intact: copying is spread over the overdub (one chunk per 4096 samples), and
/// undo merely flips the owner of the chunks the last overdub touched (a few thousand bytes at
/// most), crossfading from the undone layer to the restored one over `seamTime`.
///
/// Seam: after the tap that closes the first pass, the input goes on being recorded for
/// `seamTime` and is crossfaded into the loop's head, so the tail runs on into the head without
/// a step; everywhere else every pass plays the recording back sample-exact. Overdubs are
/// punched in and out with `seamTime` ramps, `hold` fades the playback out over the same time.
///
/// Requests: at the start of each block the audio thread handles the requests it has not seen,
/// in this order: taps (one transition per tap), then hold, then undo. While one of the short
/// transitions above runs (at most `seamTime`), requests wait for it to end. A first pass
/// shorter than `shortestLoop` is discarded (back to stopped). When the tape is full while
/// recording, the loop closes at `maximumLength` and plays. With `looper.sync` on, the tap that
/// closes the first pass closes it at the next whole beat of `tempo.bpm` counted from the
/// recording's start (recording on until then), so the loop is a whole number of beats.
///
/// `reset` keeps the recording (only `hold` clears it). While the pedal is off, the chain
/// calls `skipPendingRequests` so taps made then are ignored, as on a real pedal.
///
/// Thread contract: `prepare` off the audio thread (allocates the tapes); `reset`, `process`
/// and `skipPendingRequests` on the audio thread, allocation- and lock-free. `LooperControl`
/// is the only channel to other threads.
/// Converts a loop by `ratio` (output rate / input rate) with a high-quality resampler;
/// StompboxAudio supplies libsamplerate's.
public typealias LoopResampler = (_ loop: [Float], _ ratio: Double) -> [Float]

public final class Looper: AudioEffect {
    let parameters: ParameterStore
    let control: LooperControl

    /// The tape holds at least this many seconds at any sample rate.
    public static let minimumCapacity = 120.0
    /// Seam crossfade, overdub punch ramps, undo crossfade and the fade-out on hold.
    public static let seamTime = 0.005
    /// A first pass shorter than this is discarded.
    public static let shortestLoop = 0.05

    static let chunkShift = 12
    static let chunkSize = 1 << chunkShift

    /// Longest loop in samples (0 before `prepare`).
    public private(set) var maximumLength = 0

    private var tapeA = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var tapeB = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    /// The tapes' memory when reserved lazily; nil while `tapeA`/`tapeB` are allocated here
    /// (before `prepare`, or where the system refuses to reserve memory).
    private var tapes: LooperTapes? {
        didSet { published = tapes.map { ($0.frontier, $0.loopExists) } }
    }
    /// The tapes' cells the audio thread publishes to (no reference counting; `tapes` owns them).
    private var published: (frontier: UnsafeMutablePointer<Atomic<Int>>, loopExists: UnsafeMutablePointer<Atomic<Bool>>)?
    /// Seconds of tape A kept resident ahead of the recording position.
    static let residentAhead = 10.0
    /// Per chunk: which tape (0 = A, 1 = B) holds the current layer.
    private var owner = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
    /// Per chunk: the overdub that last copied it (0 = none).
    private var touchedBy = UnsafeMutablePointer<UInt32>.allocate(capacity: 1)
    private var chunkCount = 1
    /// Rising crossfade, `fadeLength + 1` values from 0 to 1 (sin²: equal gain, smooth ends).
    private var fade = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var fadeLength = 1
    private var shortestLength = 2

    private var handledTaps = 0
    private var handledHolds = 0
    private var handledUndos = 0

    private var state = LooperState.stopped
    /// Loop length in samples (grows while recording the first pass).
    private var length = 0
    /// With `looper.sync` on, where the first pass closes once the closing tap came: the next
    /// whole beat at `tempo.bpm` counted from the start of the recording (0: no close waiting).
    private var closeAt = 0
    private var rate = 48_000.0
    /// Read on the audio thread: kept here, so their statics are made in `init`, not there.
    private let syncParameter = Parameter.looperSync, tempoParameter = Parameter.tempo
    private var position = 0
    /// Samples of the first-pass seam crossfade still to do (runs at positions 0..<fadeLength).
    private var sealRemaining = 0
    private var undoFadeRemaining = 0
    private var undoneLayer: UInt32 = 0
    private var fadeOutRemaining = 0
    private var fadeOutLength = 0
    private var fadeOutPosition = 0
    /// The latest overdub's id; ids only grow, so a chunk's `touchedBy` tells whether the
    /// running overdub already saved it.
    private var layer: UInt32 = 0
    private var canUndo = false
    private var dubGain: Float = 0
    private var dubTarget: Float = 0
    private var dubStep: Float = 1
    private var level = SmoothedValue(Parameter.looperLevel.spec.defaultValue)

    public init(parameters: ParameterStore, control: LooperControl) {
        self.parameters = parameters
        self.control = control
        owner.initialize(to: 0)
        touchedBy.initialize(to: 0)
        fade.initialize(to: 0)
    }

    deinit {
        releaseTapes()
        owner.deallocate()
        touchedBy.deallocate()
        fade.deallocate()
        middle.deallocate()
        played.deallocate()
    }

    /// On a stereo board: the middle of the two sides, and the same through the looper.
    private var middle = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    private var played = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)

    private func releaseTapes() {
        if let tapes {
            tapes.stop()
            self.tapes = nil
        } else {
            tapeA.deallocate()
            tapeB.deallocate()
        }
    }

    /// Reserves both tapes (about 46 MB at 48 kHz, resident only as they are used) and clears
    /// the looper. Not on the audio thread.
    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        rate = sampleRate
        closeAt = 0
        for buffer in [middle, played] { buffer.deallocate() }
        middle = .allocate(capacity: max(1, maximumBlockSize))
        middle.initialize(repeating: 0)
        played = .allocate(capacity: max(1, maximumBlockSize))
        played.initialize(repeating: 0)
        let wanted = Int((Looper.minimumCapacity * sampleRate).rounded(.up))
        chunkCount = (wanted + Looper.chunkSize - 1) >> Looper.chunkShift
        maximumLength = wanted
        let capacity = chunkCount << Looper.chunkShift
        releaseTapes()
        if let reserved = LooperTapes(capacity: capacity, ahead: Int(Looper.residentAhead * sampleRate)) {
            tapes = reserved
            tapeA = reserved.a
            tapeB = reserved.b
            reserved.start()
        } else {
            // Writing every page now keeps page faults (the kernel's first-touch zero fill) off
            // the audio thread while recording and overdubbing.
            tapeA = .allocate(capacity: capacity)
            tapeB = .allocate(capacity: capacity)
            tapeA.initialize(repeating: 0, count: capacity)
            tapeB.initialize(repeating: 0, count: capacity)
        }
        owner.deallocate(); touchedBy.deallocate()
        owner = .allocate(capacity: chunkCount)
        owner.initialize(repeating: 0, count: chunkCount)
        touchedBy = .allocate(capacity: chunkCount)
        touchedBy.initialize(repeating: 0, count: chunkCount)

        fadeLength = max(1, Int((Looper.seamTime * sampleRate).rounded()))
        fade.deallocate()
        fade = .allocate(capacity: fadeLength + 1)
        for k in 0...fadeLength {
            let s = sin(Double.pi / 2 * Double(k) / Double(fadeLength))
            fade[k] = Float(s * s)
        }
        dubStep = 1 / Float(fadeLength)
        shortestLength = max(2 * fadeLength, Int(Looper.shortestLoop * sampleRate))
        level.prepare(sampleRate: sampleRate)

        state = .stopped
        length = 0
        position = 0
        layer = 0
        clearTransitions()
        canUndo = false
        skipPendingRequests()
        reset()
        publishStatus()
    }

    /// The loop as it stands, taken before `prepare` at a new sample rate and put back after it
    /// resampled, so a server that changes its rate does not cost the player the loop.
    public struct KeptLoop {
        var state: LooperState
        var length: Int
        var position: Int
        /// The current layer, `length` samples.
        var current: [Float]
        /// The layer before the last overdub where it can still be undone, else nil.
        var previous: [Float]?
        var layer: UInt32
    }

    /// The recording, copied out (nil when there is none). Not on the audio thread, and not while it runs.
    public func keepLoop() -> KeptLoop? {
        guard state != .stopped, length > 0 else { return nil }
        var current = [Float](repeating: 0, count: length)
        var previous: [Float]? = canUndo ? [Float](repeating: 0, count: length) : nil
        let used = (length + Looper.chunkSize - 1) >> Looper.chunkShift
        for c in 0..<used {
            let start = c << Looper.chunkShift
            let count = min(Looper.chunkSize, length - start)
            let now = tape(owner[c]) + start
            current.withUnsafeMutableBufferPointer { ($0.baseAddress! + start).update(from: now, count: count) }
            if previous != nil {
                let before = touchedBy[c] != layer ? now : tape(owner[c] ^ 1) + start
                previous!.withUnsafeMutableBufferPointer { ($0.baseAddress! + start).update(from: before, count: count) }
            }
        }
        return KeptLoop(state: state, length: length, position: position, current: current,
                        previous: previous, layer: layer)
    }

    /// Puts back a loop kept at `fromRate` after `prepare` at this rate, converted by `resample`
    /// (a loop that plays is treated as a cycle, so its seam stays seamless); an overdub goes on,
    /// a recording goes on growing, and the last overdub can still be undone. Not on the audio thread.
    public func restoreLoop(_ kept: KeptLoop, fromRate: Double, toRate: Double, resample: LoopResampler) {
        guard maximumLength > 0 else { return }
        let ratio = toRate / fromRate
        let cyclic = kept.state != .recording
        let newLength = min(maximumLength, max(1, Int((Double(kept.length) * ratio).rounded())))
        func convert(_ loop: [Float]) -> [Float] {
            guard ratio != 1 else { return loop }
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
        let current = convert(kept.current)
        current.withUnsafeBufferPointer { tapeA.update(from: $0.baseAddress!, count: newLength) }
        owner.update(repeating: 0, count: chunkCount)
        touchedBy.update(repeating: 0, count: chunkCount)
        clearTransitions()
        layer = kept.layer
        canUndo = false
        if let previous = kept.previous {
            convert(previous).withUnsafeBufferPointer { tapeB.update(from: $0.baseAddress!, count: newLength) }
            // Every chunk now belongs to the last overdub: undo flips them all to tape B, which
            // is the same as tape A where that overdub did not play.
            touchedBy.update(repeating: layer, count: (newLength + Looper.chunkSize - 1) >> Looper.chunkShift)
            canUndo = true
        }
        state = kept.state
        length = newLength
        position = cyclic ? Int((Double(kept.position) * ratio).rounded()) % newLength : 0
        if state == .overdubbing { dubGain = 1; dubTarget = 1 }
        publishStatus()
    }

    /// Snaps the level to its parameter. Keeps the recording and the state (only `hold` clears).
    public func reset() {
        level.snap(to: parameters.load(.looperLevel))
    }

    /// Marks every request sent so far as handled without acting on it (the pedal is off).
    /// Audio thread.
    public func skipPendingRequests() {
        handledTaps = control.tapRequests.load(ordering: .acquiring)
        handledHolds = control.holdRequests.load(ordering: .acquiring)
        handledUndos = control.undoRequests.load(ordering: .acquiring)
    }

    /// A real looper ignores its footswitch while it is off. Audio thread.
    public func bypassed() { skipPendingRequests() }

    /// Audio thread.
    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        guard let io = block.baseAddress, maximumLength > 0 else { return }
        let n = block.count
        level.setTarget(parameters.load(.looperLevel))
        handleRequests()
        var i = 0
        while i < n {
            switch state {
            case .stopped:
                if fadeOutRemaining > 0 {
                    i += fadeOutRun(io + i, n - i)
                } else {
                    for j in i..<n where !io[j].isFinite { io[j] = 0 }
                    _ = level.skip(n - i)
                    i = n
                }
            case .recording:
                i += recordRun(io + i, n - i)
            case .playing, .overdubbing:
                i += playRun(io + i, n - i)
            }
        }
        publishStatus()
    }

    // MARK: Requests

    /// True while a short transition runs; requests wait for it.
    private var isBusy: Bool { sealRemaining > 0 || undoFadeRemaining > 0 || fadeOutRemaining > 0 }

    private func handleRequests() {
        let taps = control.tapRequests.load(ordering: .acquiring)
        while handledTaps != taps {
            if isBusy { return }
            // A synced first pass waiting for its beat: later taps wait for it (a hold does not).
            if closeAt > 0 { break }
            handledTaps &+= 1
            tap()
        }
        if isBusy { return }
        let holds = control.holdRequests.load(ordering: .acquiring)
        if holds != handledHolds {
            handledHolds = holds
            hold()
        }
        let undos = control.undoRequests.load(ordering: .acquiring)
        while handledUndos != undos {
            handledUndos &+= 1
            undo()
        }
    }

    private func tap() {
        switch state {
        case .stopped:
            // A fresh recording: every chunk back on tape A, no overdub history.
            owner.update(repeating: 0, count: chunkCount)
            touchedBy.update(repeating: 0, count: chunkCount)
            length = 0
            position = 0
            canUndo = false
            state = .recording
        case .recording:
            if parameters.isOn(syncParameter) {
                // The loop becomes a whole number of beats: it goes on recording to the next one.
                let beat = 60 / Double(max(parameters.load(tempoParameter), 1)) * rate
                let beats = max(1, (Double(length) / beat).rounded(.up))
                let end = min(Int((beats * beat).rounded()), maximumLength)
                if end > length {
                    closeAt = end
                    return
                }
            }
            closeLoop()
        case .playing:
            layer &+= 1
            if layer == 0 { layer = 1 }
            dubTarget = 1
            canUndo = true
            state = .overdubbing
        case .overdubbing:
            dubTarget = 0
            state = .playing
        }
    }

    private func closeLoop() {
        closeAt = 0
        guard length >= shortestLength else {
            state = .stopped
            length = 0
            position = 0
            return
        }
        state = .playing
        position = 0
        sealRemaining = fadeLength
    }

    private func hold() {
        if state == .playing || state == .overdubbing {
            fadeOutRemaining = fadeLength
            fadeOutLength = length
            fadeOutPosition = position
        }
        state = .stopped
        length = 0
        position = 0
        closeAt = 0
        canUndo = false
        dubGain = 0
        dubTarget = 0
        sealRemaining = 0
        undoFadeRemaining = 0
    }

    private func undo() {
        guard canUndo, state == .playing || state == .overdubbing else { return }
        let used = (length + Looper.chunkSize - 1) >> Looper.chunkShift
        for c in 0..<used where touchedBy[c] == layer { owner[c] ^= 1 }
        undoneLayer = layer
        undoFadeRemaining = fadeLength
        dubGain = 0
        dubTarget = 0
        canUndo = false
        state = .playing
    }

    private func clearTransitions() {
        sealRemaining = 0
        undoFadeRemaining = 0
        fadeOutRemaining = 0
        dubGain = 0
        dubTarget = 0
    }

    private func publishStatus() {
        control.stateValue.store(state.rawValue, ordering: .releasing)
        control.positionValue.store(state == .recording ? length : position, ordering: .relaxed)
        control.lengthValue.store(length, ordering: .relaxed)
        control.undoAvailableValue.store(canUndo, ordering: .relaxed)
        if let published {
            published.frontier.pointee.store(length, ordering: .relaxed)
            published.loopExists.pointee.store(state != .recording && length > 0, ordering: .relaxed)
        }
    }

    /// How many samples of each tape are resident (nil when the tapes are not reserved lazily).
    var residentTape: (a: Int, b: Int)? { tapes?.resident }

    /// One pass of the tapes' background thread, now (tests).
    func updateTapes() { tapes?.update() }

    // MARK: Runs (each stays within one chunk, the loop and one transition)

    @inline(__always)
    private func tape(_ which: UInt8) -> UnsafeMutablePointer<Float> { which == 0 ? tapeA : tapeB }

    private func recordRun(_ io: UnsafeMutablePointer<Float>, _ m: Int) -> Int {
        let count = min(m, (closeAt > 0 ? closeAt : maximumLength) - length)
        let tape = tapeA + length
        for j in 0..<count {
            let x = io[j].isFinite ? io[j] : 0
            tape[j] = x
            io[j] = x
        }
        _ = level.skip(count)
        length += count
        // Tape full, or the beat a synced loop waited for: close the loop here and play.
        if length == maximumLength || length == closeAt { closeLoop() }
        return count
    }

    private func playRun(_ io: UnsafeMutablePointer<Float>, _ m: Int) -> Int {
        let p = position
        let c = p >> Looper.chunkShift
        var run = min(m, length - p, ((c + 1) << Looper.chunkShift) - p)
        if sealRemaining > 0 { run = min(run, sealRemaining) }
        if undoFadeRemaining > 0 { run = min(run, undoFadeRemaining) }

        let dubbing = dubGain > 0 || dubTarget > 0
        if dubbing && touchedBy[c] != layer {
            // First touch of this chunk by the running overdub: keep the previous layer.
            let start = c << Looper.chunkShift
            let from = tape(owner[c]), to = tape(owner[c] ^ 1)
            (to + start).update(from: from + start, count: min(Looper.chunkSize, length - start))
            owner[c] ^= 1
            touchedBy[c] = layer
        }
        let t = tape(owner[c]) + p

        if sealRemaining > 0 {
            // The first pass's seam: the tape's head becomes a crossfade from the input that
            // followed the closing tap (the tail's continuation) into the recorded head. This
            // pass itself fades the head in, as the input already carries the continuation.
            let w = fade + p
            for j in 0..<run {
                let x = io[j].isFinite ? io[j] : 0
                let head = t[j]
                t[j] = x + w[j] * (head - x)
                io[j] = x + level.next() * (w[j] * head)
            }
            sealRemaining -= run
        } else if undoFadeRemaining > 0 {
            let undone = touchedBy[c] == undoneLayer ? tape(owner[c] ^ 1) + p : t
            let w = fade + (fadeLength - undoFadeRemaining)
            for j in 0..<run {
                let x = io[j].isFinite ? io[j] : 0
                let before = undone[j]
                io[j] = x + level.next() * (before + w[j] * (t[j] - before))
            }
            undoFadeRemaining -= run
        } else if dubbing && dubGain == dubTarget && !level.isRamping {
            // Steady overdub (the usual case): no ramp, so the loop vectorises.
            let g = dubGain, l = level.current
            for j in 0..<run {
                let x = io[j].isFinite ? io[j] : 0
                let old = t[j]
                t[j] = old + g * x
                io[j] = x + l * old
            }
        } else if dubbing {
            var g = dubGain
            let target = dubTarget, step = dubStep
            for j in 0..<run {
                let x = io[j].isFinite ? io[j] : 0
                g = target > g ? min(g + step, target) : max(g - step, target)
                let old = t[j]
                t[j] = old + g * x
                io[j] = x + level.next() * old
            }
            dubGain = g
        } else if !level.isRamping {
            let l = level.current
            for j in 0..<run {
                let x = io[j].isFinite ? io[j] : 0
                io[j] = x + l * t[j]
            }
        } else {
            for j in 0..<run {
                let x = io[j].isFinite ? io[j] : 0
                io[j] = x + level.next() * t[j]
            }
        }

        position = p + run
        if position >= length { position = 0 }
        return run
    }

    /// After `hold`: the old loop fades out while the input passes.
    private func fadeOutRun(_ io: UnsafeMutablePointer<Float>, _ m: Int) -> Int {
        let p = fadeOutPosition
        let c = p >> Looper.chunkShift
        let run = min(min(m, fadeOutLength - p), min(((c + 1) << Looper.chunkShift) - p, fadeOutRemaining))
        let t = tape(owner[c]) + p
        let w = fade + (fadeLength - fadeOutRemaining)
        for j in 0..<run {
            let x = io[j].isFinite ? io[j] : 0
            io[j] = x + level.next() * ((1 - w[j]) * t[j])
        }
        fadeOutRemaining -= run
        fadeOutPosition = p + run
        if fadeOutPosition >= fadeOutLength { fadeOutPosition = 0 }
        return run
    }
}

extension PedalKind {
    /// Record, play, overdub, undo; keeps its loop while switched off.
    public static let looper = PedalKind(
        id: "looper", name: "Looper",
        controls: [PedalControl("level", "Level", .none, 0...1, default: 1),
                   PedalControl("sync", "Sync", .none, 0...1, default: 0, .toggle)],
        face: PedalFace(places: [.init("level", x: 10, y: 16, diameter: 44), .init("sync", x: 114, y: 44)], panel: .looper),
        resetsWhenSwitchedOn: false,
        make: { Looper(parameters: $0.parameters, control: $0.looper) })
}

extension Parameter {
    public static let looperEnabled = PedalKind.looper.enabledParameter
    public static let looperLevel = PedalKind.looper.parameter("level")
    public static let looperSync = PedalKind.looper.parameter("sync")
}

extension Looper: StereoEffect {
    /// The sides differ after it only if they differed before: it is no reason to make a board stereo.
    public var playsInStereo: Bool { false }

    /// A stereo board: the loop is recorded from the middle of the two sides (their mean) and
    /// played back in the middle; each side's own signal passes unchanged. On each side, as in
    /// mono, output = input + level × loop.
    public func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {
        let n = left.count
        let middle = UnsafeMutableBufferPointer(rebasing: self.middle[0..<n])
        let played = UnsafeMutableBufferPointer(rebasing: self.played[0..<n])
        for i in 0..<n {
            let m = 0.5 * (left[i] + right[i])
            middle[i] = m
            played[i] = m
        }
        process(played)
        for i in 0..<n {
            let loop = played[i] - middle[i]
            left[i] += loop
            right[i] += loop
        }
    }
}

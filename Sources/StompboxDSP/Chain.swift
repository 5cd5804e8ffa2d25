import Foundation
import Synchronization

/// The signal path: input gain → the pedals on the board, in the order the user arranged them
/// → output gain → safety limiter, in place. The input is mono. The output is mono
/// (`process(_:)`) or stereo (`process(left:right:)`): on a stereo board the signal stays mono
/// until the first pedal that plays and makes the sides differ (reverb, delay, flanger, a
/// stereo plugin, a cabinet with a stereo file). Pedals that take both sides themselves
/// (`StereoEffect`: those, the tremolo, the looper) do so after it; a built-in mono pedal runs
/// once per side, its second instance (a twin, made off the audio thread with the board)
/// taking the right.
///
/// Each pedal sits in a `PedalSlot` that crossfades it in and out (5 ms) when its `enabled`
/// parameter changes, skips it entirely while off, and resets it (output = dry for that block)
/// if it ever produces NaN or Inf. The dry path of a pedal with latency follows the pedal's
/// delay while it switches, so the crossfade mixes aligned signals (see `PedalSlot`).
///
/// A new board (`setBoard`) is built on the caller's thread (new pedals are made and prepared
/// there), handed to the audio thread through an atomic, and taken in at a block boundary: the
/// output fades to the board's dry input over 5 ms, the new order takes over and fades back in
/// over 5 ms, so a rearranged board never clicks. The pedals keep running through the swap and
/// keep their state (echoes ring on, the Looper's recording stays). The board the audio thread
/// leaves is released on the caller's thread, by the next `setBoard` or `collectRetiredBoard`.
public final class Chain {
    public let controls: EngineControls
    /// `controls.parameters`, held here too: a `let` of the chain is borrowed on the audio
    /// thread without a retain.
    public let parameters: ParameterStore
    private let meters: LevelMeters
    private let tunerTap: TunerTap

    /// The pedals on the board, in signal order, as last set. The audio thread takes a new board
    /// in at its next block.
    public private(set) var board: [PedalKind]
    /// Every pedal that has been on the board: a pedal taken off and put back keeps its loop.
    /// (A plugin pedal taken off is let go: its kind is of its own and does not come back.)
    private var instances: [PedalKind: AudioEffect] = [:]
    /// The right sides' instances of built-in mono pedals that stand after a stereo pedal.
    private var twins: [PedalKind: AudioEffect] = [:]

    /// The board the audio thread plays (+1 retained, owned by the audio side).
    private var active: Unmanaged<Board>
    private var activeSlots: UnsafeMutablePointer<BoardSlot>
    private var activeCount: Int
    /// A board waiting for the audio thread, and the one it left (both +1 retained, or 0).
    private let pending = Atomic<UInt>(0)
    private let retired = Atomic<UInt>(0)
    /// Audio thread: a board being faded to (fading out the old one first), and where the fade is.
    private var incoming: Unmanaged<Board>?
    private var fade = BoardFade.none
    private var fadePosition = 0
    private var fadeLength = 240

    private var inputGain = SmoothedValue(1)
    private var outputGain = SmoothedValue(1)
    private var limiter = SafetyLimiter()
    private var metronome = Metronome()
    private var dry = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    private var dryRight = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    /// The metronome's clicks on a stereo board (added to both sides).
    private var clicks = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    /// The board's input, kept while a new board fades in.
    private var boardInput = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)

    public private(set) var sampleRate: Double = 48_000
    public private(set) var maximumBlockSize = 0

    /// A chain with `board` (every built-in pedal in the classic order by default).
    public init(controls: EngineControls = EngineControls(), board: [PedalKind] = PedalKind.builtIn) {
        precondition((try? PedalKind.checkDistinct(board)) != nil, "a pedal is on the board twice")
        self.controls = controls
        parameters = controls.parameters
        meters = controls.meters
        tunerTap = controls.tuner
        self.board = board
        let effects = board.map { $0.makeEffect(controls) }
        for (kind, effect) in zip(board, effects) { instances[kind] = effect }
        let made = Chain.makeTwins(board, effects, controls: controls, kept: [:])
        for (kind, twin) in made.new { twins[kind] = twin }
        let first = Board(kinds: board, effects: effects, twins: made.list, entering: [])
        active = Unmanaged.passRetained(first)
        activeSlots = first.slots
        activeCount = first.count
        publishLatency()
    }

    deinit {
        active.release()
        incoming?.release()
        for cell in [pending.exchange(0, ordering: .acquiringAndReleasing), retired.exchange(0, ordering: .acquiringAndReleasing)] where cell != 0 {
            Unmanaged<Board>.fromOpaque(UnsafeRawPointer(bitPattern: cell)!).release()
        }
        dry.deallocate()
        dryRight.deallocate()
        clicks.deallocate()
        boardInput.deallocate()
        metronome.free()
    }

    /// Rearranges the board: `kinds` in signal order (pedals left out are taken off; a pedal put
    /// back keeps its state and its loop). Not on the audio thread; lock-free towards it.
    public func setBoard(_ kinds: [PedalKind]) throws(PedalError) {
        try PedalKind.checkDistinct(kinds)
        collectRetiredBoard()
        // The same board again (a preset recalled that has it): nothing to hand over.
        guard kinds != board else { return }
        let entering = Set(kinds).subtracting(board)
        let effects = kinds.map(effect)
        let made = Chain.makeTwins(kinds, effects, controls: controls, kept: twins)
        for (kind, twin) in made.new {
            if maximumBlockSize > 0 { twin.prepare(sampleRate: sampleRate, maximumBlockSize: maximumBlockSize) }
            twins[kind] = twin
        }
        let next = Board(kinds: kinds, effects: effects, twins: made.list, entering: entering)
        // The board handed over (and the one playing until then) keep their pedals alive.
        instances = instances.filter { $0.key.values == nil || kinds.contains($0.key) }
        if maximumBlockSize > 0 { next.prepare(sampleRate: sampleRate, maximumBlockSize: maximumBlockSize, parameters: parameters) }
        board = kinds
        publishLatency()
        let old = pending.exchange(UInt(bitPattern: Unmanaged.passRetained(next).toOpaque()), ordering: .acquiringAndReleasing)
        if old != 0 { Unmanaged<Board>.fromOpaque(UnsafeRawPointer(bitPattern: old)!).release() }
    }

    /// Releases the board the audio thread has left, if any. Not on the audio thread; the
    /// window and `run` call it now and then (a board waits while the last one is not collected).
    public func collectRetiredBoard() {
        let old = retired.exchange(0, ordering: .acquiringAndReleasing)
        if old != 0 { Unmanaged<Board>.fromOpaque(UnsafeRawPointer(bitPattern: old)!).release() }
    }

    /// Allocates every buffer. Not on the audio thread, and not while it runs; call before the
    /// first `process`. A board waiting for the audio thread is taken in at once. At a new
    /// sample rate a Looper's recording is converted by `keepingLoops` and kept (without it, a
    /// new rate clears the loop).
    public func prepare(sampleRate: Double, maximumBlockSize: Int, keepingLoops resample: LoopResampler? = nil) {
        precondition(sampleRate > 0 && maximumBlockSize > 0)
        let oldRate = self.sampleRate
        let kept: [(Looper, Looper.KeptLoop)] = resample == nil || self.maximumBlockSize == 0 ? [] :
            instances.values.compactMap { effect in
                guard let looper = effect as? Looper, let loop = looper.keepLoop() else { return nil }
                return (looper, loop)
            }
        self.sampleRate = sampleRate
        self.maximumBlockSize = maximumBlockSize
        dry.deallocate()
        dry = .allocate(capacity: maximumBlockSize)
        dry.initialize(repeating: 0)
        dryRight.deallocate()
        dryRight = .allocate(capacity: maximumBlockSize)
        dryRight.initialize(repeating: 0)
        clicks.deallocate()
        clicks = .allocate(capacity: maximumBlockSize)
        clicks.initialize(repeating: 0)
        boardInput.deallocate()
        boardInput = .allocate(capacity: maximumBlockSize)
        boardInput.initialize(repeating: 0)
        fadeLength = max(1, Int(sampleRate * 0.005))
        for effect in instances.values { effect.prepare(sampleRate: sampleRate, maximumBlockSize: maximumBlockSize) }
        for twin in twins.values { twin.prepare(sampleRate: sampleRate, maximumBlockSize: maximumBlockSize) }
        if let resample {
            for (looper, loop) in kept { looper.restoreLoop(loop, fromRate: oldRate, toRate: sampleRate, resample: resample) }
        }
        inputGain.prepare(sampleRate: sampleRate)
        outputGain.prepare(sampleRate: sampleRate)
        limiter.prepare(sampleRate: sampleRate)
        metronome.prepare(sampleRate: sampleRate)
        reset()
        publishLatency()
    }

    /// Clears all state (not the looper's recording) and jumps every ramp to its target; a board
    /// waiting for the audio thread is taken in at once. Not on the audio thread, and not while it runs.
    public func reset() {
        if let incoming { adopt(incoming) }
        incoming = nil
        let waiting = pending.exchange(0, ordering: .acquiringAndReleasing)
        if waiting != 0 { adopt(Unmanaged<Board>.fromOpaque(UnsafeRawPointer(bitPattern: waiting)!)) }
        collectRetiredBoard()
        fade = .none
        active.takeUnretainedValue().prepare(sampleRate: sampleRate, maximumBlockSize: maximumBlockSize, parameters: parameters)
        for effect in effects { effect.reset() }
        for twin in twins.values { twin.reset() }
        inputGain.snap(to: decibelsToGain(parameters.load(.inputGain)))
        outputGain.snap(to: decibelsToGain(parameters.load(.outputGain)))
        limiter.reset()
        metronome.reset()
    }

    /// The twins a board needs: a built-in mono pedal standing after one that makes the sides
    /// differ, or may (`StereoEffect.mayWiden`: a cabinet), gets a second instance for the right
    /// side (kept from `kept` if it had one; `new` lists those made now, unprepared). A
    /// `StereoEffect` takes both sides itself and gets none; nor does a pedal with a state of
    /// its own (a file), as a twin would not share it: on a stereo board that one plays the
    /// middle of the sides on both. Not on the audio thread.
    static func makeTwins(_ kinds: [PedalKind], _ effects: [AudioEffect], controls: EngineControls,
                          kept: [PedalKind: AudioEffect]) -> (list: [AudioEffect?], new: [(PedalKind, AudioEffect)]) {
        var list: [AudioEffect?] = []
        var new: [(PedalKind, AudioEffect)] = []
        var afterStereo = false
        for (kind, effect) in zip(kinds, effects) {
            if Chain.mayWiden(effect) {
                afterStereo = true
                list.append(nil)
            } else if afterStereo && !(effect is StereoEffect) && kind.values == nil && !(effect is RestorableEffect) {
                if let twin = kept[kind] {
                    list.append(twin)
                } else {
                    let twin = kind.makeEffect(controls)
                    new.append((kind, twin))
                    list.append(twin)
                }
            } else {
                list.append(nil)
            }
        }
        return (list, new)
    }

    /// A stereo pedal that makes the sides differ (a mono plugin does not).
    static func makesStereo(_ effect: AudioEffect) -> Bool { (effect as? StereoEffect)?.playsInStereo ?? false }

    /// A stereo pedal that makes the sides differ, or may (a cabinet).
    static func mayWiden(_ effect: AudioEffect) -> Bool { (effect as? StereoEffect)?.mayWiden ?? false }

    private func adopt(_ board: Unmanaged<Board>) {
        let old = active
        active = board
        activeSlots = board.takeUnretainedValue().slots
        activeCount = board.takeUnretainedValue().count
        old.release()
    }

    /// The pedals on the board in signal order. Not for the audio thread (builds an array).
    public var effects: [AudioEffect] { board.map { instances[$0]! } }

    /// The DSP of `kind`, made (and prepared) if it was never on the board. Not on the audio thread.
    public func effect(_ kind: PedalKind) -> AudioEffect {
        if let effect = instances[kind] { return effect }
        let effect = kind.makeEffect(controls)
        if maximumBlockSize > 0 { effect.prepare(sampleRate: sampleRate, maximumBlockSize: maximumBlockSize) }
        instances[kind] = effect
        return effect
    }

    /// The states of the plugin pedals on the board that have one, as JSON text by pedal id (for
    /// a preset). Not on the audio thread.
    public var pedalStates: [String: String] {
        var states: [String: String] = [:]
        for kind in board { if let effect = instances[kind] as? StatefulEffect { states[kind.id] = effect.stateJSON() } }
        return states
    }

    /// Gives the pedals on the board their states (a preset's, by pedal id): a cabinet loads its
    /// file. Throws the first pedal's error, naming it. Not on the audio thread.
    public func restore(states: [String: String]) throws(PedalStateError) {
        for kind in board {
            guard let state = states[kind.id], let effect = instances[kind] as? RestorableEffect else { continue }
            do { try effect.restore(stateJSON: state) } catch { throw PedalStateError(pedal: kind.name, reason: "\(error)") }
        }
    }

    /// The delay the pedals on the board add, in samples (the overdrive's oversampling filters,
    /// what plugin pedals report), when they are on. The thread that sets the board (or prepares the chain).
    public var latencySamples: Double { board.reduce(0) { $0 + $1.latency(sampleRate) } }

    /// `latencySamples` as of the last board change or `prepare`, for any thread (a JACK
    /// client's latency reports; the board itself belongs to the thread that sets it).
    public var publishedLatencySamples: Double { Double(bitPattern: latencyBits.load(ordering: .relaxed)) }
    private let latencyBits = Atomic<UInt64>(0)
    private func publishLatency() { latencyBits.store(latencySamples.bitPattern, ordering: .relaxed) }

    /// The output peak (linear) of the last `process` call, as the limiter measured it.
    /// Audio thread only (the UI reads `controls.meters`).
    public private(set) var lastOutputPeak: Float = 0

    /// Processes `buffer` in place; any length (split into blocks of at most `maximumBlockSize`).
    /// Audio thread: allocation- and lock-free.
    public func process(_ buffer: UnsafeMutableBufferPointer<Float>) {
        precondition(maximumBlockSize > 0, "Chain.prepare was not called")
        lastOutputPeak = 0
        guard let base = buffer.baseAddress else { return }
        var start = 0
        while start < buffer.count {
            let n = min(maximumBlockSize, buffer.count - start)
            processBlock(UnsafeMutableBufferPointer(start: base + start, count: n), nil)
            start += n
        }
    }

    /// Processes the mono input in `left` into a stereo output in `left` and `right` (the same
    /// length; `right`'s contents on entry are not read); any length, split into blocks of at
    /// most `maximumBlockSize`. Audio thread: allocation- and lock-free.
    public func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {
        precondition(maximumBlockSize > 0, "Chain.prepare was not called")
        precondition(left.count == right.count, "the two sides differ in length")
        lastOutputPeak = 0
        guard let l = left.baseAddress, let r = right.baseAddress else { return }
        var start = 0
        while start < left.count {
            let n = min(maximumBlockSize, left.count - start)
            processBlock(UnsafeMutableBufferPointer(start: l + start, count: n), UnsafeMutableBufferPointer(start: r + start, count: n))
            start += n
        }
    }

    /// One block: mono in `block`, or with `right` a stereo output.
    private func processBlock(_ block: UnsafeMutableBufferPointer<Float>, _ right: UnsafeMutableBufferPointer<Float>?) {
        let p = parameters
        inputGain.setTarget(decibelsToGain(p.load(.inputGain)))
        // The tuner open (and not playing through) mutes the output, gliding like the gain does.
        outputGain.setTarget(tunerTap.isMuting ? 0 : decibelsToGain(p.load(.outputGain)))

        // Nothing that is not a number goes further; absurd levels are bounded.
        let inPeakBits = largestMagnitudeBits(block)
        if inPeakBits <= 0x7f80_0000 {
            meters.note(input: Float(bitPattern: inPeakBits))
        } else {
            // A NaN is in there (rare): meter the largest number instead.
            var peak: Float = 0
            for x in block where x.isFinite { peak = max(peak, abs(x)) }
            meters.note(input: peak)
        }
        var gain = inputGain // a local: no exclusivity check per sample
        if !gain.isRamping && gain.current == 1 && inPeakBits <= Float(64).bitPattern {
            // Unity and in range (the usual case): nothing to do.
        } else if !gain.isRamping {
            let g = gain.current
            for i in block.indices {
                let x = block[i]
                block[i] = x.isFinite ? min(max(x * g, -64), 64) : 0
            }
        } else {
            for i in block.indices {
                let x = block[i]
                block[i] = x.isFinite ? min(max(x * gain.next(), -64), 64) : 0
            }
        }
        inputGain = gain
        tunerTap.write(block)

        processBoard(block, right)

        // The same glide on both sides.
        @inline(__always) func applyOutputGain(_ side: UnsafeMutableBufferPointer<Float>) -> SmoothedValue {
            var gain = outputGain
            if gain.isRamping {
                for i in side.indices { side[i] *= gain.next() }
            } else if gain.current != 1 {
                let g = gain.current
                for i in side.indices { side[i] *= g }
            }
            return gain
        }
        let glided = applyOutputGain(block)
        if let right { _ = applyOutputGain(right) }
        outputGain = glided
        // The metronome after the pedals, before the limiter (in the middle of a stereo board).
        let peak: Float
        if let right {
            let n = block.count
            let clicks = UnsafeMutableBufferPointer(rebasing: self.clicks[0..<n])
            clicks.update(repeating: 0)
            if metronome.mix(into: clicks, p) {
                for i in 0..<n {
                    block[i] += clicks[i]
                    right[i] += clicks[i]
                }
            }
            peak = limiter.process(block, right)
        } else {
            metronome.mix(into: block, p)
            peak = limiter.process(block)
        }
        lastOutputPeak = max(lastOutputPeak, peak)
        meters.note(output: peak, limiterGain: limiter.lowestGain, ducked: limiter.ducked)
    }

    /// The pedals on the board, and a new board's fade: out to the dry input, swap, back in.
    /// With `right`, a stereo board (the right side filled in whether or not a pedal made it differ).
    private func processBoard(_ block: UnsafeMutableBufferPointer<Float>, _ right: UnsafeMutableBufferPointer<Float>?) {
        if fade == .none, retired.load(ordering: .acquiring) == 0 {
            let next = pending.exchange(0, ordering: .acquiringAndReleasing)
            if next != 0 {
                incoming = Unmanaged<Board>.fromOpaque(UnsafeRawPointer(bitPattern: next)!)
                fade = .out
                fadePosition = 0
            }
        } else if fade == .swap, let next = incoming {
            // The old board has faded out: the new one takes over from this block.
            retired.store(UInt(bitPattern: active.toOpaque()), ordering: .releasing)
            active = next
            incoming = nil
            next._withUnsafeGuaranteedRef { board in
                activeSlots = board.slots
                activeCount = board.count
            }
            for i in 0..<activeCount where activeSlots[i].entering { activeSlots[i].enter() }
            fade = .in
            fadePosition = 0
        }
        if fade != .none {
            boardInput.baseAddress!.update(from: block.baseAddress!, count: block.count)
        }

        let p = parameters
        if let right {
            var stereo = false
            for i in 0..<activeCount {
                activeSlots[i].run(block, right, stereo: &stereo, dry: dry, dryRight: dryRight, parameters: p)
            }
            if !stereo { right.baseAddress!.update(from: block.baseAddress!, count: block.count) }
        } else {
            for i in 0..<activeCount { activeSlots[i].run(block, dry: dry, parameters: p) }
        }

        guard fade == .out || fade == .in else { return }
        // The same fade on both sides.
        let from = fadePosition, length = Float(fadeLength), fadingOut = fade == .out
        @inline(__always) func fadeSide(_ side: UnsafeMutableBufferPointer<Float>) {
            var position = from
            for i in side.indices {
                let g = min(Float(position) / length, 1)
                if fadingOut {
                    side[i] += g * (boardInput[i] - side[i])                   // wet → dry
                } else {
                    side[i] = boardInput[i] + g * (side[i] - boardInput[i])    // dry → wet
                }
                position += 1
            }
        }
        fadeSide(block)
        if let right { fadeSide(right) }
        fadePosition = from + block.count
        if fadePosition >= fadeLength { fade = fadingOut ? .swap : .none }
    }
}

private enum BoardFade { case none, out, swap, `in` }

/// One arrangement of the board, as the audio thread plays it: a slot for each pedal.
/// Immutable once handed over; its slots keep their pedals alive while the audio thread may use them.
final class Board {
    let slots: UnsafeMutablePointer<BoardSlot>
    let count: Int
    /// Keeps plugin pedals' values (their switches' cells) alive; not touched on the audio thread.
    private let kinds: [PedalKind]

    /// `entering`: the pedals that were not on the board before (reset when it takes over).
    /// `twins`: for each pedal, its right side's instance on a stereo board, if it has one.
    init(kinds: [PedalKind], effects: [AudioEffect], twins: [AudioEffect?], entering: Set<PedalKind>) {
        self.kinds = kinds
        count = kinds.count
        slots = .allocate(capacity: max(1, count))
        // Whether a pedal that always makes the sides differ stands before: a twin after one only
        // plays while the sides differ (after a cabinet whose file is stereo).
        var afterStereo = false
        for (i, kind) in kinds.enumerated() {
            let slot = PedalSlot(kind.enabledParameter, resetsWhenSwitchedOn: kind.resetsWhenSwitchedOn,
                                 reportedLatency: kind.values?.latencyCell, trails: kind.trailsParameter)
            let pedal = StereoPedal(stereo: effects[i] as? StereoEffect, twin: twins[i], makesStereo: Chain.makesStereo(effects[i]),
                                    twinOnlyWhileWide: twins[i] != nil && !afterStereo)
            if pedal.makesStereo { afterStereo = true }
            (slots + i).initialize(to: BoardSlot(effect: effects[i], pedal: pedal, slot: slot, entering: entering.contains(kind)))
        }
    }

    deinit {
        for i in 0..<count {
            slots[i].slot.dryDelay.free()
            slots[i].slot.dryDelayRight.free()
        }
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    /// Sizes the crossfades and the dry paths' delays, and puts every switch where its parameter stands.
    func prepare(sampleRate: Double, maximumBlockSize: Int, parameters: ParameterStore) {
        for i in 0..<count {
            slots[i].slot.prepare(sampleRate: sampleRate, maximumBlockSize: maximumBlockSize, latency: kinds[i].latency(sampleRate))
            slots[i].slot.snap(parameters)
            slots[i].twinFadeStep = Float(1 / (BoardSlot.twinFadeSeconds * sampleRate))
        }
    }
}

/// A pedal on a board. The slot's own strong `let` is borrowed for each call on the audio
/// thread (no retain or release there: checked in the release build's disassembly).
struct BoardSlot {
    let effect: AudioEffect
    let pedal: StereoPedal
    var slot: PedalSlot
    /// Newly on the board: cleared when the board takes over (no echoes from the last time).
    let entering: Bool
    /// A twin that plays only while the sides differ did not play the last block (it is cleared
    /// before it plays again, so it does not resume from a stale state).
    var twinResting = true
    /// How far the right side has faded from the left's output to the twin's since the twin
    /// started (0…1): a twin that starts clean sounds unlike one that has been playing for a
    /// moment (a filter's state fills within a few ms), and the fade hides that.
    var twinFade: Float = 1
    var twinFadeStep: Float = 1.0 / 960
    static let twinFadeSeconds = 0.02

    /// Audio thread, a mono board.
    @inline(__always)
    mutating func run(_ block: UnsafeMutableBufferPointer<Float>, dry: UnsafeMutableBufferPointer<Float>, parameters: ParameterStore) {
        slot.run(effect, block, dry: dry, parameters: parameters)
    }

    /// Audio thread, a stereo board. `stereo` says whether the sides may differ yet (until then
    /// only `left` holds the signal): a stereo pedal or a twin that plays makes them two.
    @inline(__always)
    mutating func run(_ left: UnsafeMutableBufferPointer<Float>, _ right: UnsafeMutableBufferPointer<Float>, stereo: inout Bool,
                      dry: UnsafeMutableBufferPointer<Float>, dryRight: UnsafeMutableBufferPointer<Float>, parameters: ParameterStore) {
        let twinJoins = pedal.twin != nil && !pedal.twinOnlyWhileWide
        if !stereo && (pedal.makesStereo || twinJoins || pedal.stereo?.widensNow == true) && !slot.isIdle(parameters) {
            right.baseAddress!.update(from: left.baseAddress!, count: left.count)
            stereo = true
        }
        if pedal.twinOnlyWhileWide {
            // Sides that differ play through the twin from a clean start; equal ones need none.
            if !stereo {
                twinResting = true
            } else if twinResting {
                pedal.twin?.reset()
                twinResting = false
                twinFade = 0
            }
        }
        slot.run(effect, pedal, left, stereo ? right : nil, dry: dry, dryRight: dryRight, parameters: parameters)
        if twinFade < 1 && stereo {
            var g = twinFade
            let step = twinFadeStep
            for i in 0..<left.count {
                g = min(1, g + step)
                right[i] = left[i] + g * (right[i] - left[i])
            }
            twinFade = g
        }
    }

    /// Audio thread: a pedal joining the board starts clean, and ignores footswitch requests
    /// made while it was away.
    mutating func enter() {
        if slot.resetsWhenSwitchedOn {
            effect.reset()
            pedal.twin?.reset()
        }
        effect.bypassed()
        pedal.twin?.bypassed()
    }
}

/// Switches one pedal in and out of the chain with a short crossfade (5 ms).
///
/// A pedal with latency (the overdrive's filters, a plugin's lookahead) would be crossfaded
/// against a dry signal earlier than its own output: a comb filter while it fades. Its dry path
/// therefore follows the pedal's delay during a switch. Switched on, the dry path first glides
/// from no delay to the pedal's (5 ms; the pedal already runs, unheard), then the crossfade
/// mixes two aligned signals. Switched off, the crossfade comes first, then the dry path glides
/// back to no delay. Off, the pedal adds no delay at all; the whole switch takes 10 ms.
struct PedalSlot {
    let enabled: Parameter
    let resetsWhenSwitchedOn: Bool
    /// 0 = bypassed, 1 = fully in.
    private var mix: Float = 0
    private var target: Float = 0
    private var step: Float = 1.0 / 240
    /// How far the dry path's delay has glided towards the pedal's, in samples of the glide.
    private var glide = 0
    private var glideLength = 240
    /// Where a plugin pedal reports its latency (it may change as it runs), or nil.
    private let reportedLatency: UnsafeMutablePointer<Atomic<Float>>?
    /// Its trails switch, if it has one (see `PedalKind.trailsParameter`).
    private let trails: Parameter?
    /// Ringing out: switched off with trails on, the pedal still runs. `send` is how much of the
    /// input goes into it (gliding to 0 when off), `tail` how much of its own sound is heard
    /// (1 until the tail has died away or trails are switched off, then gliding to 0).
    private var trailing = false
    private var send: Float = 1
    private var tail: Float = 1
    /// Samples the tail has stayed below `quietLevel`, and how many end it.
    private var quietSamples = 0
    private var quietLimit = 120_000
    /// Below this (−100 dBFS) a tail has died away.
    static let quietLevel: Float = 1e-5
    /// The latency a built-in pedal declares, in samples.
    private var fixedLatency: Float = 0
    /// The input's recent past, for a dry path as late as the pedal. Freed by its board.
    fileprivate(set) var dryDelay = DryDelay()
    /// The same for the right side of a stereo board.
    fileprivate(set) var dryDelayRight = DryDelay()

    /// True while the pedal is fully out of the chain (its `process` is not being called).
    var isBypassed: Bool { mix == 0 && target == 0 && glide == 0 && !trailing }

    init(_ enabled: Parameter, resetsWhenSwitchedOn: Bool = true, reportedLatency: UnsafeMutablePointer<Atomic<Float>>? = nil,
         trails: Parameter? = nil) {
        self.enabled = enabled
        self.resetsWhenSwitchedOn = resetsWhenSwitchedOn
        self.reportedLatency = reportedLatency
        self.trails = trails
    }

    /// Not on the audio thread (allocates the dry path's delay line when the pedal has latency).
    mutating func prepare(sampleRate: Double, maximumBlockSize: Int = 0, latency: Double = 0, fadeTime: Double = 0.005) {
        step = Float(1 / max(1, sampleRate * fadeTime))
        glideLength = max(1, Int((sampleRate * fadeTime).rounded()))
        // A tail ends after 2.5 s below −100 dBFS: longer than the longest gap between echoes.
        quietLimit = Int(sampleRate * 2.5)
        fixedLatency = Float(min(max(latency, 0), Double(DryDelay.longest)))
        let longest = reportedLatency != nil ? DryDelay.longest : Int(fixedLatency.rounded(.up))
        dryDelay.free()
        dryDelayRight.free()
        if longest > 0 && maximumBlockSize > 0 {
            dryDelay = DryDelay(longest: longest, maximumBlockSize: maximumBlockSize)
            dryDelayRight = DryDelay(longest: longest, maximumBlockSize: maximumBlockSize)
        }
    }

    /// The pedal's latency for this block, in samples (0 without a delay line).
    @inline(__always)
    private var latency: Float {
        if dryDelay.isEmpty { return 0 }
        guard let reportedLatency else { return fixedLatency }
        let reported = reportedLatency.pointee.load(ordering: .relaxed)
        return reported.isFinite ? min(max(reported, 0), Float(dryDelay.longest)) : 0
    }

    mutating func snap(_ parameters: ParameterStore) {
        target = parameters.isOn(enabled) ? 1 : 0
        mix = target
        glide = target == 1 ? glideLength : 0
        trailing = false
        send = 1
        tail = 1
    }

    /// One sample of a switch: on, the dry path's delay glides in and then the pedal fades in;
    /// off, the pedal fades out and then the glide goes back.
    @inline(__always)
    private func advanced(_ state: (mix: Float, glide: Int)) -> (mix: Float, glide: Int) {
        var (mix, glide) = state
        if target == 1 {
            if glide < glideLength { glide += 1 } else if mix < 1 { mix = min(1, mix + step) }
        } else {
            if mix > 0 { mix = max(0, mix - step) } else if glide > 0 { glide -= 1 }
        }
        return (mix, glide)
    }

    /// One block of a pedal ringing out: out = x + tail·(pedal(send·x) − send·x), the pedal's
    /// own sound without its input's share. Switched on again, `send` and `tail` glide back to 1
    /// and it plays on as before (not cleared); once the tail has died away (or trails are
    /// switched off) `tail` glides to 0 and the pedal is bypassed. `right` nil: a mono board here.
    private mutating func ringOut(_ effect: AudioEffect, _ pedal: StereoPedal, _ left: Buffer, _ right: Buffer?,
                                  dry: Buffer, dryRight: Buffer, on: Bool, keepTail: Bool) {
        let n = left.count
        dry.baseAddress!.update(from: left.baseAddress!, count: n)
        if let right { dryRight.baseAddress!.update(from: right.baseAddress!, count: n) }
        let step = self.step
        let sendTarget: Float = on ? 1 : 0
        let tailTarget: Float = on || (keepTail && quietSamples < quietLimit) ? 1 : 0
        @inline(__always) func toward(_ value: Float, _ goal: Float) -> Float {
            value < goal ? min(goal, value + step) : max(goal, value - step)
        }
        // The same glides on both sides.
        @inline(__always) func sendInto(_ io: Buffer, _ dry: Buffer) {
            var g = send
            for i in 0..<n {
                g = toward(g, sendTarget)
                io[i] = dry[i] * g
            }
        }
        sendInto(left, dry)
        if let right { sendInto(right, dryRight) }
        PedalSlot.wet(effect, pedal, left, right)
        if PedalSlot.failed(left, right) {
            effect.reset()
            pedal.twin?.reset()
            left.baseAddress!.update(from: dry.baseAddress!, count: n)
            if let right { right.baseAddress!.update(from: dryRight.baseAddress!, count: n) }
            trailing = false
            mix = 0
            target = 0
            return
        }
        var loudest: Float = 0
        @inline(__always) func tailInto(_ io: Buffer, _ dry: Buffer) -> (send: Float, tail: Float) {
            var g = send, t = tail
            for i in 0..<n {
                g = toward(g, sendTarget)
                t = toward(t, tailTarget)
                let own = io[i] - g * dry[i]
                loudest = max(loudest, abs(own))
                io[i] = dry[i] + t * own
            }
            return (g, t)
        }
        let (g, t) = tailInto(left, dry)
        if let right { _ = tailInto(right, dryRight) }
        send = g
        tail = t
        quietSamples = loudest < PedalSlot.quietLevel && g == 0 ? quietSamples + n : 0
        if on && g == 1 && t == 1 {
            trailing = false        // fully on again
        } else if !on && t == 0 {
            trailing = false        // rung out: bypassed from the next block
            mix = 0
            target = 0
            glide = 0
            effect.bypassed()
            pedal.twin?.bypassed()
        }
    }

    /// The pedal's own processing of a block, in place. On a mono board (`right` nil) its
    /// `process`; on a stereo one a stereo pedal takes both sides and a mono pedal runs once per
    /// side (its twin takes the right). A mono pedal without a twin plays the middle of the
    /// sides on both.
    @inline(__always)
    static func wet(_ effect: AudioEffect, _ pedal: StereoPedal, _ left: Buffer, _ right: Buffer?) {
        guard let right else { effect.process(left); return }
        // (Optional chaining borrows the pedal's references; `if let` would retain and release
        // them on the audio thread.)
        if pedal.stereo != nil {
            pedal.stereo?.process(left: left, right: right)
        } else if pedal.twin != nil {
            effect.process(left)
            pedal.twin?.process(right)
        } else {
            for i in left.indices { left[i] = 0.5 * (left[i] + right[i]) }
            effect.process(left)
            right.baseAddress!.update(from: left.baseAddress!, count: left.count)
        }
    }

    /// Whether the pedal put a NaN or an infinity out (one vectorised scan per side: the largest
    /// magnitude's bits reach the exponent's all-ones pattern only for ±∞ or NaN).
    @inline(__always)
    static func failed(_ left: Buffer, _ right: Buffer?) -> Bool {
        if largestMagnitudeBits(left) >= 0x7f80_0000 { return true }
        guard let right else { return false }
        return largestMagnitudeBits(right) >= 0x7f80_0000
    }

    /// True while the pedal is out of the chain and stays out this block (switched off, not
    /// ringing out): a stereo pedal then leaves a mono board mono.
    @inline(__always)
    func isIdle(_ parameters: ParameterStore) -> Bool { isBypassed && !parameters.isOn(enabled) }

    /// A mono board's block (the pedal's `process`).
    @inline(__always)
    mutating func run(_ effect: AudioEffect, _ block: Buffer, dry: Buffer, parameters: ParameterStore) {
        run(effect, StereoPedal(), block, nil, dry: dry, dryRight: dry, parameters: parameters)
    }

    /// One block: `right` nil while the board is mono here, else both sides (`dryRight` is the
    /// right side's scratch, as `dry` is the left's).
    @inline(__always)
    mutating func run(_ effect: AudioEffect, _ pedal: StereoPedal, _ left: Buffer, _ right: Buffer?,
                      dry: Buffer, dryRight: Buffer, parameters: ParameterStore) {
        let wanted: Float = parameters.isOn(enabled) ? 1 : 0
        if let trails {
            if !trailing && wanted == 0 && target == 1 && mix == 1 && parameters.isOn(trails) {
                // Switched off with trails on: from now on only the input into it is muted.
                trailing = true
                send = 1
                tail = 1
                quietSamples = 0
            }
            if trailing {
                ringOut(effect, pedal, left, right, dry: dry, dryRight: dryRight, on: wanted == 1, keepTail: parameters.isOn(trails))
                return
            }
        }
        if wanted == 1 && mix == 0 && target == 0 && resetsWhenSwitchedOn {
            // Coming back from bypass: no stale echoes from the last time it was on.
            effect.reset()
            pedal.twin?.reset()
        }
        target = wanted
        let latency = self.latency
        // Without latency the dry path never needs a delay: the glide is instant.
        if latency == 0 { glide = target == 1 ? glideLength : 0 }
        if mix == 0 && target == 0 && glide == 0 {
            effect.bypassed()
            pedal.twin?.bypassed()
            // The delay lines keep hearing the input, for the next switch.
            if !dryDelay.isEmpty {
                _ = dryDelay.append(left)
                _ = dryDelayRight.append(right ?? left)
            }
            return
        }

        let n = left.count
        let steady = mix == target && (target == 1 ? glide == glideLength : glide == 0)
        // The dry signal serves the crossfade and stands in for the block if the effect fails;
        // it is as late as the pedal's output (or, while the delay glides, as late as it has got).
        if !dryDelay.isEmpty {
            let start = dryDelay.append(left)
            let startRight = dryDelayRight.append(right ?? left)
            if steady {
                // Fully on: the delay lines keep up; a late dry block is read only if needed.
                PedalSlot.wet(effect, pedal, left, right)
                if PedalSlot.failed(left, right) {
                    effect.reset()
                    pedal.twin?.reset()
                    dryDelay.read(into: left, from: start, delayedBy: latency)
                    if let right { dryDelayRight.read(into: right, from: startRight, delayedBy: latency) }
                }
                return
            }
            let perGlide = latency / Float(glideLength)
            @inline(__always) func lateDry(_ into: Buffer, _ line: DryDelay, _ start: Int) {
                var state = (mix: mix, glide: glide)
                for i in 0..<n {
                    state = advanced(state)
                    into[i] = line.sample(start &+ i, delayedBy: perGlide * Float(state.glide))
                }
            }
            lateDry(dry, dryDelay, start)
            if right != nil { lateDry(dryRight, dryDelayRight, startRight) }
        } else {
            dry.baseAddress!.update(from: left.baseAddress!, count: n)
            if let right { dryRight.baseAddress!.update(from: right.baseAddress!, count: n) }
        }
        let running = target == 1 || mix > 0
        if running {
            PedalSlot.wet(effect, pedal, left, right)
        } else {
            effect.bypassed()
            pedal.twin?.bypassed()
        }

        if running && PedalSlot.failed(left, right) {
            effect.reset()
            pedal.twin?.reset()
            left.baseAddress!.update(from: dry.baseAddress!, count: n)
            if let right { right.baseAddress!.update(from: dryRight.baseAddress!, count: n) }
            return
        }
        guard !steady else { return }
        // The crossfade, the same on both sides.
        @inline(__always) func crossfade(_ io: Buffer, _ dry: Buffer) -> (mix: Float, glide: Int) {
            var state = (mix: mix, glide: glide)
            for i in 0..<n {
                state = advanced(state)
                io[i] = state.mix == 0 ? dry[i] : dry[i] + state.mix * (io[i] - dry[i])
            }
            return state
        }
        let state = crossfade(left, dry)
        if let right { _ = crossfade(right, dryRight) }
        (mix, glide) = state
    }
}

/// What a slot on a stereo board has besides its pedal: the pedal as a `StereoEffect` if it is
/// one, or a second instance of it for the right side (a mono pedal after a stereo one).
struct StereoPedal {
    var stereo: StereoEffect?
    var twin: AudioEffect?
    /// It makes the sides differ (`StereoEffect.playsInStereo`).
    var makesStereo = false
    /// Its twin stands after a pedal that only may make the sides differ (a cabinet): it plays
    /// while they do, and the board stays mono through this pedal while they do not.
    var twinOnlyWhileWide = false
}

typealias Buffer = UnsafeMutableBufferPointer<Float>

/// The recent past of a pedal's input, so its dry path can be as late as the pedal: a ring of
/// at least a block plus the longest delay and one more sample (a power of two). Allocated off
/// the audio thread; the rest is allocation-free.
struct DryDelay {
    /// The longest delay a dry path follows: 0.34 s at 48 kHz (plugins' lookahead is shorter).
    static let longest = 16_384
    private var ring: UnsafeMutablePointer<Float>?
    private var mask = 0
    private var write = 0
    private(set) var longest = 0

    init() {}

    init(longest: Int, maximumBlockSize: Int) {
        var size = 1
        while size < longest + maximumBlockSize + 2 { size *= 2 }
        ring = .allocate(capacity: size)
        ring!.initialize(repeating: 0, count: size)
        mask = size - 1
        self.longest = longest
    }

    var isEmpty: Bool { ring == nil }

    mutating func free() {
        ring?.deallocate()
        ring = nil
        longest = 0
    }

    /// Adds a block (at most the prepared maximum) and returns where its first sample went.
    @inline(__always)
    mutating func append(_ block: UnsafeMutableBufferPointer<Float>) -> Int {
        guard let ring, let x = block.baseAddress else { return write }
        let start = write, n = block.count
        // In at most two pieces: up to the ring's end, then from its start.
        let first = min(n, mask + 1 - start)
        (ring + start).update(from: x, count: first)
        if first < n { ring.update(from: x + first, count: n - first) }
        write = (start &+ n) & mask
        return start
    }

    /// The sample `delay` samples before the one at `position` (linearly interpolated between two).
    @inline(__always)
    func sample(_ position: Int, delayedBy delay: Float) -> Float {
        guard let ring else { return 0 }
        let whole = Int(delay), fraction = delay - Float(whole)
        let a = ring[(position &- whole) & mask], b = ring[(position &- whole &- 1) & mask]
        return fraction == 0 ? a : a + fraction * (b - a)
    }

    /// `block` (appended at `start`) replaced by the input `delay` samples earlier.
    @inline(__always)
    func read(into block: UnsafeMutableBufferPointer<Float>, from start: Int, delayedBy delay: Float) {
        guard let ring, let x = block.baseAddress else { return }
        let whole = Int(delay), fraction = delay - Float(whole)
        let from = start &- whole
        if fraction == 0 {
            for i in 0..<block.count { x[i] = ring[(from &+ i) & mask] }
        } else {
            for i in 0..<block.count {
                let a = ring[(from &+ i) & mask], b = ring[(from &+ i &- 1) & mask]
                x[i] = a + fraction * (b - a)
            }
        }
    }
}

import Foundation
import Synchronization

/// The signal path: input gain → the pedals on the board, in the order the user arranged them
/// → output gain → safety limiter, in place. The input is mono. The output is mono
/// (`process(_:)`) or stereo (`process(left:right:)`): on a stereo board the signal stays mono
/// until the first pedal that plays and makes the sides differ (reverb, delay, flanger, a
/// stereo plugin, a cabinet with a stereo file). Pedals that take both sides themselves
/// (`StereoEffect`: those, the tremolo, the looper) do so after it; a built-in mono pedal runs
/// once per side, its second instance (a twin, made off the audio thread with the board)
/// taking the right (`StereoPlan`).
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
///
/// Threads. The audio thread calls only `process` (and reads `lastOutputPeak`): it takes no
/// lock and allocates nothing. Every other call is a control call — `prepare`, `reset`,
/// `setBoard`, `collectRetiredBoard`, `effect(_:)`, `effects`, `restore(states:)`,
/// `pedalStates`, `latencySamples` (`board` is a copy any thread may read) — and control
/// calls are serialized by one lock, so they may come from several threads (the
/// window's main thread sets the board while a live engine's thread prepares the chain for its
/// server). `prepare` and `reset` must still not overlap `process`: a live engine calls them
/// only while its audio thread is stopped.
public final class Chain {
    public let controls: EngineControls
    /// `controls.parameters`, held here too: a `let` of the chain is borrowed on the audio
    /// thread without a retain.
    public let parameters: ParameterStore
    let meters: LevelMeters
    let tunerTap: TunerTap
    /// Whether a Looper counts in (the metronome clicks for it).
    let looperControl: LooperControl

    /// Serializes the control calls (see the type's comment). Recursive, so that a control
    /// call may make another (`prepare` resets, `setBoard` collects the retired board). Never
    /// taken on the audio thread.
    private let control = NSRecursiveLock()

    /// The pedals on the board, in signal order, as last set. The audio thread takes a new board
    /// in at its next block. Any thread: a copy kept apart from the control lock, so a window
    /// polling it does not wait out a `prepare` (a long loop resampled for a new rate).
    public var board: [PedalKind] { shownBoard.withLock { $0 } }
    private let shownBoard: Mutex<[PedalKind]>
    /// The board as the control calls see it.
    private var current: [PedalKind] {
        didSet { shownBoard.withLock { $0 = current } }
    }
    /// Every pedal that has been on the board: a pedal taken off and put back keeps its loop.
    /// (A plugin pedal taken off is let go: its kind is of its own and does not come back.)
    private var instances: [PedalKind: AudioEffect] = [:]
    /// The right sides' instances of built-in mono pedals that stand after a stereo pedal.
    private var twins: [PedalKind: AudioEffect] = [:]

    // The audio thread's state (internal only so that Chain+Process.swift reaches it).

    /// The board the audio thread plays (+1 retained, owned by the audio side).
    var active: Unmanaged<Board>
    var activeSlots: UnsafeMutablePointer<BoardSlot>
    var activeCount: Int
    /// A board waiting for the audio thread, and the one it left (both +1 retained, or 0).
    let pending = Atomic<UInt>(0)
    let retired = Atomic<UInt>(0)
    /// Audio thread: a board being faded to (fading out the old one first), and where the fade is.
    var incoming: Unmanaged<Board>?
    var fade = BoardFade.none
    var fadePosition = 0
    var fadeLength = 240

    var inputGain = SmoothedValue(1)
    var outputGain = SmoothedValue(1)
    var limiter = SafetyLimiter()
    var metronome = Metronome()
    var dry = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    var dryRight = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    /// The metronome's clicks on a stereo board (added to both sides).
    var clicks = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
    /// The board's input, kept while a new board fades in.
    var boardInput = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)

    /// The output peak (linear) of the last `process` call, as the limiter measured it.
    /// Audio thread only (the UI reads `controls.meters`).
    public internal(set) var lastOutputPeak: Float = 0

    /// Set by `prepare` (a control call); read by `process`, which never overlaps it.
    public private(set) var sampleRate: Double = 48_000
    public private(set) var maximumBlockSize = 0

    /// A chain with `board` (every built-in pedal in the classic order by default).
    public init(controls: EngineControls = EngineControls(), board: [PedalKind] = PedalKind.builtIn) {
        precondition((try? PedalKind.checkDistinct(board)) != nil, "a pedal is on the board twice")
        self.controls = controls
        parameters = controls.parameters
        meters = controls.meters
        tunerTap = controls.tuner
        looperControl = controls.looper
        shownBoard = Mutex(board)
        current = board
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

    /// Runs `body` as a control call: under the control lock.
    private func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        control.lock()
        defer { control.unlock() }
        return try body()
    }

    /// Rearranges the board: `kinds` in signal order (pedals left out are taken off; a pedal put
    /// back keeps its state and its loop). A control call; lock-free towards the audio thread.
    public func setBoard(_ kinds: [PedalKind]) throws(PedalError) {
        try PedalKind.checkDistinct(kinds)
        locked {
            collectRetiredBoard()
            // The same board again (a preset recalled that has it): nothing to hand over.
            guard kinds != current else { return }
            let entering = Set(kinds).subtracting(current)
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
            current = kinds
            publishLatency()
            let old = pending.exchange(UInt(bitPattern: Unmanaged.passRetained(next).toOpaque()), ordering: .acquiringAndReleasing)
            if old != 0 { Unmanaged<Board>.fromOpaque(UnsafeRawPointer(bitPattern: old)!).release() }
        }
    }

    /// Releases the board the audio thread has left, if any. A control call; the window and
    /// `run` call it now and then (a board waits while the last one is not collected).
    public func collectRetiredBoard() {
        locked {
            let old = retired.exchange(0, ordering: .acquiringAndReleasing)
            if old != 0 { Unmanaged<Board>.fromOpaque(UnsafeRawPointer(bitPattern: old)!).release() }
        }
    }

    /// Track `track` of the board's Looper (`Looper.trackAudio`), nil without a loop there. Only
    /// while no audio thread runs (the live loop stopped, after an offline render).
    public func looperTrackAudio(_ track: Int) -> LoopTrackAudio? {
        locked { instances.values.lazy.compactMap { ($0 as? Looper)?.trackAudio(track) }.first }
    }

    /// Puts `loops` back onto the board's Looper (`Looper.load`); with `audioRunning` the audio
    /// thread takes them in over its next blocks (the Looper must be on to run). Off the audio thread.
    public func loadLoops(_ loops: [LoopToLoad], cycle: Int, audioRunning: Bool) -> LoopLoadOutcome {
        guard let looper = locked({ instances.values.lazy.compactMap { $0 as? Looper }.first }) else {
            return .invalid("the board has no Looper")
        }
        return looper.load(loops, cycle: cycle, audioRunning: audioRunning)
    }

    /// Allocates every buffer. A control call, not while the audio thread runs; call before the
    /// first `process`. A board waiting for the audio thread is taken in at once. At a new
    /// sample rate a Looper's recording is converted by `keepingLoops` and kept (without it, a
    /// new rate clears the loop).
    public func prepare(sampleRate: Double, maximumBlockSize: Int, keepingLoops resample: LoopResampler? = nil) {
        precondition(sampleRate > 0 && maximumBlockSize > 0)
        locked {
            let oldRate = self.sampleRate
            let kept: [(Looper, Looper.KeptLoop)] = resample == nil || self.maximumBlockSize == 0 ? [] :
                instances.values.compactMap { effect in
                    guard let looper = effect as? Looper, let loop = looper.keepLoop() else { return nil }
                    return (looper, loop)
                }
            self.sampleRate = sampleRate
            self.maximumBlockSize = maximumBlockSize
            for buffer in [\Chain.dry, \Chain.dryRight, \Chain.clicks, \Chain.boardInput] {
                self[keyPath: buffer].deallocate()
                self[keyPath: buffer] = .allocate(capacity: maximumBlockSize)
                self[keyPath: buffer].initialize(repeating: 0)
            }
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
    }

    /// Clears all state (not the looper's recording) and jumps every ramp to its target; a board
    /// waiting for the audio thread is taken in at once. A control call, not while the audio thread runs.
    public func reset() {
        locked {
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
    }

    /// The twins a board needs, by `StereoPlan.twinRules`: one for each pedal whose rule is not
    /// `none`, kept from `kept` if it had one (`new` lists those made now, unprepared). Not on
    /// the audio thread.
    static func makeTwins(_ kinds: [PedalKind], _ effects: [AudioEffect], controls: EngineControls,
                          kept: [PedalKind: AudioEffect]) -> (list: [AudioEffect?], new: [(PedalKind, AudioEffect)]) {
        var list: [AudioEffect?] = []
        var new: [(PedalKind, AudioEffect)] = []
        for (kind, rule) in zip(kinds, StereoPlan.twinRules(kinds, effects)) {
            if rule == .none {
                list.append(nil)
            } else if let twin = kept[kind] {
                list.append(twin)
            } else {
                let twin = kind.makeEffect(controls)
                new.append((kind, twin))
                list.append(twin)
            }
        }
        return (list, new)
    }

    private func adopt(_ board: Unmanaged<Board>) {
        let old = active
        active = board
        activeSlots = board.takeUnretainedValue().slots
        activeCount = board.takeUnretainedValue().count
        old.release()
    }

    /// The pedals on the board in signal order. A control call (builds an array).
    public var effects: [AudioEffect] { locked { current.map { instances[$0]! } } }

    /// The DSP of `kind`, made (and prepared) if it was never on the board. A control call.
    public func effect(_ kind: PedalKind) -> AudioEffect {
        locked {
            if let effect = instances[kind] { return effect }
            let effect = kind.makeEffect(controls)
            if maximumBlockSize > 0 { effect.prepare(sampleRate: sampleRate, maximumBlockSize: maximumBlockSize) }
            instances[kind] = effect
            return effect
        }
    }

    /// The states of the plugin pedals on the board that have one, as JSON text by pedal id (for
    /// a preset). A control call.
    public var pedalStates: [String: String] {
        locked {
            var states: [String: String] = [:]
            for kind in current { if let effect = instances[kind] as? StatefulEffect { states[kind.id] = effect.stateJSON() } }
            return states
        }
    }

    /// Gives the pedals on the board their states (a preset's, by pedal id): a cabinet loads its
    /// file, the Amp Model its model. Throws the first pedal's error, naming it. Returns a
    /// sentence for each pedal that took its state but cannot play it (the Amp Model's model
    /// file missing: the preset loads, that pedal passes its input through). A control call.
    @discardableResult
    public func restore(states: [String: String]) throws(PedalStateError) -> [String] {
        try locked { () throws(PedalStateError) -> [String] in
            var problems: [String] = []
            for kind in current {
                guard let state = states[kind.id], let effect = instances[kind] as? RestorableEffect else { continue }
                do { try effect.restore(stateJSON: state) } catch { throw PedalStateError(pedal: kind.name, reason: "\(error)") }
                if let problem = effect.restoreProblem { problems.append("the \(kind.name) \(problem)") }
            }
            return problems
        }
    }

    /// The delay the pedals on the board add, in samples (the overdrive's oversampling filters,
    /// what plugin pedals report), when they are on. A control call.
    public var latencySamples: Double {
        locked {
            current.reduce(0) { sum, kind in
                if let effect = instances[kind] as? LatencyReportingEffect {
                    return sum + Double(effect.latencyCell.pointee.load(ordering: .relaxed))
                }
                return sum + kind.latency(sampleRate)
            }
        }
    }

    /// `latencySamples` as of the last board change or `prepare`, for any thread (a JACK
    /// client's latency reports).
    public var publishedLatencySamples: Double { Double(bitPattern: latencyBits.load(ordering: .relaxed)) }
    private let latencyBits = Atomic<UInt64>(0)
    private func publishLatency() { latencyBits.store(latencySamples.bitPattern, ordering: .relaxed) }
}

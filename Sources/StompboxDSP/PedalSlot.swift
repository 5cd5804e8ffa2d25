import Synchronization

/// Switches one pedal in and out of the chain with a short crossfade (5 ms).
///
/// A pedal with latency (the overdrive's filters, a plugin's lookahead) would be crossfaded
/// against a dry signal earlier than its own output: a comb filter while it fades. Its dry path
/// therefore follows the pedal's delay during a switch. Switched on, the dry path first glides
/// from no delay to the pedal's (5 ms; the pedal already runs, unheard), then the crossfade
/// mixes two aligned signals. Switched off, the crossfade comes first, then the dry path glides
/// back to no delay. Off, the pedal adds no delay at all; the whole switch takes 10 ms.
///
/// A pedal with a trails switch (a delay, a reverb) switched off while that is on rings out
/// instead: its input is muted and its own sound dies away (see `State.ringingOut`).
///
/// If the pedal ever puts out a NaN or an infinity it is reset and the slot's dry signal takes
/// that block's place (`failed`), whatever state the slot is in.
struct PedalSlot {
    /// Where the slot stands. Every block starts by reading the pedal's switch (and trails
    /// switch) and moves between these.
    enum State: Equatable {
        /// Out of the chain: the pedal's `process` is not called (its `bypassed` is), and its
        /// dry path has no delay.
        case bypassed
        /// Fully in: only the pedal's output is heard (its dry path kept as late as it, for
        /// the next switch or a failure).
        case active
        /// Fading in or out, or gliding the dry path's delay before or after the fade.
        case switching(Crossfade)
        /// Switched off with trails on: the pedal still runs on a muted input. Entered only
        /// from `active`; left to `active` (switched on again), to `bypassed` (rung out), or
        /// after a failure to the start of switching off.
        case ringingOut(Tail)
    }

    /// A switch in progress: `on` is where it is going; `mix` how much of the pedal is heard
    /// (0…1), and `glide` how far the dry path's delay has glided towards the pedal's, in
    /// samples of the glide. `bypassed` and `active` are its two ends.
    struct Crossfade: Equatable {
        var mix: Float
        var on: Bool
        var glide: Int
    }

    /// A pedal ringing out: `send` is how much of the input goes into it (gliding to 0 when
    /// off), `tail` how much of its own sound is heard (1 until the tail has died away or trails
    /// are switched off, then gliding to 0), `quietSamples` how long the tail has stayed below
    /// `quietLevel`.
    struct Tail: Equatable {
        var send: Float
        var tail: Float
        var quietSamples: Int
    }

    let enabled: Parameter
    let resetsWhenSwitchedOn: Bool
    private(set) var state = State.bypassed
    private var step: Float = 1.0 / 240
    private var glideLength = 240
    /// Where a plugin pedal reports its latency (it may change as it runs), or nil.
    private let reportedLatency: UnsafeMutablePointer<Atomic<Float>>?
    /// Its trails switch, if it has one (see `PedalKind.trailsParameter`).
    private let trails: Parameter?
    /// How many samples below `quietLevel` end a tail.
    private var quietLimit = 120_000
    /// Below this (−100 dBFS) a tail has died away.
    static let quietLevel: Float = 1e-5
    /// The latency a built-in pedal declares, in samples.
    private var fixedLatency: Float = 0
    /// The input's recent past, for a dry path as late as the pedal. Freed by its board (`free`).
    private var dryDelay = DryDelay()
    /// The same for the right side of a stereo board.
    private var dryDelayRight = DryDelay()

    /// True while the pedal is fully out of the chain (its `process` is not being called).
    var isBypassed: Bool { state == .bypassed }

    init(_ enabled: Parameter, resetsWhenSwitchedOn: Bool = true, reportedLatency: UnsafeMutablePointer<Atomic<Float>>? = nil,
         trails: Parameter? = nil) {
        self.enabled = enabled
        self.resetsWhenSwitchedOn = resetsWhenSwitchedOn
        self.reportedLatency = reportedLatency
        self.trails = trails
    }

    /// Not on the audio thread (allocates the dry path's delay line when the pedal has latency).
    /// `snap` the slot afterwards.
    mutating func prepare(sampleRate: Double, maximumBlockSize: Int = 0, latency: Double = 0, fadeTime: Double = 0.005) {
        step = Float(1 / max(1, sampleRate * fadeTime))
        glideLength = max(1, Int((sampleRate * fadeTime).rounded()))
        // A tail ends after 2.5 s below −100 dBFS: longer than the longest gap between echoes.
        quietLimit = Int(sampleRate * 2.5)
        fixedLatency = Float(min(max(latency, 0), Double(DryDelay.longest)))
        let longest = reportedLatency != nil ? DryDelay.longest : Int(fixedLatency.rounded(.up))
        free()
        if longest > 0 && maximumBlockSize > 0 {
            dryDelay = DryDelay(longest: longest, maximumBlockSize: maximumBlockSize)
            dryDelayRight = DryDelay(longest: longest, maximumBlockSize: maximumBlockSize)
        }
    }

    /// Frees the dry path's delay lines. Not on the audio thread.
    mutating func free() {
        dryDelay.free()
        dryDelayRight.free()
    }

    /// Puts the switch where the pedal's parameter stands, with no fade.
    mutating func snap(_ parameters: ParameterStore) {
        state = parameters.isOn(enabled) ? .active : .bypassed
    }

    /// The pedal's latency for this block, in samples (0 without a delay line).
    @inline(__always)
    private var latency: Float {
        if dryDelay.isEmpty { return 0 }
        guard let reportedLatency else { return fixedLatency }
        let reported = reportedLatency.pointee.load(ordering: .relaxed)
        return reported.isFinite ? min(max(reported, 0), Float(dryDelay.longest)) : 0
    }

    /// The state as a crossfade (ringing out comes from, and returns to, `active`).
    @inline(__always)
    private var crossfade: Crossfade {
        switch state {
        case .bypassed: Crossfade(mix: 0, on: false, glide: 0)
        case .active, .ringingOut: Crossfade(mix: 1, on: true, glide: glideLength)
        case .switching(let fade): fade
        }
    }

    /// A crossfade as a state: at either end it has settled.
    @inline(__always)
    private func settled(_ fade: Crossfade) -> State {
        if fade.mix == 0 && !fade.on && fade.glide == 0 { return .bypassed }
        if fade.mix == 1 && fade.on && fade.glide == glideLength { return .active }
        return .switching(fade)
    }

    /// One sample of a switch: on, the dry path's delay glides in and then the pedal fades in;
    /// off, the pedal fades out and then the glide goes back.
    @inline(__always)
    private func advanced(_ state: (mix: Float, glide: Int), on: Bool) -> (mix: Float, glide: Int) {
        var (mix, glide) = state
        if on {
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
    /// Returns the slot's next state.
    private func ringOut(_ effect: AudioEffect, _ pedal: StereoPlan, _ left: Buffer, _ right: Buffer?, _ ring: Tail,
                         dry: Buffer, dryRight: Buffer, on: Bool, keepTail: Bool) -> State {
        let n = left.count
        dry.baseAddress!.update(from: left.baseAddress!, count: n)
        if let right { dryRight.baseAddress!.update(from: right.baseAddress!, count: n) }
        let step = self.step
        let sendTarget: Float = on ? 1 : 0
        let tailTarget: Float = on || (keepTail && ring.quietSamples < quietLimit) ? 1 : 0
        @inline(__always) func toward(_ value: Float, _ goal: Float) -> Float {
            value < goal ? min(goal, value + step) : max(goal, value - step)
        }
        // The same glides on both sides.
        @inline(__always) func sendInto(_ io: Buffer, _ dry: Buffer) {
            var g = ring.send
            for i in 0..<n {
                g = toward(g, sendTarget)
                io[i] = dry[i] * g
            }
        }
        sendInto(left, dry)
        if let right { sendInto(right, dryRight) }
        PedalSlot.wet(effect, pedal, left, right)
        if PedalSlot.failed(effect, pedal, left, right) {
            PedalSlot.restore(left, right, from: dry, dryRight)
            return .switching(Crossfade(mix: 0, on: false, glide: glideLength))
        }
        var loudest: Float = 0
        @inline(__always) func tailInto(_ io: Buffer, _ dry: Buffer) -> (send: Float, tail: Float) {
            var g = ring.send, t = ring.tail
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
        if on && g == 1 && t == 1 { return .active }   // fully on again
        if !on && t == 0 {
            pedal.bypass(effect)                        // rung out: bypassed from the next block
            return .bypassed
        }
        let quiet = loudest < PedalSlot.quietLevel && g == 0 ? ring.quietSamples + n : 0
        return .ringingOut(Tail(send: g, tail: t, quietSamples: quiet))
    }

    /// The pedal's own processing of a block, in place. On a mono board (`right` nil) its
    /// `process`; on a stereo one a stereo pedal takes both sides and a mono pedal runs once per
    /// side (its twin takes the right). A mono pedal without a twin plays the middle of the
    /// sides on both.
    @inline(__always)
    static func wet(_ effect: AudioEffect, _ pedal: StereoPlan, _ left: Buffer, _ right: Buffer?) {
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

    /// The one fallback for a pedal that failed: true if it put a NaN or an infinity out, and
    /// then it (and its twin) are reset; the caller puts its dry signal in the block's place.
    @inline(__always)
    static func failed(_ effect: AudioEffect, _ pedal: StereoPlan, _ left: Buffer, _ right: Buffer?) -> Bool {
        guard failed(left, right) else { return false }
        pedal.reset(effect)
        return true
    }

    /// Copies the dry block (both sides on a stereo board) over the pedal's output.
    @inline(__always)
    static func restore(_ left: Buffer, _ right: Buffer?, from dry: Buffer, _ dryRight: Buffer) {
        left.baseAddress!.update(from: dry.baseAddress!, count: left.count)
        if let right { right.baseAddress!.update(from: dryRight.baseAddress!, count: right.count) }
    }

    /// True while the pedal is out of the chain and stays out this block (switched off, not
    /// ringing out): a stereo pedal then leaves a mono board mono.
    @inline(__always)
    func isIdle(_ parameters: ParameterStore) -> Bool { isBypassed && !parameters.isOn(enabled) }

    /// A mono board's block (the pedal's `process`).
    @inline(__always)
    mutating func run(_ effect: AudioEffect, _ block: Buffer, dry: Buffer, parameters: ParameterStore) {
        run(effect, StereoPlan(), block, nil, dry: dry, dryRight: dry, parameters: parameters)
    }

    /// One block: `right` nil while the board is mono here, else both sides (`dryRight` is the
    /// right side's scratch, as `dry` is the left's).
    @inline(__always)
    mutating func run(_ effect: AudioEffect, _ pedal: StereoPlan, _ left: Buffer, _ right: Buffer?,
                      dry: Buffer, dryRight: Buffer, parameters: ParameterStore) {
        let on = parameters.isOn(enabled)
        if let trails {
            if case .active = state, !on, parameters.isOn(trails) {
                // Switched off with trails on: from now on only the input into it is muted.
                state = .ringingOut(Tail(send: 1, tail: 1, quietSamples: 0))
            }
            if case .ringingOut(let ring) = state {
                state = ringOut(effect, pedal, left, right, ring, dry: dry, dryRight: dryRight, on: on, keepTail: parameters.isOn(trails))
                return
            }
        }
        var fade = self.crossfade
        if on && !fade.on && fade.mix == 0 && resetsWhenSwitchedOn {
            // Coming back from bypass: no stale echoes from the last time it was on.
            pedal.reset(effect)
        }
        fade.on = on
        let latency = self.latency
        // Without latency the dry path never needs a delay: the glide is instant.
        if latency == 0 { fade.glide = on ? glideLength : 0 }
        state = settled(fade)
        if case .bypassed = state {
            pedal.bypass(effect)
            // The delay lines keep hearing the input, for the next switch.
            if !dryDelay.isEmpty {
                _ = dryDelay.append(left)
                _ = dryDelayRight.append(right ?? left)
            }
            return
        }

        let n = left.count
        let steady: Bool
        if case .active = state { steady = true } else { steady = false }
        // The dry signal serves the crossfade and stands in for the block if the effect fails;
        // it is as late as the pedal's output (or, while the delay glides, as late as it has got).
        if !dryDelay.isEmpty {
            let start = dryDelay.append(left)
            let startRight = dryDelayRight.append(right ?? left)
            if steady {
                // Fully on: the delay lines keep up; a late dry block is read only if needed.
                PedalSlot.wet(effect, pedal, left, right)
                if PedalSlot.failed(effect, pedal, left, right) {
                    dryDelay.read(into: left, from: start, delayedBy: latency)
                    if let right { dryDelayRight.read(into: right, from: startRight, delayedBy: latency) }
                }
                return
            }
            let perGlide = latency / Float(glideLength)
            @inline(__always) func lateDry(_ into: Buffer, _ line: DryDelay, _ start: Int) {
                var state = (mix: fade.mix, glide: fade.glide)
                for i in 0..<n {
                    state = advanced(state, on: on)
                    into[i] = line.sample(start &+ i, delayedBy: perGlide * Float(state.glide))
                }
            }
            lateDry(dry, dryDelay, start)
            if right != nil { lateDry(dryRight, dryDelayRight, startRight) }
        } else {
            dry.baseAddress!.update(from: left.baseAddress!, count: n)
            if let right { dryRight.baseAddress!.update(from: right.baseAddress!, count: n) }
        }
        let running = on || fade.mix > 0
        if running {
            PedalSlot.wet(effect, pedal, left, right)
            if PedalSlot.failed(effect, pedal, left, right) {
                PedalSlot.restore(left, right, from: dry, dryRight)
                return
            }
        } else {
            pedal.bypass(effect)
        }
        guard !steady else { return }
        // The crossfade, the same on both sides.
        @inline(__always) func fadeInto(_ io: Buffer, _ dry: Buffer) -> (mix: Float, glide: Int) {
            var state = (mix: fade.mix, glide: fade.glide)
            for i in 0..<n {
                state = advanced(state, on: on)
                io[i] = state.mix == 0 ? dry[i] : dry[i] + state.mix * (io[i] - dry[i])
            }
            return state
        }
        let (mix, glide) = fadeInto(left, dry)
        if let right { _ = fadeInto(right, dryRight) }
        state = settled(Crossfade(mix: mix, on: on, glide: glide))
    }
}

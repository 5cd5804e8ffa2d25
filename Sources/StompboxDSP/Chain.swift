import Foundation

/// The fixed signal path: input gain → overdrive → eq → flanger → tremolo → delay → reverb →
/// looper → output gain → safety limiter. Mono, in place.
///
/// Each pedal sits in a `PedalSlot` that crossfades it in and out (5 ms) when its `enabled`
/// parameter changes, skips it entirely while off, and resets it (output = dry for that block)
/// if it ever produces NaN or Inf.
public final class Chain {
    public let controls: EngineControls
    public var parameters: ParameterStore { controls.parameters }

    public let overdrive: Overdrive
    public let eq: Equalizer
    public let flanger: Flanger
    public let tremolo: Tremolo
    public let delay: Delay
    public let reverb: Reverb
    public let looper: Looper

    private var overdriveSlot = PedalSlot(.overdriveEnabled)
    private var eqSlot = PedalSlot(.eqEnabled)
    private var flangerSlot = PedalSlot(.flangerEnabled)
    private var tremoloSlot = PedalSlot(.tremoloEnabled)
    private var delaySlot = PedalSlot(.delayEnabled)
    private var reverbSlot = PedalSlot(.reverbEnabled)
    private var looperSlot = PedalSlot(.looperEnabled, resetsWhenSwitchedOn: false)

    private var inputGain = SmoothedValue(1)
    private var outputGain = SmoothedValue(1)
    private var limiter = SafetyLimiter()
    private var dry = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)

    public private(set) var sampleRate: Double = 48_000
    public private(set) var maximumBlockSize = 0

    public init(controls: EngineControls = EngineControls()) {
        self.controls = controls
        let p = controls.parameters
        overdrive = Overdrive(parameters: p)
        eq = Equalizer(parameters: p)
        flanger = Flanger(parameters: p)
        tremolo = Tremolo(parameters: p)
        delay = Delay(parameters: p)
        reverb = Reverb(parameters: p)
        looper = Looper(parameters: p, control: controls.looper)
    }

    deinit { dry.deallocate() }

    /// Allocates every buffer. Not on the audio thread; call before the first `process`.
    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        precondition(sampleRate > 0 && maximumBlockSize > 0)
        self.sampleRate = sampleRate
        self.maximumBlockSize = maximumBlockSize
        dry.deallocate()
        dry = .allocate(capacity: maximumBlockSize)
        dry.initialize(repeating: 0)
        for effect in effects { effect.prepare(sampleRate: sampleRate, maximumBlockSize: maximumBlockSize) }
        inputGain.prepare(sampleRate: sampleRate)
        outputGain.prepare(sampleRate: sampleRate)
        limiter.prepare(sampleRate: sampleRate)
        for kind in EffectKind.allCases { withSlot(kind) { $0.prepare(sampleRate: sampleRate) } }
        reset()
    }

    /// Clears all state (not the looper's recording) and jumps every ramp to its target.
    /// Not on the audio thread (it walks `effects`, which builds an array).
    public func reset() {
        for effect in effects where effect !== looper { effect.reset() }
        inputGain.snap(to: decibelsToGain(parameters.load(.inputGain)))
        outputGain.snap(to: decibelsToGain(parameters.load(.outputGain)))
        limiter.reset()
        for kind in EffectKind.allCases { withSlot(kind) { $0.snap(parameters) } }
    }

    /// The pedals in chain order. Not for the audio thread (builds an array).
    public var effects: [AudioEffect] { [overdrive, eq, flanger, tremolo, delay, reverb, looper] }

    public func effect(_ kind: EffectKind) -> AudioEffect {
        switch kind {
        case .overdrive: overdrive
        case .eq: eq
        case .flanger: flanger
        case .tremolo: tremolo
        case .delay: delay
        case .reverb: reverb
        case .looper: looper
        }
    }

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
            processBlock(UnsafeMutableBufferPointer(start: base + start, count: n))
            start += n
        }
    }

    private func processBlock(_ block: UnsafeMutableBufferPointer<Float>) {
        let p = parameters
        inputGain.setTarget(decibelsToGain(p.load(.inputGain)))
        outputGain.setTarget(decibelsToGain(p.load(.outputGain)))

        // Nothing that is not a number goes further; absurd levels are bounded.
        let inPeakBits = largestMagnitudeBits(block)
        if inPeakBits <= 0x7f80_0000 {
            controls.meters.note(input: Float(bitPattern: inPeakBits))
        } else {
            // A NaN is in there (rare): meter the largest number instead.
            var peak: Float = 0
            for x in block where x.isFinite { peak = max(peak, abs(x)) }
            controls.meters.note(input: peak)
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

        overdriveSlot.run(overdrive, block, dry: dry, parameters: p)
        eqSlot.run(eq, block, dry: dry, parameters: p)
        flangerSlot.run(flanger, block, dry: dry, parameters: p)
        tremoloSlot.run(tremolo, block, dry: dry, parameters: p)
        delaySlot.run(delay, block, dry: dry, parameters: p)
        reverbSlot.run(reverb, block, dry: dry, parameters: p)
        looperSlot.run(looper, block, dry: dry, parameters: p)
        // A real looper ignores its footswitch while it is off: drop requests made meanwhile.
        if looperSlot.isBypassed { looper.skipPendingRequests() }

        gain = outputGain
        if gain.isRamping {
            for i in block.indices { block[i] *= gain.next() }
        } else if gain.current != 1 {
            let g = gain.current
            for i in block.indices { block[i] *= g }
        }
        outputGain = gain
        let peak = limiter.process(block)
        lastOutputPeak = max(lastOutputPeak, peak)
        controls.meters.note(output: peak)
    }

    private func withSlot(_ kind: EffectKind, _ body: (inout PedalSlot) -> Void) {
        switch kind {
        case .overdrive: body(&overdriveSlot)
        case .eq: body(&eqSlot)
        case .flanger: body(&flangerSlot)
        case .tremolo: body(&tremoloSlot)
        case .delay: body(&delaySlot)
        case .reverb: body(&reverbSlot)
        case .looper: body(&looperSlot)
        }
    }
}

/// Switches one pedal in and out of the chain with a short crossfade.
struct PedalSlot {
    let enabled: Parameter
    let resetsWhenSwitchedOn: Bool
    /// 0 = bypassed, 1 = fully in.
    private var mix: Float = 0
    private var target: Float = 0
    private var step: Float = 1.0 / 240

    /// True while the pedal is fully out of the chain (its `process` is not being called).
    var isBypassed: Bool { mix == 0 && target == 0 }

    init(_ enabled: Parameter, resetsWhenSwitchedOn: Bool = true) {
        self.enabled = enabled
        self.resetsWhenSwitchedOn = resetsWhenSwitchedOn
    }

    mutating func prepare(sampleRate: Double, fadeTime: Double = 0.005) {
        step = Float(1 / max(1, sampleRate * fadeTime))
    }

    mutating func snap(_ parameters: ParameterStore) {
        target = parameters.isOn(enabled) ? 1 : 0
        mix = target
    }

    @inline(__always)
    mutating func run<E: AudioEffect>(_ effect: E, _ block: UnsafeMutableBufferPointer<Float>,
                                      dry: UnsafeMutableBufferPointer<Float>, parameters: ParameterStore) {
        let wanted: Float = parameters.isOn(enabled) ? 1 : 0
        if wanted == 1 && mix == 0 && target == 0 && resetsWhenSwitchedOn {
            // Coming back from bypass: no stale echoes from the last time it was on.
            effect.reset()
        }
        target = wanted
        if mix == 0 && target == 0 { return }

        let fading = mix != target
        // The dry copy serves the crossfade and stands in for the block if the effect fails.
        _ = dry.baseAddress!.update(from: block.baseAddress!, count: block.count)
        effect.process(block)

        // One vectorised scan: the largest magnitude's bits reach the exponent's all-ones
        // pattern only for ±∞ or NaN.
        if largestMagnitudeBits(block) >= 0x7f80_0000 {
            effect.reset()
            _ = block.baseAddress!.update(from: dry.baseAddress!, count: block.count)
            return
        }
        guard fading else { return }
        let delta = target > mix ? step : -step
        for i in block.indices {
            if mix != target {
                mix += delta
                if (delta > 0 && mix > target) || (delta < 0 && mix < target) { mix = target }
            }
            block[i] = dry[i] + mix * (block[i] - dry[i])
        }
    }
}

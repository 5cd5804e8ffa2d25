import Foundation

/// A flanger: the signal plus a copy through a delay that a sine LFO sweeps around `delay_ms`,
/// by ±90 % of it at depth 1 (so 2 ms sweeps 0.2…3.8 ms), with feedback from the delayed copy
/// back into the line. The delay is read between samples with 4-point (Catmull-Rom) cubic
/// interpolation, so the sweep is smooth. The wet path is scaled by √(1 − feedback²), which
/// keeps the level of a broadband signal about the same whatever the feedback.
///
/// out = (1 − mix)·x + mix·√(1 − fb²)·d,  line ← x + fb·d,  d = line[t − delay(t)].
///
/// The LFO and the smoothed knobs are evaluated every 32 samples (0.7 ms) and the delay, the
/// feedback and the mix move linearly in between: a 5 Hz sweep strays from the true sine by
/// under 0.03 samples, and the per-sample loop stays short.
///
/// In stereo each side has its own line, and the right side's sweep runs `flanger.spread` × half
/// a cycle behind the left's (0: the same sweep on both, 1: opposite), so the notches move
/// apart across the speakers.
///
/// Threads: `init`/`prepare` off the audio thread; `process`/`reset` on it, allocation-free.
public final class Flanger: StereoEffect {
    let parameters: ParameterStore
    private let table = SineTable()
    /// Sweep half-width at depth 1, as a fraction of the centre delay.
    static let sweepAtFullDepth: Float = 0.9

    private var sampleRate: Double = 48_000
    private var line = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    /// The right side's line, in stereo.
    private var lineRight = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var lineMask = 0
    private var writeIndex = 0
    /// The shortest delay the 4-point read allows: it needs one sample after the read point.
    private let minimumDelay: Float = 2

    private var phase: Double = 0
    private var increment = SmoothedValue(0)
    private var centre = SmoothedValue(96)
    private var depth = SmoothedValue(0.7)
    private var feedback = SmoothedValue(0.5)
    private var mix = SmoothedValue(0.5)
    /// Values reached at the end of the last sub-block; the next one ramps from them.
    private var delayNow: Float = 96
    /// The right side's, in stereo (its sweep is behind the left's by the spread).
    private var delayNowRight: Float = 96
    private var spread = SmoothedValue(0.5)
    private var feedbackNow: Float = 0.5
    private var mixNow: Float = 0.5
    static let subBlock = 32

    public init(parameters: ParameterStore) {
        self.parameters = parameters
        line.initialize(to: 0)
        lineRight.initialize(to: 0)
    }

    deinit {
        line.deallocate()
        lineRight.deallocate()
        table.deallocate()
    }

    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        let maximum = Double(Parameter.flangerDelay.spec.maximum) / 1000 * sampleRate
            * Double(1 + Flanger.sweepAtFullDepth)
        var size = 1
        while size < Int(maximum) + 8 { size *= 2 }
        reallocateZeroed(&line, count: size)
        reallocateZeroed(&lineRight, count: size)
        spread.prepare(sampleRate: sampleRate)
        lineMask = size - 1
        increment.prepare(sampleRate: sampleRate)
        // The delay glides over 100 ms: faster, a big turn of the knob would bend the pitch
        // by half an octave. Feedback ramps over 50 ms, as the comb's resonances ring.
        centre.prepare(sampleRate: sampleRate, rampTime: 0.1)
        depth.prepare(sampleRate: sampleRate)
        feedback.prepare(sampleRate: sampleRate, rampTime: 0.05)
        mix.prepare(sampleRate: sampleRate)
        reset()
    }

    public func reset() {
        line.update(repeating: 0, count: lineMask + 1)
        lineRight.update(repeating: 0, count: lineMask + 1)
        writeIndex = 0
        phase = 0
        increment.snap(to: targetIncrement())
        centre.snap(to: targetCentre())
        depth.snap(to: parameters.load(.flangerDepth))
        feedback.snap(to: parameters.load(.flangerFeedback))
        mix.snap(to: parameters.load(.flangerMix))
        delayNow = sweptDelay(lfo: 0)
        spread.snap(to: parameters.load(.flangerSpread))
        delayNowRight = sweptDelay(lfo: table.sine(Flanger.wrapped(0.5 * spread.current)))
        feedbackNow = feedback.current
        mixNow = mix.current
    }

    /// The delay in samples for an LFO value −1…1, from the smoothed centre and depth.
    @inline(__always)
    private func sweptDelay(lfo: Float) -> Float {
        max(centre.current * (1 + Flanger.sweepAtFullDepth * depth.current * lfo), minimumDelay)
    }

    private func targetIncrement() -> Float { Float(Double(parameters.load(.flangerRate)) / sampleRate) }
    private func targetCentre() -> Float { Float(Double(parameters.load(.flangerDelay)) / 1000 * sampleRate) }

    /// A phase in cycles, brought into 0 ≤ phase < 1.
    @inline(__always)
    static func wrapped(_ phase: Float) -> Float { phase - phase.rounded(.down) }

    private func readKnobs() {
        increment.setTarget(targetIncrement())
        centre.setTarget(targetCentre())
        depth.setTarget(parameters.load(.flangerDepth))
        feedback.setTarget(parameters.load(.flangerFeedback))
        mix.setTarget(parameters.load(.flangerMix))
    }

    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        readKnobs()
        run(block, line: line, offset: 0, delayNow: &delayNow)
    }

    /// Where the sweep and the knobs' glides stand: a stereo block runs each side from the same place.
    private struct Motion {
        var phase: Double, increment, centre, depth, feedback, mix: SmoothedValue
        var feedbackNow, mixNow: Float, writeIndex: Int
    }

    private var motion: Motion {
        get { Motion(phase: phase, increment: increment, centre: centre, depth: depth, feedback: feedback, mix: mix,
                     feedbackNow: feedbackNow, mixNow: mixNow, writeIndex: writeIndex) }
        set {
            phase = newValue.phase
            increment = newValue.increment
            centre = newValue.centre
            depth = newValue.depth
            feedback = newValue.feedback
            mix = newValue.mix
            feedbackNow = newValue.feedbackNow
            mixNow = newValue.mixNow
            writeIndex = newValue.writeIndex
        }
    }

    public func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {
        readKnobs()
        spread.setTarget(parameters.load(.flangerSpread))
        let offset = 0.5 * spread.skip(left.count)
        let start = motion
        run(left, line: line, offset: 0, delayNow: &delayNow)
        let end = motion
        motion = start
        run(right, line: lineRight, offset: offset, delayNow: &delayNowRight)
        motion = end
    }

    /// One side (or the mono signal) through `line`, its sweep `offset` cycles behind.
    private func run(_ block: UnsafeMutableBufferPointer<Float>, line: UnsafeMutablePointer<Float>, offset: Float,
                     delayNow: inout Float) {
        let mask = lineMask
        var writeIndex = self.writeIndex
        var delay = delayNow, fb = feedbackNow, m = mixNow
        guard let base = block.baseAddress else { return }
        var start = 0
        while start < block.count {
            let n = min(Flanger.subBlock, block.count - start)
            // Control rate: advance the LFO and the ramps to the end of this sub-block.
            let before = increment.current
            let after = increment.skip(n)
            phase += 0.5 * Double(before + after) * Double(n)
            phase -= phase.rounded(.down)
            _ = centre.skip(n)
            _ = depth.skip(n)
            let delayEnd = sweptDelay(lfo: table.sine(offset == 0 ? Float(phase) : Flanger.wrapped(Float(phase) - offset)))
            let fbEnd = feedback.skip(n), mixEnd = mix.skip(n)
            let scale = 1 / Float(n)
            let dDelay = (delayEnd - delay) * scale, dFb = (fbEnd - fb) * scale, dMix = (mixEnd - m) * scale
            var norm = (1 - fb * fb).squareRoot()
            let dNorm = ((1 - fbEnd * fbEnd).squareRoot() - norm) * scale

            let x = base + start
            var first = 0
            if min(delay, delayEnd) >= 5 {
                // Four samples at a time: with the delay at least 5 samples, none of the four
                // reads what the other three write, so they can be computed side by side.
                first = Flanger.runFour(x, n, line: line, mask: mask, writeIndex: &writeIndex,
                                        delay: delay, dDelay: dDelay, fb: fb, dFb: dFb,
                                        mix: m, dMix: dMix, norm: norm, dNorm: dNorm)
                let done = Float(first)
                delay += done * dDelay
                fb += done * dFb
                m += done * dMix
                norm += done * dNorm
            }
            for i in first..<n {
                let input = x[i].isFinite ? x[i] : 0
                delay += dDelay
                fb += dFb
                m += dMix
                norm += dNorm
                let whole = Int(delay)
                let f = delay - Float(whole)
                // y1 is `whole` samples old, y2 one older; the value sought lies between them.
                let r = writeIndex - whole
                let y0 = line[(r + 1) & mask]
                let y1 = line[r & mask]
                let y2 = line[(r - 1) & mask]
                let y3 = line[(r - 2) & mask]
                let c1 = 0.5 * (y2 - y0)
                let c2 = y0 - 2.5 * y1 + 2 * y2 - 0.5 * y3
                let c3 = 0.5 * (y3 - y0) + 1.5 * (y1 - y2)
                let d = ((c3 * f + c2) * f + c1) * f + y1
                // A decaying tail ends in exact zero instead of denormals.
                line[writeIndex] = flushed(input + fb * d)
                writeIndex = (writeIndex + 1) & mask
                x[i] = input + m * (norm * d - input)
            }
            // Land exactly on the targets, without the rounding of n small steps.
            delay = delayEnd
            fb = fbEnd
            m = mixEnd
            start += n
        }
        self.writeIndex = writeIndex
        delayNow = delay
        feedbackNow = fb
        mixNow = m
    }

    /// The flanger's loop for runs of four samples (see `process`), the knobs' ramps evaluated
    /// per sample as there. Returns how many samples it did (a multiple of four).
    @inline(__always)
    private static func runFour(_ x: UnsafeMutablePointer<Float>, _ n: Int, line: UnsafeMutablePointer<Float>,
                                mask: Int, writeIndex: inout Int, delay: Float, dDelay: Float,
                                fb: Float, dFb: Float, mix: Float, dMix: Float,
                                norm: Float, dNorm: Float) -> Int {
        let finiteLimit = SIMD4<UInt32>(repeating: 0x7f80_0000)
        let magnitude = SIMD4<UInt32>(repeating: 0x7fff_ffff)
        let floor = SIMD4<UInt32>(repeating: Float(1e-15).bitPattern)
        let magic = SIMD4<Float>(repeating: 12_582_912)
        let magicBits = SIMD4<Int32>(repeating: 0x4b40_0000)
        var w = writeIndex
        var i = 0
        while i + 4 <= n {
            let steps = SIMD4<Float>(Float(i + 1), Float(i + 2), Float(i + 3), Float(i + 4))
            let dv = delay + steps * dDelay
            // Whole and fractional delays per lane, without a checked conversion per lane: adding
            // 1.5·2²³ rounds a delay (0…2²²) to a whole number in the float's low bits, one less
            // where that rounded up gives the floor, and the bits less 1.5·2²³'s are that number.
            var whole = (dv + magic) - magic
            whole = whole.replacing(with: whole - 1, where: whole .> dv)
            let f = dv - whole
            let wholeBits = unsafeBitCast(whole + magic, to: SIMD4<Int32>.self) &- magicBits
            let k0 = Int(wholeBits[0]), k1 = Int(wholeBits[1]), k2 = Int(wholeBits[2]), k3 = Int(wholeBits[3])
            // y1 is `whole` samples old; the four taps are consecutive (r − 2 … r + 1).
            let r0 = w &- k0, r1 = w &+ 1 &- k1, r2 = w &+ 2 &- k2, r3 = w &+ 3 &- k3
            let y0 = SIMD4(line[(r0 &+ 1) & mask], line[(r1 &+ 1) & mask], line[(r2 &+ 1) & mask], line[(r3 &+ 1) & mask])
            let y1 = SIMD4(line[r0 & mask], line[r1 & mask], line[r2 & mask], line[r3 & mask])
            let y2 = SIMD4(line[(r0 &- 1) & mask], line[(r1 &- 1) & mask], line[(r2 &- 1) & mask], line[(r3 &- 1) & mask])
            let y3 = SIMD4(line[(r0 &- 2) & mask], line[(r1 &- 2) & mask], line[(r2 &- 2) & mask], line[(r3 &- 2) & mask])
            let c1 = 0.5 * (y2 - y0)
            let c2 = y0 - 2.5 * y1 + 2 * y2 - 0.5 * y3
            let c3 = 0.5 * (y3 - y0) + 1.5 * (y1 - y2)
            let d = ((c3 * f + c2) * f + c1) * f + y1

            let raw = UnsafeRawPointer(x + i).loadUnaligned(as: SIMD4<Float>.self)
            let rawBits = unsafeBitCast(raw, to: SIMD4<UInt32>.self)
            let input = raw.replacing(with: 0, where: (rawBits & magnitude) .>= finiteLimit)
            let fbv = fb + steps * dFb
            let feed = input + fbv * d
            let feedBits = unsafeBitCast(feed, to: SIMD4<UInt32>.self)
            let stored = feed.replacing(with: 0, where: (feedBits & magnitude) .< floor)
            if w &+ 3 <= mask {
                UnsafeMutableRawPointer(line + w).storeBytes(of: stored, as: SIMD4<Float>.self)
            } else {
                line[w] = stored[0]; line[(w &+ 1) & mask] = stored[1]
                line[(w &+ 2) & mask] = stored[2]; line[(w &+ 3) & mask] = stored[3]
            }
            w = (w &+ 4) & mask
            let mv = mix + steps * dMix, nv = norm + steps * dNorm
            UnsafeMutableRawPointer(x + i).storeBytes(of: input + mv * (nv * d - input), as: SIMD4<Float>.self)
            i += 4
        }
        writeIndex = w
        return i
    }
}

extension PedalKind {
    /// Rate, depth, centre delay, feedback, mix; an interpolated delay line.
    public static let flanger = PedalKind(
        id: "flanger", name: "Flanger",
        controls: [
            PedalControl("rate_hz", "Rate", .hertz, 0.05...5, default: 0.3, .logarithmic),
            PedalControl("depth", "Depth", .none, 0...1, default: 0.7),
            PedalControl("delay_ms", "Delay", .milliseconds, 0.5...10, default: 2, .logarithmic),
            PedalControl("feedback", "Feedback", .none, -0.95...0.95, default: 0.5),
            PedalControl("mix", "Mix", .none, 0...1, default: 0.5),
            PedalControl("spread", "Spread", .none, 0...1, default: 0.5),
        ],
        // Six knobs: three on top, three below.
        face: PedalFace(places: [
            .init("rate_hz", x: 4, y: 14, diameter: 40, width: 60),
            .init("depth", x: 62, y: 14, diameter: 40, width: 60),
            .init("delay_ms", x: 120, y: 14, diameter: 40, width: 60),
            .init("feedback", x: 4, y: 76, diameter: 40, width: 60),
            .init("mix", x: 62, y: 76, diameter: 40, width: 60),
            .init("spread", x: 120, y: 76, diameter: 40, width: 60),
        ]),
        make: { Flanger(parameters: $0.parameters) })
}

extension Parameter {
    public static let flangerEnabled = PedalKind.flanger.enabledParameter
    public static let flangerRate = PedalKind.flanger.parameter("rate_hz")
    public static let flangerDepth = PedalKind.flanger.parameter("depth")
    public static let flangerDelay = PedalKind.flanger.parameter("delay_ms")
    public static let flangerFeedback = PedalKind.flanger.parameter("feedback")
    public static let flangerMix = PedalKind.flanger.parameter("mix")
    public static let flangerSpread = PedalKind.flanger.parameter("spread")
}

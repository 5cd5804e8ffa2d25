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
        Flanger.warmUp(line: line, lineRight: lineRight, mask: lineMask)
        reset()
    }

    /// Runs each vector width's path once on silence. Their generic lane code has the Swift
    /// runtime make type metadata the first time it runs, which allocates: here, off the audio
    /// thread, instead of in the audio thread's first blocks. `reset` clears the lines after.
    private static func warmUp(line: UnsafeMutablePointer<Float>, lineRight: UnsafeMutablePointer<Float>, mask: Int) {
        let n = 32
        let x = UnsafeMutablePointer<Float>.allocate(capacity: 2 * n)
        x.initialize(repeating: 0, count: 2 * n)
        defer { x.deallocate() }
        let ramps = Ramps(fb: 0, dFb: 0, mix: 0, dMix: 0, norm: 1, dNorm: 0)
        _ = runBoth(SIMD16<Float>.self, x, x + n, n, line: line, rightOffset: lineRight - line, mask: mask, writeIndex: 0,
                    delays: (16, 16), steps: (0, 0), ramps)
        _ = runBoth(SIMD8<Float>.self, x, x + n, n, line: line, rightOffset: lineRight - line, mask: mask, writeIndex: 0,
                    delays: (8, 8), steps: (0, 0), ramps)
        var w = 0
        _ = runLanes(x, x, n, line: line, rightOffset: 0, mask: mask, writeIndex: &w,
                     delay: SIMD4(repeating: 8), dDelay: SIMD4(repeating: 0), ramps)
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
        guard let x = block.baseAddress else { return }
        run(x, nil, block.count, offset: 0)
    }

    public func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {
        readKnobs()
        spread.setTarget(parameters.load(.flangerSpread))
        let offset = 0.5 * spread.skip(left.count)
        guard let l = left.baseAddress, let r = right.baseAddress else { return }
        run(l, r, left.count, offset: offset)
    }

    /// The mono signal, or the left side and (`right`) the right one, through their lines; the
    /// right side's sweep `offset` cycles behind the left's.
    private func run(_ base: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, _ count: Int, offset: Float) {
        let mask = lineMask, line = self.line, lineRight = self.lineRight
        var writeIndex = self.writeIndex
        var delay = delayNow, delayRight = delayNowRight, fb = feedbackNow, m = mixNow
        var start = 0
        while start < count {
            let n = min(Flanger.subBlock, count - start)
            // Control rate: advance the LFO and the ramps to the end of this sub-block.
            let before = increment.current
            let after = increment.skip(n)
            phase += 0.5 * Double(before + after) * Double(n)
            phase -= phase.rounded(.down)
            _ = centre.skip(n)
            _ = depth.skip(n)
            let delayEnd = sweptDelay(lfo: table.sine(Float(phase)))
            let fbEnd = feedback.skip(n), mixEnd = mix.skip(n)
            let scale = 1 / Float(n)
            let dFb = (fbEnd - fb) * scale, dMix = (mixEnd - m) * scale
            let norm = (1 - fb * fb).squareRoot()
            let dNorm = ((1 - fbEnd * fbEnd).squareRoot() - norm) * scale
            let ramps = Ramps(fb: fb, dFb: dFb, mix: m, dMix: dMix, norm: norm, dNorm: dNorm)

            let x = base + start
            let dDelay = (delayEnd - delay) * scale
            if let right {
                let xRight = right + start
                let delayEndRight = sweptDelay(lfo: table.sine(offset == 0 ? Float(phase) : Flanger.wrapped(Float(phase) - offset)))
                let dDelayRight = (delayEndRight - delayRight) * scale
                let shortest = min(min(delay, delayEnd), min(delayRight, delayEndRight))
                let rightOffset = lineRight - line, delays = (delay, delayRight), steps = (dDelay, dDelayRight)
                // Both sides side by side in one vector: eight samples each where the delay is at
                // least 9 samples (none of the eight reads what the others write), else four.
                if shortest >= 9 {
                    writeIndex = Flanger.runBoth(SIMD16<Float>.self, x, xRight, n, line: line, rightOffset: rightOffset, mask: mask,
                                                 writeIndex: writeIndex, delays: delays, steps: steps, ramps)
                } else if shortest >= 5 {
                    writeIndex = Flanger.runBoth(SIMD8<Float>.self, x, xRight, n, line: line, rightOffset: rightOffset, mask: mask,
                                                 writeIndex: writeIndex, delays: delays, steps: steps, ramps)
                } else {
                    _ = runSide(x, n, line: line, writeIndex: writeIndex, delay: delay, delayEnd: delayEnd, dDelay: dDelay, ramps)
                    writeIndex = runSide(xRight, n, line: lineRight, writeIndex: writeIndex, delay: delayRight,
                                         delayEnd: delayEndRight, dDelay: dDelayRight, ramps)
                }
                delayRight = delayEndRight
            } else {
                writeIndex = runSide(x, n, line: line, writeIndex: writeIndex, delay: delay, delayEnd: delayEnd, dDelay: dDelay, ramps)
            }
            // Land exactly on the targets, without the rounding of n small steps.
            delay = delayEnd
            fb = fbEnd
            m = mixEnd
            start += n
        }
        self.writeIndex = writeIndex
        delayNow = delay
        delayNowRight = delayRight
        feedbackNow = fb
        mixNow = m
    }

    /// Feedback, mix and the wet path's scaling at a sub-block's start, and their steps per sample.
    private struct Ramps {
        let fb, dFb, mix, dMix, norm, dNorm: Float
    }

    /// Both sides' sub-block, `V.samplesPerSide` samples of each at a time, then the rest sample
    /// by sample. Returns the write index after it.
    @inline(__always)
    private static func runBoth<V: FlangerLanes>(_ lanes: V.Type, _ x: UnsafeMutablePointer<Float>, _ xRight: UnsafeMutablePointer<Float>,
                                                 _ n: Int, line: UnsafeMutablePointer<Float>, rightOffset: Int, mask: Int, writeIndex: Int,
                                                 delays: (Float, Float), steps: (Float, Float), _ ramps: Ramps) -> Int {
        var w = writeIndex
        let done = runLanes(x, xRight, n, line: line, rightOffset: rightOffset, mask: mask, writeIndex: &w,
                            delay: V.sides(delays.0, delays.1), dDelay: V.sides(steps.0, steps.1), ramps)
        _ = runSamples(x, from: done, n, line: line, mask: mask, writeIndex: w, delay: delays.0, dDelay: steps.0, ramps)
        return runSamples(xRight, from: done, n, line: line + rightOffset, mask: mask, writeIndex: w,
                          delay: delays.1, dDelay: steps.1, ramps)
    }

    /// One side's sub-block: four samples at a time where the delay allows, then sample by
    /// sample. Returns the write index after it.
    @inline(__always)
    private func runSide(_ x: UnsafeMutablePointer<Float>, _ n: Int, line: UnsafeMutablePointer<Float>, writeIndex: Int,
                         delay: Float, delayEnd: Float, dDelay: Float, _ ramps: Ramps) -> Int {
        var w = writeIndex, done = 0
        if min(delay, delayEnd) >= 5 {
            // Four samples at a time: with the delay at least 5 samples, none of the four
            // reads what the other three write, so they can be computed side by side.
            done = Flanger.runLanes(x, x, n, line: line, rightOffset: 0, mask: lineMask, writeIndex: &w,
                                    delay: SIMD4(repeating: delay), dDelay: SIMD4(repeating: dDelay), ramps)
        }
        return Flanger.runSamples(x, from: done, n, line: line, mask: lineMask, writeIndex: w, delay: delay, dDelay: dDelay, ramps)
    }

    /// Samples `first..<n` one at a time, the ramps stepped from the sub-block's start (the
    /// first `first` done by `runLanes`). Returns the write index after them.
    @inline(__always)
    private static func runSamples(_ x: UnsafeMutablePointer<Float>, from first: Int, _ n: Int, line: UnsafeMutablePointer<Float>,
                                   mask: Int, writeIndex: Int, delay: Float, dDelay: Float, _ ramps: Ramps) -> Int {
        let done = Float(first)
        var delay = delay + done * dDelay
        var fb = ramps.fb + done * ramps.dFb, m = ramps.mix + done * ramps.dMix, norm = ramps.norm + done * ramps.dNorm
        var writeIndex = writeIndex
        for i in first..<n {
            let input = x[i].isFinite ? x[i] : 0
            delay += dDelay
            fb += ramps.dFb
            m += ramps.dMix
            norm += ramps.dNorm
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
        return writeIndex
    }

    /// 4-point Catmull-Rom between y1 (at f = 0) and y2 (at f = 1), y0 and y3 their outer
    /// neighbours, in each lane (as `runSamples` does one sample).
    @inline(__always)
    private static func interpolated<V: SIMD>(_ y0: V, _ y1: V, _ y2: V, _ y3: V, at f: V) -> V where V.Scalar == Float {
        let c1 = 0.5 * (y2 - y0)
        let c2 = y0 - 2.5 * y1 + 2 * y2 - 0.5 * y3
        let c3 = 0.5 * (y3 - y0) + 1.5 * (y1 - y2)
        return mulAdd(mulAdd(mulAdd(c3, f, c2), f, c1), f, y1)
    }

    /// The flanger's loop for runs of `V.samplesPerSide` samples (see `process`), the knobs'
    /// ramps evaluated per sample as there; each lane one sample. With four lanes, four samples
    /// of `x`; with eight (or sixteen), lanes 4…7 (8…15) are the same four (eight) samples of
    /// `xRight` through the line at `rightOffset` past `line`. Each lane computes what
    /// `runSamples` would for its sample, so the width changes nothing in the output. Returns
    /// how many samples of each it did (a multiple of the run).
    @inline(__always)
    private static func runLanes<V: FlangerLanes>(_ x: UnsafeMutablePointer<Float>, _ xRight: UnsafeMutablePointer<Float>, _ n: Int,
                                                  line: UnsafeMutablePointer<Float>, rightOffset: Int, mask: Int,
                                                  writeIndex: inout Int, delay: V, dDelay: V, _ ramps: Ramps) -> Int {
        let lineRight = line + rightOffset
        let per = V.samplesPerSide
        var w = writeIndex
        var i = 0
        while i + per <= n {
            let steps = V.lanes { Float(i + ($0 % per) + 1) }
            let (whole, f) = (delay + steps * dDelay).wholeAndFraction()
            // y1 is `whole` samples old; the four taps are consecutive (r − 2 … r + 1).
            @inline(__always) func tap(_ t: Int) -> V {
                V.lanes { k in
                    let r = w &+ (k % per) &- Int(whole[k])
                    return line[(k < per ? 0 : rightOffset) &+ ((r &+ t) & mask)]
                }
            }
            let d = interpolated(tap(1), tap(0), tap(-1), tap(-2), at: f)
            let raw = V.load(x + i, xRight + i)
            let input = raw.finiteOrZero()
            let fbv = ramps.fb + steps * ramps.dFb
            let feed = mulAdd(fbv, d, input)
            let stored = feed.flushedToZero()
            if w &+ (per - 1) <= mask {
                stored.store(line + w, lineRight + w)
            } else {
                for k in 0..<V.scalarCount { (k < per ? line : lineRight)[(w &+ (k % per)) & mask] = stored[k] }
            }
            w = (w &+ per) & mask
            let mv = ramps.mix + steps * ramps.dMix, nv = ramps.norm + steps * ramps.dNorm
            mulAdd(mv, mulAdd(nv, d, -input), input).store(x + i, xRight + i)
            i += per
        }
        writeIndex = w
        return i
    }
}

/// The flanger's vector loop's lanes: four samples of one signal (`SIMD4`), or four of each of
/// two (`SIMD8`, the second in lanes 4…7), or eight of each (`SIMD16`, the second in lanes 8…15).
/// The wider vectors work half by half through the narrower ones; the compiler joins the halves.
protocol FlangerLanes: SIMD where Scalar == Float {
    /// How many successive samples of one side the lanes hold.
    static var samplesPerSide: Int { get }
    /// `first` in the first side's lanes, `second` in the second's.
    static func sides(_ first: Float, _ second: Float) -> Self
    /// A vector of `value(k)` in lane k.
    static func lanes(_ value: (Int) -> Float) -> Self
    /// `samplesPerSide` samples from `first`, and with two sides as many from `second`.
    static func load(_ first: UnsafePointer<Float>, _ second: UnsafePointer<Float>) -> Self
    /// Stores the lanes as `load` reads them.
    func store(_ first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>)
    /// Each lane's whole part (a delay 0…2²²) and the fraction left.
    func wholeAndFraction() -> (whole: Wholes, fraction: Self)
    associatedtype Wholes: SIMD where Wholes.Scalar == Int32
    /// Each lane, or 0 where it is not finite.
    func finiteOrZero() -> Self
    /// Each lane, or exact zero where it is too small to matter (as `flushed`).
    func flushedToZero() -> Self
}

extension SIMD4: FlangerLanes where Scalar == Float {
    static var samplesPerSide: Int { 4 }
    static func sides(_ first: Float, _ second: Float) -> Self { SIMD4(repeating: first) }

    @inline(__always)
    static func lanes(_ value: (Int) -> Float) -> Self { SIMD4(value(0), value(1), value(2), value(3)) }

    @inline(__always)
    static func load(_ first: UnsafePointer<Float>, _ second: UnsafePointer<Float>) -> Self {
        UnsafeRawPointer(first).loadUnaligned(as: SIMD4<Float>.self)
    }

    @inline(__always)
    func store(_ first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(first).storeBytes(of: self, as: SIMD4<Float>.self)
    }

    /// Without a checked conversion per lane: adding 1.5·2²³ rounds a delay (0…2²²) to a whole
    /// number in the float's low bits, one less where that rounded up gives the floor, and the
    /// bits less 1.5·2²³'s are that number.
    @inline(__always)
    func wholeAndFraction() -> (whole: SIMD4<Int32>, fraction: Self) {
        let magic = SIMD4<Float>(repeating: 12_582_912)
        var whole = (self + magic) - magic
        whole = whole.replacing(with: whole - 1, where: whole .> self)
        return (unsafeBitCast(whole + magic, to: SIMD4<Int32>.self) &- SIMD4<Int32>(repeating: 0x4b40_0000), self - whole)
    }

    @inline(__always)
    func finiteOrZero() -> Self {
        let magnitude = unsafeBitCast(self, to: SIMD4<UInt32>.self) & SIMD4<UInt32>(repeating: 0x7fff_ffff)
        return replacing(with: 0, where: magnitude .>= SIMD4<UInt32>(repeating: 0x7f80_0000))
    }

    @inline(__always)
    func flushedToZero() -> Self {
        let magnitude = unsafeBitCast(self, to: SIMD4<UInt32>.self) & SIMD4<UInt32>(repeating: 0x7fff_ffff)
        return replacing(with: 0, where: magnitude .< SIMD4<UInt32>(repeating: Float(1e-15).bitPattern))
    }
}

extension SIMD8: FlangerLanes where Scalar == Float {
    static var samplesPerSide: Int { 4 }
    static func sides(_ first: Float, _ second: Float) -> Self { SIMD8(lowHalf: SIMD4(repeating: first), highHalf: SIMD4(repeating: second)) }

    @inline(__always)
    static func lanes(_ value: (Int) -> Float) -> Self {
        SIMD8(value(0), value(1), value(2), value(3), value(4), value(5), value(6), value(7))
    }

    @inline(__always)
    static func load(_ first: UnsafePointer<Float>, _ second: UnsafePointer<Float>) -> Self {
        SIMD8(lowHalf: .load(first, first), highHalf: .load(second, second))
    }

    @inline(__always)
    func store(_ first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>) {
        lowHalf.store(first, first)
        highHalf.store(second, second)
    }

    @inline(__always)
    func wholeAndFraction() -> (whole: SIMD8<Int32>, fraction: Self) {
        let low = lowHalf.wholeAndFraction(), high = highHalf.wholeAndFraction()
        return (SIMD8<Int32>(lowHalf: low.whole, highHalf: high.whole), SIMD8(lowHalf: low.fraction, highHalf: high.fraction))
    }

    @inline(__always)
    func finiteOrZero() -> Self { SIMD8(lowHalf: lowHalf.finiteOrZero(), highHalf: highHalf.finiteOrZero()) }

    @inline(__always)
    func flushedToZero() -> Self { SIMD8(lowHalf: lowHalf.flushedToZero(), highHalf: highHalf.flushedToZero()) }
}

/// Eight samples of each of two sides: lanes 0…7 the first, 8…15 the second.
extension SIMD16: FlangerLanes where Scalar == Float {
    static var samplesPerSide: Int { 8 }
    static func sides(_ first: Float, _ second: Float) -> Self { SIMD16(lowHalf: SIMD8(repeating: first), highHalf: SIMD8(repeating: second)) }

    @inline(__always)
    static func lanes(_ value: (Int) -> Float) -> Self {
        SIMD16(lowHalf: SIMD8(value(0), value(1), value(2), value(3), value(4), value(5), value(6), value(7)),
               highHalf: SIMD8(value(8), value(9), value(10), value(11), value(12), value(13), value(14), value(15)))
    }

    @inline(__always)
    static func load(_ first: UnsafePointer<Float>, _ second: UnsafePointer<Float>) -> Self {
        SIMD16(lowHalf: UnsafeRawPointer(first).loadUnaligned(as: SIMD8<Float>.self),
               highHalf: UnsafeRawPointer(second).loadUnaligned(as: SIMD8<Float>.self))
    }

    @inline(__always)
    func store(_ first: UnsafeMutablePointer<Float>, _ second: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(first).storeBytes(of: lowHalf, as: SIMD8<Float>.self)
        UnsafeMutableRawPointer(second).storeBytes(of: highHalf, as: SIMD8<Float>.self)
    }

    @inline(__always)
    func wholeAndFraction() -> (whole: SIMD16<Int32>, fraction: Self) {
        let low = lowHalf.wholeAndFraction(), high = highHalf.wholeAndFraction()
        return (SIMD16<Int32>(lowHalf: low.whole, highHalf: high.whole), SIMD16(lowHalf: low.fraction, highHalf: high.fraction))
    }

    @inline(__always)
    func finiteOrZero() -> Self { SIMD16(lowHalf: lowHalf.finiteOrZero(), highHalf: highHalf.finiteOrZero()) }

    @inline(__always)
    func flushedToZero() -> Self { SIMD16(lowHalf: lowHalf.flushedToZero(), highHalf: highHalf.flushedToZero()) }
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
            .init("rate_hz", x: 4, y: 12, diameter: 40, width: 56),
            .init("depth", x: 63, y: 12, diameter: 40, width: 56),
            .init("delay_ms", x: 122, y: 12, diameter: 40, width: 56),
            .init("feedback", x: 4, y: 80, diameter: 40, width: 56),
            .init("mix", x: 63, y: 80, diameter: 40, width: 56),
            .init("spread", x: 122, y: 80, diameter: 40, width: 56),
        ], artwork: .init(body: "#7b3fa8", dark: "#4b1f6d", text: "#f3e8ff", accent: "#c9a6ee", name: "FLANGER", subtitle: "JET FLANGER")),
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

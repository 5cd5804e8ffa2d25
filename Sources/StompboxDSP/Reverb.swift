import Foundation

/// An algorithmic reverb: four series allpass diffusers feed an eight-line feedback delay
/// network (29…74 ms lines) mixed by an orthogonal matrix (H2 ⊗ Householder4: every line feeds
/// every other with equal weight, and the network itself neither gains nor loses energy).
/// Each line's output passes a gain that sets the decay time and a one-pole low-pass that
/// damps high frequencies faster, the way air and soft walls do. The eight lines run as one
/// 8-wide vector.
///
/// - `reverb.size` sets the low-frequency decay time RT60 from `shortestDecay` to
///   `longestDecay` (exponentially: equal knob travel, equal ratio).
/// - `reverb.damping` lowers the loop low-pass from no filtering (0) to a few kHz (1).
/// - `reverb.mix` is the wet level; the dry signal stays at unity.
///
/// In stereo (`process(left:right:)`) the middle of the two sides goes in, the network runs as
/// in mono, and each side reads all eight lines through its own sign pattern (left
/// + + − − + + − +, right + − − − − − + +). The two patterns are orthogonal to each other, so
/// the sides' tails are uncorrelated, and each has the same share of the input's pattern, so
/// both hear the first reflections equally and neither side is louder. (Chosen by simulating the
/// network: over bursts at sizes 0.2…0.9 the tails correlate within ±0.09 and balance within
/// 0.4 dB; the mono pattern with an orthogonal one would leave the right 2.8 dB down, and the
/// network's two halves as sides correlate at 0.27.)
///
/// Two of the lines (one in each half) are read a little earlier and later in turn, by
/// `modulationDepth` at `modulationRates` (incommensurate, under 1 Hz), linearly interpolated:
/// a long decay's resonances drift instead of ringing metallically, too slowly to be heard as
/// pitch.
///
/// Every loop gain is below 1 and every filter passive, so no setting rings forever; a
/// denormal flush makes the tail end in exact silence.
///
/// Thread contract: `prepare` off the audio thread (allocates); `reset` and `process` on the
/// audio thread, allocation- and lock-free.
public final class Reverb: StereoEffect {
    let parameters: ParameterStore

    /// RT60 at size 0 and size 1, in seconds.
    public static let shortestDecay = 0.25
    public static let longestDecay = 7.0

    /// Delay line lengths in ms: spread over 29…74 ms, rounded to primes at the running rate.
    static let lineTimes: [Double] = [29.7, 37.1, 41.1, 43.7, 53.3, 59.3, 67.1, 73.9]
    /// Input diffusers (ms) and their coefficient.
    static let diffuserTimes: [Double] = [4.77, 3.59, 12.73, 9.31]
    static let diffusion: Float = 0.62
    /// Wet output scaling, chosen so the default setting sits a little below the dry level.
    static let outputGain: Float = 0.35

    private static let lineCount = 8
    private static let diffuserCount = 4

    private var sampleRate = 48_000.0

    /// Eight lines of `lineSize` samples each, interleaved: one frame of eight values per time
    /// step (a step's writes are two vector stores). Every frame is written twice, at `w` and
    /// `w + lineSize`, so each read `lineSize - delay` frames after `w` needs no wrap-around.
    private var lines = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var lineSize = 1
    private var lineIndex = 0
    private var lineDelays = UnsafeMutablePointer<Int>.allocate(capacity: lineCount)
    /// Per-line loop gain (sets the decay) and low-pass state.
    private var lineGains = UnsafeMutablePointer<Float>.allocate(capacity: lineCount)
    private var lowpassA = SIMD4<Float>.zero
    private var lowpassB = SIMD4<Float>.zero

    /// The modulated lines' depth (seconds either way) and rates (Hz), lines 2 and 5.
    static let modulationDepth = 0.000125
    static let modulationRates = (0.37, 0.53)
    /// Fixed point for the modulated reads: 24 fraction bits.
    private static let fixedOne: Float = 16_777_216
    private static let fixedScale: Float = 1 / 16_777_216
    /// Their phases (cycles) and where their offsets stood at the end of the last block (samples).
    private var modulationPhases = (0.0, 0.0)
    private var modulationNow: (Float, Float) = (0, 0)
    /// The depth in samples, and the margin a read keeps from it (whole samples ≥ depth + 1).
    private var modulationSamples: Float = 6
    private var modulationMargin = 8
    /// One-pole coefficient: y += dampingCoefficient * (x - y); 1 = no damping.
    private var dampingCoefficient: Float = 1

    private var diffusers = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var diffuserSize = 1
    private var diffuserIndex = 0
    private var diffuserDelays = UnsafeMutablePointer<Int>.allocate(capacity: diffuserCount)

    /// The block's diffused input, then its wet signal (the left's, in stereo).
    private var scratch = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    /// In stereo, the right side's wet signal.
    private var scratchRight = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    /// Per sample, the eight lines' outputs (one frame of eight): read for a run before the
    /// network's loop, which takes them as one vector each, and summed into the wet output
    /// after it. The longest run: shorter than every line's delay, so none is written during it.
    private var lineOutputs = UnsafeMutablePointer<Float>.allocate(capacity: 8)
    private var modulationRun = 1
    private var scratchSize = 1

    private var size = SmoothedValue(Parameter.reverbSize.spec.defaultValue)
    private var damping = SmoothedValue(Parameter.reverbDamping.spec.defaultValue)
    private var mix = SmoothedValue(Parameter.reverbMix.spec.defaultValue)

    public init(parameters: ParameterStore) {
        self.parameters = parameters
        prepare(sampleRate: 48_000, maximumBlockSize: 1)
    }

    deinit {
        lines.deallocate()
        lineDelays.deallocate()
        lineGains.deallocate()
        diffusers.deallocate()
        diffuserDelays.deallocate()
        scratch.deallocate()
        scratchRight.deallocate()
        lineOutputs.deallocate()
    }

    /// Sizes the lines for `sampleRate`. Not on the audio thread.
    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        let lengths = Reverb.lineTimes.map { Reverb.prime(near: $0 * sampleRate / 1000) }
        modulationSamples = Float(Reverb.modulationDepth * sampleRate)
        modulationMargin = Int(modulationSamples.rounded(.up)) + 2
        lineSize = Reverb.powerOfTwo(above: lengths.max()! + modulationMargin + 2)
        lines.deallocate()
        lines = .allocate(capacity: 2 * lineSize * Reverb.lineCount)
        for (i, d) in lengths.enumerated() { lineDelays[i] = d }

        let diffuserLengths = Reverb.diffuserTimes.map { Reverb.prime(near: $0 * sampleRate / 1000) }
        diffuserSize = Reverb.powerOfTwo(above: diffuserLengths.max()!)
        diffusers.deallocate()
        diffusers = .allocate(capacity: diffuserSize * Reverb.diffuserCount)
        for (i, d) in diffuserLengths.enumerated() { diffuserDelays[i] = d }

        scratchSize = max(1, min(maximumBlockSize, 4096))
        reallocateZeroed(&scratch, count: scratchSize)
        reallocateZeroed(&lineOutputs, count: 8 * scratchSize)
        modulationRun = max(1, min(lineDelays[2], lineDelays[5]) - 2 * modulationMargin - 2)
        reallocateZeroed(&scratchRight, count: scratchSize)

        size.prepare(sampleRate: sampleRate)
        damping.prepare(sampleRate: sampleRate)
        mix.prepare(sampleRate: sampleRate)
        reset()
    }

    /// Clears the tail and snaps the knobs to their parameters. Audio thread safe.
    public func reset() {
        lines.update(repeating: 0, count: 2 * lineSize * Reverb.lineCount)
        diffusers.update(repeating: 0, count: diffuserSize * Reverb.diffuserCount)
        lowpassA = .zero
        modulationPhases = (0, 0)
        modulationNow = (0, 0)
        lowpassB = .zero
        lineIndex = 0
        diffuserIndex = 0
        size.snap(to: parameters.load(.reverbSize))
        damping.snap(to: parameters.load(.reverbDamping))
        mix.snap(to: parameters.load(.reverbMix))
        updateLoop()
    }

    /// The decay time for a size: RT60 in seconds.
    public static func decayTime(size: Float) -> Double {
        let s = Double(min(max(size.isFinite ? size : 0, 0), 1))
        return shortestDecay * pow(longestDecay / shortestDecay, s)
    }

    /// Recomputes loop gains and the damping filter from the smoothed knobs (only while a knob
    /// moves: it costs eight `exp`).
    private func updateLoop() {
        let rt60 = Reverb.decayTime(size: size.current)
        for i in 0..<Reverb.lineCount {
            // -60 dB after rt60 seconds: each pass of d samples loses 60 dB · d / (rt60 · rate).
            lineGains[i] = Float(exp(-6.907755 * Double(lineDelays[i]) / (rt60 * sampleRate)))
        }
        // Damping 1 puts the loop low-pass's corner near 2.5 kHz; 0 removes it.
        let d = Double(min(max(damping.current, 0), 1))
        let pole = d * exp(-2 * Double.pi * 2500 / sampleRate)
        dampingCoefficient = Float(1 - pole)
    }

    /// Audio thread.
    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        guard let io = block.baseAddress else { return }
        process(io, nil, block.count)
    }

    /// Audio thread.
    public func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {
        guard let l = left.baseAddress, let r = right.baseAddress else { return }
        process(l, r, left.count)
    }

    private func process(_ io: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, _ count: Int) {
        size.setTarget(parameters.load(.reverbSize))
        damping.setTarget(parameters.load(.reverbDamping))
        mix.setTarget(parameters.load(.reverbMix))
        // While size or damping moves, the loop is recomputed every 16 samples: once per block
        // steps the decay audibly (a faint click on a full turn).
        let ramping = size.isRamping || damping.isRamping
        let chunk = ramping ? min(16, scratchSize) : scratchSize
        var start = 0
        while start < count {
            let n = min(count - start, chunk)
            if ramping {
                _ = size.skip(n)
                _ = damping.skip(n)
                updateLoop()
            }
            render(io + start, right.map { $0 + start }, n)
            start += n
        }
    }

    /// Stages over the whole (sub-)block, each a loop without a long serial dependency, so the
    /// processor overlaps successive samples: sanitise → four allpasses → network → mix.
    private func render(_ io: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, _ n: Int) {
        let u = scratch
        // Input diffusion: Schroeder allpasses smear the attack into a dense cloud. One loop
        // per allpass: a chain of four in one loop would be a long serial dependency per
        // sample, while a loop per stage lets the processor overlap successive samples.
        // The input, sanitised in place on the way: non-finite samples become silence.
        for i in 0..<n { io[i] = io[i].isFinite ? io[i] : 0 }
        if let right {
            // Stereo: the middle of the two sides goes in (diffused in place in `u`).
            for i in 0..<n {
                right[i] = right[i].isFinite ? right[i] : 0
                u[i] = 0.5 * (io[i] + right[i])
            }
        }
        let k = Reverb.diffusion
        let diffuserMask = diffuserSize - 1
        let v = diffuserIndex
        for stage in 0..<Reverb.diffuserCount {
            let line = diffusers + stage * diffuserSize
            let e = diffuserDelays[stage]
            let source = stage == 0 && right == nil ? UnsafePointer(io) : UnsafePointer(u)
            // Runs that neither wrap nor read what they write (at most `e` samples, and apart
            // from the write range modulo the line): contiguous, independent samples, which
            // the compiler vectorises.
            var i = 0
            while i < n {
                let w = (v &+ i) & diffuserMask, r = (v &+ i &- e) & diffuserMask
                // (Two-argument mins: the variadic one builds an array, an allocation in debug builds.)
                let m = min(min(n - i, e), min(diffuserSize - e, min(diffuserSize - w, diffuserSize - r)))
                Reverb.allpass(read: line + r, write: line + w, input: source + i, output: u + i, count: m, k: k)
                i += m
            }
        }
        diffuserIndex = (v &+ n) & diffuserMask

        let lines = self.lines, lineMask = lineSize - 1
        // Read offsets from the write frame (line i sits at lane i of a frame).
        let span = lineSize << 3
        let r0 = lines + (span - (lineDelays[0] << 3)), r1 = lines + (span - (lineDelays[1] << 3) + 1)
        // (Lines 2 and 5 are the modulated ones, read through m2 and m5 below.)
        let r3 = lines + (span - (lineDelays[3] << 3) + 3), r4 = lines + (span - (lineDelays[4] << 3) + 4)
        let r6 = lines + (span - (lineDelays[6] << 3) + 6), r7 = lines + (span - (lineDelays[7] << 3) + 7)
        // Lines 2 and 5 read at their delay plus an offset that glides over the block from where
        // it stood to the LFO's next value: read `margin` samples short of the delay, then
        // `margin + offset` further back, between two frames.
        let margin = modulationMargin
        let m2 = lines + (span - ((lineDelays[2] - margin) << 3) + 2), m5 = lines + (span - ((lineDelays[5] - margin) << 3) + 5)
        let (phase2, phase5) = modulationPhases
        let next2 = (phase2 + Reverb.modulationRates.0 * Double(n) / sampleRate).truncatingRemainder(dividingBy: 1)
        let next5 = (phase5 + Reverb.modulationRates.1 * Double(n) / sampleRate).truncatingRemainder(dividingBy: 1)
        modulationPhases = (next2, next5)
        let end2 = modulationSamples * Float(sin(2 * Double.pi * next2)), end5 = modulationSamples * Float(sin(2 * Double.pi * next5))
        var offset2 = modulationNow.0 + Float(margin), offset5 = modulationNow.1 + Float(margin)
        let step2 = (end2 - modulationNow.0) / Float(n), step5 = (end5 - modulationNow.1) / Float(n)
        modulationNow = (end2, end5)
        let frameMask = (lineMask << 3) | 7
        let c = dampingCoefficient
        let pole = SIMD8<Float>(repeating: 1 - c), poleSquared = pole * pole
        // Mixing matrix: H2 ⊗ Householder4, all entries ±1/(2√2): orthogonal and dense. The
        // lines hold the mix scaled by √2 (one multiply saved per sample); the factor 1/√2 is
        // folded into the loop gains, the output taps and the input injection instead.
        let r: Float = 0.70710678
        // The eight lines as one vector: lines 0…3 (A) in the low half, 4…7 (B) in the high one.
        let q = (c * r) * SIMD8(lineGains[0], lineGains[1], lineGains[2], lineGains[3],
                                lineGains[4], lineGains[5], lineGains[6], lineGains[7])
        var y = SIMD8(lowHalf: lowpassA, highHalf: lowpassB)
        let half = SIMD8<Float>(repeating: 0.5)
        // H2: A + B in the low half, A − B in the high one (y·signs + the halves swapped).
        let halves = SIMD8<Float>(1, 1, 1, 1, -1, -1, -1, -1)
        // Input enters every line, with alternating signs (the high half's the opposite of the
        // low half's); the output taps alternate too.
        let inject = SIMD8<Float>(0.5, -0.5, 0.5, -0.5, -0.5, 0.5, -0.5, 0.5)
        // Line values below 1e-15 (−300 dB) are written as exact zeros: no denormals, and a
        // dying tail ends in true silence. Compared as magnitudes (sign bit cleared).
        let magnitude = SIMD8<UInt32>(repeating: 0x7fff_ffff)
        let floor = SIMD8<UInt32>(repeating: Float(1e-15).bitPattern)
        var w = lineIndex << 3
        let outputs = lineOutputs
        var start = 0
        while start < n {
        // Runs shorter than the lines' delays: the lines' outputs for the whole run are read
        // first (none of them is written during it), in a loop without a recursion.
        let end = min(n, start + modulationRun)
        // The offsets in fixed point (24 fraction bits): whole sample and fraction without a
        // checked Float-to-Int conversion per sample.
        var fixed2 = Int((offset2 * Reverb.fixedOne).rounded()), fixed5 = Int((offset5 * Reverb.fixedOne).rounded())
        let fixedStep2 = Int((step2 * Reverb.fixedOne).rounded()), fixedStep5 = Int((step5 * Reverb.fixedOne).rounded())
        var ahead = w
        for i in start..<end {
            fixed2 &+= fixedStep2
            fixed5 &+= fixedStep5
            let k2 = fixed2 &>> 24, k5 = fixed5 &>> 24
            let f2 = Float(fixed2 & 0xff_ffff) * Reverb.fixedScale, f5 = Float(fixed5 & 0xff_ffff) * Reverb.fixedScale
            let a2 = m2[ahead &- (k2 &<< 3)], b2 = m2[ahead &- ((k2 &+ 1) &<< 3)]
            let a5 = m5[ahead &- (k5 &<< 3)], b5 = m5[ahead &- ((k5 &+ 1) &<< 3)]
            let o = outputs + (i << 3)
            o[0] = r0[ahead]; o[1] = r1[ahead]
            o[2] = a2 + f2 * (b2 - a2)
            o[3] = r3[ahead]; o[4] = r4[ahead]
            o[5] = a5 + f5 * (b5 - a5)
            o[6] = r6[ahead]; o[7] = r7[ahead]
            ahead = (ahead &+ 8) & frameMask
        }
        offset2 = Float(fixed2) * Reverb.fixedScale
        offset5 = Float(fixed5) * Reverb.fixedScale
        // One time step: the network mixes the lines' damped outputs y, adds the input and
        // writes frame w.
        @inline(__always) func step(_ y: SIMD8<Float>, _ i: Int, _ w: Int) {
            let z = y * halves + SIMD8(y[4], y[5], y[6], y[7], y[0], y[1], y[2], y[3])
            // Householder4 in each half: each lane less half the half's sum, the sums across
            // lanes left in every lane of their half by two swaps and two adds.
            let z2 = z + SIMD8(z[1], z[0], z[3], z[2], z[5], z[4], z[7], z[6])
            let sums = z2 + SIMD8(z2[2], z2[3], z2[0], z2[1], z2[6], z2[7], z2[4], z2[5])
            let out = z - half * sums + inject * u[i]
            let bits = unsafeBitCast(out, to: SIMD8<UInt32>.self)
            let kept = unsafeBitCast(bits.replacing(with: 0, where: (bits & magnitude) .< floor), to: SIMD8<Float>.self)
            let frame = UnsafeMutableRawPointer(lines + w)
            frame.storeBytes(of: kept, as: SIMD8<Float>.self)
            frame.storeBytes(of: kept, toByteOffset: span << 2, as: SIMD8<Float>.self)
        }
        @inline(__always) func lineOutput(_ i: Int) -> SIMD8<Float> {
            UnsafeRawPointer(outputs + (i << 3)).loadUnaligned(as: SIMD8<Float>.self)
        }
        // Decay gain and damping low-pass in one: y = pole·y + (1 − pole)·g·s, the one value
        // that waits on the step before. Two steps at a time, the second from the y before
        // both (pole²·y + pole·x₀ + x₁), so it waits once per two steps.
        var i = start
        while i + 2 <= end {
            let x0 = q * lineOutput(i), x1 = q * lineOutput(i + 1)
            let y0 = pole * y + x0
            y = poleSquared * y + (pole * x0 + x1)
            step(y0, i, w)
            let w1 = (w &+ 8) & frameMask
            step(y, i + 1, w1)
            w = (w1 &+ 8) & frameMask
            i += 2
        }
        if i < end {
            y = pole * y + q * lineOutput(i)
            step(y, i, w)
            w = (w &+ 8) & frameMask
        }
        start = end
        }
        lineIndex = w >> 3
        // The output taps alternate in sign: u = g·(d0 − d1 + d2 − d3) with d = sA − sB.
        let outputTap = Reverb.outputGain * r
        let uRight = scratchRight
        if right != nil {
            // a = sA (the shorter lines), b = sB (the longer ones), each side its pattern.
            for i in 0..<n {
                let a = outputs + (i << 3), b = a + 4
                u[i] = outputTap * (((a[0] + a[1]) - (a[2] + a[3])) + ((b[0] + b[1]) - (b[2] - b[3])))
                uRight[i] = outputTap * (((a[0] - a[1]) - (a[2] + a[3])) + ((b[2] + b[3]) - (b[0] + b[1])))
            }
        } else {
            for i in 0..<n {
                let a = outputs + (i << 3), b = a + 4
                u[i] = outputTap * (((a[0] - b[0]) - (a[1] - b[1])) + ((a[2] - b[2]) - (a[3] - b[3])))
            }
        }
        lowpassA = y.lowHalf
        lowpassB = y.highHalf

        // A local copy: no exclusivity check per sample on the class's stored property.
        @inline(__always) func addWet(_ side: UnsafeMutablePointer<Float>, _ wet: UnsafeMutablePointer<Float>) -> SmoothedValue {
            var mix = self.mix
            if mix.isRamping {
                for i in 0..<n { side[i] += mix.next() * wet[i] }
            } else {
                let g = mix.current
                for i in 0..<n { side[i] += g * wet[i] }
            }
            return mix
        }
        let glided = addWet(io, u)
        if let right { _ = addWet(right, uRight) }
        self.mix = glided

        if !(lowpassA + lowpassB).sum().isFinite {
            // Only absurd input levels get here (non-finite input is replaced by silence).
            reset()
            io.update(repeating: 0, count: n)
            right?.update(repeating: 0, count: n)
        }
    }

    /// One diffuser over a run: stored = input + k·delayed, output = delayed − k·stored.
    /// `input` may equal `output` (read before written, element by element).
    @inline(__always)
    private static func allpass(read: UnsafePointer<Float>, write: UnsafeMutablePointer<Float>,
                                input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>,
                                count: Int, k: Float) {
        // Eight at a time by hand: the compiler cannot prove `input` and `output` either equal
        // or apart, so it would not vectorise the loop itself.
        let kv = SIMD8<Float>(repeating: k)
        let magnitude = SIMD8<UInt32>(repeating: 0x7fff_ffff)
        let floor = SIMD8<UInt32>(repeating: Float(1e-15).bitPattern)
        var i = 0
        while i + 8 <= count {
            let delayed = UnsafeRawPointer(read + i).loadUnaligned(as: SIMD8<Float>.self)
            let x = UnsafeRawPointer(input + i).loadUnaligned(as: SIMD8<Float>.self)
            let sum = x + kv * delayed
            let bits = unsafeBitCast(sum, to: SIMD8<UInt32>.self)
            let stored = unsafeBitCast(bits.replacing(with: 0, where: (bits & magnitude) .< floor), to: SIMD8<Float>.self)
            UnsafeMutableRawPointer(write + i).storeBytes(of: stored, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(output + i).storeBytes(of: delayed - kv * stored, as: SIMD8<Float>.self)
            i += 8
        }
        for i in i..<count {
            let delayed = read[i]
            let stored = flush(input[i] + k * delayed)
            write[i] = stored
            output[i] = delayed - k * stored
        }
    }

    /// Values below 1e-15 (−300 dB) become exactly zero, so the tail ends in true silence.
    @inline(__always)
    private static func flush(_ x: Float) -> Float { abs(x) < 1e-15 ? 0 : x }

    private static func powerOfTwo(above n: Int) -> Int {
        var size = 1
        while size <= n { size <<= 1 }
        return size
    }

    /// The nearest prime at or above `samples` (co-prime lengths avoid coinciding echoes).
    static func prime(near samples: Double) -> Int {
        var n = max(2, Int(samples.rounded()))
        func isPrime(_ n: Int) -> Bool {
            if n < 4 { return n >= 2 }
            if n % 2 == 0 { return false }
            var f = 3
            while f * f <= n { if n % f == 0 { return false }; f += 2 }
            return true
        }
        while !isPrime(n) { n += 1 }
        return n
    }
}

extension PedalKind {
    /// Size, damping, mix; an eight-line feedback delay network.
    public static let reverb = PedalKind(
        id: "reverb", name: "Reverb",
        controls: [
            PedalControl("size", "Size", .none, 0...1, default: 0.5),
            PedalControl("damping", "Damping", .none, 0...1, default: 0.5),
            PedalControl("mix", "Mix", .none, 0...1, default: 0.3),
            PedalControl("trails", "Trails", .none, 0...1, default: 1, .toggle),
        ],
        face: .classicThree("size", "damping", "mix", switch: "trails"),
        trails: "trails",
        make: { Reverb(parameters: $0.parameters) })
}

extension Parameter {
    public static let reverbEnabled = PedalKind.reverb.enabledParameter
    public static let reverbSize = PedalKind.reverb.parameter("size")
    public static let reverbDamping = PedalKind.reverb.parameter("damping")
    public static let reverbMix = PedalKind.reverb.parameter("mix")
    public static let reverbTrails = PedalKind.reverb.parameter("trails")
}

import Foundation

/// An algorithmic reverb: four series allpass diffusers feed an eight-line feedback delay
/// network (29…74 ms lines) mixed by an orthogonal matrix (H2 ⊗ Householder4: every line feeds
/// every other with equal weight, and the network itself neither gains nor loses energy).
/// Each line's output passes a gain that sets the decay time and a one-pole low-pass that
/// damps high frequencies faster, the way air and soft walls do. The network runs sixteen time
/// steps at a time, each line's sixteen samples as one vector: the mixing is then lane by lane
/// between the lines' vectors, and each line is read and written with one load and one store.
/// (Sixteen rather than eight: 512-bit vectors where they run at full clock, and no slower in
/// two 256-bit halves on processors without them.)
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

    /// Eight lines, one after the other, each `lineSize` samples and a copy of its first
    /// `mirror` after them, so sixteen reads from any position are one contiguous load. The
    /// network runs sixteen time steps at a time, each line as one vector of its samples
    /// (see `render`).
    private var lines = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var lineSize = 1
    /// How many of a line's first samples are copied after its end.
    private static let mirror = 16
    /// A line with room after its end for a whole sixteen-sample store that starts in its first
    /// `mirror` (the copy).
    private var lineStride: Int { lineSize + 2 * Reverb.mirror }
    /// Where the next sample is written in every line (0..<lineSize).
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
    }

    /// Sizes the lines for `sampleRate`. Not on the audio thread.
    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        let lengths = Reverb.lineTimes.map { Reverb.prime(near: $0 * sampleRate / 1000) }
        modulationSamples = Float(Reverb.modulationDepth * sampleRate)
        modulationMargin = Int(modulationSamples.rounded(.up)) + 2
        lineSize = Reverb.powerOfTwo(above: lengths.max()! + modulationMargin + 2)
        lines.deallocate()
        lines = .allocate(capacity: lineStride * Reverb.lineCount)
        for (i, d) in lengths.enumerated() { lineDelays[i] = d }

        let diffuserLengths = Reverb.diffuserTimes.map { Reverb.prime(near: $0 * sampleRate / 1000) }
        diffuserSize = Reverb.powerOfTwo(above: diffuserLengths.max()!)
        diffusers.deallocate()
        diffusers = .allocate(capacity: diffuserSize * Reverb.diffuserCount)
        for (i, d) in diffuserLengths.enumerated() { diffuserDelays[i] = d }

        scratchSize = max(1, min(maximumBlockSize, 4096))
        // Sixteen more than a block: the last group of a block may be partial, its vectors are whole.
        reallocateZeroed(&scratch, count: scratchSize + 16)
        reallocateZeroed(&scratchRight, count: scratchSize + 16)

        size.prepare(sampleRate: sampleRate)
        damping.prepare(sampleRate: sampleRate)
        mix.prepare(sampleRate: sampleRate)
        reset()
    }

    /// Clears the tail and snaps the knobs to their parameters. Audio thread safe.
    public func reset() {
        lines.update(repeating: 0, count: lineStride * Reverb.lineCount)
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

        typealias V = SIMD16<Float>
        let lines = self.lines, lineSize = self.lineSize, lineMask = lineSize - 1, stride = lineStride
        @inline(__always) func line(_ j: Int) -> UnsafeMutablePointer<Float> { lines + j &* stride }
        let d0 = lineDelays[0], d1 = lineDelays[1], d3 = lineDelays[3], d4 = lineDelays[4]
        let d6 = lineDelays[6], d7 = lineDelays[7]
        // Lines 2 and 5 read at their delay plus an offset that glides over the block from where
        // it stood to the LFO's next value: read `margin` samples short of the delay, then
        // `margin + offset` further back, between two samples.
        let margin = modulationMargin
        let e2 = lineDelays[2] - margin, e5 = lineDelays[5] - margin
        let (phase2, phase5) = modulationPhases
        let next2 = (phase2 + Reverb.modulationRates.0 * Double(n) / sampleRate).truncatingRemainder(dividingBy: 1)
        let next5 = (phase5 + Reverb.modulationRates.1 * Double(n) / sampleRate).truncatingRemainder(dividingBy: 1)
        modulationPhases = (next2, next5)
        let end2 = modulationSamples * Float(sin(2 * Double.pi * next2)), end5 = modulationSamples * Float(sin(2 * Double.pi * next5))
        let offset2 = modulationNow.0 + Float(margin), offset5 = modulationNow.1 + Float(margin)
        let step2 = (end2 - modulationNow.0) / Float(n), step5 = (end5 - modulationNow.1) / Float(n)
        modulationNow = (end2, end5)
        let c = dampingCoefficient
        // The loop low-pass y = pole·y + x over sixteen steps at once: a prefix sum in each line's
        // vector (four shift-multiply-adds), plus pole^(k+1) times the y before them.
        let a = 1 - c, a2 = a * a, a4 = a2 * a2, a8 = a4 * a4
        let low8 = SIMD8<Float>(a, a2, a2 * a, a4, a4 * a, a4 * a2, a4 * a2 * a, a8)
        let powers = SIMD16(lowHalf: low8, highHalf: a8 * low8)
        @inline(__always) func damped(_ x: V, after y: Float) -> V {
            var v = x
            v = mulAdd(V(repeating: a), V(0, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14]), v)
            v = mulAdd(V(repeating: a2), V(0, 0, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13]), v)
            v = mulAdd(V(repeating: a4), V(0, 0, 0, 0, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11]), v)
            v = mulAdd(V(repeating: a8), V(lowHalf: .zero, highHalf: v.lowHalf), v)
            return mulAdd(powers, V(repeating: y), v)
        }
        // Mixing matrix: H2 ⊗ Householder4, all entries ±1/(2√2): orthogonal and dense. The
        // lines hold the mix scaled by √2 (one multiply saved per sample); the factor 1/√2 is
        // folded into the loop gains, the output taps and the input injection instead.
        let r: Float = 0.70710678
        // Each line's decay gain (with the low-pass's 1 − pole).
        let q0 = (c * r) * lineGains[0], q1 = (c * r) * lineGains[1], q2 = (c * r) * lineGains[2], q3 = (c * r) * lineGains[3]
        let q4 = (c * r) * lineGains[4], q5 = (c * r) * lineGains[5], q6 = (c * r) * lineGains[6], q7 = (c * r) * lineGains[7]
        // The low-passes' last outputs, line j in lane j.
        var y = SIMD8(lowHalf: lowpassA, highHalf: lowpassB)
        @inline(__always) func load(_ p: UnsafePointer<Float>) -> V {
            UnsafeRawPointer(p).loadUnaligned(as: V.self)
        }
        /// The first `count` lanes of `v` into `p` (all sixteen as one store).
        @inline(__always) func store(_ v: V, _ p: UnsafeMutablePointer<Float>, _ count: Int) {
            if count == 16 {
                UnsafeMutableRawPointer(p).storeBytes(of: v, as: V.self)
            } else {
                for k in 0..<count { p[k] = v[k] }
            }
        }
        let outputTap = Reverb.outputGain * r
        let uRight = scratchRight
        let w = lineIndex
        let line2 = line(2), line5 = line(5)
        // The modulated lines' offsets in fixed point (24 fraction bits), lane k one step
        // further than lane k − 1: whole sample and fraction without a checked Float-to-Int
        // conversion per sample. (At most about 2·depth + 3 samples, far inside Int32.)
        var fixed2 = Int32((offset2 * Reverb.fixedOne).rounded()), fixed5 = Int32((offset5 * Reverb.fixedOne).rounded())
        let fixedStep2 = Int32((step2 * Reverb.fixedOne).rounded()), fixedStep5 = Int32((step5 * Reverb.fixedOne).rounded())
        let steps = SIMD16<Int32>(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
        /// A modulated line's reads for the steps from position `at` on: each between the
        /// samples `e + k` and `e + k + 1` back, k the whole part of its offset. The offset
        /// glides by well under a sample per block, so the sixteen reads share their k nearly
        /// always and are two vector loads; else they are read one by one.
        @inline(__always) func modulated(_ line: UnsafeMutablePointer<Float>, _ e: Int, _ fixed: inout Int32,
                                         _ step: Int32, _ at: Int) -> V {
            let offsets = SIMD16(repeating: fixed) &+ steps &* step
            fixed = offsets[15]
            let whole = offsets &>> 24
            let fraction = V(offsets & 0xff_ffff) * Reverb.fixedScale
            let k = Int(whole[0])
            let a: V, b: V
            if whole[15] == whole[0] {
                a = load(line + ((at &- e &- k) & lineMask))
                b = load(line + ((at &- e &- k &- 1) & lineMask))
            } else {
                var x = V(), y = V()
                for lane in 0..<16 {
                    let back = at &+ lane &- e &- Int(whole[lane])
                    x[lane] = line[back & lineMask]
                    y[lane] = line[(back &- 1) & lineMask]
                }
                a = x
                b = y
            }
            return a + fraction * (b - a)
        }
        // Sixteen steps at a time (`count` of them in a block's last group): each line's outputs;
        // the output taps sum them; they are damped, the network mixes them, adds the input and
        // writes the lines. Every operation is between lines, lane by lane: no shuffles but the
        // low-passes' prefix sums.
        var i = 0
        while i < n {
            let count = min(16, n &- i)
            let p = (w &+ i) & lineMask
            @inline(__always) func delayed(_ j: Int, _ d: Int) -> V { load(line(j) + ((p &- d) & lineMask)) }
            let o0 = delayed(0, d0), o1 = delayed(1, d1)
            let o2 = modulated(line2, e2, &fixed2, fixedStep2, p), o3 = delayed(3, d3)
            let o4 = delayed(4, d4), o5 = modulated(line5, e5, &fixed5, fixedStep5, p)
            let o6 = delayed(6, d6), o7 = delayed(7, d7)
            let input = load(u + i)
            // The output taps alternate in sign; in stereo each side has its pattern
            // (a = the first four lines' outputs, b = the last four's).
            if right != nil {
                store(outputTap * (((o0 + o1) - (o2 + o3)) + ((o4 + o5) - (o6 - o7))), u + i, count)
                store(outputTap * (((o0 - o1) - (o2 + o3)) + ((o6 + o7) - (o4 + o5))), uRight + i, count)
            } else {
                store(outputTap * (((o0 - o4) - (o1 - o5)) + ((o2 - o6) - (o3 - o7))), u + i, count)
            }
            let y0 = damped(q0 * o0, after: y[0]), y1 = damped(q1 * o1, after: y[1])
            let y2 = damped(q2 * o2, after: y[2]), y3 = damped(q3 * o3, after: y[3])
            let y4 = damped(q4 * o4, after: y[4]), y5 = damped(q5 * o5, after: y[5])
            let y6 = damped(q6 * o6, after: y[6]), y7 = damped(q7 * o7, after: y[7])
            if count == 16 {
                y = SIMD8(y0[15], y1[15], y2[15], y3[15], y4[15], y5[15], y6[15], y7[15])
            } else {
                let last = count - 1
                y = SIMD8(y0[last], y1[last], y2[last], y3[last], y4[last], y5[last], y6[last], y7[last])
            }
            // H2: A + B for lines 0…3, A − B for lines 4…7 (A the first four lines, B the last).
            let z0 = y0 + y4, z1 = y1 + y5, z2 = y2 + y6, z3 = y3 + y7
            let z4 = y0 - y4, z5 = y1 - y5, z6 = y2 - y6, z7 = y3 - y7
            // Householder4 in each half: each less half the half's sum.
            let low = 0.5 * ((z0 + z1) + (z2 + z3)), high = 0.5 * ((z4 + z5) + (z6 + z7))
            // Input enters every line, with alternating signs (the second half's the opposite
            // of the first's).
            let plus = 0.5 * input, minus = -0.5 * input
            // Written once, and again after the line's end where it is within its first `mirror`;
            // values below 1e-15 (−300 dB) as exact zeros: no denormals, and a dying tail ends
            // in true silence.
            let whole = count == 16 && p &+ 16 <= lineSize, mirrored = p < Reverb.mirror
            @inline(__always) func write(_ j: Int, _ value: V) {
                let base = line(j), v = flushed(value)
                if whole {
                    UnsafeMutableRawPointer(base + p).storeBytes(of: v, as: V.self)
                    if mirrored { UnsafeMutableRawPointer(base + (p &+ lineSize)).storeBytes(of: v, as: V.self) }
                } else {
                    for k in 0..<count {
                        let position = (p &+ k) & lineMask
                        base[position] = v[k]
                        if position < Reverb.mirror { base[position &+ lineSize] = v[k] }
                    }
                }
            }
            write(0, (z0 - low) + plus); write(1, (z1 - low) + minus)
            write(2, (z2 - low) + plus); write(3, (z3 - low) + minus)
            write(4, (z4 - high) + minus); write(5, (z5 - high) + plus)
            write(6, (z6 - high) + minus); write(7, (z7 - high) + plus)
            i &+= 16
        }
        lineIndex = (w &+ n) & lineMask
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
        // Sixteen at a time by hand, then eight: the compiler cannot prove `input` and `output`
        // either equal or apart, so it would not vectorise the loop itself.
        var i = 0
        let k16 = SIMD16<Float>(repeating: k)
        while i &+ 16 <= count {
            let delayed = UnsafeRawPointer(read + i).loadUnaligned(as: SIMD16<Float>.self)
            let x = UnsafeRawPointer(input + i).loadUnaligned(as: SIMD16<Float>.self)
            let stored = flushed(x + k16 * delayed)
            UnsafeMutableRawPointer(write + i).storeBytes(of: stored, as: SIMD16<Float>.self)
            UnsafeMutableRawPointer(output + i).storeBytes(of: delayed - k16 * stored, as: SIMD16<Float>.self)
            i &+= 16
        }
        let kv = SIMD8<Float>(repeating: k)
        while i + 8 <= count {
            let delayed = UnsafeRawPointer(read + i).loadUnaligned(as: SIMD8<Float>.self)
            let x = UnsafeRawPointer(input + i).loadUnaligned(as: SIMD8<Float>.self)
            let stored = flushed(x + kv * delayed)
            UnsafeMutableRawPointer(write + i).storeBytes(of: stored, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(output + i).storeBytes(of: delayed - kv * stored, as: SIMD8<Float>.self)
            i += 8
        }
        for i in i..<count {
            let delayed = read[i]
            let stored = flushed(input[i] + k * delayed)
            write[i] = stored
            output[i] = delayed - k * stored
        }
    }

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
        face: .classicThree("size", "damping", "mix", switch: "trails",
                            artwork: .init(body: "#25292e", dark: "#0d0f11", text: "#e9edf1", accent: "#6c7a88", name: "REVERB", subtitle: "HALL REVERB")),
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

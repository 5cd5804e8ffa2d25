import Foundation

/// An algorithmic reverb: four series allpass diffusers feed an eight-line feedback delay
/// network mixed by a Hadamard matrix (orthogonal, so the network itself neither gains nor
/// loses energy). Each line's output passes a gain that sets the decay time and a one-pole
/// low-pass that damps high frequencies faster, the way air and soft walls do.
///
/// - `reverb.size` sets the low-frequency decay time RT60 from `shortestDecay` to
///   `longestDecay` (exponentially: equal knob travel, equal ratio).
/// - `reverb.damping` lowers the loop low-pass from no filtering (0) to a few kHz (1).
/// - `reverb.mix` is the wet level; the dry signal stays at unity.
///
/// Every loop gain is below 1 and every filter passive, so no setting rings forever; a
/// denormal flush makes the tail end in exact silence.
///
/// Thread contract: `prepare` off the audio thread (allocates); `reset` and `process` on the
/// audio thread, allocation- and lock-free.
public final class Reverb: AudioEffect {
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

    /// Eight lines of `lineSize` samples each, back to back; one shared write index.
    private var lines = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var lineSize = 1
    private var lineIndex = 0
    private var lineDelays = UnsafeMutablePointer<Int>.allocate(capacity: lineCount)
    /// Per-line loop gain (sets the decay) and low-pass state.
    private var lineGains = UnsafeMutablePointer<Float>.allocate(capacity: lineCount)
    private var lowpass = UnsafeMutablePointer<Float>.allocate(capacity: lineCount)
    /// One-pole coefficient: y += dampingCoefficient * (x - y); 1 = no damping.
    private var dampingCoefficient: Float = 1

    private var diffusers = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var diffuserSize = 1
    private var diffuserIndex = 0
    private var diffuserDelays = UnsafeMutablePointer<Int>.allocate(capacity: diffuserCount)

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
        lowpass.deallocate()
        diffusers.deallocate()
        diffuserDelays.deallocate()
    }

    /// Sizes the lines for `sampleRate`. Not on the audio thread.
    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        let lengths = Reverb.lineTimes.map { Reverb.prime(near: $0 * sampleRate / 1000) }
        lineSize = Reverb.powerOfTwo(above: lengths.max()!)
        lines.deallocate()
        lines = .allocate(capacity: lineSize * Reverb.lineCount)
        for (i, d) in lengths.enumerated() { lineDelays[i] = d }

        let diffuserLengths = Reverb.diffuserTimes.map { Reverb.prime(near: $0 * sampleRate / 1000) }
        diffuserSize = Reverb.powerOfTwo(above: diffuserLengths.max()!)
        diffusers.deallocate()
        diffusers = .allocate(capacity: diffuserSize * Reverb.diffuserCount)
        for (i, d) in diffuserLengths.enumerated() { diffuserDelays[i] = d }

        size.prepare(sampleRate: sampleRate)
        damping.prepare(sampleRate: sampleRate)
        mix.prepare(sampleRate: sampleRate)
        reset()
    }

    /// Clears the tail and snaps the knobs to their parameters. Audio thread safe.
    public func reset() {
        lines.update(repeating: 0, count: lineSize * Reverb.lineCount)
        diffusers.update(repeating: 0, count: diffuserSize * Reverb.diffuserCount)
        lowpass.update(repeating: 0, count: Reverb.lineCount)
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

    /// Recomputes loop gains and the damping filter from the smoothed knobs (once per block,
    /// and only while a knob moves: it costs eight `exp`).
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
        let n = block.count
        size.setTarget(parameters.load(.reverbSize))
        damping.setTarget(parameters.load(.reverbDamping))
        mix.setTarget(parameters.load(.reverbMix))
        if size.isRamping || damping.isRamping {
            _ = size.skip(n)
            _ = damping.skip(n)
            updateLoop()
        }

        let lines = self.lines, lineMask = lineSize - 1
        let l1 = lines + lineSize, l2 = l1 + lineSize, l3 = l2 + lineSize
        let l4 = l3 + lineSize, l5 = l4 + lineSize, l6 = l5 + lineSize, l7 = l6 + lineSize
        let d0 = lineDelays[0], d1 = lineDelays[1], d2 = lineDelays[2], d3 = lineDelays[3]
        let d4 = lineDelays[4], d5 = lineDelays[5], d6 = lineDelays[6], d7 = lineDelays[7]
        let g0 = lineGains[0], g1 = lineGains[1], g2 = lineGains[2], g3 = lineGains[3]
        let g4 = lineGains[4], g5 = lineGains[5], g6 = lineGains[6], g7 = lineGains[7]
        var y0 = lowpass[0], y1 = lowpass[1], y2 = lowpass[2], y3 = lowpass[3]
        var y4 = lowpass[4], y5 = lowpass[5], y6 = lowpass[6], y7 = lowpass[7]
        let c = dampingCoefficient

        let a0 = diffusers, diffuserMask = diffuserSize - 1
        let a1 = a0 + diffuserSize, a2 = a1 + diffuserSize, a3 = a2 + diffuserSize
        let e0 = diffuserDelays[0], e1 = diffuserDelays[1], e2 = diffuserDelays[2], e3 = diffuserDelays[3]
        let k = Reverb.diffusion

        var w = lineIndex
        var v = diffuserIndex
        // 1/sqrt(8) makes the Hadamard butterflies orthonormal.
        let h: Float = 0.35355339
        let outScale = Reverb.outputGain
        var check: Float = 0

        for i in 0..<n {
            let x = io[i].isFinite ? io[i] : 0

            // Input diffusion: Schroeder allpasses smear the attack into a dense cloud.
            var u = x
            u = Reverb.allpass(u, a0, (v &- e0) & diffuserMask, v, k)
            u = Reverb.allpass(u, a1, (v &- e1) & diffuserMask, v, k)
            u = Reverb.allpass(u, a2, (v &- e2) & diffuserMask, v, k)
            u = Reverb.allpass(u, a3, (v &- e3) & diffuserMask, v, k)
            v = (v &+ 1) & diffuserMask

            let s0 = lines[(w &- d0) & lineMask], s1 = l1[(w &- d1) & lineMask]
            let s2 = l2[(w &- d2) & lineMask], s3 = l3[(w &- d3) & lineMask]
            let s4 = l4[(w &- d4) & lineMask], s5 = l5[(w &- d5) & lineMask]
            let s6 = l6[(w &- d6) & lineMask], s7 = l7[(w &- d7) & lineMask]

            // Decay gain, then the damping low-pass (denormal-flushed state).
            y0 = Reverb.flush(y0 + c * (g0 * s0 - y0)); y1 = Reverb.flush(y1 + c * (g1 * s1 - y1))
            y2 = Reverb.flush(y2 + c * (g2 * s2 - y2)); y3 = Reverb.flush(y3 + c * (g3 * s3 - y3))
            y4 = Reverb.flush(y4 + c * (g4 * s4 - y4)); y5 = Reverb.flush(y5 + c * (g5 * s5 - y5))
            y6 = Reverb.flush(y6 + c * (g6 * s6 - y6)); y7 = Reverb.flush(y7 + c * (g7 * s7 - y7))

            // 8-point Hadamard transform in three butterfly stages.
            let b0 = y0 + y1, b1 = y0 - y1, b2 = y2 + y3, b3 = y2 - y3
            let b4 = y4 + y5, b5 = y4 - y5, b6 = y6 + y7, b7 = y6 - y7
            let c0 = b0 + b2, c2 = b0 - b2, c1 = b1 + b3, c3 = b1 - b3
            let c4 = b4 + b6, c6 = b4 - b6, c5 = b5 + b7, c7 = b5 - b7
            let u2 = u * h
            lines[w] = (c0 + c4) * h + u2
            l1[w] = (c1 + c5) * h - u2
            l2[w] = (c2 + c6) * h + u2
            l3[w] = (c3 + c7) * h - u2
            l4[w] = (c0 - c4) * h + u2
            l5[w] = (c1 - c5) * h - u2
            l6[w] = (c2 - c6) * h + u2
            l7[w] = (c3 - c7) * h - u2
            w = (w &+ 1) & lineMask

            let wet = ((s0 - s1) + (s2 - s3) + (s4 - s5) + (s6 - s7)) * outScale
            check += wet
            io[i] = x + mix.next() * wet
        }

        lineIndex = w
        diffuserIndex = v
        lowpass[0] = y0; lowpass[1] = y1; lowpass[2] = y2; lowpass[3] = y3
        lowpass[4] = y4; lowpass[5] = y5; lowpass[6] = y6; lowpass[7] = y7
        if !check.isFinite {
            // Only absurd input levels get here (non-finite input is replaced by silence).
            reset()
            block.update(repeating: 0)
        }
    }

    /// One Schroeder allpass step on `line` (read at `read`, written at `write`).
    @inline(__always)
    private static func allpass(_ x: Float, _ line: UnsafeMutablePointer<Float>, _ read: Int,
                                _ write: Int, _ k: Float) -> Float {
        let delayed = line[read]
        let stored = flush(x + k * delayed)
        line[write] = stored
        return delayed - k * stored
    }

    /// Rounds values below about 1e-25 to exactly zero, so the tail ends in true silence.
    @inline(__always)
    private static func flush(_ x: Float) -> Float { (x + 1e-18) - 1e-18 }

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

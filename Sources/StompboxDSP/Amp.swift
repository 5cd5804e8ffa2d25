import Foundation

/// The Amp's voicings, in the order of `amp.model`'s choices.
public enum AmpModel: Int, CaseIterable, Sendable {
    case clean, crunch, lead
    public var name: String {
        switch self {
        case .clean: "clean"
        case .crunch: "crunch"
        case .lead: "lead"
        }
    }
}

/// A tube-style preamp: up to three gain stages, then the classic passive three-knob tone
/// stack and a master level.
///
/// Each stage is a gain, an asymmetric saturation (the curve x/√(1 + x²) shifted by a bias, so
/// a stage that is driven gently already adds a second harmonic and one driven hard flattens
/// one side before the other, as a triode does), a low-pass like the Miller capacitance of the
/// next valve's grid (12 kHz, then 9 kHz) and a coupling capacitor's high-pass (25 Hz, then
/// 40 Hz) that removes the bias's offset before the next stage. `amp.model` picks how many of
/// the three stages saturate and how hard: clean one (pre-gain 0…+20 dB), crunch two (+6…+32
/// dB, then ×4), lead three (+12…+40 dB, then ×6 and ×6). A stage that does not saturate
/// stays in line as a straight line with the same delay, so every model has one latency, and
/// a new model glides there (20 ms) without a click.
///
/// The stages and the last low-pass after them (brighter on clean, darker on lead) run at 4×
/// the sample rate with antiderivative anti-aliasing (`Oversampler`, as the Overdrive); the DC
/// blocker, the tone stack and the level at the base rate. The last low-pass stays at 4×: it
/// damps what lies just above the base band before the decimator folds it back (at the base
/// rate the lead model's aliasing at full gain rose from −54 to −50 dBc).
///
/// The tone stack is the Fender/Marshall (FMV) passive network of the '59 Bassman (5F6-A:
/// 250 pF, 20 nF, 20 nF; treble 250 k, bass 1 M, mid 25 k, 56 k) from its analog transfer
/// function, a third-order H(s) whose coefficients are polynomials in the three pot positions
/// (D. T. Yeh and J. O. Smith, "Discretization of the '59 Fender Bassman tone stack", DAFx
/// 2006), discretised with the bilinear transform. Its knobs interact as the circuit's do
/// (the mid knob moves the bass, the bass knob the mids) and all three at zero nearly mute it.
/// The bass pot follows an audio taper. While a knob glides, the coefficients are recomputed
/// every 32 samples; the filter (direct form I, in double precision) keeps the signal as its
/// state, so nothing zippers.
///
/// Latency: the oversampling filters' 5 samples and three curves' eighth of one each: 5.375.
///
/// Threads: `init` and `prepare` off the audio thread (they allocate); `process` and `reset`
/// on the audio thread, allocation- and lock-free.
public final class Amp: AudioEffect {
    let parameters: ParameterStore

    /// How each model sets the stages up.
    struct Voicing {
        /// Stage 1's pre-gain over `amp.gain`'s travel, in dB.
        let preGain: ClosedRange<Float>
        /// Gain into stages 2 and 3, and how much of each saturates (0: a straight line).
        let stage2Gain: Float, stage2Amount: Float
        let stage3Gain: Float, stage3Amount: Float
        /// The last low-pass's cutoff, in Hz.
        let brightness: Float

        func preGain(_ gain: Float) -> Float { decibelsToGain(preGainDecibels(gain)) }

        func preGainDecibels(_ gain: Float) -> Float {
            preGain.lowerBound + (preGain.upperBound - preGain.lowerBound) * gain
        }
    }

    static let voicings: [Voicing] = [
        Voicing(preGain: 0...20, stage2Gain: 1, stage2Amount: 0, stage3Gain: 1, stage3Amount: 0, brightness: 12_000),
        Voicing(preGain: 6...32, stage2Gain: 4, stage2Amount: 1, stage3Gain: 1, stage3Amount: 0, brightness: 9_000),
        Voicing(preGain: 12...40, stage2Gain: 6, stage2Amount: 1, stage3Gain: 6, stage3Amount: 1, brightness: 6_500),
    ]

    static func voicing(_ model: Float) -> Voicing {
        voicings[min(max(Int(model.isFinite ? model : 0), 0), voicings.count - 1)]
    }

    /// Each stage's bias: the first the most asymmetric.
    static let biases: (Float, Float, Float) = (0.3, 0.2, 0.15)
    static let subBlock = 32
    static let latencySamples = Oversampler.filterLatency + 3 * Oversampler.curveLatency

    private var sampleRate: Double = 48_000
    private var capacity = 0
    private let oversampler = Oversampler()

    private var drive = SmoothedValue(1)
    private var stage2Gain = SmoothedValue(1), stage2Amount = SmoothedValue(0)
    private var stage3Gain = SmoothedValue(1), stage3Amount = SmoothedValue(0)
    private var brightness = SmoothedValue(9_000)
    private var bass = SmoothedValue(0.5), mid = SmoothedValue(0.5), treble = SmoothedValue(0.5)
    private var master = SmoothedValue(1)
    private var driveGain = DecibelGain(), masterGain = DecibelGain()

    private var curve1 = Oversampler.CurveState(bias: Amp.biases.0)
    private var curve2 = Oversampler.CurveState(bias: Amp.biases.1)
    private var curve3 = Oversampler.CurveState(bias: Amp.biases.2)
    private var miller1 = Oversampler.LowPass.at(12_000, rate: 192_000)
    private var coupling1 = Oversampler.HighPass.at(25, rate: 192_000)
    private var miller2 = Oversampler.LowPass.at(9_000, rate: 192_000)
    private var miller2b = Oversampler.LowPass.at(9_000, rate: 192_000)
    /// The last low-pass, after stage 3 (its cutoff the model's brightness).
    private var miller3 = Oversampler.LowPass.at(9_000, rate: 192_000)
    private var coupling2 = Oversampler.HighPass.at(40, rate: 192_000)

    /// The input's coupling high-pass (20 Hz) and the output's DC blocker (10 Hz), at the base rate.
    private var inputPole: Float = 0.9974, inputX: Float = 0, inputY: Float = 0
    private var dcPole: Float = 0.9987, dcX: Float = 0, dcY: Float = 0
    private var toneStack = ToneStack()
    /// A chunk's differences (the DC blocker's input).
    private var scratch = UnsafeMutablePointer<Float>.allocate(capacity: 1)

    public init(parameters: ParameterStore) {
        self.parameters = parameters
        scratch.initialize(to: 0)
    }

    deinit { scratch.deallocate() }

    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        capacity = maximumBlockSize
        oversampler.prepare(maximumBlockSize: maximumBlockSize)
        reallocateZeroed(&scratch, count: max(1, maximumBlockSize))
        drive.prepare(sampleRate: sampleRate)
        stage2Gain.prepare(sampleRate: sampleRate)
        stage2Amount.prepare(sampleRate: sampleRate)
        stage3Gain.prepare(sampleRate: sampleRate)
        stage3Amount.prepare(sampleRate: sampleRate)
        brightness.prepare(sampleRate: sampleRate)
        bass.prepare(sampleRate: sampleRate)
        mid.prepare(sampleRate: sampleRate)
        treble.prepare(sampleRate: sampleRate)
        master.prepare(sampleRate: sampleRate)
        let rate = 4 * sampleRate
        miller1 = .at(8_000, rate: rate)
        coupling1 = .at(25, rate: rate)
        miller2 = .at(6_000, rate: rate)
        miller2b = .at(6_000, rate: rate)
        coupling2 = .at(40, rate: rate)
        inputPole = Float(1 - 2 * Double.pi * 20 / sampleRate)
        dcPole = Float(1 - 2 * Double.pi * 10 / sampleRate)
        reset()
    }

    public func reset() {
        let p = parameters
        let v = Amp.voicing(p.load(.ampModel))
        drive.snap(to: v.preGain(p.load(.ampGain)))
        stage2Gain.snap(to: v.stage2Gain)
        stage2Amount.snap(to: v.stage2Amount)
        stage3Gain.snap(to: v.stage3Gain)
        stage3Amount.snap(to: v.stage3Amount)
        brightness.snap(to: v.brightness)
        bass.snap(to: p.load(.ampBass))
        mid.snap(to: p.load(.ampMid))
        treble.snap(to: p.load(.ampTreble))
        master.snap(to: decibelsToGain(p.load(.ampMaster)))
        updateBrightness()
        toneStack.setKnobs(bass: bass.current, mid: mid.current, treble: treble.current, sampleRate: sampleRate)
        toneStack.clear()
        oversampler.reset()
        curve1.reset(); curve2.reset(); curve3.reset()
        miller1.reset(); coupling1.reset(); miller2.reset(); miller2b.reset(); miller3.reset(); coupling2.reset()
        inputX = 0; inputY = 0
        dcX = 0; dcY = 0
    }

    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        guard let base = block.baseAddress, capacity > 0 else { return }
        let p = parameters
        let v = Amp.voicing(p.load(.ampModel))
        drive.setTarget(driveGain(v.preGainDecibels(p.load(.ampGain))))
        stage2Gain.setTarget(v.stage2Gain)
        stage2Amount.setTarget(v.stage2Amount)
        stage3Gain.setTarget(v.stage3Gain)
        stage3Amount.setTarget(v.stage3Amount)
        brightness.setTarget(v.brightness)
        bass.setTarget(p.load(.ampBass))
        mid.setTarget(p.load(.ampMid))
        treble.setTarget(p.load(.ampTreble))
        master.setTarget(masterGain(p.load(.ampMaster)))

        var start = 0
        while start < block.count {
            let voicingMoves = stage2Gain.isRamping || stage2Amount.isRamping || stage3Gain.isRamping
                || stage3Amount.isRamping || brightness.isRamping
            let toneMoves = bass.isRamping || mid.isRamping || treble.isRamping
            let n = min(voicingMoves || toneMoves ? Amp.subBlock : capacity, block.count - start)
            if voicingMoves {
                _ = stage2Gain.skip(n); _ = stage2Amount.skip(n)
                _ = stage3Gain.skip(n); _ = stage3Amount.skip(n)
                _ = brightness.skip(n)
                updateBrightness()
            }
            if toneMoves {
                toneStack.setKnobs(bass: bass.skip(n), mid: mid.skip(n), treble: treble.skip(n), sampleRate: sampleRate)
            }
            preamp(base + start, n)
            postProcess(base + start, n)
            start += n
        }
        // Let decaying states reach exact zero instead of lingering as denormals.
        inputX = flushed(inputX); inputY = flushed(inputY)
        dcX = flushed(dcX); dcY = flushed(dcY)
        miller1.flush(); coupling1.flush(); miller2.flush(); miller2b.flush(); miller3.flush(); coupling2.flush()
        toneStack.flush()
    }

    /// Non-finite input becomes silence; absurd levels are bounded so the filters stay finite.
    @inline(__always)
    private static func conditioned(_ x: Float) -> Float {
        x.isFinite ? min(max(x, -64), 64) : 0
    }

    /// Coupling high-pass and pre-gain at the base rate, then the three stages at 4×.
    private func preamp(_ chunk: UnsafeMutablePointer<Float>, _ n: Int) {
        let input = oversampler.input
        for i in 0..<n { chunk[i] = Amp.conditioned(chunk[i]) }
        // The high-pass y = pole·y + (x − x′), its differences first, then the run.
        inputX = differences(chunk, after: inputX, into: input, count: n)
        inputY = onePoleRun(input, into: input, count: n, pole: inputPole, from: inputY)
        drive.scale(input, count: n)

        // The three stages at 4×, in passes that end where a filter runs in sequence (see
        // `Oversampler`); the states as locals while they run.
        let o = oversampler
        let up = o.interpolator, before = o.outputsBefore
        let setA = o.firstHalves(0), setB = o.firstHalves(1), out = o.output
        var c1 = curve1, c2 = curve2, c3 = curve3
        var m1 = miller1, k1 = coupling1, m2 = miller2, m2b = miller2b, k2 = coupling2, m3 = miller3
        let blend2 = Oversampler.CurveState.Blend(gain: stage2Gain.current, amount: stage2Amount.current)
        let blend3 = Oversampler.CurveState.Blend(gain: stage3Gain.current, amount: stage3Amount.current)
        // A pass from one filter's outputs into the next one's first halves, then its scan.
        @inline(__always) func link<A, B>(_ a: Oversampler.OnePole<A>, _ from: Oversampler.Rows,
                                          into b: inout Oversampler.OnePole<B>, _ to: Oversampler.Rows) {
            let powers = a.powers
            o.forEachGroup(n) { i in to[i] = b.firstHalf(a.secondHalf(from[i], before: before[i], powers: powers)) }
            b.scan(to, into: before, count: n)
        }
        // The same with a stage's curve between them.
        @inline(__always) func stage(after k: Oversampler.HighPass, _ from: Oversampler.Rows,
                                     _ c: inout Oversampler.CurveState, _ blend: Oversampler.CurveState.Blend,
                                     into m: inout Oversampler.LowPass, _ to: Oversampler.Rows) {
            let powers = k.powers
            if blend.isStraight {
                o.forEachGroup(n) { i in
                    var q = k.secondHalf(from[i], before: before[i], powers: powers)
                    c.straightLine(&q, gain: blend.gain)
                    to[i] = m.firstHalf(q)
                }
                c.finishStraightLine()
            } else {
                o.forEachGroup(n) { i in
                    var q = k.secondHalf(from[i], before: before[i], powers: powers)
                    c.apply(&q, blend)
                    to[i] = m.firstHalf(q)
                }
            }
            m.scan(to, into: before, count: n)
        }
        // Stage 1 and its Miller low-pass; the coupling high-pass.
        o.forEachGroup(n) { i in
            var q = up.group(i)
            c1.apply(&q)
            setA[i] = m1.firstHalf(q)
        }
        m1.scan(setA, into: before, count: n)
        link(m1, setA, into: &k1, setB)
        // Stage 2, its two Miller low-passes and the coupling high-pass into stage 3.
        stage(after: k1, setB, &c2, blend2, into: &m2, setA)
        link(m2, setA, into: &m2b, setB)
        link(m2b, setB, into: &k2, setA)
        // Stage 3 and the last low-pass, into the rows the decimator reads.
        stage(after: k2, setA, &c3, blend3, into: &m3, setB)
        let powers = m3.powers
        o.forEachGroup(n) { i in out[i] = m3.secondHalf(setB[i], before: before[i], powers: powers) }
        curve1 = c1; curve2 = c2; curve3 = c3
        miller1 = m1; coupling1 = k1; miller2 = m2; miller2b = m2b; coupling2 = k2; miller3 = m3
        o.downsample(into: chunk, count: n)
    }

    /// DC blocker, the tone stack and the level, each a pass over the chunk.
    private func postProcess(_ chunk: UnsafeMutablePointer<Float>, _ n: Int) {
        let e = scratch
        dcX = differences(chunk, after: dcX, into: e, count: n)
        dcY = onePoleRun(e, into: chunk, count: n, pole: dcPole, from: dcY)
        toneStack.run(chunk, count: n)
        master.scale(chunk, count: n)
    }

    private func updateBrightness() {
        let next = Oversampler.LowPass.at(Double(brightness.current), rate: 4 * sampleRate)
        miller3.setCoefficients(pole: next.pole, gain: next.gain)
    }
}

/// The FMV tone stack of the '59 Bassman (see `Amp`): Yeh and Smith's H(s), bilinear
/// transformed, as a third-order direct-form-I filter in double precision.
struct ToneStack {
    // Component values of the 5F6-A: treble pot R1, bass pot R2, mid pot R3, slope resistor R4.
    static let c1 = 250e-12, c2 = 20e-9, c3 = 20e-9
    static let r1 = 250e3, r2 = 1e6, r3 = 25e3, r4 = 56e3

    private var b0 = 0.0, b1 = 0.0, b2 = 0.0, b3 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    private var x1 = 0.0, x2 = 0.0, x3 = 0.0, y1 = 0.0, y2 = 0.0, y3 = 0.0
    /// Four outputs at a time (`run`): output k of a group is m_k · (y₁, y₂, y₃) (the outputs
    /// before the group) plus the group's own input filtered from rest, whose all-pole part is
    /// the impulse response h₁…h₃ of 1/A(z).
    private var m1 = SIMD4<Double>(), m2 = SIMD4<Double>(), m3 = SIMD4<Double>(), m4 = SIMD4<Double>()
    private var h1 = 0.0, h2 = 0.0, h3 = 0.0

    /// The bass pot's position for a knob at `knob` (0…1): an audio taper, 15 % at noon.
    static func bassPosition(_ knob: Float) -> Double {
        let k = Double(min(max(knob, 0), 1))
        return (exp(3.4 * k) - 1) / (exp(3.4) - 1)
    }

    /// H(s) = (b₁s + b₂s² + b₃s³) / (1 + a₁s + a₂s² + a₃s³) for pot positions t (treble), m (mid),
    /// l (bass), each 0…1 (Yeh and Smith 2006, eq. 1).
    static func analog(t: Double, m: Double, l: Double)
        -> (b1: Double, b2: Double, b3: Double, a1: Double, a2: Double, a3: Double) {
        let c1 = ToneStack.c1, c2 = ToneStack.c2, c3 = ToneStack.c3
        let r1 = ToneStack.r1, r2 = ToneStack.r2, r3 = ToneStack.r3, r4 = ToneStack.r4
        let c123 = c1 * c2 * c3
        let b1 = t * c1 * r1 + m * c3 * r3 + l * (c1 * r2 + c2 * r2) + (c1 * r3 + c2 * r3)
        let b2 = t * (c1 * c2 * r1 * r4 + c1 * c3 * r1 * r4)
            - m * m * (c1 * c3 * r3 * r3 + c2 * c3 * r3 * r3)
            + m * (c1 * c3 * r1 * r3 + c1 * c3 * r3 * r3 + c2 * c3 * r3 * r3)
            + l * (c1 * c2 * r1 * r2 + c1 * c2 * r2 * r4 + c1 * c3 * r2 * r4)
            + l * m * (c1 * c3 * r2 * r3 + c2 * c3 * r2 * r3)
            + (c1 * c2 * r1 * r3 + c1 * c2 * r3 * r4 + c1 * c3 * r3 * r4)
        let b3 = l * m * c123 * (r1 * r2 * r3 + r2 * r3 * r4)
            - m * m * c123 * (r1 * r3 * r3 + r3 * r3 * r4)
            + m * c123 * (r1 * r3 * r3 + r3 * r3 * r4)
            + t * c123 * r1 * r3 * r4 - t * m * c123 * r1 * r3 * r4
            + t * l * c123 * r1 * r2 * r4
        let a1 = (c1 * r1 + c1 * r3 + c2 * r3 + c2 * r4 + c3 * r4) + m * c3 * r3 + l * (c1 * r2 + c2 * r2)
        let a2 = m * (c1 * c3 * r1 * r3 - c2 * c3 * r3 * r4 + c1 * c3 * r3 * r3 + c2 * c3 * r3 * r3)
            + l * m * (c1 * c3 * r2 * r3 + c2 * c3 * r2 * r3)
            - m * m * (c1 * c3 * r3 * r3 + c2 * c3 * r3 * r3)
            + l * (c1 * c2 * r2 * r4 + c1 * c2 * r1 * r2 + c1 * c3 * r2 * r4 + c2 * c3 * r2 * r4)
            + (c1 * c2 * r1 * r4 + c1 * c3 * r1 * r4 + c1 * c2 * r3 * r4 + c1 * c2 * r1 * r3 + c1 * c3 * r3 * r4 + c2 * c3 * r3 * r4)
        let a3 = l * m * c123 * (r1 * r2 * r3 + r2 * r3 * r4)
            - m * m * c123 * (r1 * r3 * r3 + r3 * r3 * r4)
            + m * c123 * (r3 * r3 * r4 + r1 * r3 * r3 - r1 * r3 * r4)
            + l * c123 * r1 * r2 * r4 + c123 * r1 * r3 * r4
        return (b1, b2, b3, a1, a2, a3)
    }

    /// New coefficients for the knobs (0…1 each; the bass through its taper), keeping the state.
    mutating func setKnobs(bass: Float, mid: Float, treble: Float, sampleRate: Double) {
        let h = ToneStack.analog(t: Double(min(max(treble, 0), 1)), m: Double(min(max(mid, 0), 1)),
                                 l: ToneStack.bassPosition(bass))
        // Bilinear transform, s = K(1 − z⁻¹)/(1 + z⁻¹): multiplied through by (1 + z⁻¹)³.
        let k = 2 * sampleRate, k2 = k * k, k3 = k2 * k
        let n1 = h.b1 * k, n2 = h.b2 * k2, n3 = h.b3 * k3
        let d1 = h.a1 * k, d2 = h.a2 * k2, d3 = h.a3 * k3
        let a0 = 1 + d1 + d2 + d3
        b0 = (n1 + n2 + n3) / a0
        b1 = (n1 - n2 - 3 * n3) / a0
        b2 = (-n1 - n2 + 3 * n3) / a0
        b3 = (-n1 + n2 - n3) / a0
        a1 = (3 + d1 - d2 - 3 * d3) / a0
        a2 = (3 - d1 - d2 + 3 * d3) / a0
        a3 = (1 - d1 + d2 - d3) / a0
        // y[t+1] = −a₁y[t] − a₂y[t−1] − a₃y[t−2] + f[t+1], and so on through y[t+4].
        m1 = SIMD4(-a1, -a2, -a3, 0)
        m2 = -a1 * m1 + SIMD4(-a2, -a3, 0, 0)
        m3 = -a1 * m2 - a2 * m1 + SIMD4(-a3, 0, 0, 0)
        m4 = -a1 * m3 - a2 * m2 - a3 * m1
        h1 = -a1
        h2 = -a1 * h1 - a2
        h3 = -a1 * h2 - a2 * h1 - a3
    }

    mutating func clear() {
        x1 = 0; x2 = 0; x3 = 0
        y1 = 0; y2 = 0; y3 = 0
    }

    mutating func flush() {
        if abs(y1) < 1e-15 && abs(y2) < 1e-15 && abs(y3) < 1e-15 && abs(x1) < 1e-15 && abs(x2) < 1e-15 && abs(x3) < 1e-15 {
            clear()
        }
    }

    /// The filter over `io[0..<n]`, in place. Four samples at a time: each group's outputs come
    /// from the outputs before it and its own inputs, so the recursion waits once per group (a
    /// multiply and two adds) instead of once per sample.
    mutating func run(_ io: UnsafeMutablePointer<Float>, count n: Int) {
        var x1 = self.x1, x2 = self.x2, x3 = self.x3
        var p0 = y1, p1 = y2, p2 = y3
        let b0 = self.b0, b1 = self.b1, b2 = self.b2, b3 = self.b3
        let m1 = self.m1, m2 = self.m2, m3 = self.m3, m4 = self.m4
        let h1 = self.h1, h2 = self.h2, h3 = self.h3
        var i = 0
        while i + 4 <= n {
            let xa = Double(io[i]), xb = Double(io[i + 1]), xc = Double(io[i + 2]), xd = Double(io[i + 3])
            let f1 = b0 * xa + b1 * x1 + b2 * x2 + b3 * x3
            let f2 = b0 * xb + b1 * xa + b2 * x1 + b3 * x2
            let f3 = b0 * xc + b1 * xb + b2 * xa + b3 * x1
            let f4 = b0 * xd + b1 * xc + b2 * xb + b3 * xa
            let q2 = f2 + h1 * f1, q3 = f3 + h1 * f2 + h2 * f1, q4 = f4 + h1 * f3 + h2 * f2 + h3 * f1
            let ya = (m1[0] * p0 + m1[1] * p1) + (m1[2] * p2 + f1)
            let yb = (m2[0] * p0 + m2[1] * p1) + (m2[2] * p2 + q2)
            let yc = (m3[0] * p0 + m3[1] * p1) + (m3[2] * p2 + q3)
            let yd = (m4[0] * p0 + m4[1] * p1) + (m4[2] * p2 + q4)
            io[i] = Float(ya); io[i + 1] = Float(yb); io[i + 2] = Float(yc); io[i + 3] = Float(yd)
            x3 = xb; x2 = xc; x1 = xd
            p2 = yb; p1 = yc; p0 = yd
            i += 4
        }
        self.x1 = x1; self.x2 = x2; self.x3 = x3
        y1 = p0; y2 = p1; y3 = p2
        while i < n {
            io[i] = Float(process(Double(io[i])))
            i += 1
        }
    }

    @inline(__always)
    mutating func process(_ x: Double) -> Double {
        let y = (b0 * x + b1 * x1 + b2 * x2 + b3 * x3 - a3 * y3 - a2 * y2) - a1 * y1
        x3 = x2; x2 = x1; x1 = x
        y3 = y2; y2 = y1; y1 = y
        return y
    }
}

extension PedalKind {
    /// A tube-style preamp: three models, gain, the passive bass/mid/treble stack, master.
    public static let amp = PedalKind(
        id: "amp", name: "Amp",
        controls: [
            PedalControl("model", "Model", .none, 0...2, default: 1, .choice(AmpModel.allCases.map(\.name))),
            PedalControl("gain", "Gain", .none, 0...1, default: 0.5),
            PedalControl("bass", "Bass", .none, 0...1, default: 0.5),
            PedalControl("mid", "Mid", .none, 0...1, default: 0.5),
            PedalControl("treble", "Treble", .none, 0...1, default: 0.5),
            PedalControl("master_db", "Master", .decibels, -24...6, default: -6),
        ],
        // Gain and master above, the model switch between them; the tone stack in a row below.
        face: PedalFace(width: 264, ledY: 186, switchY: 290, places: [
            .init("gain", x: 14, y: 12, diameter: 50),
            .init("model", x: 100, y: 12, width: 64),
            .init("master_db", x: 186, y: 12, diameter: 50),
            .init("bass", x: 24, y: 100, diameter: 40),
            .init("mid", x: 100, y: 100, diameter: 40),
            .init("treble", x: 176, y: 100, diameter: 40),
        ], ink: (0.91, 0.78, 0.45),
        artwork: .init(body: "#1e1b18", dark: "#070605", text: "#e8c773", accent: "#c9a14a", name: "AMP", subtitle: "TUBE PREAMP",
                       nameY: 226, plate: .init(10, 6, 244, 168))),
        latency: { _ in Amp.latencySamples },
        make: { Amp(parameters: $0.parameters) })
}

extension Parameter {
    public static let ampEnabled = PedalKind.amp.enabledParameter
    public static let ampModel = PedalKind.amp.parameter("model")
    public static let ampGain = PedalKind.amp.parameter("gain")
    public static let ampBass = PedalKind.amp.parameter("bass")
    public static let ampMid = PedalKind.amp.parameter("mid")
    public static let ampTreble = PedalKind.amp.parameter("treble")
    public static let ampMaster = PedalKind.amp.parameter("master_db")
}

import Foundation

/// 4× oversampling for a waveshaper, shared by the Overdrive and the Amp: a polyphase
/// interpolator and decimator (one 24-tap Kaiser-windowed FIR for both), the saturation curve
/// x/√(1 + x²) with first-order antiderivative anti-aliasing (ADAA, Parker et al., DAFx 2016),
/// and one-pole filters that run at the oversampled rate between curves.
///
/// A chunk goes through in passes over the base-rate samples ("groups": a group is one input
/// sample's four oversampled values, a `Quad`). The caller writes up to `maximumBlockSize`
/// samples to `input` and runs its stages group by group in `forEachGroup` loops:
/// `Interpolator.group` makes a group's values, `CurveState.apply` and the first half of a
/// filter (`OnePole.firstHalf`) work on them in registers, and a pass ends where a filter must
/// run in sequence (`OnePole.scan`): the next pass starts from the filter's second half. The
/// last pass stores the groups in the four rows (`output`; row p holds the values 4i + p, with
/// `history` past values in front) and `downsample` writes the base-rate result. What a group needs of the group before (a curve's last point, a
/// high-pass's last input) is carried from one group to the next, which the compiler still
/// vectorises (a first-order recurrence); so every pass is a loop it vectorises.
///
/// ADAA: each oversampled output is the curve's mean between two successive inputs,
/// (F(w₁) − F(w₀)) / (w₁ − w₀) with F(w) = √(1 + w²), which simplifies exactly to
/// (w₀ + w₁) / (√(1 + w₀²) + √(1 + w₁²)): no cancellation when the two are close, one square
/// root per oversampled sample. It damps the harmonics beyond the oversampled rate, which
/// would fold back near its multiples.
///
/// Latency: the two linear-phase filters delay the signal by 5 base samples (23 oversampled
/// ones, the decimator taking every fourth from the fourth), each curve by half an
/// oversampled sample (0.125 base samples).
///
/// Threads: `init` and `prepare` off the audio thread (they allocate); the rest on the audio
/// thread, allocation- and lock-free.
final class Oversampler {
    static let tapCount = 24
    static let tapsPerPhase = tapCount / 4
    /// Past values kept in front of each buffer: the taps per phase, less one.
    static let history = tapsPerPhase - 1
    /// The delay of the interpolator and decimator together, in base-rate samples.
    static let filterLatency = 5.0
    /// The delay each curve adds (half an oversampled sample), in base-rate samples.
    static let curveLatency = 0.125

    /// Filter taps h[0…23] (symmetric, sum 1); the interpolator uses 4·h.
    private let taps: UnsafeMutablePointer<Float>
    /// Base-rate input: `history` samples of the past, then the chunk.
    private var buffer = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    /// The oversampled signal in four rows of `rowLength`, one per phase.
    private var rows = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    /// Scratch: two sets of four rows of `capacity` (a filter's first halves, alternately),
    /// then one of `capacity + 1` (the outputs before each group, from `scan`).
    private var scratch = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private(set) var capacity = 0
    private var rowLength: Int { Oversampler.history + capacity }

    init() {
        taps = .allocate(capacity: Oversampler.tapCount)
        taps.initialize(repeating: 0, count: Oversampler.tapCount)
        buffer.initialize(to: 0)
        rows.initialize(to: 0)
        scratch.initialize(to: 0)
        designFilter()
    }

    deinit {
        taps.deallocate()
        buffer.deallocate()
        rows.deallocate()
        scratch.deallocate()
    }

    /// Sizes the buffers for chunks of up to `maximumBlockSize` base-rate samples. Not on the audio thread.
    func prepare(maximumBlockSize: Int) {
        capacity = maximumBlockSize
        reallocateZeroed(&buffer, count: rowLength)
        reallocateZeroed(&rows, count: 4 * rowLength)
        reallocateZeroed(&scratch, count: 9 * capacity + 1)
    }

    /// Clears the filters' histories.
    func reset() {
        buffer.update(repeating: 0, count: rowLength)
        rows.update(repeating: 0, count: 4 * rowLength)
    }

    /// Where the caller writes the next chunk (at most `capacity` samples).
    var input: UnsafeMutablePointer<Float> { buffer + Oversampler.history }

    /// Row p of the oversampled chunk: values 4i + p for i in 0..<n (row[-history…-1] the past).
    @inline(__always)
    func row(_ p: Int) -> UnsafeMutablePointer<Float> { rows + p * rowLength + Oversampler.history }

    /// One group: an input sample's four oversampled values, 4i + 0…3.
    struct Quad {
        var v0, v1, v2, v3: Float
    }

    /// Four rows that hold a chunk's groups, one row per phase.
    struct Rows {
        let r0, r1, r2, r3: UnsafeMutablePointer<Float>

        @inline(__always)
        subscript(i: Int) -> Quad {
            get { Quad(v0: r0[i], v1: r1[i], v2: r2[i], v3: r3[i]) }
            nonmutating set { r0[i] = newValue.v0; r1[i] = newValue.v1; r2[i] = newValue.v2; r3[i] = newValue.v3 }
        }
    }

    /// The rows the decimator reads: where the last pass stores its groups.
    var output: Rows { Rows(r0: row(0), r1: row(1), r2: row(2), r3: row(3)) }

    /// Scratch set k (0 or 1): where a pass stores a filter's first halves.
    func firstHalves(_ k: Int) -> Rows {
        let base = scratch + 4 * k * capacity
        return Rows(r0: base, r1: base + capacity, r2: base + 2 * capacity, r3: base + 3 * capacity)
    }

    /// Where `scan` writes the output before each group (`capacity + 1` values).
    var outputsBefore: UnsafeMutablePointer<Float> { scratch + 8 * capacity }

    /// `body(i)` for each group i in 0..<n: one pass, which the compiler vectorises.
    @inline(__always)
    func forEachGroup(_ n: Int, _ body: (Int) -> Void) {
        for i in 0..<n { body(i) }
    }

    /// The interpolator over the chunk in `input`, its taps read once into registers.
    var interpolator: Interpolator { Interpolator(x: input, taps: taps) }

    /// Phase p of input sample i: Σ_j 4·h[4j + p] · x[i − j], j < 6.
    struct Interpolator {
        let x: UnsafePointer<Float>
        let c0, c1, c2, c3, c4, c5: SIMD4<Float>

        init(x: UnsafePointer<Float>, taps: UnsafePointer<Float>) {
            self.x = x
            func phases(_ j: Int) -> SIMD4<Float> {
                4 * SIMD4(taps[4 * j], taps[4 * j + 1], taps[4 * j + 2], taps[4 * j + 3])
            }
            c0 = phases(0); c1 = phases(1); c2 = phases(2); c3 = phases(3); c4 = phases(4); c5 = phases(5)
        }

        @inline(__always)
        func group(_ i: Int) -> Quad {
            let x0 = x[i], x1 = x[i - 1], x2 = x[i - 2], x3 = x[i - 3], x4 = x[i - 4], x5 = x[i - 5]
            @inline(__always) func phase(_ p: Int) -> Float {
                let a = c0[p] * x0 + c1[p] * x1 + c2[p] * x2
                let b = c3[p] * x3 + c4[p] * x4 + c5[p] * x5
                return a + b
            }
            return Quad(v0: phase(0), v1: phase(1), v2: phase(2), v3: phase(3))
        }
    }

    /// A curve's memory between groups: the last oversampled value it saw (bias added) and its root.
    struct CurveState {
        let bias: Float
        /// saturate(bias): subtracted so that the curve passes through 0.
        let offset: Float
        var lastValue: Float
        var lastRoot: Float

        init(bias: Float) {
            self.bias = bias
            offset = bias / (1 + bias * bias).squareRoot()
            lastValue = bias
            lastRoot = (1 + bias * bias).squareRoot()
        }

        mutating func reset() {
            lastValue = bias
            lastRoot = (1 + bias * bias).squareRoot()
        }

        /// The asymmetric curve x/√(1 + x²) shifted by the bias (0 at 0), with ADAA, on one
        /// group: w = v + bias, s = √(1 + w²); each output is (w₀ + w₁) / (s₀ + s₁) with the
        /// point before it (for the group's first point, the last of the group before).
        @inline(__always)
        mutating func apply(_ q: inout Quad) {
            let w0 = q.v0 + bias, w1 = q.v1 + bias, w2 = q.v2 + bias, w3 = q.v3 + bias
            let s0 = (1 + w0 * w0).squareRoot(), s1 = (1 + w1 * w1).squareRoot()
            let s2 = (1 + w2 * w2).squareRoot(), s3 = (1 + w3 * w3).squareRoot()
            q.v0 = (lastValue + w0) / (lastRoot + s0) - offset
            q.v1 = (w0 + w1) / (s0 + s1) - offset
            q.v2 = (w1 + w2) / (s1 + s2) - offset
            q.v3 = (w2 + w3) / (s2 + s3) - offset
            lastValue = w3
            lastRoot = s3
        }

        /// A stage's curve with its input gain and how much of it saturates: `amount` of the
        /// curve and 1 − `amount` of the straight line through 0 (whose mean between two
        /// points is their average), so the stage delays alike whatever the blend.
        struct Blend {
            let gain: Float, amount: Float
            /// No curve at all: `CurveState.straightLine` gives the same numbers without its
            /// square roots and divisions.
            var isStraight: Bool { amount == 0 }
        }

        /// `apply` with the group first multiplied by the blend's gain, the result the blend.
        @inline(__always)
        mutating func apply(_ q: inout Quad, _ blend: Blend) {
            let gain = blend.gain, curve = blend.amount
            let line = (1 - curve) / 2, constant = curve * offset + (1 - curve) * bias
            let w0 = gain * q.v0 + bias, w1 = gain * q.v1 + bias, w2 = gain * q.v2 + bias, w3 = gain * q.v3 + bias
            let s0 = (1 + w0 * w0).squareRoot(), s1 = (1 + w1 * w1).squareRoot()
            let s2 = (1 + w2 * w2).squareRoot(), s3 = (1 + w3 * w3).squareRoot()
            q.v0 = (lastValue + w0) * (curve / (lastRoot + s0) + line) - constant
            q.v1 = (w0 + w1) * (curve / (s0 + s1) + line) - constant
            q.v2 = (w1 + w2) * (curve / (s1 + s2) + line) - constant
            q.v3 = (w2 + w3) * (curve / (s2 + s3) + line) - constant
            lastValue = w3
            lastRoot = s3
        }

        /// The blend at amount 0: each point the mean of it and the point before, less the
        /// bias. It carries only the last value; `finishStraightLine` gives its root after the pass.
        @inline(__always)
        mutating func straightLine(_ q: inout Quad, gain: Float) {
            let w0 = gain * q.v0 + bias, w1 = gain * q.v1 + bias, w2 = gain * q.v2 + bias, w3 = gain * q.v3 + bias
            q.v0 = (lastValue + w0) * 0.5 - bias
            q.v1 = (w0 + w1) * 0.5 - bias
            q.v2 = (w1 + w2) * 0.5 - bias
            q.v3 = (w2 + w3) * 0.5 - bias
            lastValue = w3
        }

        mutating func finishStraightLine() {
            lastRoot = (1 + lastValue * lastValue).squareRoot()
        }
    }

    /// A one-pole filter at the oversampled rate, and its memory between groups.
    ///
    /// Step by step each value would wait on the one before. Over a group it waits once: with a
    /// the pole and Y the output before the group, y_p = a^(p+1)·Y + u_p, where
    /// u_p = Σ_{k≤p} a^(p−k)·g·e_k is the group's own part (`firstHalf`, computed for all
    /// groups in a pass). Only Y ← a⁴·Y + u₃ runs in sequence, through `onePoleRun` (`scan`);
    /// `secondHalf` then gives the outputs, in the next pass. `Kind` says what e is.
    struct OnePole<Kind: OnePoleKind> {
        /// y[n] = pole · y[n − 1] + gain · e[n].
        private(set) var pole: Float
        private(set) var gain: Float
        var lastOutput: Float = 0
        /// The last input: a DC blocker's first e needs it. A low-pass keeps it too, unread, so
        /// `firstHalf` has one form for both kinds.
        var lastInput: Float = 0

        init(pole: Float, gain: Float) {
            self.pole = pole
            self.gain = gain
        }

        /// New coefficients, keeping the memory.
        mutating func setCoefficients(pole: Float, gain: Float) {
            self.pole = pole
            self.gain = gain
        }

        mutating func reset() {
            lastOutput = 0
            lastInput = 0
        }

        /// Lets a decaying state reach exact zero instead of lingering as denormals.
        mutating func flush() {
            lastOutput = flushed(lastOutput)
            lastInput = flushed(lastInput)
        }

        /// A group's own part, u₀…u₃.
        @inline(__always)
        mutating func firstHalf(_ q: Quad) -> Quad {
            let previous = lastInput
            lastInput = q.v3
            return Kind.firstHalf(q, previous: previous, pole: pole, gain: gain)
        }

        /// Y before each of the n groups whose first halves are in `u` (into `before[0..<n]`;
        /// `before[n]` gets the last output).
        mutating func scan(_ u: Rows, into before: UnsafeMutablePointer<Float>, count n: Int) {
            let a2 = pole * pole
            before[0] = lastOutput
            lastOutput = onePoleRun(u.r3, into: before + 1, count: n, pole: a2 * a2, from: lastOutput)
        }

        /// A group's outputs from its first half and the output before it; `powers` from `powers`.
        @inline(__always)
        func secondHalf(_ u: Quad, before y: Float, powers: SIMD4<Float>) -> Quad {
            Quad(v0: mulAdd(powers[0], y, u.v0), v1: mulAdd(powers[1], y, u.v1), v2: mulAdd(powers[2], y, u.v2), v3: mulAdd(powers[3], y, u.v3))
        }

        /// a, a², a³, a⁴ for `secondHalf`.
        var powers: SIMD4<Float> {
            let a = pole, a2 = a * a
            return SIMD4(a, a2, a2 * a, a2 * a2)
        }
    }

    typealias LowPass = OnePole<LowPassInput>
    typealias HighPass = OnePole<HighPassInput>

    /// Decimates the rows into `out[0..<n]` and keeps the histories for the next chunk.
    func downsample(into out: UnsafeMutablePointer<Float>, count n: Int) {
        Oversampler.decimate(into: out, row(0), row(1), row(2), row(3), taps: taps, count: n)
        // Forward copies: safe when they overlap.
        let history = Oversampler.history
        for k in 0..<history { buffer[k] = buffer[n + k] }
        for p in 0..<4 {
            let start = rows + p * rowLength
            for k in 0..<history { start[k] = start[n + k] }
        }
    }

    /// Output i = Σ_{k<24} h[k] · v[4i + 3 − k], v[4m + p] = row p at m. The taps are symmetric
    /// (h[k] = h[23 − k]), so each pair of samples they weigh alike is added first: 12
    /// multiplies instead of 24. With k = 4a + q the pair is row(3 − q)[i − a] and
    /// row(q)[i − 5 + a]. One loop over independent outputs, which the compiler vectorises.
    @inline(__always)
    private static func decimate(into out: UnsafeMutablePointer<Float>, _ r0: UnsafePointer<Float>,
                                 _ r1: UnsafePointer<Float>, _ r2: UnsafePointer<Float>,
                                 _ r3: UnsafePointer<Float>, taps h: UnsafePointer<Float>, count n: Int) {
        let h0 = h[0], h1 = h[1], h2 = h[2], h3 = h[3], h4 = h[4], h5 = h[5]
        let h6 = h[6], h7 = h[7], h8 = h[8], h9 = h[9], h10 = h[10], h11 = h[11]
        for i in 0..<n {
            let s0 = mulAdd(h8, r3[i - 2] + r0[i - 3], mulAdd(h4, r3[i - 1] + r0[i - 4], h0 * (r3[i] + r0[i - 5])))
            let s1 = mulAdd(h9, r2[i - 2] + r1[i - 3], mulAdd(h5, r2[i - 1] + r1[i - 4], h1 * (r2[i] + r1[i - 5])))
            let s2 = mulAdd(h10, r1[i - 2] + r2[i - 3], mulAdd(h6, r1[i - 1] + r2[i - 4], h2 * (r1[i] + r2[i - 5])))
            let s3 = mulAdd(h11, r0[i - 2] + r3[i - 3], mulAdd(h7, r0[i - 1] + r3[i - 4], h3 * (r0[i] + r3[i - 5])))
            out[i] = (s0 + s1) + (s2 + s3)
        }
    }

    /// A Kaiser-windowed sinc low-pass with its −6 dB point at 20/48 of the base rate, designed
    /// at the oversampled rate: it removes the images above the base band before the curve and
    /// everything that would fold back below the base Nyquist after it.
    private func designFilter() {
        let count = Oversampler.tapCount
        let cutoff = (20.0 / 48.0) / 4 // × base rate / oversampled rate
        // β 5 at 24 taps: −0.1 dB at 8 kHz, −0.3 dB at 10 kHz, −2 dB at 15 kHz; images above
        // 28 kHz 21 dB down per pass and above 40 kHz 59 dB.
        let beta = 5.0
        var h = [Double](repeating: 0, count: count)
        let middle = Double(count - 1) / 2
        for i in 0..<count {
            let t = Double(i) - middle
            let sinc = t == 0 ? 2 * cutoff : sin(2 * Double.pi * cutoff * t) / (Double.pi * t)
            let r = t / middle
            h[i] = sinc * besselI0(beta * (1 - r * r).squareRoot()) / besselI0(beta)
        }
        let sum = h.reduce(0, +)
        for i in 0..<count { taps[i] = Float(h[i] / sum) }
    }

    private func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0
        for k in 1..<40 {
            term *= (x / (2 * Double(k))) * (x / (2 * Double(k)))
            sum += term
            if term < 1e-12 * sum { break }
        }
        return sum
    }
}

/// What a one-pole filter's recursion takes in (`Oversampler.OnePole`), as a type so that each
/// pass is compiled for its own kind.
protocol OnePoleKind {
    /// A group's own part u₀…u₃ of y = a·y′ + g·e (see `Oversampler.OnePole`); `previous` is
    /// the last input of the group before.
    static func firstHalf(_ q: Oversampler.Quad, previous: Float, pole a: Float, gain g: Float) -> Oversampler.Quad
}

/// e[n] = x[n]: a low-pass with its −3 dB point near `frequency` (unity gain at DC).
enum LowPassInput: OnePoleKind {
    @inline(__always)
    static func firstHalf(_ q: Oversampler.Quad, previous: Float, pole a: Float, gain g: Float) -> Oversampler.Quad {
        let p0 = g * q.v0
        let p1 = a * p0 + g * q.v1
        let p2 = a * p1 + g * q.v2
        return Oversampler.Quad(v0: p0, v1: p1, v2: p2, v3: a * p2 + g * q.v3)
    }
}

/// e[n] = x[n] − x[n − 1]: a DC blocker.
enum HighPassInput: OnePoleKind {
    @inline(__always)
    static func firstHalf(_ q: Oversampler.Quad, previous: Float, pole a: Float, gain g: Float) -> Oversampler.Quad {
        let p0 = g * (q.v0 - previous)
        let p1 = a * p0 + g * (q.v1 - q.v0)
        let p2 = a * p1 + g * (q.v2 - q.v1)
        return Oversampler.Quad(v0: p0, v1: p1, v2: p2, v3: a * p2 + g * (q.v3 - q.v2))
    }
}

extension Oversampler.OnePole where Kind == LowPassInput {
    /// A low-pass with its −3 dB point near `frequency` at `rate` (unity gain at DC).
    static func at(_ frequency: Double, rate: Double) -> Self {
        let pole = Float(exp(-2 * Double.pi * frequency / rate))
        return Self(pole: pole, gain: 1 - pole)
    }
}

extension Oversampler.OnePole where Kind == HighPassInput {
    /// A DC blocker with its −3 dB point near `frequency` at `rate`.
    static func at(_ frequency: Double, rate: Double) -> Self {
        Self(pole: Float(1 - 2 * Double.pi * frequency / rate), gain: 1)
    }
}

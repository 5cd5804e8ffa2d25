import Foundation

/// 4× oversampling for a waveshaper, shared by the Overdrive and the Amp: a polyphase
/// interpolator and decimator (one 24-tap Kaiser-windowed FIR for both), the saturation curve
/// x/√(1 + x²) with first-order antiderivative anti-aliasing (ADAA, Parker et al., DAFx 2016),
/// and one-pole filters that run at the oversampled rate between curves.
///
/// A chunk goes through in passes over contiguous buffers: the caller writes up to
/// `maximumBlockSize` base-rate samples to `input`, `upsample` fills four rows (row p holds the
/// oversampled values 4i + p, each row with `history` past values in front), curves and
/// filters work on the rows in place, and `downsample` writes the base-rate result and keeps
/// the histories for the next chunk. Every pass is a plain loop over independent samples,
/// which the compiler vectorises.
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
    /// Scratch: five rows of `capacity` (a curve's roots and phase-0 output; a filter's partial sums).
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
        // (One more than five rows: a filter's running values start one place ahead.)
        reallocateZeroed(&scratch, count: 5 * capacity + 1)
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

    @inline(__always)
    private func scratchRow(_ k: Int) -> UnsafeMutablePointer<Float> { scratch + k * capacity }

    /// Interpolates `input[0..<n]` into the four rows. Phase p of input sample i:
    /// Σ_j 4·h[4j + p] · x[i − j].
    func upsample(count n: Int) {
        for p in 0..<4 {
            Oversampler.fir6(into: row(p), from: input, taps: taps + p, scale: 4, count: n)
        }
    }

    /// A curve's memory between chunks: the last oversampled value it saw (bias added) and its root.
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
    }

    /// Applies the asymmetric curve x/√(1 + x²) shifted by the state's bias (0 at 0), with ADAA,
    /// in place on the rows: w = v + bias, s = √(1 + w²); the output at each oversampled point
    /// is (w₀ + w₁) / (s₀ + s₁) with the point before it. Phase p's predecessor is phase p − 1
    /// at the same input sample, phase 0's is phase 3 at the one before.
    func saturate(_ state: inout CurveState, count n: Int) {
        let bias = state.bias, offset = state.offset
        let phase0 = scratchRow(4)
        for p in 0..<4 {
            let r = row(p), s = scratchRow(p)
            for i in 0..<n {
                let w = r[i] + bias
                r[i] = w
                s[i] = (1 + w * w).squareRoot()
            }
        }
        do {
            let w0 = row(0), s0 = scratchRow(0), w3 = row(3), s3 = scratchRow(3)
            phase0[0] = (state.lastValue + w0[0]) / (state.lastRoot + s0[0]) - offset
            for i in 1..<n { phase0[i] = (w3[i - 1] + w0[i]) / (s3[i - 1] + s0[i]) - offset }
            state.lastValue = w3[n - 1]
            state.lastRoot = s3[n - 1]
        }
        for p in stride(from: 3, through: 1, by: -1) {
            let w = row(p), s = scratchRow(p), wBefore = row(p - 1), sBefore = scratchRow(p - 1)
            for i in 0..<n { w[i] = (wBefore[i] + w[i]) / (sBefore[i] + s[i]) - offset }
        }
        row(0).update(from: phase0, count: n)
    }

    /// Like `saturate`, with the rows first multiplied by `gain` and the result a blend:
    /// `amount` of the curve and 1 − `amount` of the straight line through 0 (whose mean
    /// between two points is their average), so the stage delays alike whatever the blend.
    func saturate(_ state: inout CurveState, gain: Float, amount: Float, count n: Int) {
        if amount == 0 {
            straightLine(&state, gain: gain, count: n)
            return
        }
        let bias = state.bias, offset = state.offset
        let phase0 = scratchRow(4)
        let curve = amount, line = (1 - amount) / 2, constant = amount * offset + (1 - amount) * bias
        for p in 0..<4 {
            let r = row(p), s = scratchRow(p)
            for i in 0..<n {
                let w = gain * r[i] + bias
                r[i] = w
                s[i] = (1 + w * w).squareRoot()
            }
        }
        do {
            let w0 = row(0), s0 = scratchRow(0), w3 = row(3), s3 = scratchRow(3)
            let sum = state.lastValue + w0[0]
            phase0[0] = sum * (curve / (state.lastRoot + s0[0]) + line) - constant
            for i in 1..<n {
                let sum = w3[i - 1] + w0[i]
                phase0[i] = sum * (curve / (s3[i - 1] + s0[i]) + line) - constant
            }
            state.lastValue = w3[n - 1]
            state.lastRoot = s3[n - 1]
        }
        for p in stride(from: 3, through: 1, by: -1) {
            let w = row(p), s = scratchRow(p), wBefore = row(p - 1), sBefore = scratchRow(p - 1)
            for i in 0..<n {
                let sum = wBefore[i] + w[i]
                w[i] = sum * (curve / (sBefore[i] + s[i]) + line) - constant
            }
        }
        row(0).update(from: phase0, count: n)
    }

    /// `saturate(gain:amount:)` at amount 0, the same numbers without the curve's square roots and
    /// divisions: each point the mean of it and the point before, less the bias.
    private func straightLine(_ state: inout CurveState, gain: Float, count n: Int) {
        let bias = state.bias
        let phase0 = scratchRow(4)
        for p in 0..<4 {
            let r = row(p)
            for i in 0..<n { r[i] = gain * r[i] + bias }
        }
        let w0 = row(0), w3 = row(3)
        phase0[0] = (state.lastValue + w0[0]) * 0.5 - bias
        for i in 1..<n { phase0[i] = (w3[i - 1] + w0[i]) * 0.5 - bias }
        state.lastValue = w3[n - 1]
        state.lastRoot = (1 + w3[n - 1] * w3[n - 1]).squareRoot()
        for p in stride(from: 3, through: 1, by: -1) {
            let w = row(p), wBefore = row(p - 1)
            for i in 0..<n { w[i] = (wBefore[i] + w[i]) * 0.5 - bias }
        }
        row(0).update(from: phase0, count: n)
    }

    /// A one-pole filter's memory between chunks.
    struct OnePoleState {
        /// y[n] = pole · y[n − 1] + gain · e[n].
        var pole: Float
        var gain: Float
        /// e[n] = x[n] − x[n − 1] (a DC-blocking high-pass) instead of x[n] (a low-pass).
        let differences: Bool
        var lastOutput: Float = 0
        var lastInput: Float = 0

        /// A low-pass with its −3 dB point near `frequency` at `rate` (unity gain at DC).
        static func lowPass(_ frequency: Double, rate: Double) -> OnePoleState {
            let pole = Float(exp(-2 * Double.pi * frequency / rate))
            return OnePoleState(pole: pole, gain: 1 - pole, differences: false)
        }

        /// A DC blocker with its −3 dB point near `frequency` at `rate`.
        static func highPass(_ frequency: Double, rate: Double) -> OnePoleState {
            OnePoleState(pole: Float(1 - 2 * Double.pi * frequency / rate), gain: 1, differences: true)
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
    }

    /// Runs a one-pole filter over the oversampled chunk, in place. A recursion over 4n values
    /// would make each wait on the one before; over groups of four (one per input sample) it
    /// waits once a group: with a the pole and Y the value before the group,
    /// y_p = a^(p+1)·Y + u_p, u_p = Σ_{k≤p} a^(p−k)·g·e_k. The u and the y are computed for all
    /// groups at once (vectorised); only Y₃ ← a⁴·Y₃ + u₃ runs in sequence, through `onePoleRun`.
    func filter(_ state: inout OnePoleState, count n: Int) {
        let a = state.pole, g = state.gain
        let a2 = a * a, a3 = a2 * a, a4 = a2 * a2
        let r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3)
        let u0 = scratchRow(0), u1 = scratchRow(1), u2 = scratchRow(2), u3 = scratchRow(3)
        let before = scratchRow(4)
        let firstPrevious = state.lastInput
        if state.differences {
            // e_0 needs the last value of the group before: row 3 one sample back, untouched until the last pass.
            u0[0] = g * (r0[0] - firstPrevious)
            for i in 1..<n { u0[i] = g * (r0[i] - r3[i - 1]) }
            for i in 0..<n {
                let e1 = g * (r1[i] - r0[i]), e2 = g * (r2[i] - r1[i]), e3 = g * (r3[i] - r2[i])
                let p0 = u0[i]
                let p1 = a * p0 + e1
                let p2 = a * p1 + e2
                u1[i] = p1
                u2[i] = p2
                u3[i] = a * p2 + e3
            }
        } else {
            for i in 0..<n {
                let p0 = g * r0[i]
                let p1 = a * p0 + g * r1[i]
                let p2 = a * p1 + g * r2[i]
                u0[i] = p0
                u1[i] = p1
                u2[i] = p2
                u3[i] = a * p2 + g * r3[i]
            }
        }
        state.lastInput = r3[n - 1]
        var y = state.lastOutput
        // Y_i = a⁴·Y_{i−1} + u₃[i], with before[i] = Y_{i−1}: in sequence, each group would wait
        // on the one before; `onePoleRun` waits once per eight groups.
        before[0] = y
        y = onePoleRun(u3, into: before + 1, count: n, pole: a4, from: y)
        state.lastOutput = y
        for i in 0..<n {
            let b = before[i]
            r0[i] = a * b + u0[i]
            r1[i] = a2 * b + u1[i]
            r2[i] = a3 * b + u2[i]
            r3[i] = a4 * b + u3[i]
        }
    }

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

    /// out[i] = Σ_{j<6} scale·taps[4j] · x[i − j]. The taps are read once into registers and
    /// each output is independent of the others, so the loop vectorises.
    @inline(__always)
    private static func fir6(into out: UnsafeMutablePointer<Float>, from x: UnsafePointer<Float>,
                             taps: UnsafePointer<Float>, scale: Float, count n: Int) {
        let c0 = scale * taps[0], c1 = scale * taps[4], c2 = scale * taps[8]
        let c3 = scale * taps[12], c4 = scale * taps[16], c5 = scale * taps[20]
        for i in 0..<n {
            let a = c0 * x[i] + c1 * x[i - 1] + c2 * x[i - 2]
            let b = c3 * x[i - 3] + c4 * x[i - 4] + c5 * x[i - 5]
            out[i] = a + b
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
            let s0 = h0 * (r3[i] + r0[i - 5]) + h4 * (r3[i - 1] + r0[i - 4]) + h8 * (r3[i - 2] + r0[i - 3])
            let s1 = h1 * (r2[i] + r1[i - 5]) + h5 * (r2[i - 1] + r1[i - 4]) + h9 * (r2[i - 2] + r1[i - 3])
            let s2 = h2 * (r1[i] + r2[i - 5]) + h6 * (r1[i - 1] + r2[i - 4]) + h10 * (r1[i - 2] + r2[i - 3])
            let s3 = h3 * (r0[i] + r3[i - 5]) + h7 * (r0[i - 1] + r3[i - 4]) + h11 * (r0[i - 2] + r3[i - 3])
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

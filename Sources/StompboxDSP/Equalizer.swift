import Foundation

/// Six peaking filters in series (RBJ audio-EQ-cookbook biquads) at `bandFrequencies`, gains
/// from `eq.band1_db…eq.band6_db`. Zero latency. While a slider moves, its gain is ramped
/// (~20 ms) and the band's coefficients recomputed every 16 samples, so nothing zippers. A
/// band at exactly 0 dB and not ramping is skipped, so a flat EQ passes the signal bit-exact.
///
/// The active bands run side by side as a six-lane pipeline (see `runWavefront`): lane l
/// filters sample t − l at step t, so the six recursions advance together in SIMD2<Double>
/// vectors instead of each waiting on the one before it. Filters
/// in series commute, so a band that comes in (at 0 dB, the identity) is put first in line
/// and given the raw input's history, and a band that has settled back at 0 dB simply
/// leaves: neither disturbs the others.
///
/// Threads: `init`/`prepare` off the audio thread; `process`/`reset` on it, allocation-free.
public final class Equalizer: AudioEffect {
    /// Centre frequencies of the six peaking bands.
    public static let bandFrequencies: [Double] = [100, 250, 630, 1600, 4000, 10000]
    /// Bandwidth of about 1.3 octaves, the spacing of the bands: Q = √(2^N) / (2^N − 1).
    public static let q: Double = {
        let r = pow(2, 1.3)
        return r.squareRoot() / (r - 1)
    }()
    static let bandCount = 6
    static let subBlock = 16

    let parameters: ParameterStore
    private var sampleRate: Double = 48_000
    private let bands: UnsafeMutablePointer<PeakingBand>
    /// The active bands in processing order (indices into `bands`).
    private let order: UnsafeMutablePointer<Int>
    private var activeCount = 0
    /// The last two input samples, for a band that comes in.
    private var input1 = 0.0, input2 = 0.0

    public init(parameters: ParameterStore) {
        self.parameters = parameters
        bands = .allocate(capacity: Equalizer.bandCount)
        for b in 0..<Equalizer.bandCount {
            (bands + b).initialize(to: PeakingBand(frequency: Equalizer.bandFrequencies[b]))
        }
        order = .allocate(capacity: Equalizer.bandCount)
        order.initialize(repeating: 0, count: Equalizer.bandCount)
    }

    deinit {
        bands.deinitialize(count: Equalizer.bandCount)
        bands.deallocate()
        order.deallocate()
    }

    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        for b in 0..<Equalizer.bandCount { bands[b].prepare(sampleRate: sampleRate) }
        reset()
    }

    public func reset() {
        activeCount = 0
        input1 = 0
        input2 = 0
        for b in 0..<Equalizer.bandCount {
            bands[b].snap(gainDB: parameters.load(Equalizer.bandParameter(b)))
            if bands[b].gain.current != 0 {
                order[activeCount] = b
                activeCount += 1
            }
        }
    }

    /// `eq.band<b+1>_db` without touching an array on the audio thread.
    @inline(__always)
    static func bandParameter(_ b: Int) -> Parameter {
        Parameter(rawValue: Parameter.eqBand1.rawValue + b)!
    }

    private func isActive(_ b: Int) -> Bool {
        for k in 0..<activeCount where order[k] == b { return true }
        return false
    }

    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        guard let base = block.baseAddress, block.count > 0 else { return }
        // Sanitise once here so a non-finite sample cannot poison the filter states.
        for i in block.indices where !block[i].isFinite { block[i] = 0 }
        let bands = self.bands, order = self.order
        for b in 0..<Equalizer.bandCount {
            bands[b].gain.setTarget(parameters.load(Equalizer.bandParameter(b)))
        }

        var ramping = false
        for b in 0..<Equalizer.bandCount where bands[b].gain.isRamping { ramping = true }
        // Sub-blocks only while a slider moves; otherwise the whole block in one pass.
        let step = ramping ? Equalizer.subBlock : block.count
        var start = 0
        while start < block.count {
            let n = min(step, block.count - start)
            let x = base + start
            for b in 0..<Equalizer.bandCount where bands[b].gain.isRamping {
                bands[b].setCoefficients(gainDB: bands[b].gain.skip(n))
                if !isActive(b) {
                    // In at the front, continuing from the raw input as the identity would.
                    for k in stride(from: activeCount, to: 0, by: -1) { order[k] = order[k - 1] }
                    order[0] = b
                    activeCount += 1
                    bands[b].continueFrom(input1, input2)
                }
            }
            input2 = n > 1 ? Double(x[n - 2]) : input1
            input1 = Double(x[n - 1])

            let count = activeCount
            if count > 0 {
                Equalizer.runWavefront(x, n, bands, order, count)
                // A band back at 0 dB whose last ramp has died away leaves the line.
                var kept = 0
                for k in 0..<count {
                    let b = order[k]
                    if !bands[b].isSettledFlat {
                        order[kept] = b
                        kept += 1
                    }
                }
                activeCount = kept
            }
            start += n
        }
        for k in 0..<activeCount { bands[order[k]].flushDenormals() }
    }

    /// The active bands (at most six) as one pipeline of six lanes in three SIMD2 vectors:
    /// at step t, lane l filters sample t − l, taking as input what lane l − 1 produced at step
    /// t − 1. Every lane advances at each step, so the six recursions run side by side instead
    /// of waiting on each other; lanes past `count` are identities (b0 = 1, the rest 0, exact).
    /// The first and last five steps fill and drain the pipeline (lanes outside the block
    /// hold still), so each block starts and ends with every band at the same sample: no
    /// latency, and the per-band states stay what `continueFrom`/`isSettledFlat` expect.
    private static func runWavefront(_ x: UnsafeMutablePointer<Float>, _ n: Int,
                                     _ bands: UnsafeMutablePointer<PeakingBand>,
                                     _ order: UnsafeMutablePointer<Int>, _ count: Int) {
        var w = Wavefront(bands, order, count)
        let latency = Wavefront.latency
        let fill = min(latency, n)
        for t in 0..<fill { w.maskedStep(x, t, n) }
        if n > latency {
            for t in latency..<n { w.step(x, t) }
        }
        for t in max(n, fill)..<(n + latency) { w.maskedStep(x, t, n) }
        w.store(bands, order, count)
    }

    /// The combined response in dB of the six bands at `hz` with `bandGains` (dB, one per band),
    /// from the same coefficients the filter runs. For the GUI's curve; any thread.
    public static func magnitudeDecibels(atFrequency hz: Double, bandGains: [Double], sampleRate: Double) -> Double {
        var total = 0.0
        for (b, gain) in bandGains.prefix(bandCount).enumerated() where gain != 0 {
            let c = PeakingCoefficients(frequency: bandFrequencies[b], gainDB: gain, q: q, sampleRate: sampleRate)
            total += c.magnitudeDecibels(atFrequency: hz, sampleRate: sampleRate)
        }
        return total
    }
}

/// Normalised biquad coefficients (a0 = 1) of an RBJ peaking filter. The gain at the centre
/// frequency is exactly `gainDB`.
struct PeakingCoefficients {
    var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0

    init() {}

    init(frequency: Double, gainDB: Double, q: Double, sampleRate: Double) {
        let w0 = 2 * Double.pi * min(frequency, 0.49 * sampleRate) / sampleRate
        self.init(cosW0: cos(w0), alpha: sin(w0) / (2 * q), gainDB: gainDB)
    }

    /// The form used per sub-block: cos ω0 and α depend only on the band, not the gain.
    init(cosW0: Double, alpha: Double, gainDB: Double) {
        let a = pow(10, gainDB / 40)
        let a0 = 1 + alpha / a
        b0 = (1 + alpha * a) / a0
        b1 = -2 * cosW0 / a0
        b2 = (1 - alpha * a) / a0
        a1 = b1
        a2 = (1 - alpha / a) / a0
    }

    /// |H(e^jω)| in dB.
    func magnitudeDecibels(atFrequency hz: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * hz / sampleRate
        let c1 = cos(w), s1 = sin(w), c2 = cos(2 * w), s2 = sin(2 * w)
        let nr = b0 + b1 * c1 + b2 * c2, ni = -(b1 * s1 + b2 * s2)
        let dr = 1 + a1 * c1 + a2 * c2, di = -(a1 * s1 + a2 * s2)
        return 10 * log10((nr * nr + ni * ni) / (dr * dr + di * di))
    }
}

/// One band: its smoothed gain, its coefficients and its state. Direct form I, in Double so the
/// 100 Hz band keeps its precision: its state is the signal itself, so when the coefficients
/// move (a slider ramp) the output barely jumps, where transposed forms, whose state mixes
/// coefficients and signal, zipper audibly.
struct PeakingBand {
    let frequency: Double
    var gain = SmoothedValue(0)
    private var cosW0 = 1.0
    private var alpha = 0.1
    var filter = Biquad()

    init(frequency: Double) { self.frequency = frequency }

    mutating func prepare(sampleRate: Double) {
        let w0 = 2 * Double.pi * min(frequency, 0.49 * sampleRate) / sampleRate
        cosW0 = cos(w0)
        alpha = sin(w0) / (2 * Equalizer.q)
        gain.prepare(sampleRate: sampleRate)
    }

    mutating func snap(gainDB: Float) {
        gain.snap(to: gainDB)
        setCoefficients(gainDB: gainDB)
        continueFrom(0, 0)
    }

    mutating func setCoefficients(gainDB: Float) {
        let c = PeakingCoefficients(cosW0: cosW0, alpha: alpha, gainDB: Double(gainDB))
        filter.b0 = c.b0; filter.b1 = c.b1; filter.b2 = c.b2; filter.a1 = c.a1; filter.a2 = c.a2
    }

    /// The state of an identity filter that has seen `last` and, before it, `previous`.
    mutating func continueFrom(_ last: Double, _ previous: Double) {
        filter.x1 = last; filter.y1 = last
        filter.x2 = previous; filter.y2 = previous
    }

    /// At 0 dB, not ramping, and the output equals the input again (to 1e-12).
    var isSettledFlat: Bool {
        !gain.isRamping && gain.current == 0
            && abs(filter.y1 - filter.x1) < 1e-12 && abs(filter.y2 - filter.x2) < 1e-12
    }

    mutating func flushDenormals() { filter.flushDenormals() }
}

/// The equaliser's six-lane pipeline (see `Equalizer.runWavefront`).
struct Wavefront {
    static let latency = 5
    /// Lanes (0, 3), (1, 4) and (2, 5): each pair's input is the previous pair's output, and
    /// only the first needs a shuffle (the input sample beside lane 2's output).
    var p0, p1, p2: LanePair

    @inline(__always)
    init(_ bands: UnsafeMutablePointer<PeakingBand>, _ order: UnsafeMutablePointer<Int>, _ count: Int) {
        func filter(_ l: Int) -> Biquad { l < count ? bands[order[l]].filter : Biquad() }
        p0 = LanePair(filter(0), filter(3))
        p1 = LanePair(filter(1), filter(4))
        p2 = LanePair(filter(2), filter(5))
    }

    /// Every lane inside the block.
    @inline(__always)
    mutating func step(_ x: UnsafeMutablePointer<Float>, _ t: Int) {
        let in0 = SIMD2(Double(x[t]), p2.y1[0]), in1 = p0.y1, in2 = p1.y1
        p0.tick(in0)
        p1.tick(in1)
        p2.tick(in2)
        x[t - Wavefront.latency] = Float(p2.y1[1])
    }

    /// Filling or draining: lanes whose sample t − l lies outside 0..<n hold still.
    @inline(__always)
    mutating func maskedStep(_ x: UnsafeMutablePointer<Float>, _ t: Int, _ n: Int) {
        let input = t < n ? Double(x[t]) : 0
        let in0 = SIMD2(input, p2.y1[0]), in1 = p0.y1, in2 = p1.y1
        let low = SIMD2<Int64>(repeating: Int64(t - n)), high = SIMD2<Int64>(repeating: Int64(t))
        let lanes0 = SIMD2<Int64>(0, 3), lanes1 = SIMD2<Int64>(1, 4), lanes2 = SIMD2<Int64>(2, 5)
        p0.tick(in0, where: (lanes0 .> low) .& (lanes0 .<= high))
        p1.tick(in1, where: (lanes1 .> low) .& (lanes1 .<= high))
        p2.tick(in2, where: (lanes2 .> low) .& (lanes2 .<= high))
        if t >= Wavefront.latency { x[t - Wavefront.latency] = Float(p2.y1[1]) }
    }

    func store(_ bands: UnsafeMutablePointer<PeakingBand>, _ order: UnsafeMutablePointer<Int>, _ count: Int) {
        for l in 0..<min(count, 6) {
            let p = l % 3 == 0 ? p0 : (l % 3 == 1 ? p1 : p2), k = l / 3
            let b = bands + order[l]
            b.pointee.filter.x1 = p.x1[k]; b.pointee.filter.x2 = p.x2[k]
            b.pointee.filter.y1 = p.y1[k]; b.pointee.filter.y2 = p.y2[k]
        }
    }
}

/// Two biquads side by side in the lanes of SIMD2 vectors (the equaliser's pipeline).
struct LanePair {
    let b0, b2, a1, a2: SIMD2<Double>
    var x1, x2, y1, y2: SIMD2<Double>

    @inline(__always)
    init(_ f: Biquad, _ g: Biquad) {
        b0 = SIMD2(f.b0, g.b0); b2 = SIMD2(f.b2, g.b2)
        a1 = SIMD2(f.a1, g.a1); a2 = SIMD2(f.a2, g.a2)
        x1 = SIMD2(f.x1, g.x1); x2 = SIMD2(f.x2, g.x2)
        y1 = SIMD2(f.y1, g.y1); y2 = SIMD2(f.y2, g.y2)
    }

    /// Direct form I: b₀x + (b₂x₂ − a₂y₂) + a₁(x₁ − y₁), b1 = a1 for a peaking
    /// filter. What each step waits on, the input (the lane before's last output) and y₁ from
    /// the step before, enters through one fused multiply-add each (`mulAdd`; two steps of
    /// latency instead of three). At 0 dB (b = a) and a settled state (x = y) the b₂/a₂ terms
    /// cancel and x₁ − y₁ is 0, exactly, fused or not: a flat band stays an exact identity.
    @inline(__always)
    func output(_ x: SIMD2<Double>) -> SIMD2<Double> {
        mulAdd(a1, x1 - y1, mulAdd(b0, x, b2 * x2 - a2 * y2))
    }

    @inline(__always)
    mutating func tick(_ x: SIMD2<Double>) {
        let y = output(x)
        x2 = x1; x1 = x
        y2 = y1; y1 = y
    }

    /// Lanes outside `active` keep their state.
    @inline(__always)
    mutating func tick(_ x: SIMD2<Double>, where active: SIMDMask<SIMD2<Int64>>) {
        let y = output(x)
        x2.replace(with: x1, where: active); x1.replace(with: x, where: active)
        y2.replace(with: y1, where: active); y1.replace(with: y, where: active)
    }
}

/// A peaking biquad's coefficients (b1 = a1, a0 = 1) and its direct-form-I state; the
/// equaliser runs it in a `LanePair` of its pipeline (`Wavefront`).
struct Biquad {
    var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
    var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

    /// A decaying state ends in exact zero instead of denormals.
    mutating func flushDenormals() {
        if abs(x1) < 1e-25 { x1 = 0 }
        if abs(x2) < 1e-25 { x2 = 0 }
        if abs(y1) < 1e-25 { y1 = 0 }
        if abs(y2) < 1e-25 { y2 = 0 }
    }
}

extension PedalKind {
    /// Six peaking bands, ±12 dB, zero latency, drawn as faders under the response curve.
    public static let eq = PedalKind(
        id: "eq", name: "EQ",
        controls: Equalizer.bandFrequencies.enumerated().map { i, hz in
            let label = hz >= 1000 ? "\(formatDecimal(Float(hz) / 1000, places: hz.truncatingRemainder(dividingBy: 1000) == 0 ? 0 : 1)) kHz" : "\(Int(hz)) Hz"
            return PedalControl("band\(i + 1)_db", label, .decibels, -12...12, default: 0)
        },
        face: PedalFace(width: 264, ledY: 208, switchY: 290, panel: .equalizer, ink: (0.11, 0.14, 0.16),
                        artwork: .init(body: "#d9dcdf", dark: "#9da3a8", text: "#1d2328", accent: "#ffffff", name: "EQUALIZER", subtitle: "6-BAND GRAPHIC",
                                       nameY: 238, screen: .init(12, 12, 240, 74), shade: .init(10, 86, 244, 112))),
        make: { Equalizer(parameters: $0.parameters) })
}

extension Parameter {
    public static let eqEnabled = PedalKind.eq.enabledParameter
    /// The six EQ bands in order.
    public static let eqBands: [Parameter] = PedalKind.eq.controls
    public static let eqBand1 = eqBands[0]
    public static let eqBand2 = eqBands[1]
    public static let eqBand3 = eqBands[2]
    public static let eqBand4 = eqBands[3]
    public static let eqBand5 = eqBands[4]
    public static let eqBand6 = eqBands[5]
}

import Foundation

/// Six peaking filters in series (RBJ audio-EQ-cookbook biquads) at `bandFrequencies`, gains
/// from `eq.band1_db…eq.band6_db`. Zero latency. While a slider moves, its gain is ramped
/// (~20 ms) and the band's coefficients recomputed every 16 samples, so nothing zippers. A
/// band at exactly 0 dB and not ramping is skipped, so a flat EQ passes the signal bit-exact.
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

    public init(parameters: ParameterStore) {
        self.parameters = parameters
        bands = .allocate(capacity: Equalizer.bandCount)
        for b in 0..<Equalizer.bandCount {
            (bands + b).initialize(to: PeakingBand(frequency: Equalizer.bandFrequencies[b]))
        }
    }

    deinit {
        bands.deinitialize(count: Equalizer.bandCount)
        bands.deallocate()
    }

    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        for b in 0..<Equalizer.bandCount { bands[b].prepare(sampleRate: sampleRate) }
        reset()
    }

    public func reset() {
        for b in 0..<Equalizer.bandCount {
            bands[b].snap(gainDB: parameters.load(Equalizer.bandParameter(b)))
        }
    }

    /// `eq.band<b+1>_db` without touching an array on the audio thread.
    @inline(__always)
    static func bandParameter(_ b: Int) -> Parameter {
        Parameter(rawValue: Parameter.eqBand1.rawValue + b)!
    }

    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        guard let base = block.baseAddress else { return }
        // Sanitise once here so a non-finite sample cannot poison the filter states.
        for i in block.indices where !block[i].isFinite { block[i] = 0 }
        for b in 0..<Equalizer.bandCount {
            bands[b].gain.setTarget(parameters.load(Equalizer.bandParameter(b)))
            bands[b].process(base, block.count)
        }
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
    private var c = PeakingCoefficients()
    private var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
    /// False while the band is flat and still: then it is skipped.
    private var active = false

    init(frequency: Double) { self.frequency = frequency }

    private mutating func clear() { x1 = 0; x2 = 0; y1 = 0; y2 = 0 }

    mutating func prepare(sampleRate: Double) {
        let w0 = 2 * Double.pi * min(frequency, 0.49 * sampleRate) / sampleRate
        cosW0 = cos(w0)
        alpha = sin(w0) / (2 * Equalizer.q)
        gain.prepare(sampleRate: sampleRate)
    }

    mutating func snap(gainDB: Float) {
        gain.snap(to: gainDB)
        clear()
        active = gainDB != 0
        c = PeakingCoefficients(cosW0: cosW0, alpha: alpha, gainDB: Double(gainDB))
    }

    @inline(__always)
    mutating func process(_ x: UnsafeMutablePointer<Float>, _ count: Int) {
        guard count > 0 else { return }
        if !gain.isRamping {
            if !active {
                // Flat and skipped: only remember the last samples, so that starting again
                // continues from the signal as if the (identity) filter had run all along.
                x2 = count > 1 ? Double(x[count - 2]) : x1
                x1 = Double(x[count - 1])
                y1 = x1
                y2 = x2
                return
            }
            run(x, count)
            // Back at 0 dB and the last ramp's transient has died: the output is the input.
            if gain.current == 0 && abs(y1 - x1) < 1e-12 && abs(y2 - x2) < 1e-12 { active = false }
            return
        }
        active = true
        var start = 0
        while start < count {
            let n = min(Equalizer.subBlock, count - start)
            let g = gain.skip(n)
            c = PeakingCoefficients(cosW0: cosW0, alpha: alpha, gainDB: Double(g))
            run(x + start, n)
            start += n
        }
    }

    @inline(__always)
    private mutating func run(_ x: UnsafeMutablePointer<Float>, _ count: Int) {
        let b0 = c.b0, b1 = c.b1, b2 = c.b2, a1 = c.a1, a2 = c.a2
        var x1 = self.x1, x2 = self.x2, y1 = self.y1, y2 = self.y2
        for i in 0..<count {
            let input = Double(x[i])
            let y = b0 * input + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            x2 = x1
            x1 = input
            y2 = y1
            y1 = y
            x[i] = Float(y)
        }
        self.x1 = x1
        self.x2 = x2
        // Decays to exact zero instead of denormals.
        self.y1 = abs(y1) < 1e-25 ? 0 : y1
        self.y2 = abs(y2) < 1e-25 ? 0 : y2
    }
}

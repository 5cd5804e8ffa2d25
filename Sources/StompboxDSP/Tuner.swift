import Foundation
import Synchronization

/// A tuner's reading: the pitch, how clearly periodic the sound was, and the nearest note with
/// the deviation from it.
public struct TunerReading: Sendable, Equatable {
    public let hz: Double
    /// The normalised square difference function's peak, 0…1 (1: perfectly periodic).
    public let clarity: Double
    /// The nearest note's name ("E") and octave (2 for E2, scientific pitch notation).
    public let name: String
    public let octave: Int
    /// From the nearest note, in cents (−50…+50).
    public let cents: Double

    public var note: String { "\(name)\(octave)" }

    static let names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]

    public init(hz: Double, clarity: Double, reference: Double) {
        self.hz = hz
        self.clarity = clarity
        let midi = 69 + 12 * log2(hz / reference)
        let nearest = midi.rounded()
        let index = Int(nearest)
        name = TunerReading.names[((index % 12) + 12) % 12]
        octave = Int((Double(index) / 12).rounded(.down)) - 1
        cents = 100 * (midi - nearest)
    }
}

/// Pitch detection for a tuner by McLeod's method (P. McLeod and G. Wyvill, "A smarter way to
/// find pitch", ICMC 2005): the normalised square difference function (NSDF) of a window,
/// computed from its autocorrelation by FFT (FFTW), its key maxima (the highest point between
/// each pair of zero crossings), the first key maximum within `threshold` of the highest (so a
/// low E's strong second harmonic does not win over its fundamental), its lag refined by a
/// parabola through the three samples around it. Lags are searched from E6 (1318.5 Hz) down to
/// B0 (30.9 Hz); a window whose best peak is below `minimumClarity` (noise, silence, a chord
/// smeared by its attack) has no reading.
///
/// Threads: `init` off the audio thread (plans the transform); `analyse` allocates nothing but is
/// meant for a tuner's own thread, on samples the audio thread hands over.
public final class PitchDetector {
    /// The analysis of one window length.
    private let short: NSDFAnalyser
    /// Twice as long, for notes below `longBelow` once that much sound is there: a low B's
    /// window then holds five periods instead of two and a half, and a plucked one reads within
    /// half a cent as its harmonics die away at their own rates.
    private let long: NSDFAnalyser
    static let longBelow = 110.0
    public let sampleRate: Double
    /// Samples the first reading needs (85 ms at 48 kHz).
    public var window: Int { short.window }
    /// Samples a refined low note's reading looks back over.
    public var longWindow: Int { long.window }

    public static let lowest = 30.87
    public static let highest = 1318.51
    public static let threshold = 0.9
    public static let minimumClarity = 0.8

    public init(sampleRate: Double) {
        self.sampleRate = sampleRate
        var size = 256
        while Double(size) < 2.5 * sampleRate / PitchDetector.lowest { size *= 2 }
        short = NSDFAnalyser(sampleRate: sampleRate, window: size)
        long = NSDFAnalyser(sampleRate: sampleRate, window: 2 * size)
    }

    /// The pitch of the sound ending at `end` (`end` − `longWindow` … `end` must be readable;
    /// silence before the sound is fine), or nil when there is none clearly.
    public func analyse(endingAt end: UnsafePointer<Float>, reference: Double = 440) -> TunerReading? {
        guard let quick = short.analyse(end - short.window) else { return nil }
        var best = quick
        if quick.hz < PitchDetector.longBelow, PitchDetector.soundsThroughout(end - long.window, long.window),
           let refined = long.analyse(end - long.window),
           abs(1200 * log2(refined.hz / quick.hz)) < 50 {
            best = refined
        }
        return TunerReading(hz: best.hz, clarity: best.clarity, reference: reference)
    }

    /// Whether the note already sounded at the start of these `count` samples: the first
    /// sixteenth holds at least a quarter of the last sixteenth's energy (the long window must not reach back
    /// into the silence, or the previous note, before the pick).
    private static func soundsThroughout(_ x: UnsafePointer<Float>, _ count: Int) -> Bool {
        let eighth = count / 16
        var head = 0.0, tail = 0.0
        for i in 0..<eighth {
            let a = Double(x[i].isFinite ? x[i] : 0), b = Double(x[count - eighth + i].isFinite ? x[count - eighth + i] : 0)
            head += a * a
            tail += b * b
        }
        return head >= 0.25 * tail
    }

    /// A reading every `interval` seconds through `samples` (one channel): the analysis of the
    /// sound up to each time (silence before the start). Times are the windows' ends.
    public func readings(_ samples: [Float], every interval: Double = 0.05, reference: Double = 440) -> [(time: Double, reading: TunerReading?)] {
        let hop = max(1, Int((interval * sampleRate).rounded()))
        let padded = [Float](repeating: 0, count: long.window) + samples
        var out: [(Double, TunerReading?)] = []
        padded.withUnsafeBufferPointer { all in
            var end = hop
            while end <= samples.count {
                out.append((Double(end) / sampleRate, analyse(endingAt: all.baseAddress! + long.window + end, reference: reference)))
                end += hop
            }
        }
        return out
    }
}

/// The NSDF analysis of one window length (see `PitchDetector`).
final class NSDFAnalyser {
    let sampleRate: Double
    let window: Int
    private let fft: FFTPair
    private let nsdf: UnsafeMutablePointer<Double>
    private let window2: UnsafeMutablePointer<Float>
    private let minimumLag: Int
    private let maximumLag: Int

    init(sampleRate: Double, window size: Int) {
        self.sampleRate = sampleRate
        window = size
        fft = FFTPair(size: 2 * size)
        nsdf = .allocate(capacity: size)
        nsdf.initialize(repeating: 0, count: size)
        window2 = .allocate(capacity: size)
        window2.initialize(repeating: 0, count: size)
        minimumLag = max(2, Int((sampleRate / PitchDetector.highest * 0.95).rounded(.down)))
        maximumLag = min(size - 2, Int((sampleRate / PitchDetector.lowest * 1.05).rounded(.up)))
    }

    deinit {
        fft.free()
        nsdf.deallocate()
        window2.deallocate()
    }

    /// The pitch of the `window` samples at `samples` and its clarity, or nil when there is none clearly.
    func analyse(_ samples: UnsafePointer<Float>) -> (hz: Double, clarity: Double)? {
        guard let rough = analyse(samples, decay: 0) else { return nil }
        // A plucked note decays through the window, which pulls the NSDF's peak towards shorter
        // lags (by a quarter of a cent on a low B). The decay is measured (the energy of as many
        // whole periods as fit in half the window, at its start against its end) and undone,
        // and the window analysed again.
        let w = window
        let period = sampleRate / rough.hz
        let span = Int((Double(Int(Double(w / 2) / period)) * period).rounded())
        guard span > 0 else { return rough }
        var first = 0.0, second = 0.0
        for j in 0..<span {
            let a = Double(samples[j].isFinite ? samples[j] : 0), b = Double(samples[w - span + j].isFinite ? samples[w - span + j] : 0)
            first += a * a
            second += b * b
        }
        guard first > 0, second > 0 else { return rough }
        let decay = min(max(log(first / second) / Double(2 * (w - span)), -4 / Double(w)), 4 / Double(w))
        return analyse(samples, decay: decay) ?? rough
    }

    /// The analysis with an amplitude decay (per sample) undone first.
    private func analyse(_ samples: UnsafePointer<Float>, decay: Double) -> (hz: Double, clarity: Double)? {
        let w = window
        // Autocorrelation r(τ) by FFT: zero-padded to twice the window, |X|², back.
        fft.real.update(repeating: 0, count: 2 * w)
        var energy = 0.0
        for j in 0..<w {
            let x = Float(Double(samples[j].isFinite ? samples[j] : 0) * exp(decay * Double(j - w / 2)))
            fft.real[j] = x
            energy += Double(x) * Double(x)
        }
        guard energy > 1e-12 * Double(w) else { return nil }
        // (A copy of the window for m(τ), which the transform's buffer will not hold.)
        window2.update(from: fft.real, count: w)
        fft.forward()
        for b in 0...w {
            let re = fft.complex[2 * b], im = fft.complex[2 * b + 1]
            fft.complex[2 * b] = re * re + im * im
            fft.complex[2 * b + 1] = 0
        }
        fft.inverse()
        let scale = 1 / Double(2 * w)
        // m(τ) = Σ x_j² + x_{j+τ}² over the overlap, shrinking by one square at each end per lag.
        var m = 2 * energy
        var highest = 0.0
        for tau in 0..<w {
            if tau > 0 {
                let a = Double(window2[tau - 1]), b = Double(window2[w - tau])
                m -= a * a + b * b
            }
            let r = Double(fft.real[tau]) * scale
            nsdf[tau] = m > 1e-12 ? 2 * r / m : 0
            if tau >= minimumLag && tau <= maximumLag { highest = max(highest, nsdf[tau]) }
        }
        guard highest >= PitchDetector.minimumClarity else { return nil }
        // Key maxima: the highest point of each positive lobe (after the first negative dip).
        var tau = 1
        while tau < maximumLag && nsdf[tau] > 0 { tau += 1 }   // past the zero-lag lobe
        var best: Int?
        while tau < maximumLag {
            while tau < maximumLag && nsdf[tau] <= 0 { tau += 1 }
            var peak = tau
            while tau < maximumLag && nsdf[tau] > 0 {
                if nsdf[tau] > nsdf[peak] { peak = tau }
                tau += 1
            }
            if peak >= minimumLag && peak <= maximumLag && nsdf[peak] >= PitchDetector.threshold * highest {
                best = peak
                break
            }
        }
        guard let peak = best, peak > 0, peak < w - 1 else { return nil }
        // A parabola through the peak and its neighbours.
        let a = nsdf[peak - 1], b = nsdf[peak], c = nsdf[peak + 1]
        let denominator = a - 2 * b + c
        let offset = denominator < 0 ? 0.5 * (a - c) / denominator : 0
        let lag = Double(peak) + offset
        let clarity = b - 0.25 * (a - c) * offset
        let hz = sampleRate / lag
        guard hz >= PitchDetector.lowest * 0.97, hz <= PitchDetector.highest * 1.03 else { return nil }
        return (hz, min(clarity, 1))
    }
}

/// The tuner's ear on the audio thread: while the tuner listens, each block of the input (after
/// the input gain) is copied into a ring the tuner reads from its own thread; while it mutes,
/// the chain's output glides to silence. Lock-free both ways.
public final class TunerTap: @unchecked Sendable {
    /// Enough for a refined low note's look-back at 96 kHz.
    public static let capacity = 32_768
    private let ring: UnsafeMutablePointer<Float>
    private let written = Atomic<Int>(0)
    private let listening = Atomic<Bool>(false)
    private let muting = Atomic<Bool>(false)

    public init() {
        ring = .allocate(capacity: TunerTap.capacity)
        ring.initialize(repeating: 0, count: TunerTap.capacity)
    }

    deinit { ring.deallocate() }

    /// Whether blocks are copied for the tuner, and whether the output is muted. Any thread.
    public var isListening: Bool {
        get { listening.load(ordering: .relaxed) }
        set { listening.store(newValue, ordering: .relaxed) }
    }
    public var isMuting: Bool {
        get { muting.load(ordering: .relaxed) }
        set { muting.store(newValue, ordering: .relaxed) }
    }

    /// Audio thread: keeps the block if the tuner listens.
    @inline(__always)
    func write(_ block: UnsafeMutableBufferPointer<Float>) {
        guard listening.load(ordering: .relaxed), let x = block.baseAddress else { return }
        let start = written.load(ordering: .relaxed)
        let mask = TunerTap.capacity - 1
        for i in 0..<block.count { ring[(start &+ i) & mask] = x[i] }
        written.store(start &+ block.count, ordering: .releasing)
    }

    /// The tuner's thread: the last `count` samples into `out`; false when the audio thread wrote
    /// over them while they were copied (try again at the next reading).
    public func latest(_ count: Int, into out: UnsafeMutablePointer<Float>) -> Bool {
        precondition(count <= TunerTap.capacity / 2)
        let end = written.load(ordering: .acquiring)
        let mask = TunerTap.capacity - 1
        for i in 0..<count { out[i] = ring[(end &- count &+ i) & mask] }
        return written.load(ordering: .acquiring) &- end <= TunerTap.capacity - count
    }

    /// Samples written so far (the tuner can tell whether audio is flowing).
    public var total: Int { written.load(ordering: .acquiring) }
}

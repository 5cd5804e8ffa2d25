import Foundation

/// A noise gate for a guitar's hum and pickup hiss between notes.
///
/// A peak detector (instant rise, 10 ms fall, a third of a millisecond at a time) watches the input. The gate opens when it rises
/// above `threshold_db` and only starts to close once it has stayed below the threshold minus
/// `hysteresis_db` for `hold_ms`, so a decaying note that hovers around the threshold is not
/// chopped. A note out of quiet (the detector below the closing level until it crosses the
/// threshold) opens the gate at once, keeping the pick's transient whole; any other opening (the
/// threshold turned down under a held note, a note played again during the release) takes 1 ms,
/// so it cannot click. Closing takes `release_ms`. Both follow a raised cosine. Closed, the gain is exactly 0: below the threshold
/// the output is silent, not quiet.
///
/// Threads: `init`/`prepare` off the audio thread; `process`/`reset` on it, allocation-free.
public final class NoiseGate: AudioEffect {
    let parameters: ParameterStore
    private var sampleRate: Double = 48_000
    /// The detector's level (linear) and its fall per sample.
    private var envelope: Float = 0
    private var envelopeFall: Float = 0.998
    /// Where the gain stands between closed (0) and open (1); the gain is a raised cosine of it.
    private var position: Float = 1
    private var open = true
    /// Samples left before a gate whose input fell below the closing level starts to close.
    private var holdLeft = 0
    private var thresholdGain = DecibelGain(), hysteresisGain = DecibelGain()
    private var attackStep: Float = 1 / 48
    /// The detector's fall over a whole sub-block.
    private var subBlockFall: Float = 0.97

    /// The detector and the gate's state move a sub-block (1/3 ms) at a time; the gain, sample
    /// by sample.
    static let subBlock = 16

    /// How long the gate takes to open.
    static let attackTime = 0.001
    /// How fast the detector falls (time constant).
    static let detectorFall = 0.010

    /// Its parameters, looked up here, off the audio thread (a static's first use allocates).
    private let threshold = Parameter.gateThreshold, release = Parameter.gateRelease
    private let hold = Parameter.gateHold, hysteresis = Parameter.gateHysteresis

    public init(parameters: ParameterStore) {
        self.parameters = parameters
    }

    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        attackStep = Float(1 / (NoiseGate.attackTime * sampleRate))
        envelopeFall = Float(exp(-1 / (NoiseGate.detectorFall * sampleRate)))
        subBlockFall = Float(exp(-Double(NoiseGate.subBlock) / (NoiseGate.detectorFall * sampleRate)))
        reset()
    }

    /// Open, as if a note had just been played: switched on under a held note, the gate lets it
    /// ring (and closes after the hold and release if the input is quiet).
    public func reset() {
        envelope = 0
        position = 1
        open = true
        holdLeft = holdSamples()
    }

    private func holdSamples() -> Int { Int(Double(parameters.load(hold)) / 1000 * sampleRate) }

    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        let openLevel = thresholdGain(parameters.load(threshold))
        let closeLevel = openLevel * hysteresisGain(-parameters.load(hysteresis))
        let holdLength = holdSamples()
        let releaseStep = Float(1000 / (Double(parameters.load(release)) * sampleRate))
        // Judged against this block's levels, so that a threshold turned down under a held
        // note opens the gate in 1 ms, not at once.
        var quiet = envelope < closeLevel
        guard let base = block.baseAddress else { return }
        var start = 0
        while start < block.count {
            let n = min(NoiseGate.subBlock, block.count - start)
            let x = base + start
            // The detector, a sub-block at a time: its peak (a non-finite sample read as silence:
            // nothing to pass on and no state to spoil), then a decay over the sub-block.
            // One integer scan (it vectorises): the largest magnitude's bits, which reach the
            // exponent's all-ones only for ±∞ or NaN; then, rarely, the bad samples zeroed.
            var bits = largestMagnitudeBits(UnsafeMutableBufferPointer(start: x, count: n))
            if bits >= 0x7f80_0000 {
                for i in 0..<n where !x[i].isFinite { x[i] = 0 }
                bits = largestMagnitudeBits(UnsafeMutableBufferPointer(start: x, count: n))
            }
            let peak = Float(bitPattern: bits)
            envelope = max(peak, envelope * (n == NoiseGate.subBlock ? subBlockFall : pow(envelopeFall, Float(n))))
            if envelope >= closeLevel {
                if envelope >= openLevel {
                    // A note out of quiet: open at once. The input steps here itself (the pick),
                    // so nothing is added but the pick's first millisecond is kept.
                    if quiet { position = 1 }
                    open = true
                }
                quiet = false
                holdLeft = holdLength
            } else {
                quiet = true
                if holdLeft > 0 { holdLeft = max(holdLeft - n, 0) } else { open = false }
            }
            // Fully open or fully closed (nearly always) costs nothing more.
            if open && position >= 1 {
            } else if !open && position <= 0 {
                for i in 0..<n { x[i] = 0 }
            } else {
                let step = open ? attackStep : -releaseStep
                for i in 0..<n {
                    position = min(max(position + step, 0), 1)
                    x[i] *= NoiseGate.gain(position)
                }
            }
            start += n
        }
        // Below -300 dB the detector has nothing left to say; keep it out of denormals.
        if envelope < 1e-15 { envelope = 0 }
    }

    /// ½ − ½·cos πp = cos² π(p/2 − ½): 0 and 1 exactly at the ends, flat at both.
    @inline(__always)
    static func gain(_ p: Float) -> Float {
        if p <= 0 { return 0 }
        if p >= 1 { return 1 }
        let c = Tremolo.cosPi(0.5 * p - 0.5)
        return c * c
    }
}

extension PedalKind {
    /// Threshold and release, with hold and hysteresis; first on the board, before the drive
    /// raises the noise with the note.
    public static let gate = PedalKind(
        id: "gate", name: "Noise Gate",
        controls: [
            PedalControl("threshold_db", "Threshold", .decibels, -90...0, default: -60),
            PedalControl("release_ms", "Release", .milliseconds, 20...2000, default: 120, .logarithmic),
            PedalControl("hold_ms", "Hold", .milliseconds, 0...500, default: 40),
            PedalControl("hysteresis_db", "Hysteresis", .decibels, 0...20, default: 6),
        ],
        // Threshold and release big at the top, hold and hysteresis smaller below, either side of the LED.
        face: PedalFace(places: [
            .init("threshold_db", x: 6, y: 14, diameter: 48, width: 76),
            .init("release_ms", x: 114, y: 14, diameter: 48),
            .init("hold_ms", x: 20, y: 90, diameter: 34, width: 60),
            .init("hysteresis_db", x: 104, y: 90, diameter: 34, width: 72),
        ], artwork: .init(body: "#d04a7c", dark: "#8a1f4b", text: "#fff0f6", accent: "#ffb3d0", name: "NOISE GATE", subtitle: "HUM SILENCER")),
        make: { NoiseGate(parameters: $0.parameters) })
}

extension Parameter {
    public static let gateEnabled = PedalKind.gate.enabledParameter
    public static let gateThreshold = PedalKind.gate.parameter("threshold_db")
    public static let gateRelease = PedalKind.gate.parameter("release_ms")
    public static let gateHold = PedalKind.gate.parameter("hold_ms")
    public static let gateHysteresis = PedalKind.gate.parameter("hysteresis_db")
}

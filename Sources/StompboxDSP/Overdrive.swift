import Foundation

/// A soft-clipping overdrive: pre-gain (drive 0…1 → 0…+40 dB), a smooth asymmetric saturation
/// curve run at 4× the sample rate, a DC blocker, a tone low-pass (800 Hz…8 kHz, log travel)
/// and an output level.
///
/// The curve is a rational tanh approximation that reaches ±1 with zero slope at ±3, so its
/// output is bounded whatever the drive; a small bias makes it asymmetric (even harmonics, as
/// a tube or a diode pair with unequal sides) and the DC blocker removes the offset that adds.
/// Oversampling uses one 48-tap Kaiser-windowed FIR as a polyphase interpolator and again as
/// the decimator, so harmonics above the audio band are filtered instead of folding back.
///
/// Threads: `init` and `prepare` off the audio thread (they allocate); `process` and `reset`
/// on the audio thread, allocation- and lock-free.
public final class Overdrive: AudioEffect {
    let parameters: ParameterStore
    /// 4 (normal) or 1 (the same curve without oversampling, for measurements).
    public let oversamplingFactor: Int

    /// Asymmetry of the curve: the input is shifted by this before clipping.
    static let bias: Float = 0.2
    static let tapCount = 48
    static let tapsPerPhase = tapCount / 4
    /// Tone filter coefficients are recomputed every this many samples while the knob moves.
    static let subBlock = 32

    private var sampleRate: Double = 48_000
    private var drive = SmoothedValue(10)
    private var level = SmoothedValue(0.5)
    private var tone = SmoothedValue(0.5)

    /// Interpolator taps by phase: element j holds 4·h[4j + p] for phases p = 0…3.
    private let upTaps: UnsafeMutablePointer<SIMD4<Float>>
    /// Decimator taps h[0…47] (symmetric, sum 1).
    private let downTaps: UnsafeMutablePointer<Float>
    /// Input history, newest first, written twice so 12 contiguous values are always readable.
    private let upHistory: UnsafeMutablePointer<Float>
    private var upIndex = 0
    /// Oversampled curve output, oldest first, written twice (96 values) for a contiguous window.
    private let downHistory: UnsafeMutablePointer<Float>
    private var downIndex = 0

    private var dcInput: Float = 0
    private var dcOutput: Float = 0
    private var dcPole: Float = 0.9987
    /// Tone filter: a state-variable low-pass (trapezoidal, so it stays well-behaved while
    /// its cutoff moves), Q = 0.707.
    private var toneA1: Float = 0, toneA2: Float = 0, toneA3: Float = 0
    private var toneState1: Float = 0, toneState2: Float = 0

    /// `oversamplingFactor` 4 is the pedal; 1 runs the identical curve at the base rate.
    public init(parameters: ParameterStore, oversamplingFactor: Int = 4) {
        precondition(oversamplingFactor == 1 || oversamplingFactor == 4, "oversampling is 1 or 4")
        self.parameters = parameters
        self.oversamplingFactor = oversamplingFactor
        upTaps = .allocate(capacity: Overdrive.tapsPerPhase)
        upTaps.initialize(repeating: .zero, count: Overdrive.tapsPerPhase)
        downTaps = .allocate(capacity: Overdrive.tapCount)
        downTaps.initialize(repeating: 0, count: Overdrive.tapCount)
        upHistory = .allocate(capacity: 2 * Overdrive.tapsPerPhase)
        upHistory.initialize(repeating: 0, count: 2 * Overdrive.tapsPerPhase)
        downHistory = .allocate(capacity: 2 * Overdrive.tapCount)
        downHistory.initialize(repeating: 0, count: 2 * Overdrive.tapCount)
        designFilter(sampleRate: sampleRate)
        updateTone(0.5)
    }

    deinit {
        upTaps.deallocate()
        downTaps.deallocate()
        upHistory.deallocate()
        downHistory.deallocate()
    }

    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        drive.prepare(sampleRate: sampleRate)
        level.prepare(sampleRate: sampleRate)
        tone.prepare(sampleRate: sampleRate)
        dcPole = Float(1 - 2 * Double.pi * 8 / sampleRate)
        designFilter(sampleRate: sampleRate)
        reset()
    }

    public func reset() {
        drive.snap(to: Overdrive.driveGain(parameters.load(.overdriveDrive)))
        level.snap(to: decibelsToGain(parameters.load(.overdriveLevel)))
        tone.snap(to: parameters.load(.overdriveTone))
        updateTone(tone.current)
        upHistory.update(repeating: 0, count: 2 * Overdrive.tapsPerPhase)
        downHistory.update(repeating: 0, count: 2 * Overdrive.tapCount)
        upIndex = 0
        downIndex = 0
        dcInput = 0
        dcOutput = 0
        toneState1 = 0
        toneState2 = 0
    }

    /// drive 0…1 → linear pre-gain 1…100 (0…+40 dB).
    static func driveGain(_ drive: Float) -> Float { decibelsToGain(40 * drive) }

    /// The saturation curve: x·(27 + x²)/(27 + 9x²) inside ±3, ±1 outside (continuous slope).
    @inline(__always)
    static func saturate(_ x: Float) -> Float {
        let v = min(max(x, -3), 3)
        let v2 = v * v
        return v * (27 + v2) / (27 + 9 * v2)
    }

    @inline(__always)
    static func saturate(_ x: SIMD4<Float>) -> SIMD4<Float> {
        let v = x.clamped(lowerBound: SIMD4(repeating: -3), upperBound: SIMD4(repeating: 3))
        let v2 = v * v
        return v * (27 + v2) / (27 + 9 * v2)
    }

    /// The asymmetric curve, 0 at 0.
    @inline(__always)
    static func shape(_ x: Float) -> Float { saturate(x + bias) - saturate(bias) }

    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        guard let base = block.baseAddress else { return }
        let p = parameters
        drive.setTarget(Overdrive.driveGain(p.load(.overdriveDrive)))
        level.setTarget(decibelsToGain(p.load(.overdriveLevel)))
        tone.setTarget(p.load(.overdriveTone))

        var start = 0
        while start < block.count {
            let n = min(Overdrive.subBlock, block.count - start)
            if tone.isRamping { updateTone(tone.skip(n)) }
            let chunk = base + start
            if oversamplingFactor == 4 {
                saturateOversampled(chunk, n)
            } else {
                for i in 0..<n {
                    chunk[i] = Overdrive.shape(Overdrive.conditioned(chunk[i]) * drive.next())
                }
            }
            postProcess(chunk, n)
            start += n
        }
        // Let decaying states reach exact zero instead of lingering as denormals.
        dcInput = flushed(dcInput)
        dcOutput = flushed(dcOutput)
        toneState1 = flushed(toneState1)
        toneState2 = flushed(toneState2)
    }

    /// Non-finite input becomes silence; absurd levels are bounded so the filters stay finite.
    @inline(__always)
    private static func conditioned(_ x: Float) -> Float {
        x.isFinite ? min(max(x, -64), 64) : 0
    }

    /// Upsample ×4 (polyphase), apply the curve to the four values at once, decimate.
    @inline(__always)
    private func saturateOversampled(_ chunk: UnsafeMutablePointer<Float>, _ n: Int) {
        let phases = Overdrive.tapsPerPhase
        let taps = Overdrive.tapCount
        let bias = SIMD4<Float>(repeating: Overdrive.bias)
        let offset = SIMD4<Float>(repeating: Overdrive.saturate(Overdrive.bias))
        for i in 0..<n {
            let x = Overdrive.conditioned(chunk[i]) * drive.next()
            upIndex = upIndex == 0 ? phases - 1 : upIndex - 1
            upHistory[upIndex] = x
            upHistory[upIndex + phases] = x
            let window = upHistory + upIndex
            var up = SIMD4<Float>.zero
            for j in 0..<phases { up += upTaps[j] * window[j] }

            let shaped = Overdrive.saturate(up + bias) - offset
            for lane in 0..<4 {
                downIndex = downIndex == taps - 1 ? 0 : downIndex + 1
                downHistory[downIndex] = shaped[lane]
                downHistory[downIndex + taps] = shaped[lane]
            }
            // Oldest first from downIndex + 1; the taps are symmetric, so order is immaterial.
            let raw = UnsafeRawPointer(downHistory + downIndex + 1)
            let coefficients = UnsafeRawPointer(downTaps)
            var sum = SIMD4<Float>.zero
            for j in 0..<(taps / 4) {
                let w = raw.loadUnaligned(fromByteOffset: 16 * j, as: SIMD4<Float>.self)
                let h = coefficients.loadUnaligned(fromByteOffset: 16 * j, as: SIMD4<Float>.self)
                sum += w * h
            }
            chunk[i] = sum.sum()
        }
    }

    /// DC blocker, tone low-pass, output level.
    @inline(__always)
    private func postProcess(_ chunk: UnsafeMutablePointer<Float>, _ n: Int) {
        let pole = dcPole
        let a1 = toneA1, a2 = toneA2, a3 = toneA3
        var x1 = dcInput, y1 = dcOutput, s1 = toneState1, s2 = toneState2
        for i in 0..<n {
            let x = chunk[i]
            let y = x - x1 + pole * y1
            x1 = x
            y1 = y
            let v3 = y - s2
            let v1 = a1 * s1 + a2 * v3
            let v2 = s2 + a2 * s1 + a3 * v3
            s1 = 2 * v1 - s1
            s2 = 2 * v2 - s2
            chunk[i] = v2 * level.next()
        }
        dcInput = x1
        dcOutput = y1
        toneState1 = s1
        toneState2 = s2
    }

    /// tone 0…1 → cutoff 800 Hz…8 kHz on a log travel.
    static func toneFrequency(_ tone: Float) -> Double { 800 * pow(10, Double(tone)) }

    private func updateTone(_ value: Float) {
        let f = min(Overdrive.toneFrequency(value), 0.45 * sampleRate)
        let g = tan(Double.pi * f / sampleRate)
        let k = 2.0.squareRoot() // 1/Q
        let a1 = 1 / (1 + g * (g + k))
        toneA1 = Float(a1)
        toneA2 = Float(g * a1)
        toneA3 = Float(g * g * a1)
    }

    /// A Kaiser-windowed sinc low-pass with its −6 dB point at 20/48 of the base rate, designed
    /// at the oversampled rate: it removes the images above the base band before the curve and
    /// everything that would fold back below the base Nyquist after it.
    private func designFilter(sampleRate: Double) {
        let count = Overdrive.tapCount
        let cutoff = (20.0 / 48.0) / 4 // × base rate / oversampled rate
        let beta = 7.0
        var h = [Double](repeating: 0, count: count)
        let middle = Double(count - 1) / 2
        for i in 0..<count {
            let t = Double(i) - middle
            let sinc = t == 0 ? 2 * cutoff : sin(2 * Double.pi * cutoff * t) / (Double.pi * t)
            let r = t / middle
            h[i] = sinc * besselI0(beta * (1 - r * r).squareRoot()) / besselI0(beta)
        }
        let sum = h.reduce(0, +)
        for i in 0..<count { downTaps[i] = Float(h[i] / sum) }
        for j in 0..<Overdrive.tapsPerPhase {
            upTaps[j] = SIMD4((0..<4).map { Float(4 * h[4 * j + $0] / sum) })
        }
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

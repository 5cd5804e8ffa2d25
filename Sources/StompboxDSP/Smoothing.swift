import Foundation

/// A parameter ramp: the audio thread sets a new target once per block and reads one value per
/// sample; a change travels linearly over `rampTime` (about 20 ms), so a knob jump never clicks.
public struct SmoothedValue {
    public private(set) var current: Float
    public private(set) var target: Float
    private var step: Float = 0
    private var remaining = 0
    private var rampSamples = 960

    public init(_ value: Float) {
        current = value
        target = value
    }

    /// Called from `prepare`.
    public mutating func prepare(sampleRate: Double, rampTime: Double = 0.02) {
        rampSamples = max(1, Int(sampleRate * rampTime))
        snap(to: target)
    }

    /// Jumps to `value` at once (reset, first block).
    public mutating func snap(to value: Float) {
        current = value
        target = value
        remaining = 0
        step = 0
    }

    /// Starts a ramp to `value` unless it is already the target.
    @inline(__always)
    public mutating func setTarget(_ value: Float) {
        guard value != target else { return }
        target = value
        remaining = rampSamples
        step = (target - current) / Float(rampSamples)
    }

    public var isRamping: Bool { remaining > 0 }

    /// The value for the next sample.
    @inline(__always)
    public mutating func next() -> Float {
        if remaining > 0 {
            remaining -= 1
            current = remaining == 0 ? target : current + step
        }
        return current
    }

    /// Multiplies `x[0..<n]` by the value for each sample (one constant while it holds still).
    @inline(__always)
    public mutating func scale(_ x: UnsafeMutablePointer<Float>, count n: Int) {
        if isRamping {
            for i in 0..<n { x[i] *= next() }
        } else {
            let g = current
            for i in 0..<n { x[i] *= g }
        }
    }

    /// Advances `count` samples at once and returns the value reached (for per-block use).
    @inline(__always)
    public mutating func skip(_ count: Int) -> Float {
        if remaining > 0 {
            let n = min(count, remaining)
            remaining -= n
            current = remaining == 0 ? target : current + step * Float(n)
        }
        return current
    }
}

@inline(__always)
public func decibelsToGain(_ db: Float) -> Float { pow(10, db / 20) }

/// `decibelsToGain` for a knob read once per block: the last level's gain is kept and `pow`
/// runs only when the level changes (seven `pow` a block for a full board otherwise).
struct DecibelGain {
    private var decibels = Float.nan
    private var gain: Float = 1

    @inline(__always)
    mutating func callAsFunction(_ db: Float) -> Float {
        if db != decibels {
            decibels = db
            gain = decibelsToGain(db)
        }
        return gain
    }
}

@inline(__always)
public func gainToDecibels(_ gain: Float) -> Float { gain > 1e-10 ? 20 * log10(gain) : -200 }

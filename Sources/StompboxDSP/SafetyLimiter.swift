import Foundation

/// The last stage: a peak limiter with instant attack and a ~100 ms release that keeps every
/// sample within ±`ceiling`, followed by a hard bound at ±1.0 as the final guarantee.
public struct SafetyLimiter {
    public var ceiling: Float = 0.98
    private var gain: Float = 1
    private var releasePerSample: Float = 1

    public init() {}

    public mutating func prepare(sampleRate: Double, releaseTime: Double = 0.1) {
        // Gain recovers by a factor that reaches ~-60 dB of the distance in `releaseTime`.
        releasePerSample = Float(exp(-6.9 / (sampleRate * releaseTime)))
        reset()
    }

    public mutating func reset() { gain = 1 }

    /// Audio thread. Returns the output's peak (for the meters).
    @inline(__always) @discardableResult
    public mutating func process(_ block: UnsafeMutableBufferPointer<Float>) -> Float {
        // Most blocks need nothing: not limiting, nothing over the ceiling, all finite. One
        // vectorisable scan finds out; the per-sample recursion runs only when it must.
        let peak = largestMagnitudeBits(block)
        if gain == 1 && peak <= ceiling.bitPattern { return Float(bitPattern: peak) }

        let ceiling = self.ceiling
        let release = releasePerSample
        var g = gain
        for i in block.indices {
            var x = block[i]
            if !x.isFinite { x = 0 }
            // Recover towards unity, then duck at once if this sample would exceed the ceiling.
            g = 1 - (1 - g) * release
            let level = abs(x) * g
            if level > ceiling { g = ceiling / abs(x) }
            x *= g
            block[i] = min(max(x, -1), 1)
        }
        gain = g
        return Float(bitPattern: largestMagnitudeBits(block))
    }
}

/// The bit pattern of the largest |x| in `block`. Non-negative floats order like their bit
/// patterns, and NaN and ±∞ come above every finite value, so one integer maximum (which
/// vectorises, unlike a floating-point one) tells both the peak and whether all are finite.
@inline(__always)
func largestMagnitudeBits(_ block: UnsafeMutableBufferPointer<Float>) -> UInt32 {
    var peak: UInt32 = 0
    for x in block { peak = max(peak, x.bitPattern & 0x7fff_ffff) }
    return peak
}

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

    /// Audio thread.
    @inline(__always)
    public mutating func process(_ block: UnsafeMutableBufferPointer<Float>) {
        // Most blocks need nothing: not limiting, nothing over the ceiling, all finite. One
        // vectorisable scan finds out; the per-sample recursion runs only when it must.
        var peak: Float = 0
        var poison: Float = 0
        for x in block {
            let a = abs(x)
            peak = a > peak ? a : peak
            poison += x * 0 // NaN if any sample is NaN or infinite
        }
        if gain == 1 && peak <= ceiling && poison == 0 { return }

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
    }
}

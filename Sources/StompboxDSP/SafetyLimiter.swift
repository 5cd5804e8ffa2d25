import Foundation

/// The last stage: a peak limiter with instant attack and a ~100 ms release that keeps every
/// sample within ±`ceiling`, followed by a hard bound at ±1.0 as the final guarantee.
public struct SafetyLimiter {
    public var ceiling: Float = 0.98
    private var gain: Float = 1
    private var releasePerSample: Float = 1
    /// The lowest gain the last block was played at (1: not limiting).
    public private(set) var lowestGain: Float = 1
    /// Whether the last block had to duck: a sample would have gone over the ceiling.
    public private(set) var ducked = false

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
        lowestGain = gain
        ducked = false
        if gain == 1 && peak <= ceiling.bitPattern { return Float(bitPattern: peak) }

        let ceiling = self.ceiling
        let release = releasePerSample
        if peak <= ceiling.bitPattern {
            // Recovering only: every sample finite and within the ceiling, so nothing ducks
            // (|x|·g ≤ |x|) and the gain just follows its release, g = 1 − (1 − g)·rⁱ. Four
            // samples at a time: no per-sample recursion through the ducking test.
            releaseOnly(block)
            return Float(bitPattern: largestMagnitudeBits(block))
        }
        var g = gain, lowest = gain, duck = false
        for i in block.indices {
            var x = block[i]
            if !x.isFinite { x = 0 }
            // Recover towards unity, then duck at once if this sample would exceed the ceiling.
            g = 1 - (1 - g) * release
            let level = abs(x) * g
            if level > ceiling { g = ceiling / abs(x); duck = true }
            lowest = min(lowest, g)
            x *= g
            block[i] = min(max(x, -1), 1)
        }
        gain = settled(g)
        lowestGain = lowest
        ducked = duck
        return Float(bitPattern: largestMagnitudeBits(block))
    }

    /// Both sides of a stereo output with one gain, from the louder side (the image does not
    /// move while it limits). Audio thread. Returns the output's peak (for the meters).
    @inline(__always) @discardableResult
    public mutating func process(_ left: UnsafeMutableBufferPointer<Float>, _ right: UnsafeMutableBufferPointer<Float>) -> Float {
        precondition(left.count == right.count)
        let peak = max(largestMagnitudeBits(left), largestMagnitudeBits(right))
        lowestGain = gain
        ducked = false
        if gain == 1 && peak <= ceiling.bitPattern { return Float(bitPattern: peak) }

        if peak <= ceiling.bitPattern {
            // Recovering only: the same release on both sides.
            let start = gain
            releaseOnly(left)
            let reached = gain
            gain = start
            releaseOnly(right)
            gain = reached
            return Float(bitPattern: max(largestMagnitudeBits(left), largestMagnitudeBits(right)))
        }
        let ceiling = self.ceiling
        let release = releasePerSample
        var g = gain, lowest = gain, duck = false
        for i in left.indices {
            var x = left[i], y = right[i]
            if !x.isFinite { x = 0 }
            if !y.isFinite { y = 0 }
            g = 1 - (1 - g) * release
            let louder = max(abs(x), abs(y))
            if louder * g > ceiling { g = ceiling / louder; duck = true }
            lowest = min(lowest, g)
            left[i] = min(max(x * g, -1), 1)
            right[i] = min(max(y * g, -1), 1)
        }
        gain = settled(g)
        lowestGain = lowest
        ducked = duck
        return Float(bitPattern: max(largestMagnitudeBits(left), largestMagnitudeBits(right)))
    }

    /// A gain within 1e-6 of unity is unity (−0.00001 dB): the release on its own would stop
    /// one step short of 1 (1 − 2⁻²⁴ times r rounds back to itself) and keep the per-sample
    /// path running for ever.
    @inline(__always)
    private func settled(_ g: Float) -> Float { 1 - g < 1e-6 ? 1 : g }

    private mutating func releaseOnly(_ block: UnsafeMutableBufferPointer<Float>) {
        guard let x = block.baseAddress else { return }
        let r = releasePerSample
        let n = block.count
        // Distance from unity for the next four samples: (1 − g)·(r, r², r³, r⁴).
        var h = (1 - gain) * SIMD4<Float>(r, r * r, r * r * r, r * r * r * r)
        let r4 = SIMD4<Float>(repeating: r * r * r * r)
        let one = SIMD4<Float>(repeating: 1)
        var i = 0
        while i + 4 <= n {
            let v = UnsafeRawPointer(x + i).loadUnaligned(as: SIMD4<Float>.self)
            let y = (v * (one - h)).clamped(lowerBound: -one, upperBound: one)
            UnsafeMutableRawPointer(x + i).storeBytes(of: y, as: SIMD4<Float>.self)
            h *= r4
            i += 4
        }
        var d = h[0] / r // the distance reached after the last sample done
        while i < n {
            d *= r
            x[i] = min(max(x[i] * (1 - d), -1), 1)
            i += 1
        }
        gain = settled(1 - d)
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

import Foundation

/// Room-acoustics measurements for reverb tests (ISO 3382 style, simplified).
extension Measure {
    /// Schroeder's energy decay curve in dB: the backward-integrated squared impulse response,
    /// 0 dB at the start (−infinity where nothing is left).
    public static func energyDecayCurve(_ impulseResponse: [Float]) -> [Double] {
        var remaining = 0.0
        var curve = [Double](repeating: 0, count: impulseResponse.count)
        for i in stride(from: impulseResponse.count - 1, through: 0, by: -1) {
            remaining += Double(impulseResponse[i]) * Double(impulseResponse[i])
            curve[i] = remaining
        }
        let total = max(curve.first ?? 0, .leastNonzeroMagnitude)
        return curve.map { $0 > 0 ? 10 * log10($0 / total) : -.infinity }
    }

    /// RT60 in seconds: a least-squares line through the energy decay curve between `upper` and
    /// `lower` dB (−5 and −35: "T30"), extrapolated to −60 dB. Nil if the curve never reaches
    /// `lower` (the response was cut too short) or does not decay.
    public static func decayTime(_ impulseResponse: [Float], sampleRate: Double = 48_000,
                                 upper: Double = -5, lower: Double = -35) -> Double? {
        let curve = energyDecayCurve(impulseResponse)
        guard let first = curve.firstIndex(where: { $0 <= upper }),
              let last = curve.firstIndex(where: { $0 <= lower }), last > first + 2 else { return nil }
        var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
        let n = Double(last - first + 1)
        for i in first...last {
            let t = Double(i) / sampleRate
            sx += t; sy += curve[i]; sxx += t * t; sxy += t * curve[i]
        }
        let slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
        guard slope < 0 else { return nil }
        return -60 / slope
    }

    /// The largest absolute sample in `x[range]`, in dB re 1.0 (−200 for silence).
    public static func peakDecibels(_ x: ArraySlice<Float>) -> Float {
        decibels(peak(x))
    }

    /// Kurtosis E[x⁴]/E[x²]² of a stretch: 3 for Gaussian noise (a dense reverb tail), far
    /// above for a few isolated echoes.
    public static func kurtosis(_ x: ArraySlice<Float>) -> Double {
        var m2 = 0.0, m4 = 0.0
        for v in x { let s = Double(v) * Double(v); m2 += s; m4 += s * s }
        let n = Double(x.count)
        guard m2 > 0 else { return .infinity }
        return (m4 / n) / ((m2 / n) * (m2 / n))
    }
}

/// Offline filters for analysing test output (not for the audio path).
public enum AnalysisFilter {
    /// A second-order Butterworth high-pass (RBJ cookbook), applied `passes` times.
    public static func highPass(_ x: [Float], cutoff: Double, sampleRate: Double = 48_000, passes: Int = 2) -> [Float] {
        biquad(x, cutoff: cutoff, sampleRate: sampleRate, passes: passes, highPass: true)
    }

    /// A second-order Butterworth low-pass (RBJ cookbook), applied `passes` times.
    public static func lowPass(_ x: [Float], cutoff: Double, sampleRate: Double = 48_000, passes: Int = 2) -> [Float] {
        biquad(x, cutoff: cutoff, sampleRate: sampleRate, passes: passes, highPass: false)
    }

    private static func biquad(_ x: [Float], cutoff: Double, sampleRate: Double, passes: Int, highPass: Bool) -> [Float] {
        let w = 2 * Double.pi * cutoff / sampleRate
        let alpha = sin(w) / (2 * 0.70710678)
        let cw = cos(w)
        let a0 = 1 + alpha
        let b0 = (highPass ? (1 + cw) / 2 : (1 - cw) / 2) / a0
        let b1 = (highPass ? -(1 + cw) : (1 - cw)) / a0
        let b2 = b0
        let a1 = -2 * cw / a0, a2 = (1 - alpha) / a0
        var signal = x.map(Double.init)
        for _ in 0..<max(1, passes) {
            var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
            for i in signal.indices {
                let x0 = signal[i]
                let y0 = b0 * x0 + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
                x2 = x1; x1 = x0; y2 = y1; y1 = y0
                signal[i] = y0
            }
        }
        return signal.map { Float($0) }
    }
}

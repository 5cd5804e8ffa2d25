import Foundation

/// Power spectra for measurements: a radix-2 FFT behind a 4-term Blackman–Harris window
/// (side lobes below −92 dB, main lobe ±4 bins), so a component 90 dB down stays visible
/// beside a strong one.
public enum Spectrum {
    /// |X[k]|² for k = 0…n/2 of the first n samples (n = the largest power of two that fits).
    public static func power(_ x: ArraySlice<Float>) -> [Double] {
        var n = 1
        while n * 2 <= x.count { n *= 2 }
        var re = [Double](repeating: 0, count: n)
        var im = [Double](repeating: 0, count: n)
        let start = x.startIndex
        for i in 0..<n {
            let t = 2 * Double.pi * Double(i) / Double(n)
            let w = 0.35875 - 0.48829 * cos(t) + 0.14128 * cos(2 * t) - 0.01168 * cos(3 * t)
            re[i] = Double(x[start + i]) * w
        }
        fft(&re, &im)
        return (0...n / 2).map { re[$0] * re[$0] + im[$0] * im[$0] }
    }

    /// In-place iterative radix-2 FFT (n a power of two).
    public static func fft(_ re: inout [Double], _ im: inout [Double]) {
        let n = re.count
        precondition(n.nonzeroBitCount == 1 && im.count == n)
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 { j ^= bit; bit >>= 1 }
            j |= bit
            if i < j { re.swapAt(i, j); im.swapAt(i, j) }
        }
        var length = 2
        while length <= n {
            let angle = -2 * Double.pi / Double(length)
            for k in 0..<length / 2 {
                let wr = cos(angle * Double(k)), wi = sin(angle * Double(k))
                var s = k
                while s < n {
                    let a = s, b = s + length / 2
                    let tr = re[b] * wr - im[b] * wi
                    let ti = re[b] * wi + im[b] * wr
                    re[b] = re[a] - tr; im[b] = im[a] - ti
                    re[a] += tr; im[a] += ti
                    s += length
                }
            }
            length *= 2
        }
    }

    /// Splits the spectrum of `x` into the energy at multiples of `fundamental` (its harmonics,
    /// each ±`halfWidth` bins, DC included) and everything else (noise, aliasing,
    /// intermodulation).
    public static func harmonicAndOtherEnergy(_ x: ArraySlice<Float>, fundamental: Double,
                                              sampleRate: Double = 48_000,
                                              halfWidth: Int = 5) -> (harmonic: Double, other: Double) {
        let p = power(x)
        let n = 2 * (p.count - 1)
        let binsPerHarmonic = fundamental * Double(n) / sampleRate
        var harmonic = 0.0, other = 0.0
        for (k, e) in p.enumerated() {
            let nearest = (Double(k) / binsPerHarmonic).rounded() * binsPerHarmonic
            if abs(Double(k) - nearest) <= Double(halfWidth) { harmonic += e } else { other += e }
        }
        return (harmonic, other)
    }
}

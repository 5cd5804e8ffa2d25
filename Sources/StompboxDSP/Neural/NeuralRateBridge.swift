import Foundation

/// Plays a network at the rate it was trained at inside a session at another rate: the session's
/// input is resampled to the model's rate, the network runs there, and its output is resampled
/// back, with a fixed latency of `latency` session samples (the output is the network's answer
/// to the input `latency` samples earlier, exactly; an identity model returns the input delayed).
///
/// Both conversions are band-limited interpolations with a Kaiser-windowed sinc (cut off at 92 %
/// of the lower rate's Nyquist frequency, 12 zero crossings each side, read from a table with
/// linear interpolation), evaluated at the exact fractional position of each sample, so any pair
/// of rates works and the latency is known to the sample. Written here rather than through
/// libsamplerate: that keeps this layer pure Swift, and its converters neither promise a fixed
/// delay nor an output count per block, which the chain's dry path and a pedal's one-in-one-out
/// block both need.
///
/// Threads: made off the audio thread (it allocates everything); `process` and `reset` on it,
/// allocation-free.
final class NeuralRateBridge {
    let sessionRate: Double
    let modelRate: Double
    /// Session samples per model sample.
    let ratio: Double
    /// The added delay, in session samples.
    let latency: Int
    /// The most model samples one session block of `maximumBlockSize` makes.
    let maximumModelBlock: Int

    private let down: SincTable
    private let up: SincTable
    private let input: UnsafeMutablePointer<Float>
    private let inputMask: Int
    private let middle: UnsafeMutablePointer<Float>
    private let middleMask: Int
    private let modelIn: UnsafeMutablePointer<Float>
    private let modelOut: UnsafeMutablePointer<Float>
    /// Session samples taken in, model samples made, session samples given out.
    private var taken = 0
    private var made = 0
    private var given = 0

    init(sessionRate: Double, modelRate: Double, maximumBlockSize: Int) {
        self.sessionRate = sessionRate
        self.modelRate = modelRate
        ratio = sessionRate / modelRate
        let cutoff = 0.92 * min(sessionRate, modelRate)
        down = SincTable(scale: cutoff / sessionRate)
        up = SincTable(scale: cutoff / modelRate)
        // A model sample is made once the input reaches half a kernel past it; a session sample
        // is read once the model's output reaches half a kernel past it (see `process`).
        latency = Int((Double(down.halfWidth) + Double(up.halfWidth + 1) * ratio).rounded(.up))
        let block = max(1, maximumBlockSize)
        maximumModelBlock = Int((Double(block) / ratio).rounded(.up)) + 2
        let inputSize = NeuralRateBridge.powerOfTwo(atLeast: block + 2 * down.halfWidth + 8)
        let middleSize = NeuralRateBridge.powerOfTwo(atLeast: maximumModelBlock + Int(Double(latency + block) / ratio) + 2 * up.halfWidth + 8)
        input = .allocate(capacity: inputSize)
        input.initialize(repeating: 0, count: inputSize)
        inputMask = inputSize - 1
        middle = .allocate(capacity: middleSize)
        middle.initialize(repeating: 0, count: middleSize)
        middleMask = middleSize - 1
        modelIn = .allocate(capacity: maximumModelBlock)
        modelIn.initialize(repeating: 0, count: maximumModelBlock)
        modelOut = .allocate(capacity: maximumModelBlock)
        modelOut.initialize(repeating: 0, count: maximumModelBlock)
    }

    deinit {
        input.deallocate()
        middle.deallocate()
        modelIn.deallocate()
        modelOut.deallocate()
        down.free()
        up.free()
    }

    private static func powerOfTwo(atLeast n: Int) -> Int {
        var size = 1
        while size < n { size <<= 1 }
        return size
    }

    /// Silence's history, the counts from zero. Allocation-free.
    func reset() {
        input.update(repeating: 0, count: inputMask + 1)
        middle.update(repeating: 0, count: middleMask + 1)
        taken = 0
        made = 0
        given = 0
    }

    /// `count` session samples of `x` through `network` (prepared for `maximumModelBlock`) into
    /// `y` (may be `x`). Audio thread.
    @inline(__always)
    func process(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count n: Int, network: any NeuralNetwork) {
        for i in 0..<n { input[(taken + i) & inputMask] = x[i] }
        taken += n
        // Every model sample whose kernel the input now covers.
        var m = 0
        let last = Double(taken - 1 - down.halfWidth)
        while Double(made + m) * ratio <= last && m < maximumModelBlock {
            modelIn[m] = down.interpolate(input, mask: inputMask, at: Double(made + m) * ratio)
            m += 1
        }
        if m > 0 {
            network.process(modelIn, modelOut, count: m)
            for i in 0..<m { middle[(made + i) & middleMask] = modelOut[i] }
            made += m
        }
        for j in 0..<n {
            y[j] = up.interpolate(middle, mask: middleMask, at: Double(given + j - latency) / ratio)
        }
        given += n
        // The counts stay exact enough in a Double for months: at 2^32 samples (a day at 48 kHz)
        // a position is off by 2^-20 of a sample.
    }
}

/// A Kaiser-windowed sinc low-pass for interpolating a signal at fractional positions: `scale`
/// is the cut-off over the source's rate divided by a half (1: the source's Nyquist frequency).
struct SincTable {
    /// Source samples on each side of the position that count.
    let halfWidth: Int
    /// Table points per source sample.
    static let resolution = 512
    static let zeroCrossings = 12.0
    static let beta = 8.6
    /// The kernel from 0 to `halfWidth` (and one point more), `resolution` points a sample.
    private let table: UnsafeMutablePointer<Float>

    init(scale: Double) {
        let g = min(1, max(scale, 0.01))
        let half = Int((SincTable.zeroCrossings / g).rounded(.up))
        halfWidth = half
        let count = half * SincTable.resolution + 2
        func besselI0(_ x: Double) -> Double {
            var sum = 1.0, term = 1.0, k = 1.0
            while term > 1e-12 * sum {
                term *= (x / (2 * k)) * (x / (2 * k))
                sum += term
                k += 1
            }
            return sum
        }
        let norm = besselI0(SincTable.beta)
        table = .allocate(capacity: count)
        for index in 0..<count {
            let t = Double(index) / Double(SincTable.resolution)
            guard t < Double(half) else { (table + index).initialize(to: 0); continue }
            let u = t / Double(half)
            let window = besselI0(SincTable.beta * (1 - u * u).squareRoot()) / norm
            let x = Double.pi * g * t
            let sinc = t == 0 ? 1 : sin(x) / x
            (table + index).initialize(to: Float(g * sinc * window))
        }
    }

    /// Frees the table (its owner's deinit).
    func free() { table.deallocate() }

    /// The signal in `ring` (indexed by sample number & `mask`) at `position`.
    @inline(__always)
    func interpolate(_ ring: UnsafeMutablePointer<Float>, mask: Int, at position: Double) -> Float {
        let base = Int(position.rounded(.down))
        let fraction = position - Double(base)
        let r = Double(SincTable.resolution)
        let h = table
        var sum: Float = 0
        for d in (1 - halfWidth)...halfWidth {
            let t = abs(fraction - Double(d)) * r
            let k = Int(t)
            let f = Float(t - Double(k))
            sum += (h[k] + f * (h[k + 1] - h[k])) * ring[(base + d) & mask]
        }
        return sum
    }
}

/// NAM's "Linear" architecture: a plain FIR filter over the input (its `receptive_field` taps,
/// the newest sample's first, then a bias when `bias` is true).
///
/// Short filters run directly; longer ones (an impulse response captured as a model, thousands
/// of taps) through the cabinet's partitioned FFT convolution, which costs a few nanoseconds a
/// sample where the direct form costs one per tap, with no added latency.
final class NAMLinear: NeuralNetwork {
    /// Above this many taps the FFT convolution is cheaper than the direct form.
    static let directLimit = 64

    let taps: [Float]
    let bias: Float
    /// The last `taps.count - 1` inputs, then room for a block (direct form).
    private var history: UnsafeMutablePointer<Float>
    private var capacity = 0
    /// The FFT form: the taps' spectra and the convolver's state, unretained for the audio thread.
    private let kernel: ConvolutionKernel?
    private var convolver: Convolver?
    private var kernelRef: Unmanaged<ConvolutionKernel>?
    private var convolverRef: Unmanaged<Convolver>?

    static func build(config: [String: Any], weights: [Float]) throws -> NAMLinear {
        let receptiveField = try NeuralJSON.int(config["receptive_field"], "receptive_field")
        let hasBias = try NeuralJSON.bool(config["bias"], "bias")
        guard receptiveField >= 1, receptiveField <= 1 << 20 else { throw NeuralModelProblem("has a receptive field of \(receptiveField) samples") }
        var reader = WeightReader(weights)
        let taps = Array(try reader.take(receptiveField))
        let bias = hasBias ? try reader.next() : 0
        try reader.finish()
        return NAMLinear(taps: taps, bias: bias)
    }

    init(taps: [Float], bias: Float) {
        self.taps = taps
        self.bias = bias
        history = .allocate(capacity: taps.count)
        history.initialize(repeating: 0, count: taps.count)
        capacity = 1
        if taps.count > NAMLinear.directLimit {
            let kernel = ConvolutionKernel(taps: taps)
            self.kernel = kernel
            kernelRef = Unmanaged.passUnretained(kernel)
        } else {
            kernel = nil
        }
    }

    deinit { history.deallocate() }

    var receptiveField: Int { taps.count }
    var isRecurrent: Bool { false }

    func prepare(maximumBlockSize: Int) {
        history.deallocate()
        capacity = max(1, maximumBlockSize)
        history = .allocate(capacity: taps.count - 1 + capacity)
        history.initialize(repeating: 0, count: taps.count - 1 + capacity)
        if kernel != nil {
            let made = Convolver(longestKernel: taps.count)
            convolver = made
            convolverRef = Unmanaged.passUnretained(made)
        }
    }

    func reset() {
        history.update(repeating: 0, count: taps.count - 1 + capacity)
        if let convolverRef { convolverRef._withUnsafeGuaranteedRef { $0.reset() } }
    }

    func process(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, count: Int) {
        if let convolverRef, let kernelRef {
            convolverRef._withUnsafeGuaranteedRef { convolver in
                kernelRef._withUnsafeGuaranteedRef { convolver.process(input, count: count, first: $0, into: output) }
            }
            if bias != 0 { for n in 0..<count { output[n] += bias } }
            return
        }
        let past = taps.count - 1
        (history + past).update(from: input, count: count)
        taps.withUnsafeBufferPointer { taps in
            for n in 0..<count {
                // history[past + n] is the input at n; taps[k] weighs the input k samples back.
                var sum = bias
                let newest = history + past + n
                for k in 0..<taps.count { sum += taps[k] * newest[-k] }
                output[n] = sum
            }
        }
        history.update(from: history + count, count: past)
    }
}

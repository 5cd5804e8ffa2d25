import Foundation

/// A model made ready to play in one session: its network prepared and prewarmed for the
/// session's block size, at its own rate (through a `NeuralRateBridge` when that is not the
/// session's), with its own input and output gains (the knobs plus what its file says:
/// loudness for normalizing, input level for calibration), smoothed over 20 ms.
///
/// Threads: made off the audio thread (`NeuralAmp.load`, `prepare`); then `process` and `reset`
/// on it, allocation-free. Released off it.
final class NeuralPlayer {
    let info: NeuralModelInfo
    let network: any NeuralNetwork
    /// The file it was read from.
    let file: String
    /// Nil when the model's rate is the session's.
    let bridge: NeuralRateBridge?
    /// The delay it adds, in session samples (its resampling's).
    var latency: Int { bridge?.latency ?? 0 }
    /// How long it listens before it is faded in, in session samples: its receptive field (its
    /// history is then the signal's, not the silence it was prewarmed with; 50 ms for a
    /// recurrent network), at most 0.2 s.
    let warmup: Int
    static let longestWarmup = 0.2
    private let scratch: UnsafeMutablePointer<Float>
    private let capacity: Int
    private var inputGain = SmoothedValue(1)
    private var outputGain = SmoothedValue(1)

    /// The loudness a normalized model plays at, in dB (the NAM plugin's "Normalized").
    static let normalizedLoudness: Float = -18

    /// Prepares `model`'s network for `sessionRate` and blocks of `maximumBlockSize`, and
    /// prewarms it. Not on the audio thread.
    init(_ model: NeuralModel, file: String, sessionRate: Double, maximumBlockSize: Int) {
        info = model.info
        network = model.network
        self.file = file
        capacity = max(1, maximumBlockSize)
        let rate = model.info.rate
        let bridge = abs(rate - sessionRate) < 0.5 ? nil
            : NeuralRateBridge(sessionRate: sessionRate, modelRate: rate, maximumBlockSize: capacity)
        self.bridge = bridge
        let field = network.isRecurrent ? 0.05 * rate : Double(network.receptiveField)
        warmup = min(Int((field * sessionRate / rate).rounded(.up)) + (bridge?.latency ?? 0),
                     Int(NeuralPlayer.longestWarmup * sessionRate))
        let networkBlock = bridge?.maximumModelBlock ?? capacity
        network.prepare(maximumBlockSize: networkBlock)
        NeuralModels.prewarm(network, rate: rate, maximumBlockSize: networkBlock)
        scratch = .allocate(capacity: capacity)
        scratch.initialize(repeating: 0, count: capacity)
        inputGain.prepare(sampleRate: sessionRate)
        outputGain.prepare(sampleRate: sessionRate)
    }

    deinit { scratch.deallocate() }

    /// The input gain in dB for the knob `inputDB` and the interface's level `interfaceDBu`
    /// (0: not set): raised by how much hotter the interface is than the capture's input was
    /// (the NAM plugin's calibration: interface level minus the model's input level).
    func inputDecibels(knob inputDB: Float, interfaceDBu: Float) -> Float {
        guard interfaceDBu > 0, let level = info.inputLevelDBu else { return inputDB }
        return inputDB + interfaceDBu - Float(level)
    }

    /// The output gain in dB for the knob `outputDB`: normalized, a model whose file states its
    /// loudness is brought to −18 dB; otherwise it plays as captured.
    func outputDecibels(knob outputDB: Float, normalize: Bool) -> Float {
        guard normalize, let loudness = info.loudness else { return outputDB }
        return outputDB + NeuralPlayer.normalizedLoudness - Float(loudness)
    }

    /// Snaps the gains to their targets and clears the network's history and the resampling's.
    /// Allocation-free.
    func reset(inputGain: Float, outputGain: Float) {
        network.reset()
        bridge?.reset()
        self.inputGain.snap(to: inputGain)
        self.outputGain.snap(to: outputGain)
    }

    /// `count` samples of `x` into `y` (not the same memory), gliding to the gains given.
    /// A network that answers NaN or Inf is reset and this block is silence. Audio thread.
    @inline(__always)
    func process(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count n: Int, inputGain: Float, outputGain: Float) {
        self.inputGain.setTarget(inputGain)
        self.outputGain.setTarget(outputGain)
        for i in 0..<n { scratch[i] = x[i] }
        self.inputGain.scale(scratch, count: n)
        if let bridge {
            bridge.process(scratch, y, count: n, network: network)
        } else {
            network.process(scratch, y, count: n)
        }
        var finite = true
        for i in 0..<n where !y[i].isFinite { finite = false }
        guard finite else {
            network.reset()
            bridge?.reset()
            y.update(repeating: 0, count: n)
            return
        }
        self.outputGain.scale(y, count: n)
        for i in 0..<n { y[i] = flushed(y[i]) }
    }
}

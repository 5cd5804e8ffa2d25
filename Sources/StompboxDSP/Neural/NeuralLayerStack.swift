/// A network that is a chain of layers run one after the other on a whole block: NAM's LSTM
/// (LSTM layers and a dense head) and every AIDA-X / RTNeural model. One input and one output
/// value per sample; around the chain, the input may be scaled first (`inputGain`), added to the
/// chain's output (`addsInput`, AIDA-X's `in_skip`) and the sum scaled (`outputGain`).
final class NeuralLayerStack: NeuralNetwork {
    private let layers: [NeuralLayer]
    /// The same layers, unretained, for the audio thread (no reference counting there).
    private let unretained: UnsafeMutablePointer<Unmanaged<NeuralLayer>>
    let inputGain: Float
    let outputGain: Float
    let addsInput: Bool
    /// Two buffers the layers' frames alternate between, each wide enough for the widest layer.
    private var buffers: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)
    private var scaledInput: UnsafeMutablePointer<Float>
    private var capacity = 0
    private let width: Int

    init(layers: [NeuralLayer], inputGain: Float = 1, outputGain: Float = 1, addsInput: Bool = false) {
        precondition(!layers.isEmpty && layers.first!.inputSize == 1 && layers.last!.outputSize == 1)
        self.layers = layers
        unretained = .allocate(capacity: layers.count)
        unretained.initialize(from: layers.map { Unmanaged.passUnretained($0) }, count: layers.count)
        self.inputGain = inputGain
        self.outputGain = outputGain
        self.addsInput = addsInput
        width = layers.map(\.outputSize).max()!
        buffers = (.zeroed(width), .zeroed(width))
        scaledInput = .zeroed(1)
        capacity = 1
    }

    deinit {
        unretained.deallocate()
        buffers.0.deallocate(); buffers.1.deallocate(); scaledInput.deallocate()
    }

    var receptiveField: Int { 1 }
    var isRecurrent: Bool { layers.contains { $0.isRecurrent } }

    func prepare(maximumBlockSize: Int) {
        capacity = max(1, maximumBlockSize)
        buffers.0.deallocate(); buffers.1.deallocate(); scaledInput.deallocate()
        buffers = (.zeroed(width * capacity), .zeroed(width * capacity))
        scaledInput = .zeroed(capacity)
    }

    func reset() {
        for n in 0..<layers.count { unretained[n]._withUnsafeGuaranteedRef { $0.reset() } }
    }

    func process(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, count: Int) {
        var done = 0
        while done < count {
            let frames = min(capacity, count - done)
            run(input + done, output + done, frames: frames)
            done += frames
        }
    }

    private func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, frames: Int) {
        var source = UnsafePointer(input)
        if inputGain != 1 {
            for n in 0..<frames { scaledInput[n] = input[n] * inputGain }
            source = UnsafePointer(scaledInput)
        }
        let last = layers.count - 1
        var target = buffers.0
        for n in 0...last {
            // The last layer writes the output itself, unless the input is still to be added
            // (the output may be the input's memory).
            let destination = n == last && !addsInput ? output : target
            unretained[n]._withUnsafeGuaranteedRef { $0.run(source, destination, frames: frames) }
            source = UnsafePointer(destination)
            target = target == buffers.0 ? buffers.1 : buffers.0
        }
        if addsInput {
            let skip = inputGain != 1 ? UnsafePointer(scaledInput) : input
            for n in 0..<frames { output[n] = (source[n] + skip[n]) * outputGain }
        } else if outputGain != 1 {
            for n in 0..<frames { output[n] *= outputGain }
        }
    }
}

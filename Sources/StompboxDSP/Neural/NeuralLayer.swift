/// One layer of a network that runs frame by frame: a recurrent layer, a dense layer, an
/// element-wise activation. A layer runs a whole block at a time (`frames` vectors of `inputSize`
/// values, one after another, to as many of `outputSize`), so the stack calls each layer once
/// per block, not once per sample. Subclasses override `run` and, when they have state, `reset`.
class NeuralLayer {
    let inputSize: Int
    let outputSize: Int

    init(inputSize: Int, outputSize: Int) {
        self.inputSize = inputSize
        self.outputSize = outputSize
    }

    /// Whether it has a state that carries from one sample to the next.
    var isRecurrent: Bool { false }

    /// Back to its state before the first sample. Allocation-free.
    func reset() {}

    /// `frames` input vectors to as many output vectors. Audio thread: allocation-free.
    func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, frames: Int) {
        fatalError("NeuralLayer.run is overridden by every layer")
    }
}

/// Memory for SIMD vectors: zeroed, freed by its owner, and on a cache line's start. Swift
/// aligns a SIMD8 to 16 bytes only, which puts every other 32-byte load across two cache lines;
/// the recurrent layers' twelve-wide loads ran a third slower so.
extension UnsafeMutablePointer where Pointee == SIMD8<Float> {
    static func zeroed(_ count: Int) -> UnsafeMutablePointer<SIMD8<Float>> {
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: max(1, count) * MemoryLayout<SIMD8<Float>>.stride, alignment: 64)
            .bindMemory(to: SIMD8<Float>.self, capacity: max(1, count))
        pointer.initialize(repeating: SIMD8(repeating: 0), count: max(1, count))
        return pointer
    }
}

extension UnsafeMutablePointer where Pointee == Float {
    static func zeroed(_ count: Int) -> UnsafeMutablePointer<Float> {
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: max(1, count) * 4, alignment: 64)
            .bindMemory(to: Float.self, capacity: max(1, count))
        pointer.initialize(repeating: 0, count: max(1, count))
        return pointer
    }
}

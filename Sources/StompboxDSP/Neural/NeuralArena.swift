/// Owns the memory a network plays from (weights laid out for SIMD, histories, scratch): zeroed
/// when handed out, freed together when the network goes. Used off the audio thread only.
final class NeuralArena {
    private var blocks: [(UnsafeMutableRawPointer, Int)] = []

    /// `count` zeroed floats, 64-byte aligned, with 16 more after them so that a vector
    /// read of the last frames stays inside.
    func floats(_ count: Int) -> UnsafeMutablePointer<Float> {
        let bytes = (max(count, 1) + 16) * MemoryLayout<Float>.stride
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        blocks.append((raw, bytes))
        return raw.bindMemory(to: Float.self, capacity: count + 16)
    }

    /// Room for `count` values of a trivial type, each set to `value`.
    func values<T>(_ count: Int, _ value: T) -> UnsafeMutablePointer<T> {
        precondition(_isPOD(T.self))
        let bytes = max(count, 1) * MemoryLayout<T>.stride
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: max(MemoryLayout<T>.alignment, 16))
        blocks.append((raw, bytes))
        let pointer = raw.bindMemory(to: T.self, capacity: max(count, 1))
        pointer.initialize(repeating: value, count: max(count, 1))
        return pointer
    }

    /// Room for `count` values of a trivial type, for the caller to initialise.
    func uninitialized<T>(_ count: Int) -> UnsafeMutablePointer<T> {
        precondition(_isPOD(T.self))
        let bytes = max(count, 1) * MemoryLayout<T>.stride
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: max(MemoryLayout<T>.alignment, 16))
        blocks.append((raw, bytes))
        return raw.bindMemory(to: T.self, capacity: max(count, 1))
    }

    deinit {
        for (raw, _) in blocks { raw.deallocate() }
    }
}

import Foundation

/// One period of a sine in a table, read with linear interpolation: the LFOs of the flanger and
/// the tremolo use it instead of calling `sin` for every sample. A struct around a pointer, so
/// reading it involves no reference counting: the owner builds it in its `init` (not on the
/// audio thread) and calls `deallocate` in its `deinit`.
struct SineTable {
    /// Points per period.
    static let size = 1024
    private let values: UnsafeMutablePointer<Float>

    init() {
        values = .allocate(capacity: SineTable.size + 1)
        for i in 0...SineTable.size {
            values[i] = Float(sin(2 * Double.pi * Double(i) / Double(SineTable.size)))
        }
    }

    func deallocate() { values.deallocate() }

    /// sin(2π·phase) for `phase` in [0, 1). Error below 2e-6.
    @inline(__always)
    func sine(_ phase: Float) -> Float {
        let position = phase * Float(SineTable.size)
        let i = min(Int(position), SineTable.size - 1)
        let fraction = position - Float(i)
        let a = values[i]
        return a + fraction * (values[i + 1] - a)
    }
}


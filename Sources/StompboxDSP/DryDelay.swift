typealias Buffer = UnsafeMutableBufferPointer<Float>

/// The recent past of a pedal's input, so its dry path can be as late as the pedal: a ring of
/// at least a block plus the longest delay and one more sample (a power of two). Allocated off
/// the audio thread; the rest is allocation-free.
struct DryDelay {
    /// The longest delay a dry path follows: 0.34 s at 48 kHz (plugins' lookahead is shorter).
    static let longest = 16_384
    private var ring: UnsafeMutablePointer<Float>?
    private var mask = 0
    private var write = 0
    private(set) var longest = 0

    init() {}

    init(longest: Int, maximumBlockSize: Int) {
        var size = 1
        while size < longest + maximumBlockSize + 2 { size *= 2 }
        ring = .allocate(capacity: size)
        ring!.initialize(repeating: 0, count: size)
        mask = size - 1
        self.longest = longest
    }

    var isEmpty: Bool { ring == nil }

    mutating func free() {
        ring?.deallocate()
        ring = nil
        longest = 0
    }

    /// Adds a block (at most the prepared maximum) and returns where its first sample went.
    @inline(__always)
    mutating func append(_ block: UnsafeMutableBufferPointer<Float>) -> Int {
        guard let ring, let x = block.baseAddress else { return write }
        let start = write, n = block.count
        // In at most two pieces: up to the ring's end, then from its start.
        let first = min(n, mask + 1 - start)
        (ring + start).update(from: x, count: first)
        if first < n { ring.update(from: x + first, count: n - first) }
        write = (start &+ n) & mask
        return start
    }

    /// The sample `delay` samples before the one at `position` (linearly interpolated between two).
    @inline(__always)
    func sample(_ position: Int, delayedBy delay: Float) -> Float {
        guard let ring else { return 0 }
        let whole = Int(delay), fraction = delay - Float(whole)
        let a = ring[(position &- whole) & mask], b = ring[(position &- whole &- 1) & mask]
        return fraction == 0 ? a : a + fraction * (b - a)
    }

    /// `block` (appended at `start`) replaced by the input `delay` samples earlier.
    @inline(__always)
    func read(into block: UnsafeMutableBufferPointer<Float>, from start: Int, delayedBy delay: Float) {
        guard let ring, let x = block.baseAddress else { return }
        let whole = Int(delay), fraction = delay - Float(whole)
        let from = start &- whole
        if fraction == 0 {
            for i in 0..<block.count { x[i] = ring[(from &+ i) & mask] }
        } else {
            for i in 0..<block.count {
                let a = ring[(from &+ i) & mask], b = ring[(from &+ i &- 1) & mask]
                x[i] = a + fraction * (b - a)
            }
        }
    }
}

/// Frees `buffer` and puts in its place a new one of `count` zeros: how `prepare` sizes a
/// pedal's buffers for a new block size or rate. Not on the audio thread (it allocates).
func reallocateZeroed<T: Numeric>(_ buffer: inout UnsafeMutablePointer<T>, count: Int) {
    buffer.deallocate()
    buffer = .allocate(capacity: count)
    buffer.initialize(repeating: 0, count: count)
}

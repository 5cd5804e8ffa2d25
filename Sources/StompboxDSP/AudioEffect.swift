/// A pedal's signal processing. The life of one is JUCE's: `prepare` (off the audio thread,
/// allocates every buffer), then any number of `process` calls (audio thread: no allocation,
/// locks, logging or reference counting), and `reset` whenever the state must be cleared.
public protocol AudioEffect: AnyObject {
    /// Sizes every buffer for `sampleRate` and blocks of at most `maximumBlockSize`.
    /// Not called on the audio thread.
    func prepare(sampleRate: Double, maximumBlockSize: Int)
    /// Clears delay lines, filter state and LFO phases; snaps smoothers to their targets.
    /// Allocation-free, so the audio thread may call it (after NaN, or when switched on).
    func reset()
    /// Reads the parameters once, then processes `block` in place (at most `maximumBlockSize`).
    /// Called on the audio thread.
    func process(_ block: UnsafeMutableBufferPointer<Float>)
    /// Called instead of `process` for each block while the pedal is switched off. Audio thread.
    func bypassed()
}

extension AudioEffect {
    public func bypassed() {}
}

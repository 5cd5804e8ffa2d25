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

/// A pedal that plays in stereo itself: a reverb with decorrelated sides, a ping-pong delay, a
/// flanger whose sides sweep apart. On a stereo board (`Chain.process(left:right:)`) it gets both
/// channels; before the first such pedal the board is mono and both hold the same signal. On a
/// mono board its `process` runs as before.
///
/// A pedal that is not a `StereoEffect` and stands after one is run twice, once per side, by
/// two instances reading the same parameters (the chain makes the second one off the audio thread).
public protocol StereoEffect: AudioEffect {
    /// Processes `left` and `right` (the same length, at most `maximumBlockSize`) in place.
    /// Audio thread.
    func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>)
    /// Whether it makes the sides differ (a plugin with one input and one output does not: the
    /// chain then treats it as a mono pedal that plays the middle of the sides on both). Not
    /// asked on the audio thread.
    var playsInStereo: Bool { get }
    /// Whether, for this block, it makes the sides differ though `playsInStereo` is false (a
    /// cabinet with a stereo impulse response file loaded). Audio thread.
    var widensNow: Bool { get }
    /// Whether it can make the sides differ at times though `playsInStereo` is false (a cabinet,
    /// which may be given a stereo file): the mono pedals after it get twins, which play while
    /// it does (`widensNow`) and rest otherwise. Not asked on the audio thread.
    var mayWiden: Bool { get }
}

extension StereoEffect {
    public var playsInStereo: Bool { true }
    public var widensNow: Bool { false }
    public var mayWiden: Bool { playsInStereo }
}

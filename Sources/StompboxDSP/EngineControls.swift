import Synchronization

/// Peak meters written by the audio thread and read (and cleared) by the UI about 30 times a second.
public final class LevelMeters: @unchecked Sendable {
    let inputPeakBits = Atomic<UInt32>(0)
    let outputPeakBits = Atomic<UInt32>(0)
    let inputClipsValue = Atomic<Int>(0)
    let outputClipsValue = Atomic<Int>(0)
    /// The output limiter's lowest gain since the UI last looked (1: it did nothing).
    let limiterGainBits = Atomic<UInt32>(Float(1).bitPattern)

    public init() {}

    /// Audio thread: raises the held peak to `peak` if it is higher.
    @inline(__always)
    func note(input peak: Float) { raise(inputPeakBits, peak); if peak >= 1 { inputClipsValue.add(1, ordering: .relaxed) } }
    /// Audio thread: the output's peak and what the limiter did to it. A block the limiter had to
    /// duck counts as an output clip: its ceiling (0.98) sits below any level a clip light could
    /// otherwise look for.
    @inline(__always)
    func note(output peak: Float, limiterGain: Float, ducked: Bool) {
        raise(outputPeakBits, peak)
        if ducked { outputClipsValue.add(1, ordering: .relaxed) }
        lower(limiterGainBits, limiterGain)
    }

    /// Audio thread: the output's peak once something was added after the chain (a session
    /// playing along while a take records), so the meter shows what is heard.
    @inline(__always)
    public func note(heardOutput peak: Float) { raise(outputPeakBits, peak) }

    @inline(__always)
    private func raise(_ cell: borrowing Atomic<UInt32>, _ peak: Float) { move(cell, to: peak, while: <) }
    @inline(__always)
    private func lower(_ cell: borrowing Atomic<UInt32>, _ value: Float) { move(cell, to: value, while: >) }

    /// Stores `value` in `cell` while `cell's value` `comparison` `value` holds (lock-free).
    @inline(__always)
    private func move(_ cell: borrowing Atomic<UInt32>, to value: Float, while comparison: (Float, Float) -> Bool) {
        var current = cell.load(ordering: .relaxed)
        while comparison(Float(bitPattern: current), value) {
            let (exchanged, original) = cell.compareExchange(expected: current, desired: value.bitPattern, ordering: .relaxed)
            if exchanged { break }
            current = original
        }
    }

    /// The highest input and output peaks (linear) since the last call, then clears them.
    public func takePeaks() -> (input: Float, output: Float) {
        (Float(bitPattern: inputPeakBits.exchange(0, ordering: .relaxed)),
         Float(bitPattern: outputPeakBits.exchange(0, ordering: .relaxed)))
    }

    /// How far (dB, ≥ 0) the output limiter turned the output down at most since the last call,
    /// then clears it.
    public func takeLimiterReduction() -> Float {
        let lowest = Float(bitPattern: limiterGainBits.exchange(Float(1).bitPattern, ordering: .relaxed))
        return lowest >= 1 ? 0 : -gainToDecibels(lowest)
    }

    /// How many blocks clipped at the input (≥ 0 dBFS) and made the output limiter duck.
    public var clipCounts: (input: Int, output: Int) {
        (inputClipsValue.load(ordering: .relaxed), outputClipsValue.load(ordering: .relaxed))
    }
}

/// Everything the UI, the CLI and the audio thread share about one running chain.
public final class EngineControls: @unchecked Sendable {
    public let parameters: ParameterStore
    public let looper: LooperControl
    public let meters: LevelMeters
    /// What the tuner hears (the input after the input gain), and its muting of the output.
    public let tuner = TunerTap()

    public init(parameters: ParameterStore = ParameterStore()) {
        self.parameters = parameters
        looper = LooperControl()
        meters = LevelMeters()
    }
}

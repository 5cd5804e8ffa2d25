import Synchronization

/// The live values of a pedal whose parameters the static table cannot hold: an LV2 plugin's
/// control ports, known only when the plugin is looked up. One `Atomic<Float>` per entry of its
/// kind's `parameterSpecs` (its `<id>.enabled` switch first), made with the kind, so the chain's
/// slot, the plugin's `process`, the knobs, presets and `--set`/`--at` all reach the same cells
/// through the kind's `Parameter`s. Any thread writes; the audio thread reads once per block.
public final class PedalValues: @unchecked Sendable {
    public let specs: [ParameterSpec]
    /// The specs' cells, then one more: the latency the pedal last reported, in samples.
    let cells: UnsafeMutablePointer<Atomic<Float>>

    init(specs: [ParameterSpec]) {
        self.specs = specs
        cells = .allocate(capacity: specs.count + 1)
        for (i, spec) in specs.enumerated() { (cells + i).initialize(to: Atomic(spec.defaultValue)) }
        (cells + specs.count).initialize(to: Atomic(0))
    }

    deinit {
        cells.deinitialize(count: specs.count + 1)
        cells.deallocate()
    }

    /// The cell of the spec at `index` (for a pedal that reads its values itself). It lives as
    /// long as this object.
    public func cell(at index: Int) -> UnsafeMutablePointer<Atomic<Float>> {
        precondition(specs.indices.contains(index))
        return cells + index
    }

    /// Where the pedal reports its latency in samples (audio thread: one relaxed store).
    public var latencyCell: UnsafeMutablePointer<Atomic<Float>> { cells + specs.count }

    /// The latency last reported, in samples.
    public var reportedLatency: Double { Double(latencyCell.pointee.load(ordering: .relaxed)) }
}

/// A built-in pedal whose latency changes as it runs (the Amp Model's resampling, which depends
/// on the model loaded): it reports it in a cell of its own, in samples (audio thread: one relaxed
/// store), which its slot reads each block as a plugin pedal's, and `Chain.latencySamples` reads
/// instead of its kind's `latency`.
public protocol LatencyReportingEffect: AudioEffect {
    /// Lives as long as the effect.
    var latencyCell: UnsafeMutablePointer<Atomic<Float>> { get }
}

/// A pedal whose state goes beyond its parameters (an LV2 plugin's own properties): presets
/// keep it as JSON text and hand it back when the pedal is made again.
public protocol StatefulEffect: AudioEffect {
    /// Its state as JSON text, or nil when it cannot say. Not on the audio thread.
    func stateJSON() -> String?
}

/// A built-in pedal whose state goes beyond its parameters (the cabinet's own file): presets keep
/// it and give it back.
public protocol RestorableEffect: StatefulEffect {
    /// Takes the state `stateJSON()` gave. Not on the audio thread.
    func restore(stateJSON: String) throws
    /// Why the state taken cannot be played, when that does not fail a preset (a model file
    /// gone: the pedal passes its input through): "cannot load gone.nam (no such file); …".
    var restoreProblem: String? { get }
}

extension RestorableEffect {
    public var restoreProblem: String? { nil }
}

public struct PedalStateError: Error, CustomStringConvertible {
    public let pedal: String
    public let reason: String
    public var description: String { "the \(pedal) cannot take its saved state: \(reason)" }
}

/// The effect of a pedal that cannot run (a plugin that is not installed or refused to start):
/// its input passes through untouched.
public final class PassThrough: AudioEffect {
    public init() {}
    public func prepare(sampleRate: Double, maximumBlockSize: Int) {}
    public func reset() {}
    public func process(_ block: UnsafeMutableBufferPointer<Float>) {}
}

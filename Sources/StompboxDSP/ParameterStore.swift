import Synchronization

/// The live value of every parameter, shared by the UI, the CLI and presets (writers) and the
/// audio thread (reader). One `Atomic<Float>` per parameter: writers never wait, and the
/// audio thread reads each value once per block and smooths it.
public final class ParameterStore: @unchecked Sendable {
    private let values: UnsafeMutablePointer<Atomic<Float>>
    private let count = Parameter.allCases.count
    /// Bumped on every write, so a window can notice changes made elsewhere (preset recall).
    private let changes = Atomic<UInt64>(0)

    public init() {
        values = .allocate(capacity: count)
        for p in Parameter.allCases {
            (values + p.rawValue).initialize(to: Atomic(p.spec.defaultValue))
        }
    }

    deinit {
        values.deinitialize(count: count)
        values.deallocate()
    }

    /// Where `p` lives: this store's cell, or its plugin pedal's own.
    @inline(__always)
    private func cell(_ p: Parameter) -> UnsafeMutablePointer<Atomic<Float>> {
        p.cell ?? values + p.rawValue
    }

    /// Audio thread safe: one relaxed atomic load.
    @inline(__always)
    public func load(_ p: Parameter) -> Float {
        cell(p).pointee.load(ordering: .relaxed)
    }

    /// Stores a value clamped to the parameter's range.
    public func set(_ p: Parameter, _ value: Float) {
        cell(p).pointee.store(p.spec.clamp(value), ordering: .relaxed)
        changes.add(1, ordering: .releasing)
    }

    /// The audio thread's own write (the Looper selecting the track it records next): `value`
    /// must already be legal, as nothing here may touch the table's specs.
    @inline(__always)
    func storeFromAudioThread(_ p: Parameter, _ value: Float) {
        cell(p).pointee.store(value, ordering: .relaxed)
        changes.add(1, ordering: .releasing)
    }

    public subscript(_ p: Parameter) -> Float {
        get { load(p) }
        set { set(p, newValue) }
    }

    public func isOn(_ p: Parameter) -> Bool { load(p) >= 0.5 }

    /// How many writes so far; compare two readings to see whether anything changed.
    public var changeCount: UInt64 { changes.load(ordering: .acquiring) }

    /// Every parameter's current value, in table order (plugin pedals keep theirs in their kinds).
    public func snapshot() -> [Float] {
        Parameter.allCases.map { load($0) }
    }

    /// Sets every parameter from a snapshot taken by `snapshot()`.
    public func restore(_ snapshot: [Float]) {
        precondition(snapshot.count == count, "snapshot of another table")
        for p in Parameter.allCases { set(p, snapshot[p.rawValue]) }
    }
}

/// One arrangement of the board, as the audio thread plays it: a slot for each pedal.
/// Immutable once handed over; its slots keep their pedals alive while the audio thread may use them.
final class Board {
    let slots: UnsafeMutablePointer<BoardSlot>
    let count: Int
    /// Keeps plugin pedals' values (their switches' cells) alive; not touched on the audio thread.
    private let kinds: [PedalKind]

    /// `entering`: the pedals that were not on the board before (reset when it takes over).
    /// `twins`: for each pedal, its right side's instance on a stereo board, if it has one (as
    /// `Chain.makeTwins` made them, by the same `StereoPlan.twinRules`).
    init(kinds: [PedalKind], effects: [AudioEffect], twins: [AudioEffect?], entering: Set<PedalKind>) {
        self.kinds = kinds
        count = kinds.count
        slots = .allocate(capacity: max(1, count))
        let rules = StereoPlan.twinRules(kinds, effects)
        for (i, kind) in kinds.enumerated() {
            precondition((twins[i] != nil) == (rules[i] != .none), "\(kind): its twin does not follow the board's stereo plan")
            let slot = PedalSlot(kind.enabledParameter, resetsWhenSwitchedOn: kind.resetsWhenSwitchedOn,
                                 reportedLatency: kind.values?.latencyCell ?? (effects[i] as? LatencyReportingEffect)?.latencyCell, trails: kind.trailsParameter)
            let plan = StereoPlan(effect: effects[i], twin: twins[i], rule: rules[i])
            (slots + i).initialize(to: BoardSlot(effect: effects[i], pedal: plan, slot: slot, entering: entering.contains(kind)))
        }
    }

    deinit {
        for i in 0..<count { slots[i].slot.free() }
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    /// Sizes the crossfades and the dry paths' delays, and puts every switch where its parameter stands.
    func prepare(sampleRate: Double, maximumBlockSize: Int, parameters: ParameterStore) {
        for i in 0..<count {
            slots[i].slot.prepare(sampleRate: sampleRate, maximumBlockSize: maximumBlockSize, latency: kinds[i].latency(sampleRate))
            slots[i].slot.snap(parameters)
            slots[i].twinFadeStep = Float(1 / (BoardSlot.twinFadeSeconds * sampleRate))
        }
    }
}

/// Where the audio thread is in taking a new board in: fading the old one out to the dry input,
/// swapping at the next block, fading the new one in.
enum BoardFade { case none, out, swap, `in` }

/// A pedal on a board. The slot's own strong `let` is borrowed for each call on the audio
/// thread (no retain or release there: checked in the release build's disassembly).
struct BoardSlot {
    let effect: AudioEffect
    let pedal: StereoPlan
    var slot: PedalSlot
    /// Newly on the board: cleared when the board takes over (no echoes from the last time).
    let entering: Bool
    /// A twin that plays only while the sides differ did not play the last block (it is cleared
    /// before it plays again, so it does not resume from a stale state).
    var twinResting = true
    /// How far the right side has faded from the left's output to the twin's since the twin
    /// started (0…1): a twin that starts clean sounds unlike one that has been playing for a
    /// moment (a filter's state fills within a few ms), and the fade hides that.
    var twinFade: Float = 1
    var twinFadeStep: Float = 1.0 / 960
    static let twinFadeSeconds = 0.02

    /// Audio thread, a mono board.
    @inline(__always)
    mutating func run(_ block: UnsafeMutableBufferPointer<Float>, dry: UnsafeMutableBufferPointer<Float>, parameters: ParameterStore) {
        slot.run(effect, block, dry: dry, parameters: parameters)
    }

    /// Audio thread, a stereo board. `stereo` says whether the sides may differ yet (until then
    /// only `left` holds the signal): a stereo pedal or a twin that plays makes them two.
    @inline(__always)
    mutating func run(_ left: UnsafeMutableBufferPointer<Float>, _ right: UnsafeMutableBufferPointer<Float>, stereo: inout Bool,
                      dry: UnsafeMutableBufferPointer<Float>, dryRight: UnsafeMutableBufferPointer<Float>, parameters: ParameterStore) {
        if !stereo && pedal.parts && !slot.isIdle(parameters) {
            right.baseAddress!.update(from: left.baseAddress!, count: left.count)
            stereo = true
        }
        if pedal.twinOnlyWhileWide {
            // Sides that differ play through the twin from a clean start; equal ones need none.
            if !stereo {
                twinResting = true
            } else if twinResting {
                pedal.twin?.reset()
                twinResting = false
                twinFade = 0
            }
        }
        slot.run(effect, pedal, left, stereo ? right : nil, dry: dry, dryRight: dryRight, parameters: parameters)
        if twinFade < 1 && stereo {
            var g = twinFade
            let step = twinFadeStep
            for i in 0..<left.count {
                g = min(1, g + step)
                right[i] = left[i] + g * (right[i] - left[i])
            }
            twinFade = g
        }
    }

    /// Audio thread: a pedal joining the board starts clean, and ignores footswitch requests
    /// made while it was away.
    mutating func enter() {
        if slot.resetsWhenSwitchedOn { pedal.reset(effect) }
        pedal.bypass(effect)
    }
}

/// How a slot plays on a stereo board besides its pedal: the pedal as a `StereoEffect` if it
/// takes both sides itself, or a second instance of it for the right side (a twin), or neither
/// (it plays the middle of the sides on both). The rule for a whole board is `twinRules`, the
/// one place it is stated; the chain makes twins by it and the board plans its slots by it.
struct StereoPlan {
    var stereo: StereoEffect?
    var twin: AudioEffect?
    /// It makes the sides differ (`StereoEffect.playsInStereo`).
    var makesStereo = false
    /// Its twin stands after a pedal that only may make the sides differ (a cabinet): it plays
    /// while they do, and the board stays mono through this pedal while they do not.
    var twinOnlyWhileWide = false

    /// Whether a slot's pedal gets a twin on a stereo board, and when it plays.
    enum TwinRule { case none, always, whileWide }

    /// The twin rule of each pedal of a board. A built-in mono pedal standing after one that
    /// makes the sides differ, or may (`StereoEffect.mayWiden`: a cabinet), gets a twin for the
    /// right side: it always plays if a pedal that always makes them differ stands before it,
    /// else only while they do. A `StereoEffect` takes both sides itself and gets none; nor does
    /// a pedal with a state of its own (a file), as a twin would not share it: on a stereo board
    /// that one plays the middle of the sides on both. Not on the audio thread.
    static func twinRules(_ kinds: [PedalKind], _ effects: [AudioEffect]) -> [TwinRule] {
        var afterWide = false, afterStereo = false
        var rules: [TwinRule] = []
        for (kind, effect) in zip(kinds, effects) {
            if afterWide && !(effect is StereoEffect) && kind.values == nil && !(effect is RestorableEffect) {
                rules.append(afterStereo ? .always : .whileWide)
            } else {
                rules.append(.none)
            }
            if mayWiden(effect) { afterWide = true }
            if makesStereo(effect) { afterStereo = true }
        }
        return rules
    }

    /// A stereo pedal that makes the sides differ (a mono plugin does not).
    static func makesStereo(_ effect: AudioEffect) -> Bool { (effect as? StereoEffect)?.playsInStereo ?? false }

    /// A stereo pedal that makes the sides differ, or may (a cabinet).
    static func mayWiden(_ effect: AudioEffect) -> Bool { (effect as? StereoEffect)?.mayWiden ?? false }

    init(stereo: StereoEffect? = nil, twin: AudioEffect? = nil, makesStereo: Bool = false, twinOnlyWhileWide: Bool = false) {
        self.stereo = stereo
        self.twin = twin
        self.makesStereo = makesStereo
        self.twinOnlyWhileWide = twinOnlyWhileWide
    }

    /// The plan of `effect`'s slot, its twin (if any) made by `rule`. Not on the audio thread.
    init(effect: AudioEffect, twin: AudioEffect?, rule: TwinRule) {
        self.init(stereo: effect as? StereoEffect, twin: twin, makesStereo: StereoPlan.makesStereo(effect),
                  twinOnlyWhileWide: rule == .whileWide)
    }

    /// Whether the sides part at this pedal when it plays and they are still one: it makes them
    /// differ, or its twin always plays, or (a cabinet) it does so for this block. Audio thread.
    @inline(__always)
    var parts: Bool { makesStereo || (twin != nil && !twinOnlyWhileWide) || stereo?.widensNow == true }

    // (Optional chaining borrows the pedal's references; `if let` would retain and release
    // them on the audio thread.)

    /// Clears the pedal and its twin. Audio thread.
    @inline(__always)
    func reset(_ effect: AudioEffect) {
        effect.reset()
        twin?.reset()
    }

    /// Tells the pedal and its twin that they are switched off for this block. Audio thread.
    @inline(__always)
    func bypass(_ effect: AudioEffect) {
        effect.bypassed()
        twin?.bypassed()
    }
}

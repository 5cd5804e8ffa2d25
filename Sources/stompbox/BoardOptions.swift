import ArgumentParser

/// The options that build a board and script what happens on it, shared by `render` and
/// `session reamp` so both take the same words with the same help. Values are parsed when the
/// plan is made (`RenderCommand.makePlan`), so every mistake gets one plain line, not a usage screen.
struct BoardOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(RenderCommand.chainHelp + " A pedal left out is not on the board.", valueName: "id,id,…"))
    var chain: String?

    @Option(name: .customLong("add"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp(RenderCommand.addHelp, valueName: "id=lv2:uri"))
    var additions: [String] = []

    @Option(name: .customLong("set"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Set a parameter before rendering (after --preset), e.g. delay.time_ms=420, reverb.enabled=on, tremolo.shape=square.", valueName: "id=value"))
    var assignments: [String] = []

    @Option(name: .customLong("at"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("At a time in seconds: ID=VALUE (looper.track=N selects a loop track), looper.tap, looper.hold, looper.undo, looper.redo, looper.clear or looper.record_next, e.g. 2.5:looper.tap.", valueName: "seconds:action"))
    var actions: [String] = []

    @Option(name: .long, parsing: .unconditional,
            help: ArgumentHelp("Seconds of silence played after the input so echoes and reverb ring out (default 0).", valueName: "seconds"))
    var tail: String?

    /// Whether none of the options that change the board or script it was given.
    var changeNothing: Bool { chain == nil && additions.isEmpty && assignments.isEmpty && actions.isEmpty }
}

import Testing

/// The kinds of test that cannot run beside the others, named once for every test target.
/// `make check` skips both; `make test` runs each kind on its own after the rest, one test at a
/// time (Makefile).
extension Tag {
    /// Plays through a real audio server (a private PulseAudio, PipeWire or JACK) and measures
    /// real-time behaviour: beside other work on two cores its takes would measure the load.
    @Tag public static var live: Self
    /// Drives a real window under Xvfb with xdotool: a starved window could miss an event.
    @Tag public static var window: Self
}

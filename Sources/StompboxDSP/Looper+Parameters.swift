extension PedalKind {
    /// The controls the Looper's tracks add to its level and sync knobs. The face shows neither
    /// (a tracks panel, the command line, presets and MIDI reach them), so a Looper looks as it did.
    static let looperTrackControls: [PedalControl] = {
        let numbers = { (range: ClosedRange<Int>) in range.map(String.init) }
        var controls = [
            PedalControl("track", "Track", .none, 0...Float(LooperControl.trackCount - 1), default: 0,
                         .choice(numbers(1...LooperControl.trackCount)), name: "Looper Selected Track"),
            PedalControl("stereo", "Stereo", .none, 0...1, default: 0, .toggle, name: "Looper Records Stereo"),
            PedalControl("bars", "Bars", .none, 0...16, default: 0, .choice(["free"] + numbers(1...16)), name: "Looper Fixed Length"),
            PedalControl("count_in", "Count-in", .none, 0...2, default: 0, .choice(numbers(0...2)), name: "Looper Count-in Bars"),
            PedalControl("beats_per_bar", "Beats/Bar", .none, 0...11, default: 3, .choice(numbers(1...12)), name: "Looper Beats per Bar"),
            PedalControl("round_to", "Round To", .none, 0...1, default: 1, .choice(["beat", "bar"]), name: "Looper Sync Rounds To"),
            PedalControl("undo_steps", "Undo Steps", .none, 0...Float(LoopHistory.maximumDepth - 1), default: Float(LoopHistory.maximumDepth - 1),
                         .choice(numbers(1...LoopHistory.maximumDepth)), name: "Looper Undo Steps"),
        ]
        for k in 1...LooperControl.trackCount {
            controls += [
                PedalControl("track\(k)_gain_db", "Gain \(k)", .decibels, -40...12, default: 0, name: "Looper Track \(k) Gain"),
                PedalControl("track\(k)_pan", "Pan \(k)", .none, -1...1, default: 0, name: "Looper Track \(k) Pan"),
                PedalControl("track\(k)_mute", "Mute \(k)", .none, 0...1, default: 0, .toggle, name: "Looper Track \(k) Mute"),
            ]
        }
        return controls
    }()

    /// Record, play, overdub, undo and redo on eight tracks in sync; keeps its loops while
    /// switched off.
    public static let looper = PedalKind(
        id: "looper", name: "Looper",
        controls: [PedalControl("level", "Level", .none, 0...1, default: 1),
                   PedalControl("sync", "Sync", .none, 0...1, default: 0, .toggle)] + looperTrackControls,
        face: PedalFace(places: [.init("level", x: 10, y: 16, diameter: 44), .init("sync", x: 112, y: 46, width: 52)], panel: .looper,
                        hidden: Set(looperTrackControls.map(\.key)),
                        artwork: .init(body: "#c5302f", dark: "#7d1616", text: "#fff0ee", accent: "#ff9d93", name: "LOOPER", subtitle: "PHRASE LOOP",
                                       bar: .init(18, 96, 148, 16))),
        resetsWhenSwitchedOn: false,
        make: { Looper(parameters: $0.parameters, control: $0.looper) })
}

extension Parameter {
    public static let looperEnabled = PedalKind.looper.enabledParameter
    public static let looperLevel = PedalKind.looper.parameter("level")
    public static let looperSync = PedalKind.looper.parameter("sync")
    /// The selected track, 0-based (its choices are named 1…8).
    public static let looperTrack = PedalKind.looper.parameter("track")
    public static let looperStereo = PedalKind.looper.parameter("stereo")
    /// Fixed length in bars, 0 = free.
    public static let looperBars = PedalKind.looper.parameter("bars")
    /// Count-in bars before a first loop, 0…2.
    public static let looperCountIn = PedalKind.looper.parameter("count_in")
    /// Beats per bar minus one (its choices are named 1…12).
    public static let looperBeatsPerBar = PedalKind.looper.parameter("beats_per_bar")
    /// What `looper.sync` rounds the first loop to: 0 whole beats, 1 whole bars.
    public static let looperRoundTo = PedalKind.looper.parameter("round_to")
    /// Undo steps kept per track minus one (its choices are named 1…16).
    public static let looperUndoSteps = PedalKind.looper.parameter("undo_steps")

    /// Track `track`'s (0-based) gain, pan and mute.
    public static func looperTrackGain(_ track: Int) -> Parameter { PedalKind.looper.parameter("track\(track + 1)_gain_db") }
    public static func looperTrackPan(_ track: Int) -> Parameter { PedalKind.looper.parameter("track\(track + 1)_pan") }
    public static func looperTrackMute(_ track: Int) -> Parameter { PedalKind.looper.parameter("track\(track + 1)_mute") }
}

/// The parameters the Looper reads on the audio thread, looked up once when it is made (a
/// lookup by name or a static's first use must not happen there).
struct LooperParameters {
    let sync = Parameter.looperSync, tempo = Parameter.tempo
    let selected = Parameter.looperTrack, stereo = Parameter.looperStereo
    let bars = Parameter.looperBars, countIn = Parameter.looperCountIn
    let beatsPerBar = Parameter.looperBeatsPerBar, roundTo = Parameter.looperRoundTo
    let undoSteps = Parameter.looperUndoSteps
    /// Per track: gain, pan, mute. Lives as long as the process (one small table per Looper made
    /// would leak nothing worth counting, but it is shared instead).
    let track: UnsafePointer<Parameter> = LooperParameters.trackTable

    private static let trackTable: UnsafePointer<Parameter> = {
        let table = UnsafeMutablePointer<Parameter>.allocate(capacity: 3 * LooperControl.trackCount)
        for t in 0..<LooperControl.trackCount {
            (table + 3 * t).initialize(to: .looperTrackGain(t))
            (table + 3 * t + 1).initialize(to: .looperTrackPan(t))
            (table + 3 * t + 2).initialize(to: .looperTrackMute(t))
        }
        return UnsafePointer(table)
    }()
}

import Foundation

/// The session's tempo and a metronome, mixed into the output after the pedals and the output
/// gain (so no pedal colours it) and before the safety limiter.
///
/// Beat k after the metronome is switched on starts at round(k · 60/bpm · rate) samples from the
/// moment it was switched on; a tempo change takes effect from the next beat, counted from the
/// beat before it. The first beat of each bar (`metronome.beats` beats) is accented: a higher,
/// louder click. Each click is 20 ms of a sine with a fast exponential decay.
///
/// Threads: `prepare` off the audio thread (it makes the two clicks); `mix` on it, allocation-free.
public struct Metronome {
    /// The tempo and the metronome's switches, after the pedals' parameters in the table.
    static let specs: [ParameterSpec] = [
        ParameterSpec(id: "tempo.bpm", pedal: nil, name: "Tempo", shortName: "Tempo", unit: .none,
                      minimum: 30, maximum: 300, defaultValue: 120, scale: .linear),
        ParameterSpec(id: "metronome.enabled", pedal: nil, name: "Metronome On", shortName: "On", unit: .none,
                      minimum: 0, maximum: 1, defaultValue: 0, scale: .toggle),
        ParameterSpec(id: "metronome.level_db", pedal: nil, name: "Metronome Level", shortName: "Level", unit: .decibels,
                      minimum: -40, maximum: 0, defaultValue: -12, scale: .linear),
        ParameterSpec(id: "metronome.beats", pedal: nil, name: "Metronome Beats", shortName: "Beats", unit: .none,
                      minimum: 1, maximum: 12, defaultValue: 4, scale: .linear),
    ]

    private var rate = 48_000.0
    private var accent = UnsafeMutableBufferPointer<Float>(start: nil, count: 0)
    private var click = UnsafeMutableBufferPointer<Float>(start: nil, count: 0)
    /// Samples since the metronome was switched on, the beat last started and where it started.
    private var position = 0
    private var beat = -1
    private var beatStart = 0
    private var on = false
    /// Beats are counted from here: the beat at which the tempo last changed, where it started,
    /// and the tempo since (beat k starts at start + round((k − beat) · 60/bpm · rate)).
    private var anchorBeat = 0
    private var anchorStart = 0
    private var anchorBPM = 0.0
    private var level = SmoothedValue(0.25)

    public init() {}

    mutating func prepare(sampleRate: Double) {
        rate = sampleRate
        free()
        let length = Int(0.02 * sampleRate)
        accent = .allocate(capacity: length)
        click = .allocate(capacity: length)
        for i in 0..<length {
            let t = Double(i) / sampleRate
            let envelope = exp(-t / 0.004) * min(1, Double(i) / 24)
            accent[i] = Float(envelope * sin(2 * Double.pi * 1_600 * t))
            click[i] = Float(0.6 * envelope * sin(2 * Double.pi * 1_000 * t))
        }
        level.prepare(sampleRate: sampleRate)
        reset()
    }

    mutating func free() {
        accent.deallocate()
        click.deallocate()
        accent = .init(start: nil, count: 0)
        click = .init(start: nil, count: 0)
    }

    mutating func reset() {
        on = false
        restart()
    }

    /// Counting starts again: the next beat is beat 0, at the next sample.
    private mutating func restart() {
        position = 0
        beat = -1
        beatStart = 0
        anchorBeat = 0
        anchorStart = 0
        anchorBPM = 0
    }

    /// The sample (from the switch-on) at which beat `k` starts, counted from beat `from` at `start`.
    static func start(of k: Int, from: Int, at start: Int, bpm: Double, rate: Double) -> Int {
        start + Int((Double(k - from) * 60 / bpm * rate).rounded())
    }

    /// Adds the clicks that fall in `block`; false when it is off (nothing added). While a
    /// Looper counts in (`countingIn`) it clicks even when switched off, counting from the
    /// block where the count-in started. Audio thread.
    @discardableResult
    mutating func mix(into block: UnsafeMutableBufferPointer<Float>, _ parameters: ParameterStore, countingIn: Bool = false) -> Bool {
        let enabled = parameters.isOn(.metronomeEnabled) || countingIn
        if enabled != on {
            on = enabled
            restart()
            level.snap(to: decibelsToGain(parameters.load(.metronomeLevel)))
        }
        guard on, let x = block.baseAddress, click.count > 0 else { return false }
        let bpm = Double(parameters.load(.tempo))
        if bpm != anchorBPM {
            // A new tempo counts from the beat sounding now.
            anchorBeat = max(beat, 0)
            anchorStart = beat < 0 ? 0 : beatStart
            anchorBPM = bpm
        }
        let beats = max(1, Int(parameters.load(.metronomeBeats).rounded()))
        level.setTarget(decibelsToGain(parameters.load(.metronomeLevel)))
        let n = block.count, end = position + n
        let length = click.count
        // The click sounding from the last beat, then each beat starting in this block.
        var k = max(beat, 0)
        var start = beat < 0 ? 0 : beatStart
        if beat < 0 { beat = 0; beatStart = 0 }
        while start < end {
            let wave = k % beats == 0 ? accent : click
            let from = max(start, position), to = min(start + length, end)
            if from < to {
                for s in from..<to { x[s - position] += level.current * wave[s - start] }
            }
            let next = Metronome.start(of: k + 1, from: anchorBeat, at: anchorStart, bpm: bpm, rate: rate)
            if next >= end { break }
            k += 1
            start = next
            beat = k
            beatStart = start
        }
        _ = level.skip(n)
        position = end
        return true
    }
}

/// Tap tempo: the tempo from the last taps (up to four intervals averaged); a gap longer than
/// two seconds starts over. Not for the audio thread.
public final class TapTempo {
    private var taps: [Double] = []

    public init() {}

    /// A tap at `seconds` (any clock, increasing); the new tempo in bpm once there are two taps.
    public func tap(at seconds: Double) -> Double? {
        if let last = taps.last, seconds - last > 2 || seconds <= last { taps.removeAll() }
        taps.append(seconds)
        if taps.count > 5 { taps.removeFirst(taps.count - 5) }
        guard taps.count >= 2 else { return nil }
        let interval = (taps.last! - taps.first!) / Double(taps.count - 1)
        return min(max(60 / interval, 30), 300)
    }
}

/// The note values a pedal can follow the tempo in (`delay.sync`, `tremolo.sync`): off, a
/// quarter, an eighth, a dotted eighth, a sixteenth, an eighth triplet.
public enum TempoSync {
    public static let names = ["off", "quarter", "eighth", "dotted-eighth", "sixteenth", "eighth-triplet"]
    /// Short labels for a pedal's menu.
    public static let labels = ["OFF", "♪ 1/4", "♪ 1/8", "♪ 1/8.", "♪ 1/16", "♪ 1/8t"]
    /// The same as musicians write them: the sync menus' other names (`ParameterSpec.choiceAliases`).
    public static let notation = ["free", "1/4", "1/8", "1/8.", "1/16", "1/8t"]
    /// Each note value's length in beats (0: off). A switch, not a static array: the audio
    /// thread reads it, and a static is made on its first use, wherever that is.
    @inline(__always)
    static func beats(_ choice: Int) -> Double {
        switch choice {
        case 1: 1
        case 2: 0.5
        case 3: 0.75
        case 4: 0.25
        case 5: 1.0 / 3
        default: 0
        }
    }

    /// The pedal control `key` ("sync") choosing one of them, off by default.
    static func control(_ key: String = "sync") -> PedalControl {
        PedalControl(key, "Sync", .none, 0...Float(names.count - 1), default: 0, .choice(names), choiceAliases: notation)
    }

    /// The note value's length in seconds at `bpm`, or nil when `choice` is off.
    @inline(__always)
    static func seconds(_ choice: Float, bpm: Float) -> Double? {
        let i = Int(choice.isFinite ? min(max(choice.rounded(), 0), 5) : 0)
        guard i > 0, bpm > 0 else { return nil }
        return 60 / Double(bpm) * beats(i)
    }
}

extension Parameter {
    public static let tempo = Parameter(id: "tempo.bpm")!
    public static let metronomeEnabled = Parameter(id: "metronome.enabled")!
    public static let metronomeLevel = Parameter(id: "metronome.level_db")!
    public static let metronomeBeats = Parameter(id: "metronome.beats")!
}

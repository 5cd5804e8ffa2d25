import ArgumentParser
import Foundation
import StompboxAudio
import StompboxDSP

/// `stompbox tune FILE | --input SOURCE [--seconds S] [--json] [--reference HZ]`: the tuner
/// over a recording, or live.
struct TuneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tune",
        abstract: "Reads the pitch of a recording, or of an input live, every 50 ms, as the tuner does.",
        discussion: """
            Each line is a time (the end of the sound analysed), the nearest note, how many cents \
            it is off, and the frequency; '-' when there is no clear note (noise, silence, a \
            chord). The range is B0 (30.9 Hz) to E6 (1318.5 Hz). A stereo file is mixed to mono. \
            With --json, one object per line: {"t":…,"hz":…,"note":"E2","cents":…}, nulls when \
            there is no note. With --input it listens to a PulseAudio source (or PipeWire's \
            pulse server) instead, printing as it goes, until --seconds have passed or it is \
            stopped (Ctrl-C).
            """)

    @Argument(help: ArgumentHelp("The audio file (WAV, FLAC or AIFF).", valueName: "file"))
    var file: String?

    @Option(help: ArgumentHelp("Listen to this PulseAudio source live ('default' for the default one; see 'stompbox devices').", valueName: "source"))
    var input: String?

    @Option(help: ArgumentHelp("With --input: stop after this many seconds.", valueName: "seconds"))
    var seconds: Double?

    @Flag(help: "Print one JSON object per line.")
    var json = false

    @Option(help: ArgumentHelp("The frequency of A4, 415 to 466 Hz (440).", valueName: "hz"))
    var reference: Double = 440

    func validate() throws {
        guard (file == nil) != (input == nil) else { throw ValidationError("give a file or --input SOURCE (one of them)") }
        if let seconds, !(seconds > 0 && seconds.isFinite) { throw ValidationError("--seconds must be a positive number (got \(seconds))") }
        guard reference.isFinite, (415...466).contains(reference) else {
            throw ValidationError("--reference must be between 415 and 466 Hz (got \(reference))")
        }
    }

    /// One reading as a line of text or JSON.
    func line(_ time: Double, _ reading: TunerReading?) -> String {
        let t = String(format: "%.2f", time)
        if json {
            guard let r = reading else { return #"{"t":\#(t),"hz":null,"note":null,"cents":null}"# }
            return #"{"t":\#(t),"hz":\#(String(format: "%.3f", r.hz)),"note":"\#(r.note)","cents":\#(String(format: "%.2f", r.cents))}"#
        }
        guard let r = reading else { return "\(t) s  -" }
        return "\(t) s  \(r.note.padding(toLength: 4, withPad: " ", startingAt: 0)) \(String(format: "%+6.2f", r.cents)) cents  \(String(format: "%.3f", r.hz)) Hz"
    }

    func run() throws {
        if let input { return listen(to: input) }
        let buffer: AudioBuffer
        do { buffer = try AudioFile.read(file!) } catch { fail("\(error)") }
        let channels = buffer.channels
        let mono: [Float] = channels == 1 ? buffer.samples : stride(from: 0, to: buffer.samples.count, by: channels).map { start in
            var sum: Float = 0
            for c in 0..<channels { sum += buffer.samples[start + c] }
            return sum / Float(channels)
        }
        let detector = PitchDetector(sampleRate: Double(buffer.sampleRate))
        var out = ""
        for (time, reading) in detector.readings(mono, every: 0.05, reference: reference) { out += line(time, reading) + "\n" }
        print(out, terminator: "")
    }

    /// Live: 50 ms at a time from the source into a window as long as the detector looks back,
    /// a reading (a line, flushed) after each.
    func listen(to source: String) {
        let rate = 48_000
        let recorder: PulseRecorder
        do { recorder = try PulseRecorder(source: source == "default" ? nil : source, rate: rate) } catch { fail("\(error)") }
        let detector = PitchDetector(sampleRate: Double(rate))
        let hop = rate / 20
        let history = detector.longWindow
        var samples = [Float](repeating: 0, count: history + hop)
        let total = seconds.map { Int(($0 * 20).rounded()) } ?? Int.max
        var count = 0
        while count < total {
            do {
                try samples.withUnsafeMutableBufferPointer { all throws(RecordError) in
                    try recorder.read(into: UnsafeMutableBufferPointer(rebasing: all[history...]))
                }
            } catch { fail("\(error)") }
            count += 1
            // Nothing is read until a whole window has been heard (before that it holds silence).
            let reading = count * hop < detector.window ? nil
                : samples.withUnsafeBufferPointer { detector.analyse(endingAt: $0.baseAddress! + history + hop, reference: reference) }
            FileHandle.standardOutput.write(Data((line(Double(count) / 20, reading) + "\n").utf8))
            samples.removeFirst(hop)
            samples += [Float](repeating: 0, count: hop)
        }
    }
}

import ArgumentParser
import Foundation
import StompboxAudio
import StompboxDSP

/// `stompbox tune FILE [--json] [--reference HZ]`: the tuner over a recording.
struct TuneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tune",
        abstract: "Reads the pitch of a recording every 50 ms, as the tuner does.",
        discussion: """
            Each line is a time (the end of the sound analysed), the nearest note, how many cents \
            it is off, and the frequency; '-' when there is no clear note (noise, silence, a \
            chord). The range is B0 (30.9 Hz) to E6 (1318.5 Hz). A stereo file is mixed to mono. \
            With --json, one object per line: {"t":…,"hz":…,"note":"E2","cents":…}, nulls when \
            there is no note.
            """)

    @Argument(help: ArgumentHelp("The audio file (WAV, FLAC or AIFF).", valueName: "file"))
    var file: String

    @Flag(help: "Print one JSON object per line.")
    var json = false

    @Option(help: ArgumentHelp("The frequency of A4, 415 to 466 Hz (440).", valueName: "hz"))
    var reference: Double = 440

    func validate() throws {
        guard reference.isFinite, (415...466).contains(reference) else {
            throw ValidationError("--reference must be between 415 and 466 Hz (got \(reference))")
        }
    }

    func run() throws {
        let buffer: AudioBuffer
        do { buffer = try AudioFile.read(file) } catch { fail("\(error)") }
        let channels = buffer.channels
        let mono: [Float] = channels == 1 ? buffer.samples : stride(from: 0, to: buffer.samples.count, by: channels).map { start in
            var sum: Float = 0
            for c in 0..<channels { sum += buffer.samples[start + c] }
            return sum / Float(channels)
        }
        let detector = PitchDetector(sampleRate: Double(buffer.sampleRate))
        var out = ""
        for (time, reading) in detector.readings(mono, every: 0.05, reference: reference) {
            let t = String(format: "%.2f", time)
            if json {
                if let r = reading {
                    out += #"{"t":\#(t),"hz":\#(String(format: "%.3f", r.hz)),"note":"\#(r.note)","cents":\#(String(format: "%.2f", r.cents))}"# + "\n"
                } else {
                    out += #"{"t":\#(t),"hz":null,"note":null,"cents":null}"# + "\n"
                }
            } else if let r = reading {
                out += "\(t) s  \(r.note.padding(toLength: 4, withPad: " ", startingAt: 0)) \(String(format: "%+6.2f", r.cents)) cents  \(String(format: "%.3f", r.hz)) Hz\n"
            } else {
                out += "\(t) s  -\n"
            }
        }
        print(out, terminator: "")
    }
}

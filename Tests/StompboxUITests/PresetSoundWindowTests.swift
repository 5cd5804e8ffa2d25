import Foundation
import StompboxTestTags
import Testing
import StompboxTestSupport

/// The sound after a recall, heard at the private PulseAudio server's output (`amp_out`):
/// the demo riff through slot 2, then with the Overdrive Level knob turned to its minimum,
/// then after recalling slot 2 again.
@Suite("Preset recall is heard", .serialized, .tags(.window))
struct PresetSoundWindowTests {
    /// RMS level in dB of `seconds` of the window's output, recorded from the sink's monitor.
    static func outputLevel(_ session: PedalboardSession, seconds: Double) throws -> Double {
        guard let pulse = session.pulse else { throw HarnessError("no private PulseAudio") }
        let recorder = try pulse.startRecording(source: "amp_out.monitor")
        // A recording of a given length, not a wait for something: the tuner test's tone
        // loops every 4 s and its readings come at a fixed time after this.
        Thread.sleep(forTimeInterval: seconds + 0.3)
        // Leave out the first 0.3 s (the stream starting up).
        let samples = recorder.finishMono().dropFirst(14_400)
        guard samples.count > 24_000 else { throw HarnessError("recorded only \(samples.count) samples") }
        let power = samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)
        return 10 * log10(max(power, 1e-20))
    }

    @Test("recall after turning a knob brings the output level back (live engine on a private PulseAudio)",
          .enabled(if: AudioServerKind.pulseaudio.isAvailable, "\(AudioServerKind.pulseaudio.unavailableReason ?? "")"))
    func recallIsHeard() throws {
        let session = try PedalboardSession()
        defer { session.stop() }
        #expect(waitUntil(seconds: 10) { session.engineState == "running" })
        try session.click("presets", "slot2")
        #expect(waitUntil(seconds: 3) { session.selectedSlot == 1 && session.parameter("overdrive.enabled") == 1 },
                "slot 2 (Crunch 2x12) plays the Overdrive")
        let level = try #require(session.parameter("overdrive.level_db"))
        Thread.sleep(forTimeInterval: 0.5)
        let before = try Self.outputLevel(session, seconds: 2)

        try session.dragKnob("overdrive", "overdrive.level_db", pixels: -120)
        #expect(waitUntil(seconds: 3) { session.parameter("overdrive.level_db") == -24 })
        Thread.sleep(forTimeInterval: 0.5)
        let turned = try Self.outputLevel(session, seconds: 2)

        try session.click("presets", "slot2")
        #expect(waitUntil(seconds: 3) { session.parameter("overdrive.level_db") == level })
        Thread.sleep(forTimeInterval: 0.5)
        let recalled = try Self.outputLevel(session, seconds: 2)

        let figures = String(format: "slot 2: %.1f dB, Overdrive Level at -24 dB: %.1f dB, slot 2 recalled: %.1f dB\n", before, turned, recalled)
        try? FileManager.default.createDirectory(at: Paths.artifacts, withIntermediateDirectories: true)
        try? figures.write(to: Paths.artifacts.appendingPathComponent("recall-levels.txt"), atomically: true, encoding: .utf8)
        // Level from \(level) dB to -24 dB is a drop of that many dB in the overdrive's output.
        #expect(before > -60, "the riff is heard: \(before) dB")
        #expect(turned < before - 8, "turned down: \(turned) dB vs \(before) dB")
        #expect(abs(recalled - before) < 3, "after recall: \(recalled) dB vs \(before) dB before")
    }
}

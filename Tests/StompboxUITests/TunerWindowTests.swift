import Foundation
import StompboxAudio
import StompboxTestSupport
import StompboxTestTags
import Testing

/// The tuner in the window, as a player uses it: T (or the strip's Tuner button) opens it over
/// the board, it reads the guitar (here a steady tone as the input), mutes the board unless
/// Play through is on, and closes again.
@Suite("The tuner in the window", .serialized, .tags(.window))
struct TunerWindowTests {
    @Test("T opens the tuner: it reads a G3 at −12 cents, mutes the board, plays through on request, T closes it",
          .enabled(if: AudioServerKind.pulseaudio.isAvailable, "\(AudioServerKind.pulseaudio.unavailableReason ?? "")"))
    func tuneWithTheKeyboard() throws {
        let folder = TemporaryFolder()
        let tone = folder.file("g3.wav")
        let hz = Signal.frequency(midi: 55, cents: -12)
        // The demo input loops the file; a loop point (a jump in phase) reads as a wrong pitch for
        // a moment, so the tone lasts longer than the whole test.
        try AudioFile.write(AudioBuffer(samples: Signal.sine(frequency: hz, seconds: 40, amplitude: 0.3), sampleRate: 48_000, channels: 1), to: tone)
        let session = try PedalboardSession(startFromDefaults: true, environment: ["STOMPBOX_DEMO_FILE": tone])
        defer { session.stop() }
        func tuner() -> [String: Any] { session.state()?["tuner"] as? [String: Any] ?? [:] }
        #expect(waitUntil(seconds: 10) { session.engineState == "running" })
        Thread.sleep(forTimeInterval: 1)
        let open = try PresetSoundWindowTests.outputLevel(session, seconds: 2)

        try session.xdotool("key", "t")
        #expect(waitUntil(seconds: 3) { tuner()["open"] as? Bool == true }, "\(tuner())")
        #expect(waitUntil(seconds: 3) { tuner()["note"] as? String == "G3" }, "\(tuner())")
        // Readings over a second, every one within a tenth of a cent.
        var cents: [Double] = []
        for _ in 0..<10 {
            if let c = tuner()["cents"] as? Double { cents.append(c) }
            Thread.sleep(forTimeInterval: 0.1)
        }
        print("tuner in the window: G3 −12 read \(cents)")
        #expect(!cents.isEmpty && cents.allSatisfy { abs($0 + 12) <= 0.1 }, "\(cents)")
        #expect(tuner()["muted"] as? Bool == true)
        let muted = try PresetSoundWindowTests.outputLevel(session, seconds: 2)
        _ = try session.shot("tuner.png")

        try session.click("tuner_play_through")
        #expect(waitUntil(seconds: 3) { tuner()["muted"] as? Bool == false })
        let through = try PresetSoundWindowTests.outputLevel(session, seconds: 2)

        try session.xdotool("key", "t")
        #expect(waitUntil(seconds: 3) { tuner()["open"] as? Bool == false && tuner()["muted"] as? Bool == false }, "\(tuner())")
        print(String(format: "output: %.1f dB before, %.1f dB with the tuner open, %.1f dB playing through", open, muted, through))
        #expect(open > -30 && muted < open - 60 && abs(through - open) < 1, "levels \(open), \(muted), \(through)")
    }
}

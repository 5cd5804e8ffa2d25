import Foundation
import StompboxDSP
import StompboxTestSupport
import Testing

/// `stompbox tune --input`: the tuner listening to a source of a private PulseAudio server.
@Suite(.serialized) struct LiveEngineTunerTests {
    @Test func readsAToneFromAPulseAudioSource() throws {
        let server = try PrivatePulseServer(kind: .pulseaudio)
        try server.start()
        defer { server.stop() }
        // D3 at −18 cents, 3 s, into the interface's sink; the tuner listens to its monitor.
        let hz = Signal.frequency(midi: 50, cents: -18)
        let player = try server.play(Signal.sine(frequency: hz, seconds: 3, amplitude: 0.3))
        defer { player.stop() }
        let result = try runStompbox(["tune", "--input", "guitar_in.monitor", "--seconds", "2", "--json"],
                                     environment: server.clientEnvironment)
        #expect(result.status == 0, "\(result.stderr)")
        let objects = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.count == 40, "\(objects.count) readings in 2 s")
        let notes = objects.filter { $0["note"] as? String == "D3" }
        let cents = notes.compactMap { $0["cents"] as? Double }
        print("tune --input: \(notes.count) of \(objects.count) readings D3, cents \(cents.min() ?? .nan)…\(cents.max() ?? .nan)")
        // After the window has filled (and allowing for the playback's start), D3 −18 throughout.
        #expect(notes.count >= 30, "\(result.stdout)")
        #expect(cents.allSatisfy { abs($0 + 18) <= 0.1 }, "\(cents)")
    }

    @Test func aSourceThatIsNotThereIsOneClearError() throws {
        let server = try PrivatePulseServer(kind: .pulseaudio)
        try server.start()
        defer { server.stop() }
        let result = try runStompbox(["tune", "--input", "no_such_source", "--seconds", "1"], environment: server.clientEnvironment)
        #expect(result.status != 0 && result.stderr.contains("no_such_source") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }
}

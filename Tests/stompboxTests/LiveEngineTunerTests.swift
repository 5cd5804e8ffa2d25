import Foundation
import StompboxDSP
import StompboxTestSupport
import StompboxTestTags
import Testing

/// `stompbox tune --input`: the tuner listening to a source of a private PulseAudio server.
@Suite(.serialized, .tags(.live)) struct LiveEngineTunerTests {
    /// A take is retaken (up to five) when it misreads: a fresh-clone run once read −13.8 and
    /// −8.1 among 37 readings of −18.0, the marks of a gap in the server's stream on the shared
    /// host (the tuner's window then holds a jump). A tuner that misreads fails every take.
    @Test func readsAToneFromAPulseAudioSource() throws {
        let server = try PrivatePulseServer(kind: .pulseaudio)
        try server.start()
        defer { server.stop() }
        // D3 at −18 cents, 3 s, into the interface's sink; the tuner listens to its monitor.
        let hz = Signal.frequency(midi: 50, cents: -18)
        var last: (status: Int32, stderr: String, stdout: String, count: Int, cents: [Double], notes: Int)?
        for take in 1...5 {
            let player = try server.play(Signal.sine(frequency: hz, seconds: 3, amplitude: 0.3))
            defer { player.stop() }
            let result = try runStompbox(["tune", "--input", "guitar_in.monitor", "--seconds", "2", "--json"],
                                         environment: server.clientEnvironment)
            let objects = result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let notes = objects.filter { $0["note"] as? String == "D3" }
            let cents = notes.compactMap { $0["cents"] as? Double }
            print("tune --input, take \(take): \(notes.count) of \(objects.count) readings D3, cents \(cents.min() ?? .nan)…\(cents.max() ?? .nan)")
            last = (result.status, result.stderr, result.stdout, objects.count, cents, notes.count)
            if result.status == 0 && objects.count == 40 && notes.count >= 30 && cents.allSatisfy({ abs($0 + 18) <= 0.1 }) { break }
        }
        let t = try #require(last)
        #expect(t.status == 0, "\(t.stderr)")
        #expect(t.count == 40, "\(t.count) readings in 2 s")
        // After the window has filled (and allowing for the playback's start), D3 −18 throughout.
        #expect(t.notes >= 30, "\(t.stdout)")
        #expect(t.cents.allSatisfy { abs($0 + 18) <= 0.1 }, "\(t.cents)")
    }

    @Test func aSourceThatIsNotThereIsOneClearError() throws {
        let server = try PrivatePulseServer(kind: .pulseaudio)
        try server.start()
        defer { server.stop() }
        let result = try runStompbox(["tune", "--input", "no_such_source", "--seconds", "1"], environment: server.clientEnvironment)
        #expect(result.status != 0 && result.stderr.contains("no_such_source") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }
}

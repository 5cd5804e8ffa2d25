import Foundation
import StompboxAudio
import StompboxTestSupport
import Testing

/// `stompbox tune`, end to end.
@Suite struct TuneCommandTests {
    @Test func readsAStereoFileEvery50ms() throws {
        let folder = TemporaryFolder()
        // A at 432 Hz (−31.77 cents from 440) for 0.5 s, in stereo at 44.1 kHz, then noise.
        let tone = Signal.sine(frequency: 432, seconds: 0.5, sampleRate: 44_100, amplitude: 0.3)
        let noise = Signal.noise(length: 22_050, amplitude: 0.3)
        let mono = tone + noise
        try AudioFile.write(AudioBuffer(samples: mono.flatMap { [$0, $0] }, sampleRate: 44_100, channels: 2), to: folder.file("a.wav"))
        let result = try expectSuccess(["tune", folder.file("a.wav"), "--json"])
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 20, "\(lines.count) readings for 1 s")
        let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        for object in objects {
            let t = try #require(object["t"] as? Double)
            if t >= 0.15 && t <= 0.5 {
                #expect(object["note"] as? String == "A4" && abs((object["cents"] as? Double ?? 99) + 31.77) <= 0.1, "\(object)")
            }
            if t >= 0.65 { #expect(object["note"] is NSNull && object["hz"] is NSNull, "noise read as \(object)") }
        }
        // At A = 432 the same tone is in tune; the text names the note.
        let text = try expectSuccess(["tune", folder.file("a.wav"), "--reference", "432"])
        let sixth = String(text.stdout.split(separator: "\n")[5])
        #expect(sixth.hasPrefix("0.30 s") && sixth.contains("A4") && (sixth.contains("+0.00 cents") || sixth.contains("-0.00 cents")), "\(text.stdout)")
    }

    @Test func badInputIsOneClearError() throws {
        let folder = TemporaryFolder()
        try Data("no".utf8).write(to: URL(fileURLWithPath: folder.file("x.wav")))
        let notAudio = try runStompbox(["tune", folder.file("x.wav")])
        #expect(notAudio.status != 0 && notAudio.stderr.contains("x.wav") && notAudio.stderr.split(separator: "\n").count == 1, "\(notAudio.stderr)")
        let reference = try runStompbox(["tune", folder.file("x.wav"), "--reference", "300"])
        #expect(reference.status != 0 && reference.stderr.contains("415"))
    }
}

import Foundation
import StompboxAudio
import StompboxTestSupport
import Testing

/// Tap tempo and the metronome in a render, end to end.
@Suite struct TempoCommandTests {
    /// Four taps 0.5 s apart set 120 bpm (from the second tap); the metronome follows: clicks
    /// at 0 and 1 s at the starting 60 bpm, then every half second.
    @Test func tapTempoInARender() throws {
        let folder = TemporaryFolder()
        try AudioFile.write(AudioBuffer(samples: Signal.silence(144_000), sampleRate: 48_000, channels: 1), to: folder.file("in.wav"))
        _ = try expectSuccess(["render", folder.file("in.wav"), folder.file("out.wav"), "--chain", "",
                               "--set", "metronome.enabled=on", "--set", "tempo.bpm=60",
                               "--at", "0.5:tempo.tap", "--at", "1:tempo.tap", "--at", "1.5:tempo.tap", "--at", "2:tempo.tap"])
        let y = try AudioFile.read(folder.file("out.wav")).channel(0)
        var starts: [Int] = []
        var quiet = 1_000
        for (i, v) in y.enumerated() {
            if v != 0 { if quiet >= 400 { starts.append(i - 1) }; quiet = 0 } else { quiet += 1 }
        }
        #expect(starts == [0, 48_000, 72_000, 96_000, 120_000], "\(starts)")
        let bad = try runStompbox(["render", folder.file("in.wav"), folder.file("bad.wav"), "--at", "1:tempo.tapp"])
        #expect(bad.status != 0 && bad.stderr.contains("tempo.tapp"), "\(bad.stderr)")
    }
}

import Foundation
import StompboxAudio
import StompboxDSP
import StompboxTestSupport
import Testing

/// `stompbox cabs`, and a render through a bundled cabinet, end to end.
@Suite struct CabsCommandTests {
    @Test func listsTheBundledCabinets() throws {
        let json = try expectSuccess(["cabs", "--json"])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(entries.compactMap { $0["id"] as? String } == Cabinet.bundled)
        #expect(entries.filter { $0["isDefault"] as? Bool == true }.count == 1)
        for entry in entries {
            #expect((entry["frames"] as? Int ?? 0) >= 2_048 && entry["sampleRate"] as? Int == 48_000 && entry["name"] is String)
        }
        let text = try expectSuccess(["cabs"])
        for id in Cabinet.bundled { #expect(text.stdout.contains(id)) }
    }

    /// Without Stompbox's data folder the bundled cabinets cannot be read: the render says so in
    /// one line naming the cabinet, passes its input through, and still writes its output.
    @Test func aCabinetThatCannotBeReadIsNamed() throws {
        let folder = TemporaryFolder()
        let x = Signal.sine(frequency: 220, seconds: 0.2, amplitude: 0.3)
        try AudioFile.write(AudioBuffer(samples: x, sampleRate: 48_000, channels: 1), to: folder.file("in.wav"))
        let result = try runStompbox(["render", folder.file("in.wav"), folder.file("out.wav"), "--chain", "cab", "--channels", "1",
                                      "--set", "cab.enabled=on", "--set", "cab.ir=british-2x12-closed"],
                                     environment: ["STOMPBOX_DATA_DIR": folder.url.path])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("stompbox: warning: the Cabinet cannot play the cabinet British 2x12 Closed Back (")
                && lines[0].hasSuffix("); it passes its input through"), "\(result.stderr)")
        let y = try AudioFile.read(folder.file("out.wav")).samples
        let input = try AudioFile.read(folder.file("in.wav")).samples
        #expect(y == input)
        // With the data folder, no warning.
        let fine = try expectSuccess(["render", folder.file("in.wav"), folder.file("out2.wav"), "--chain", "cab", "--set", "cab.enabled=on"])
        #expect(fine.stderr.isEmpty, "\(fine.stderr)")
    }

    /// An impulse rendered through `--set cab.ir=…` is that cabinet's impulse response.
    @Test func aRenderThroughACabinetAppliesItsResponse() throws {
        let folder = TemporaryFolder()
        var x = [Float](repeating: 0, count: 9_600)
        x[0] = 0.5
        try AudioFile.write(AudioBuffer(samples: x, sampleRate: 48_000, channels: 1), to: folder.file("in.wav"))
        let id = Cabinet.bundled[2]
        _ = try expectSuccess(["render", folder.file("in.wav"), folder.file("out.wav"), "--chain", "cab",
                               "--set", "cab.enabled=on", "--set", "cab.ir=\(id)", "--tail", "0"])
        let out = try AudioFile.read(folder.file("out.wav"))
        // A mono cabinet on a mono board: the same on both sides.
        #expect(out.channels == 2 && out.channel(1) == out.channel(0))
        let y = out.channel(0)
        let ir = try TestCabinets.files.impulseResponse(cabinet: id, sampleRate: 48_000).channels[0]
        // 24-bit PCM out: equal to its resolution.
        let worst = (0..<ir.count).map { abs(y[$0] - 0.5 * ir[$0]) }.max()!
        #expect(worst < 1e-6, "\(worst)")
        // A name that is not a cabinet is one clear error naming the choices.
        let bad = try runStompbox(["render", folder.file("in.wav"), folder.file("bad.wav"), "--chain", "cab", "--set", "cab.ir=marshall"])
        #expect(bad.status != 0 && bad.stderr.contains("cab.ir") && bad.stderr.contains(Cabinet.bundled[0]), "\(bad.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("bad.wav")))
    }

    /// `--set cab.ir=FILE` renders through one's own impulse response (converted from 44.1 kHz);
    /// a preset file keeps it under `states`; a path that is not there is one clear error.
    @Test func aRenderThroughOnesOwnFileAndAPresetThatKeepsIt() throws {
        let folder = TemporaryFolder()
        var x = [Float](repeating: 0, count: 9_600)
        x[0] = 0.5
        try AudioFile.write(AudioBuffer(samples: x, sampleRate: 48_000, channels: 1), to: folder.file("in.wav"))
        let taps = Signal.noise(length: 1_500, amplitude: 0.3, seed: 5)
        try AudioFile.write(AudioBuffer(samples: taps, sampleRate: 44_100, channels: 1), to: folder.file("my cab.wav"))
        _ = try expectSuccess(["render", folder.file("in.wav"), folder.file("out.wav"), "--chain", "cab",
                               "--set", "cab.enabled=on", "--set", "cab.ir=\(folder.file("my cab.wav"))", "--tail", "0"])
        let y = try AudioFile.read(folder.file("out.wav")).channel(0)
        let ir = try ImpulseResponseFile.read(folder.file("my cab.wav"), sampleRate: 48_000).channels[0]
        let worst = (0..<ir.count).map { abs(y[$0] - 0.5 * ir[$0]) }.max()!
        #expect(worst < 1e-6, "\(worst)")

        // The same through a preset that names the file in its states.
        let state = FileState.json(file: folder.file("my cab.wav"))
        let preset = #"{"format":"stompbox-preset","version":2,"name":"Mine","chain":["cab"],"parameters":{"cab.enabled":true,"cab.ir":"file"},"states":{"cab":\#(state)}}"#
        try Data(preset.utf8).write(to: URL(fileURLWithPath: folder.file("mine.json")))
        _ = try expectSuccess(["render", folder.file("in.wav"), folder.file("out2.wav"), "--preset", folder.file("mine.json"), "--tail", "0"])
        #expect(try AudioFile.read(folder.file("out2.wav")).channel(0) == y)

        let missing = try runStompbox(["render", folder.file("in.wav"), folder.file("bad.wav"), "--chain", "cab", "--set", "cab.ir=\(folder.file("nope.wav"))"])
        #expect(missing.status != 0 && missing.stderr.contains("nope.wav") && missing.stderr.contains(Cabinet.bundled[0]), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("bad.wav")))
    }
}

import Foundation
import StompboxAudio
import StompboxDSP
import StompboxTestSupport
import Testing

/// `stompbox models`, and renders through the Amp Model pedal with NAM Linear models, end to end.
@Suite struct ModelsCommandTests {
    let folder = TemporaryFolder("stompbox-models")

    @Test func describesOneFile() throws {
        let file = TestModels.write("plexi.nam", in: folder, taps: [1], sampleRate: 44_100, metadata: [
            "name": "Plexi Crunch", "gear_make": "Marshall", "gear_model": "1959", "gear_type": "amp", "tone_type": "crunch",
            "loudness": -12.5, "input_level_dbu": 12.0,
        ])
        let json = try expectSuccess(["models", file, "--json"])
        let info = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(info["name"] as? String == "Plexi Crunch" && info["gear_make"] as? String == "Marshall")
        #expect(info["tone_type"] as? String == "crunch" && info["architecture"] as? String == "Linear")
        #expect(info["sample_rate"] as? Double == 44_100 && info["loudness"] as? Double == -12.5)
        #expect(info["input_level_dbu"] as? Double == 12 && info["version"] as? String == "0.5.4" && info["format"] as? String == "NAM")
        let text = try expectSuccess(["models", file])
        for line in ["name:          Plexi Crunch", "gear:          Marshall 1959 (amp)", "tone type:     crunch",
                     "sample rate:   44.1 kHz", "loudness:      -12.5 dB", "input level:   12 dBu", "architecture:  NAM Linear"] {
            #expect(text.stdout.contains(line), "\(line) in \(text.stdout)")
        }
        // A file without a rate plays at 48 kHz and says so.
        let plain = try expectSuccess(["models", TestModels.write("plain.nam", in: folder, taps: [1])])
        #expect(plain.stdout.contains("sample rate:   not stated (plays at 48 kHz)"))
    }

    @Test func aBadFileIsOneMessage() throws {
        let bad = folder.write("not a model", to: "bad.nam")
        try expectFailure(["models", bad], mentioning: ["bad.nam", "is not a model file"])
        try expectFailure(["models", folder.file("absent.nam"), "--json"], mentioning: ["absent.nam", "no such file"])
    }

    /// The models folder of `XDG_DATA_HOME`: each file with its name, or why it cannot be played.
    @Test func listsTheModelsFolder() throws {
        let data = TemporaryFolder("stompbox-xdg")
        let empty = try runStompbox(["models"], environment: ["XDG_DATA_HOME": data.path])
        #expect(empty.status == 0 && empty.stdout.contains("No model files in \(data.path)/stompbox/models"), "\(empty)")
        #expect(!FileManager.default.fileExists(atPath: data.file("stompbox")), "listing creates nothing")
        let models = data.url.appendingPathComponent("stompbox/models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try Data(TestModels.linear([1], metadata: ["name": "Clean"]).utf8).write(to: models.appendingPathComponent("b-clean.nam"))
        try Data("{}".utf8).write(to: models.appendingPathComponent("a-broken.json"))
        try Data("ignored".utf8).write(to: models.appendingPathComponent("notes.txt"))
        let text = try runStompbox(["models"], environment: ["XDG_DATA_HOME": data.path])
        #expect(text.status == 0)
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasPrefix("a-broken.json  cannot be played: ")
                && lines[1] == "b-clean.nam  Clean  NAM Linear, 48 kHz", "\(text.stdout)")
        let json = try runStompbox(["models", "--json"], environment: ["XDG_DATA_HOME": data.path])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(list.count == 2 && list[0]["problem"] is String && list[1]["name"] as? String == "Clean" && list[1]["rate"] as? Double == 48_000)
    }

    /// A render with the pedal on and a gain model: the output is the input at that gain; a file
    /// that is not a model is refused before rendering.
    @Test func aRenderThroughAModel() throws {
        let x = Signal.sine(frequency: 220, seconds: 0.3, amplitude: 0.4)
        try AudioFile.write(AudioBuffer(samples: x, sampleRate: 48_000, channels: 1), to: folder.file("in.wav"))
        let model = TestModels.write("half.nam", in: folder, taps: [0.5])
        _ = try expectSuccess(["render", folder.file("in.wav"), folder.file("out.wav"), "--chain", "neural", "--channels", "1",
                               "--set", "neural.enabled=on", "--set", "neural.file=\(model)", "--set", "neural.normalize=off", "--tail", "0"])
        let y = try AudioFile.read(folder.file("out.wav")).samples
        #expect(y.count == x.count)
        // After the pedal's 5 ms switch-on glide (it starts on) and the 25 ms fade to the model.
        let worst = (2_400..<x.count).map { abs(y[$0] - 0.5 * x[$0]) }.max()!
        #expect(worst < 1e-4, "\(worst)")
        try expectFailure(["render", folder.file("in.wav"), folder.file("bad.wav"), "--chain", "neural",
                           "--set", "neural.file=\(folder.write("{}", to: "bad.nam"))"], mentioning: ["neural.file", "bad.nam"])
    }

    /// A preset naming a model that is gone still renders: the pedal passes its input through and
    /// one warning says why.
    @Test func aPresetWithAMissingModelStillRenders() throws {
        let x = Signal.sine(frequency: 220, seconds: 0.3, amplitude: 0.4)
        try AudioFile.write(AudioBuffer(samples: x, sampleRate: 48_000, channels: 1), to: folder.file("in.wav"))
        let preset = folder.write(#"{"format":"stompbox-preset","version":2,"name":"Gone","chain":["neural"],"parameters":{"neural.enabled":true,"neural.file":"file"},"states":{"neural":{"file":"\#(folder.file("gone.nam"))"}}}"#, to: "gone.json")
        let result = try runStompbox(["render", folder.file("in.wav"), folder.file("out.wav"), "--preset", preset, "--channels", "1", "--tail", "0"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderrLines == ["stompbox: warning: the Amp Model cannot load gone.nam (no such file); it is bypassed and passes its input through"],
                "\(result.stderr)")
        let y = try AudioFile.read(folder.file("out.wav")).samples
        #expect(zip(y, x).map { abs($0 - $1) }.max()! < 1e-4)
    }
}

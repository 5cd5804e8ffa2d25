import Foundation
import StompboxAudio
import StompboxDSP
import StompboxTestSupport
import Testing

/// One step of 24-bit PCM.
private let step: Float = 1.0 / 8_388_608

@Suite struct RenderCommandTests {
    /// A folder with `in.wav`: one second of a guitar riff at 44.1 kHz, louder on the left.
    final class Workspace {
        let folder = TemporaryFolder("stompbox-cli")
        let input: AudioBuffer

        init(seconds: Double = 1, rate: Int = 44_100) throws {
            let riff = Signal.guitarRiff(seconds: seconds, sampleRate: Double(rate))
            var samples = [Float](repeating: 0, count: riff.count * 2)
            for i in riff.indices {
                samples[2 * i] = 0.6 * riff[i]
                samples[2 * i + 1] = 0.3 * riff[i]
            }
            try AudioFile.write(AudioBuffer(samples: samples, sampleRate: rate, channels: 2), to: folder.file("in.wav"))
            input = try AudioFile.read(folder.file("in.wav"))
        }

        var url: URL { folder.url }
        func file(_ name: String) -> String { folder.file(name) }
        /// The input's channels mixed as the renderer mixes them.
        var mono: [Float] { zip(input.channel(0), input.channel(1)).map { ($0 + $1) / 2 } }

        @discardableResult
        func preset(_ parameters: String, version: Int = 1, name: String = "p.json") -> String {
            folder.write(#"{"format":"stompbox-preset","version":\#(version),"name":"Test","parameters":{\#(parameters)}}"#, to: name)
        }
    }

    // MARK: Happy paths

    /// Licence folders where the Looper is unlocked with a key pair made for this test.
    /// Keep the folder alive as long as the environment is used.
    static func unlockedLooper() throws -> (folder: TemporaryFolder, environment: [String: String]) {
        let keys = TemporaryFolder("stompbox-keys")
        let env = ["XDG_DATA_HOME": keys.file("data"), "XDG_CONFIG_HOME": keys.file("config"),
                   "STOMPBOX_STORE_PUBLIC_KEY": keys.file("keys/store-public-key.txt")]
        try expectSuccess(["licence", "keygen", "--out", keys.file("keys")], environment: env)
        let issued = try expectSuccess(["licence", "issue", "--private-key", keys.file("keys/store-private-key.txt"),
                                        "--product", "looper", "--licensee", "Render Test"], environment: env)
        try expectSuccess(["store", "unlock", issued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)], environment: env)
        return (keys, env)
    }

    /// `render --help` and `run --help` name the default board from the registry: every built-in
    /// pedal, in order (the text once listed them by hand and left the cabinet out).
    @Test(arguments: ["render", "run"])
    func helpNamesEveryPedalOfTheDefaultBoard(_ command: String) throws {
        let result = try runStompbox([command, "--help"])
        #expect(result.status == 0)
        let text = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("every built-in pedal: " + PedalKind.builtIn.map(\.id).joined(separator: ", ") + ")"), "\(text)")
    }

    @Test func rendersWithPresetSetAtAndTail() throws {
        let w = try Workspace()
        w.preset(#""delay.enabled":true,"delay.time_ms":420,"reverb.enabled":true,"tremolo.shape":"square""#)
        let unlocked = try Self.unlockedLooper()
        try expectSuccess([
            "render", "in.wav", "out.flac", "--preset", "p.json",
            "--set", "overdrive.enabled=on", "--set", "tremolo.enabled=on", "--set", "eq.band3_db=-4.5",
            "--at", "0.25:looper.enabled=on", "--at", "0.3:looper.tap", "--at", "0.6:looper.tap",
            "--at", "0.5:delay.time_ms=500", "--at", "0.7:flanger.enabled=on",
            "--tail", "0.5",
        ], in: w.url, environment: unlocked.environment)
        let out = try AudioFile.read(w.file("out.flac"))
        withExtendedLifetime(unlocked.folder) {}
        #expect(out.sampleRate == 44_100 && out.channels == 2)
        #expect(out.frames == 44_100 + 22_050)
        // The preset's reverb, the delay and the flanger play in stereo.
        #expect(out.channel(0) != out.channel(1))
        #expect(Measure.allFinite(out.samples) && Measure.peak(out.samples) <= 1)
        #expect(Measure.rms(out.samples) > 0.01, "sound came out")
        #expect(w.folder.contents() == ["in.wav", "out.flac", "p.json"])
    }

    @Test func aPresetWithTheLockedLooperOnRendersWithTheLooperOff() throws {
        let w = try Workspace(seconds: 0.3)
        w.preset(#""looper.enabled":true,"master.output_db":-6"#)
        let result = try runStompbox(["render", "in.wav", "out.wav", "--preset", "p.json"], in: w.url)
        #expect(result.status == 0)
        #expect(result.stderr.contains("warning") && result.stderr.contains("Looper") && result.stderr.contains("locked"),
                "stderr: \(result.stderr)")
        let out = try AudioFile.read(w.file("out.wav")).channel(0)
        #expect(abs(Measure.peak(out) - Measure.peak(w.mono) * decibelsToGain(-6)) <= 4 * step)
    }

    @Test(arguments: ["wav", "aiff", "flac"])
    func atDefaultsTheMixPassesUnchanged(ext: String) throws {
        let w = try Workspace(seconds: 0.3)
        try expectSuccess(["render", "in.wav", "out.\(ext)"], in: w.url)
        let out = try AudioFile.read(w.file("out.\(ext)"))
        #expect(out.frames == w.input.frames && out.sampleRate == 44_100 && out.channels == 2)
        let worst = zip(w.mono, out.channel(1)).map { abs($0 - $1) }.max() ?? 1
        #expect(worst <= 2 * step, "largest deviation \(worst)")
    }

    @Test func setAppliesAfterThePreset() throws {
        let w = try Workspace(seconds: 0.3)
        w.preset(#""master.output_db":-12"#)
        try expectSuccess(["render", "in.wav", "preset.wav", "--preset", "p.json"], in: w.url)
        try expectSuccess(["render", "in.wav", "both.wav", "--preset", "p.json", "--set", "master.output_db=-6"], in: w.url)
        let presetOnly = try AudioFile.read(w.file("preset.wav")).channel(0)
        let overridden = try AudioFile.read(w.file("both.wav")).channel(0)
        let peak = Measure.peak(w.mono)
        #expect(abs(Measure.peak(presetOnly) - peak * decibelsToGain(-12)) <= 4 * step)
        #expect(abs(Measure.peak(overridden) - peak * decibelsToGain(-6)) <= 4 * step)
    }

    @Test func anActionActsAtItsTime() throws {
        let w = try Workspace(seconds: 0.5)
        try expectSuccess(["render", "in.wav", "out.wav", "--at", "0.25:master.output_db=-24"], in: w.url)
        let out = try AudioFile.read(w.file("out.wav")).channel(0)
        let at = 11_025
        let before = zip(w.mono[..<at], out[..<at]).map { abs($0 - $1) }.max() ?? 1
        #expect(before <= 2 * step, "unchanged before 0.25 s")
        // 20 ms after the action the level is down by 24 dB.
        let late = at + 900 ..< out.count
        let ratio = Measure.rms(out[late]) / Measure.rms(w.mono[late])
        #expect(abs(Measure.decibels(ratio) + 24) < 0.1, "level after the action: \(Measure.decibels(ratio)) dB")
    }

    @Test("a mono recording renders to the board's stereo output by default (the reverb's sides differ); --channels 1 writes the mono output, which a board without stereo pedals plays on both sides")
    func stereoByDefault() throws {
        let w = try Workspace(seconds: 0.5)
        try AudioFile.write(AudioBuffer(samples: w.mono, sampleRate: 44_100, channels: 1), to: w.file("mono.wav"))
        let settings = ["--set", "overdrive.enabled=on", "--set", "reverb.enabled=on", "--set", "reverb.mix=0.8", "--tail", "0.5"]
        let stereo = try expectSuccess(["render", "mono.wav", "s.wav"] + settings, in: w.url)
        #expect(stereo.stdout.hasPrefix("wrote s.wav: 2 channels"), "\(stereo.stdout)")
        let s = try AudioFile.read(w.file("s.wav"))
        let left = s.channel(0), right = s.channel(1)
        let tail = 22_050..<s.frames
        let difference = Measure.rms(zip(left[tail], right[tail]).map { $0 - $1 })
        #expect(difference > 0.5 * Measure.rms(left[tail]), "the sides' tails differ by \(difference) rms")
        try expectSuccess(["render", "mono.wav", "m.wav", "--channels", "1"] + settings, in: w.url)
        let m = try AudioFile.read(w.file("m.wav"))
        #expect(m.channels == 1 && m.frames == s.frames)
        // The overdrive alone is mono: its stereo output is the mono one on both sides.
        try expectSuccess(["render", "mono.wav", "od2.wav", "--set", "overdrive.enabled=on"], in: w.url)
        try expectSuccess(["render", "mono.wav", "od1.wav", "--set", "overdrive.enabled=on", "--channels", "1"], in: w.url)
        let od2 = try AudioFile.read(w.file("od2.wav")), od1 = try AudioFile.read(w.file("od1.wav"))
        #expect(od2.channel(0) == od1.samples && od2.channel(1) == od1.samples)
        let bad = try runStompbox(["render", "mono.wav", "x.wav", "--channels", "3"], in: w.url)
        #expect(bad.status == 1 && bad.stderr == "stompbox: error: --channels must be 1 or 2 (got '3')\n", "\(bad.stderr)")
    }

    @Test func saysWhatItWroteAndWarnsAboutALooperLeftOff() throws {
        let w = try Workspace(seconds: 0.5)
        let quiet = try expectSuccess(["render", "in.wav", "a.wav", "--tail", "0.25"], in: w.url)
        #expect(quiet.stdout == "wrote a.wav: 2 channels, 44100 Hz, 0.750 s\n")
        let warned = try runStompbox(["render", "in.wav", "b.wav", "--at", "0.1:looper.tap"], in: w.url)
        #expect(warned.status == 0)
        #expect(warned.stderrLines == ["stompbox: warning: --at 0.1:looper.tap finds the looper switched off; add --set looper.enabled=on"])
        let unlocked = try Self.unlockedLooper()
        try expectSuccess(["render", "in.wav", "c.wav", "--set", "looper.enabled=on", "--at", "0.1:looper.tap"],
                          in: w.url, environment: unlocked.environment)
        withExtendedLifetime(unlocked.folder) {}
    }

    /// `--chain` puts pedals on the board in its order: rendering overdrive then delay equals
    /// rendering the overdrive alone and the delay alone on its output (to 24-bit rounding of
    /// the file in between), and the reverse order the reverse.
    @Test func theChainsOrderIsTheSignalsOrder() throws {
        let w = try Workspace(seconds: 0.6, rate: 48_000)
        let settings = ["overdrive": ["--set", "overdrive.enabled=on", "--set", "overdrive.drive=0.7"],
                        "delay": ["--set", "delay.enabled=on", "--set", "delay.time_ms=100"]]
        /// The first stage takes the input down 12 dB (the limiter stays out) and adds the tail.
        func render(_ input: String, _ output: String, _ chain: String, first: Bool = true) throws -> [Float] {
            var arguments = ["render", input, output, "--chain", chain]
            for id in chain.split(separator: ",") { arguments += settings[String(id)]! }
            if first { arguments += ["--set", "master.input_db=-12", "--tail", "0.3"] }
            try expectSuccess(arguments, in: w.url)
            return try AudioFile.read(w.file(output)).channel(0)
        }
        let both = try render("in.wav", "both.wav", "overdrive,delay")
        _ = try render("in.wav", "od.wav", "overdrive")
        let composed = try render("od.wav", "od-delay.wav", "delay", first: false)
        #expect(both.count == composed.count)
        let error = zip(both, composed).map { abs($0 - $1) }.max() ?? 1
        #expect(error <= 8 * step, "overdrive,delay against overdrive then delay: \(error)")

        let reversed = try render("in.wav", "rev.wav", "delay,overdrive")
        _ = try render("in.wav", "d.wav", "delay")
        let reversedComposed = try render("d.wav", "d-od.wav", "overdrive", first: false)
        let reversedError = zip(reversed, reversedComposed).map { abs($0 - $1) }.max() ?? 1
        #expect(reversedError <= 8 * step, "delay,overdrive against delay then overdrive: \(reversedError)")
        let apart = zip(both, reversed).map { abs($0 - $1) }.max() ?? 0
        #expect(apart > 0.01, "the order makes a difference")
    }

    @Test func aNegativeNumberAfterAnOptionIsAValueNotAFlag() throws {
        let w = try Workspace(seconds: 0.1)
        try expectSuccess(["render", "in.wav", "out.wav", "--set", "master.output_db=-3", "--tail", "0"], in: w.url)
    }

    // MARK: Errors: one line, non-zero exit, no OUT

    @Test(arguments: [
        (["missing.wav", "out.wav"], ["missing.wav", "does not exist"]),
        (["notes.wav", "out.wav"], ["notes.wav", "not an audio file"]),
        (["in.wav", "out.mp3"], ["out.mp3", ".wav, .aiff or .flac"]),
        (["in.wav", "no/such/folder/out.wav"], ["no/such/folder/out.wav", "does not exist"]),
        (["in.wav", "out.wav", "--set", "delay.speed=3"], ["unknown parameter 'delay.speed'"]),
        (["in.wav", "out.wav", "--set", "delay.time_ms=5000"], ["delay.time_ms", "out of range"]),
        (["in.wav", "out.wav", "--set", "delay.time_ms=fast"], ["delay.time_ms", "fast"]),
        (["in.wav", "out.wav", "--set", "reverb.enabled=maybe"], ["reverb.enabled", "on or off"]),
        (["in.wav", "out.wav", "--set", "tremolo.shape=saw"], ["tremolo.shape", "sine, triangle, square"]),
        (["in.wav", "out.wav", "--set", "delay.time_ms"], ["ID=VALUE"]),
        (["in.wav", "out.wav", "--at", "2.5looper.tap"], ["SECONDS:ACTION"]),
        (["in.wav", "out.wav", "--at", "soon:looper.tap"], ["seconds"]),
        (["in.wav", "out.wav", "--at", "-1:looper.tap"], ["negative"]),
        (["in.wav", "out.wav", "--at", "0.5:looper.jump"], ["looper.jump"]),
        (["in.wav", "out.wav", "--at", "0.5:delay.speed=2"], ["delay.speed"]),
        (["in.wav", "out.wav", "--at", "9:looper.tap"], ["after the end", "--tail"]),
        // The Looper is locked until a licence key unlocks it.
        (["in.wav", "out.wav", "--set", "looper.enabled=on"], ["looper.enabled", "locked", "store unlock"]),
        (["in.wav", "out.wav", "--at", "0.5:looper.enabled=on"], ["looper.enabled", "locked"]),
        (["in.wav", "out.wav", "--tail", "-1"], ["tail", "negative"]),
        (["in.wav", "out.wav", "--tail", "long"], ["tail", "long"]),
        (["in.wav", "out.wav", "--preset", "none.json"], ["none.json", "does not exist"]),
        (["in.wav", "out.wav", "--preset", "bad-id.json"], ["bad-id.json", "delay.speed"]),
        (["in.wav", "out.wav", "--preset", "bad-type.json"], ["bad-type.json", "delay.enabled"]),
        (["in.wav", "out.wav", "--preset", "newer.json"], ["newer.json", "version 4"]),
        (["in.wav", "out.wav", "--preset", "notes.wav"], ["notes.wav", "JSON"]),
        (["in.wav", "out.wav", "--chain", "overdrive,fuzz"], ["--chain", "unknown pedal 'fuzz'"]),
        (["in.wav", "out.wav", "--chain", "delay,reverb,delay"], ["--chain", "'delay' is on the board twice"]),
        (["in.wav", "out.wav", "--chain", "overdrive", "--set", "reverb.enabled=on"], ["reverb.enabled", "not on the board"]),
        (["in.wav", "out.wav", "--chain", "overdrive", "--at", "0.05:delay.mix=1"], ["delay.mix", "not on the board"]),
    ] as [([String], [String])])
    func errorsPrintOneLineAndLeaveNoOutput(arguments: [String], mentions: [String]) throws {
        let w = try Workspace(seconds: 0.1)
        w.folder.write("these are my notes, not audio\n", to: "notes.wav")
        w.preset(#""delay.speed":3"#, name: "bad-id.json")
        w.preset(#""delay.enabled":"yes""#, name: "bad-type.json")
        w.preset("", version: 4, name: "newer.json")
        let before = w.folder.contents()
        try expectFailure(["render"] + arguments, in: w.url, mentioning: mentions)
        #expect(w.folder.contents() == before, "nothing written, no temporary file left")
    }

    @Test func aFailureLeavesAnExistingOutputAsItWas() throws {
        let w = try Workspace(seconds: 0.1)
        try expectSuccess(["render", "in.wav", "out.wav"], in: w.url)
        let before = try Data(contentsOf: w.url.appendingPathComponent("out.wav"))
        try expectFailure(["render", "in.wav", "out.wav", "--set", "delay.time_ms=1"], in: w.url)
        try expectFailure(["render", "in.wav", "out.wav", "--at", "5:looper.tap"], in: w.url)
        #expect(try Data(contentsOf: w.url.appendingPathComponent("out.wav")) == before)
        #expect(w.folder.contents() == ["in.wav", "out.wav"])
    }

    @Test func aDiskThatFillsUpMidRenderLeavesNoPartialFile() throws {
        // 64 blocks of 512 bytes: far less than the 1.5 s of 24-bit stereo the render writes.
        let w = try Workspace(seconds: 1)
        let result = try expectFailure(["render", "in.wav", "out.wav", "--tail", "0.5"], in: w.url,
                                       mentioning: ["out.wav"], fileSizeLimitBlocks: 64)
        #expect(!result.stderr.contains(".partial"), "the error names OUT, not the temporary file")
        #expect(w.folder.contents() == ["in.wav"])
    }
}

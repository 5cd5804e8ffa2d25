import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP
import StompboxTestSupport
import Testing

/// LV2 plugins as pedals on the board: `render --add`, their parameters in `--set`/`--at`,
/// presets that keep them (and ones that name a plugin that is not installed).
@Suite struct PluginPedalCommandTests {
    static let fil4 = "http://gareus.org/oss/lv2/fil4#mono"
    static let fil4Installed = (try? LV2World.shared.plugin(uri: fil4))?.canHost ?? false
    /// The render's block (`OfflineRenderer.blockSize`): lv2file runs the plugin in the same blocks.
    static let block = OfflineRenderer.blockSize

    @Test(.enabled(if: LV2File.isInstalled, "lv2file or sox is not installed (make deps-test)"),
          .enabled(if: fil4Installed, "x42-plugins is not installed (make deps-test)"))
    func renderWithAnAddedPluginEqualsLV2File() throws {
        let folder = TemporaryFolder("plugin-render")
        let (wav, float, _) = try LV2File.writeInput(in: folder, channels: 1, block: Self.block)
        let controls: [String: Float] = ["gain": -3, "HighPass": 1, "HPfreq": 120, "LSgain": 6, "gain2": -9, "q2": 1.5, "HSgain": 4]
        let reference = try LV2File.run(uri: Self.fil4, controls: controls, block: Self.block, input: float, output: folder.file("ref.wav"))
        let out = folder.file("ours.wav")
        let sets = controls.sorted { $0.key < $1.key }.flatMap { ["--set", "fil.\($0.key)=" + String(format: "%g", $0.value)] }
        let result = try runStompbox(["render", wav, out, "--chain", "", "--add", "fil=lv2:\(Self.fil4)"] + sets)
        try #require(result.status == 0, "\(result.stderr)")
        let ours = try AudioFile.read(out).channel(0)
        #expect(ours.count == reference.count)
        let largest = zip(ours, reference).map { abs($0 - $1) }.max() ?? 1
        print("render --add fil4 vs lv2file: max difference \(largest) over \(ours.count) samples (the render writes 24 bits)")
        // The render writes 24 bits (lv2file here: 32-bit float): within one 24-bit step (1.2e-7).
        #expect(largest <= 1.0 / Float(1 << 23))
        #expect(Measure.rms(zip(ours, try AudioFile.read(wav).channel(0)).map { $0 - $1 }) > 1e-3, "the plugin changed the sound")
    }

    @Test(.enabled(if: fil4Installed, "x42-plugins is not installed (make deps-test)"))
    func anUnknownControlIsOneErrorNamingIt() throws {
        let folder = TemporaryFolder("plugin-unknown")
        let (wav, _, _) = try LV2File.writeInput(in: folder, channels: 1, seconds: 0.1, block: Self.block)
        for option in [["--set", "fil.loudness=3"], ["--at", "0.05:fil.loudness=3"]] {
            let out = folder.file("out.wav")
            let result = try runStompbox(["render", wav, out, "--add", "fil=lv2:\(Self.fil4)"] + option)
            #expect(result.status != 0)
            #expect(result.stderrLines.count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("fil.loudness") && result.stderr.contains("'loudness'") && result.stderr.contains(Self.fil4))
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }

    @Test func aMissingPluginIsOneErrorNamingItsURI() throws {
        let folder = TemporaryFolder("plugin-missing")
        let (wav, _, _) = try LV2File.writeInput(in: folder, channels: 1, seconds: 0.1, block: Self.block)
        let result = try runStompbox(["render", wav, folder.file("out.wav"), "--add", "x=lv2:urn:stompbox:test:not-installed"])
        #expect(result.status != 0)
        #expect(result.stderrLines.count == 1 && result.stderr.contains("urn:stompbox:test:not-installed"), "\(result.stderr)")
    }

    @Test(.enabled(if: fil4Installed, "x42-plugins is not installed (make deps-test)"))
    func anAddedPluginIsOnAndItsParametersAreClampedAndAutomated() throws {
        let folder = TemporaryFolder("plugin-at")
        let (wav, _, samples) = try LV2File.writeInput(in: folder, channels: 1, seconds: 1, block: Self.block)
        // Switched off at 0.5 s: from there (after the 5 ms crossfade) the input comes out untouched.
        let out = folder.file("out.wav")
        let result = try runStompbox(["render", wav, out, "--chain", "", "--add", "fil=lv2:\(Self.fil4)",
                                      "--set", "fil.gain=-6", "--at", "0.5:fil.enabled=off"])
        try #require(result.status == 0, "\(result.stderr)")
        let y = try AudioFile.read(out).channel(0)
        let half = 24_000
        #expect(Measure.rms(y[1000..<half]) < 0.6 * Measure.rms(samples[1000..<half]), "-6 dB while on")
        #expect(zip(y[(half + 480)...], samples[(half + 480)...]).allSatisfy { abs($0 - $1) <= 1e-6 }, "dry once off")
        // Out of range is an error naming the range, as for a built-in pedal.
        let bad = try runStompbox(["render", wav, out, "--add", "fil=lv2:\(Self.fil4)", "--set", "fil.gain=40"])
        #expect(bad.status != 0 && bad.stderr.contains("fil.gain") && bad.stderr.contains("18"), "\(bad.stderr)")
        // The plan clamps what the store is given.
        let kind = try PedalKind.lv2(id: "fil", uri: Self.fil4)
        ParameterStore()[kind.parameter("gain")] = 99
        #expect(kind.parameter("gain").pedalValue == 18)
        #expect(kind.parameter("HighPass").spec.scale == .toggle)
    }

    // MARK: Presets

    @Test(.enabled(if: fil4Installed, "x42-plugins is not installed (make deps-test)"))
    func aPresetWithAPluginRoundTrips() throws {
        let kind = try PedalKind.lv2(id: "fil", uri: Self.fil4)
        let chain = Chain(board: [.overdrive, kind, .delay])
        chain.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        chain.parameters.set(kind.enabledParameter, 1)
        chain.parameters.set(kind.parameter("gain"), -4.5)
        chain.parameters.set(kind.parameter("freq2"), 900)
        chain.parameters.set(kind.parameter("HighPass"), 1)
        let states = chain.pedalStates
        #expect(states["fil"] != nil, "fil4 has a state interface")
        let preset = Preset(name: "EQ", from: chain.parameters, board: chain.board, states: states)
        let json = preset.json
        guard case .object(let top) = json else { Issue.record("not an object"); return }
        #expect(top["version"] == .number(3))
        #expect(String(decoding: preset.jsonData(), as: UTF8.self).contains(Self.fil4))

        let read = try Preset(jsonData: preset.jsonData())
        #expect(read == preset)
        #expect(read.jsonData() == preset.jsonData(), "written again byte for byte")
        let (board, notices) = PedalKind.resolvingPlugins(read.board)
        #expect(notices.isEmpty)
        #expect(board.map(\.id) == ["overdrive", "fil", "delay"])
        let live = board[1]
        #expect(!live.isMissing && live.plugin?.uri == Self.fil4)
        #expect(live.enabledParameter.pedalValue == 1)
        #expect(live.parameter("gain").pedalValue == -4.5)
        #expect(live.parameter("freq2").pedalValue == 900)
        #expect(live.parameter("HighPass").pedalValue == 1)
        // The plugin's own state comes back too.
        let again = Chain(board: board)
        again.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        let restored = try #require(again.pedalStates["fil"])
        let decoder = JSONDecoder()
        #expect(try decoder.decode(LV2PedalState.self, from: Data(restored.utf8)).properties
                == decoder.decode(LV2PedalState.self, from: Data(states["fil"]!.utf8)).properties)
        #expect(Preset(name: "EQ", from: again.parameters, board: board, states: again.pedalStates).matches(again.parameters, board: board))
    }

    @Test(.enabled(if: fil4Installed, "x42-plugins is not installed (make deps-test)"))
    func aPresetThatLeavesControlsOutMatchesTheirDefaults() throws {
        let text = #"{"format":"stompbox-preset","version":3,"name":"Few","chain":[{"id":"eq4","lv2":"\#(Self.fil4)","enabled":true,"controls":{"gain":-4.5,"HighPass":1}}]}"#
        let preset = try Preset(jsonData: Data(text.utf8))
        let (board, notices) = PedalKind.resolvingPlugins(preset.board)
        #expect(notices.isEmpty)
        let store = ParameterStore()
        preset.apply(to: store)
        #expect(board[0].parameter("gain").pedalValue == -4.5 && board[0].parameter("HPfreq").pedalValue == 20)
        #expect(preset.matches(store, board: board), "just recalled: not modified")
        store.set(board[0].parameter("q2"), 2)
        #expect(!preset.matches(store, board: board), "a knob turned: modified")
    }

    static let missingPreset = """
        {"format":"stompbox-preset","version":3,"name":"Gone","chain":["overdrive",{"id":"gone","lv2":"urn:stompbox:test:not-installed",\
        "name":"Gone Fuzz","enabled":true,"controls":{"fuzz":0.75,"level":-3},"state":{"uri":"urn:stompbox:test:not-installed","controls":{},"properties":{}},"future":[1,2]},"delay"],\
        "parameters":{"delay.enabled":true}}
        """

    /// A plugin pedal named like a parameter prefix (tempo.bpm) or a built-in pedal would shadow
    /// it: the preset is refused, saying so, not called a pedal on the board twice.
    @Test(arguments: ["tempo", "metronome", "delay"])
    func aPresetWhosePluginPedalTakesAReservedIdIsRefused(_ id: String) throws {
        let text = Self.missingPreset.replacingOccurrences(of: #"{"id":"gone""#, with: #"{"id":"\#(id)""#)
            .replacingOccurrences(of: #","delay"]"#, with: "]")
        #expect(throws: PresetError.pedal(.reserved(id))) { try Preset(jsonData: Data(text.utf8)) }
    }

    @Test func aPresetNamingAMissingPluginLoadsBypassedAndSavesUnchanged() throws {
        let preset = try Preset(jsonData: Data(Self.missingPreset.utf8))
        let (board, notices) = PedalKind.resolvingPlugins(preset.board)
        #expect(board.map(\.id) == ["overdrive", "gone", "delay"])
        #expect(board[1].isMissing && board[1].name == "Gone Fuzz")
        #expect(notices.count == 1 && notices[0].contains("urn:stompbox:test:not-installed") && notices[0].contains("gone"), "\(notices)")

        // On the board it passes its input through.
        let chain = Chain(board: board)
        chain.parameters.set(.delayEnabled, 0)
        chain.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        let x = Signal.guitarRiff(seconds: 0.5).map { $0 * 0.3 }
        #expect(Render.through(chain, x) == x)

        // Saved again from the board it is on: its entry is the file's, unknown fields and all.
        chain.parameters.set(.delayEnabled, 1)
        let again = Preset(name: "Gone", from: chain.parameters, board: chain.board, states: chain.pedalStates)
        let original = try JSONValue.parse(Data(Self.missingPreset.utf8))
        let written = try JSONValue.parse(again.jsonData())
        guard case .object(let a) = original, case .object(let b) = written else { Issue.record("not objects"); return }
        #expect(a["chain"] == b["chain"])
        #expect(again.matches(chain.parameters, board: chain.board))
    }

    @Test func versionOneAndTwoPresetsStillLoad() throws {
        let v1 = try Preset(jsonData: Data(#"{"format":"stompbox-preset","version":1,"name":"Old","parameters":{"delay.enabled":true}}"#.utf8))
        #expect(v1.board == PedalKind.classic)
        let v2 = try Preset(jsonData: Data(#"{"format":"stompbox-preset","version":2,"name":"Two","chain":["delay","overdrive"]}"#.utf8))
        #expect(v2.board == [.delay, .overdrive])
        guard case .object(let top) = v2.json else { Issue.record("not an object"); return }
        #expect(top["version"] == .number(2), "no plugin: still written as version 2")
    }
}

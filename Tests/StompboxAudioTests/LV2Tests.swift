import Foundation
import Synchronization
import StompboxAudio
import StompboxDSP
import StompboxTestSupport
import Testing

/// The installed plugins the LV2 tests use (Debian's x42-plugins, guitarix-lv2 and
/// calf-plugins, installed by `make deps-test`) and Debian's reference host, lv2file.
enum LV2Fixtures {
    static let world = LV2World.shared

    static func installed(_ uri: String) -> Bool { (try? world.plugin(uri: uri))?.canHost ?? false }

    static let hasLV2File = LV2File.isInstalled

    /// A plugin compared against lv2file, with the controls set for the comparison (the rest
    /// stay at their defaults in both hosts).
    struct Case: CustomTestStringConvertible, Sendable {
        var uri: String
        var package: String
        var controls: [String: Float]
        var testDescription: String { uri }
        var isInstalled: Bool { LV2Fixtures.installed(uri) }
    }

    /// x42's parametric EQ (mono: 1 in, 1 out; atom ports; state interface).
    static let fil4 = Case(uri: "http://gareus.org/oss/lv2/fil4#mono", package: "x42-plugins",
                           controls: ["gain": -3, "HighPass": 1, "HPfreq": 120, "LSgain": 6, "gain2": -9, "q2": 1.5, "HSgain": 4])
    /// Guitarix's tube screamer (mono: 1 in, 1 out; a nonlinear stage).
    static let guitarix = Case(uri: "http://guitarix.sourceforge.net/plugins/gxts9#ts9sim", package: "guitarix-lv2",
                               controls: ["fslider0_": -6, "fslider1_": 650, "fslider2_": 0.7])
    /// Calf's phaser (stereo: 2 in, 2 out, its sides modulated 180° apart by default).
    static let calf = Case(uri: "http://calf.sourceforge.net/plugins/Phaser", package: "calf-plugins",
                           controls: ["mod_rate": 0.7, "feedback": 0.6, "stages": 8, "amount": 1])

    static let cases = [fil4, guitarix, calf]
    static let installedCases = cases.filter(\.isInstalled)
    static var missing: String {
        let gone = cases.filter { !$0.isInstalled }.map { "\($0.uri) (\($0.package))" }
        return "not installed: \(gone.joined(separator: ", ")) — run make deps-test"
    }
}

// MARK: Listing

@Suite struct LV2ListingTests {
    @Test(.enabled(if: LV2Fixtures.fil4.isInstalled, "x42-plugins is not installed (make deps-test)"))
    func readsTheControlPortsOfX42Fil4() throws {
        let info = try LV2Fixtures.world.plugin(uri: LV2Fixtures.fil4.uri)
        #expect(info.uri == LV2Fixtures.fil4.uri)
        #expect(info.name.contains("x42-eq"), "\(info.name)")
        #expect(info.audioInputs == 1 && info.audioOutputs == 1)
        #expect(info.canHost, "\(info.problems)")
        #expect(info.hasStateInterface)
        let gain = try #require(info.control("gain"))
        #expect(gain.minimum == -18 && gain.maximum == 18 && gain.defaultValue == 0)
        #expect(gain.unit == "dB")
        #expect(!gain.isToggle && !gain.isLogarithmic)
        let hp = try #require(info.control("HPfreq"))
        #expect(hp.minimum == 5 && hp.maximum == 1250 && hp.defaultValue == 20)
        #expect(hp.unit == "Hz" && hp.isLogarithmic)
        let enable = try #require(info.control("enable"))
        #expect(enable.isToggle && enable.isInteger && enable.defaultValue == 1)
        let q = try #require(info.control("HPQ"))
        #expect(q.scalePoints.map(\.value) == [0, 0.7, 1.0])
        #expect(q.scalePoints.first?.label == "-6dB @freq, no resonance")
        #expect(!q.isEnumeration)
        // Only control inputs are controls: the "peak" meter output is not one.
        #expect(info.control("peak") == nil)
        #expect(info.controls.map(\.index) == info.controls.map(\.index).sorted())
    }

    @Test(.enabled(if: LV2Fixtures.cases.allSatisfy(\.isInstalled), "\(LV2Fixtures.missing)"))
    func listsThePluginsOfEveryPackageSortedByName() throws {
        let all = LV2Fixtures.world.plugins()
        for c in LV2Fixtures.cases { #expect(all.contains { $0.uri == c.uri }, "\(c.uri)") }
        let names = all.map { $0.name.lowercased() }
        #expect(names == names.sorted())
        for p in all {
            #expect(!p.uri.isEmpty && !p.name.isEmpty)
            #expect(p.canHost == p.problems.isEmpty, "\(p.uri)")
            for c in p.controls {
                #expect(c.minimum <= c.defaultValue && c.defaultValue <= c.maximum, "\(p.uri) \(c.symbol)")
            }
        }
        // Instruments (no audio input) are listed but cannot be pedals, and say why.
        let noInput = all.filter { $0.audioInputs == 0 }
        for p in noInput { #expect(!p.canHost && p.problems.contains("it has no audio input"), "\(p.uri)") }
    }

    @Test func aBrokenPathEntryIsSkipped() throws {
        let folder = TemporaryFolder("lv2-broken")
        let bundle = folder.file("broken.lv2")
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        _ = folder.write("this is @@@ not turtle <<<", to: "broken.lv2/manifest.ttl")
        let world = LV2World(path: "/no/such/folder:\(folder.url.path):\(bundle)", capturingMessages: true)
        #expect(world.plugins().isEmpty)
        #expect(!world.messages.isEmpty, "lilv's complaint about the bad Turtle is kept aside")
    }
}

// MARK: Errors

@Suite struct LV2ErrorTests {
    @Test func aMissingURINamesIt() {
        let uri = "urn:stompbox:test:no-such-plugin"
        #expect(throws: LV2Error.notFound(uri: uri)) { try LV2Pedal(uri: uri, sampleRate: 48_000, maximumBlockSize: 128) }
        #expect("\(LV2Error.notFound(uri: uri))".contains(uri))
        #expect(throws: LV2Error.notFound(uri: uri)) { try LV2Fixtures.world.plugin(uri: uri) }
    }

    @Test func textThatIsNoURIIsSaidSo() {
        #expect(throws: LV2Error.invalidURI("fil4 mono")) { try LV2Pedal(uri: "fil4 mono", sampleRate: 48_000, maximumBlockSize: 128) }
        #expect("\(LV2Error.invalidURI("fil4 mono"))".contains("'fil4 mono'"))
    }

    // The vocabulary comes with lv2-dev (a build dependency); finding no plugin at all says the
    // LV2 folders are not there (or LV2_PATH points elsewhere).
    @Test(.enabled(if: !LV2Fixtures.world.plugins().isEmpty, "no LV2 data is installed or on LV2_PATH (make deps-test)"))
    func aURIThatIsNotAPluginNamesIt() throws {
        // The port-props vocabulary's URI: known to the LV2 data, not a plugin.
        let uri = "http://lv2plug.in/ns/ext/port-props#logarithmic"
        #expect(throws: LV2Error.notAPlugin(uri: uri)) { try LV2Pedal(uri: uri, sampleRate: 48_000, maximumBlockSize: 128) }
        #expect("\(LV2Error.notAPlugin(uri: uri))" == "'\(uri)' is in the LV2 data but is not a plugin")
    }

    @Test(.enabled(if: (try? LV2Fixtures.world.plugin(uri: "http://calf.sourceforge.net/plugins/Organ")) != nil,
                   "calf-plugins is not installed (make deps-test)"))
    func anInstrumentCannotBeAPedalAndSaysWhy() throws {
        let uri = "http://calf.sourceforge.net/plugins/Organ"
        let info = try LV2Fixtures.world.plugin(uri: uri)
        #expect(!info.canHost && info.problems == ["it has no audio input"])
        #expect(throws: LV2Error.cannotHost(uri: uri, reasons: ["it has no audio input"])) {
            try LV2Pedal(uri: uri, sampleRate: 48_000, maximumBlockSize: 128)
        }
    }

    @Test(.enabled(if: LV2Fixtures.fil4.isInstalled, "x42-plugins is not installed (make deps-test)"))
    func anUnknownControlNamesItAndThePlugin() throws {
        let pedal = try LV2Pedal(uri: LV2Fixtures.fil4.uri, sampleRate: 48_000, maximumBlockSize: 128)
        #expect(throws: LV2Error.unknownControl(uri: LV2Fixtures.fil4.uri, symbol: "nope")) {
            try pedal.setControl(symbol: "nope", value: 1)
        }
        try pedal.setControl(symbol: "gain", value: 100)
        #expect(pedal.control(symbol: "gain") == 18, "clamped to the port's range")
        try pedal.setControl(symbol: "enable", value: 0.3)
        #expect(pedal.control(symbol: "enable") == 0, "a toggle is on or off")
    }
}

// MARK: Against the reference host

@Suite(.serialized) struct LV2ReferenceTests {
    static let block = 512
    static let rate = 48_000

    /// lv2file and the pedal run the same plugin code on the same floats in the same blocks
    /// (512 frames), with the same control values; a stereo plugin gets the same signal on both
    /// inputs in each (lv2file maps a 2-channel file's channels to the inputs in order), and the
    /// pedal's output is lv2file's first channel. So they must agree bit for bit. (lv2file does
    /// not set flush-to-zero and neither does this thread; the live audio thread does, which
    /// can only change denormal-sized values.)
    func compare(_ c: LV2Fixtures.Case) throws {
        let info = try LV2Fixtures.world.plugin(uri: c.uri)
        let folder = TemporaryFolder("lv2-reference")
        // lv2file runs one instance when the file has as many channels as the plugin has inputs.
        let (_, input, samples) = try LV2File.writeInput(in: folder, channels: info.audioInputs, block: Self.block)
        let reference = try LV2File.run(uri: c.uri, controls: c.controls, block: Self.block, input: input, output: folder.file("ref.wav"))

        let pedal = try LV2Pedal(uri: c.uri, sampleRate: Double(Self.rate), maximumBlockSize: Self.block)
        for (symbol, value) in c.controls { try pedal.setControl(symbol: symbol, value: value) }
        let ours = Render.through(pedal, samples, block: Self.block)

        #expect(ours.count == reference.count)
        var largest: Float = 0
        var at = 0
        for i in 0..<min(ours.count, reference.count) where abs(ours[i] - reference[i]) > largest {
            largest = abs(ours[i] - reference[i])
            at = i
        }
        let level = Measure.rms(reference)
        print("LV2 vs lv2file \(c.uri): max difference \(largest) at sample \(at) (output rms \(level), \(ours.count) samples)")
        #expect(largest == 0, "\(c.uri): max difference \(largest) at \(at)")
        #expect(level > 0.01, "the plugin made sound")
        #expect(Measure.rms(zip(ours, samples).map { $0 - $1 }) > 1e-3, "the plugin changed the sound")
    }

    @Test(.enabled(if: LV2Fixtures.hasLV2File, "lv2file or sox is not installed (make deps-test)"),
          .enabled(if: LV2Fixtures.fil4.isInstalled, "x42-plugins is not installed (make deps-test)"))
    func x42EqualizerMatchesLV2File() throws { try compare(LV2Fixtures.fil4) }

    @Test(.enabled(if: LV2Fixtures.hasLV2File, "lv2file or sox is not installed (make deps-test)"),
          .enabled(if: LV2Fixtures.guitarix.isInstalled, "guitarix-lv2 is not installed (make deps-test)"))
    func guitarixEffectMatchesLV2File() throws { try compare(LV2Fixtures.guitarix) }

    @Test(.enabled(if: LV2Fixtures.hasLV2File, "lv2file or sox is not installed (make deps-test)"),
          .enabled(if: LV2Fixtures.calf.isInstalled, "calf-plugins is not installed (make deps-test)"))
    func stereoCalfEffectMatchesLV2File() throws { try compare(LV2Fixtures.calf) }
}

// MARK: Properties over the hosted plugins

@Suite struct LV2PedalPropertyTests {
    static let block = 128

    /// Runs `input` through `pedal` as the chain does: a block that comes out NaN/Inf is
    /// replaced by its input (non-finite samples zeroed, as the chain's input guard does) and
    /// the pedal reset.
    func chainLike(_ pedal: LV2Pedal, _ input: [Float], before: (Int) -> Void = { _ in }) -> (out: [Float], resets: Int) {
        var out = [Float]()
        var resets = 0
        var i = 0
        while i < input.count {
            before(i)
            let n = min(Self.block, input.count - i)
            let dry = Array(input[i..<i + n])
            var y = Render.through(pedal, dry, block: Self.block)
            if !Measure.allFinite(y) {
                pedal.reset()
                resets += 1
                y = dry.map { $0.isFinite ? $0 : 0 }
                _ = pedal.waitUntilRunning()
            }
            out += y
            i += n
        }
        return (out, resets)
    }

    @Test(.enabled(if: !LV2Fixtures.installedCases.isEmpty, "none of the test plugins is installed (make deps-test)"),
          arguments: LV2Fixtures.installedCases)
    func recoversFromNaN(_ c: LV2Fixtures.Case) throws {
        let pedal = try LV2Pedal(uri: c.uri, sampleRate: 48_000, maximumBlockSize: Self.block)
        for (symbol, value) in c.controls { try pedal.setControl(symbol: symbol, value: value) }
        var x = Signal.noise(length: 48_000, amplitude: 0.2)
        for i in 9600..<9664 { x[i] = .nan }   // straight into the plugin, past the chain's guard
        let (y, resets) = chainLike(pedal, x)
        print("LV2 NaN recovery \(c.uri): \(resets) reset(s) of the chain, \(pedal.resetCount) deactivate/activate")
        #expect(Measure.allFinite(y))
        // After the reset the plugin plays again: its last half second is not the dry input.
        let tail = 24_000..<48_000
        // These plugins carry NaN in their filter state, so the chain must have reset them.
        #expect(resets >= 1 && pedal.resetCount >= 1, "the NaN never reached the plugin's state: this proves nothing")
        #expect(Measure.rms(zip(y[tail], x[tail]).map { $0 - $1 }) > 1e-4, "\(c.uri) plays again after \(resets) reset(s)")
        #expect(Measure.rms(y[tail]) > 1e-3)
    }

    @Test(.enabled(if: !LV2Fixtures.installedCases.isEmpty, "none of the test plugins is installed (make deps-test)"),
          arguments: LV2Fixtures.installedCases)
    func silenceInGivesSilenceOut(_ c: LV2Fixtures.Case) throws {
        let pedal = try LV2Pedal(uri: c.uri, sampleRate: 48_000, maximumBlockSize: Self.block)
        for (symbol, value) in c.controls { try pedal.setControl(symbol: symbol, value: value) }
        _ = Render.through(pedal, Signal.noise(length: 4800, amplitude: 0.3), block: Self.block)
        pedal.reset()
        #expect(pedal.waitUntilRunning())
        let y = Render.through(pedal, Signal.silence(96_000), block: Self.block)
        #expect(Measure.allFinite(y))
        #expect(Measure.peak(y[48_000...]) < 1e-4, "\(c.uri): \(Measure.peak(y[48_000...]))")
    }

    @Test(.enabled(if: !LV2Fixtures.installedCases.isEmpty, "none of the test plugins is installed (make deps-test)"),
          arguments: LV2Fixtures.installedCases)
    func controlJumpsMakeNoNaN(_ c: LV2Fixtures.Case) throws {
        let pedal = try LV2Pedal(uri: c.uri, sampleRate: 48_000, maximumBlockSize: Self.block)
        let x = Signal.guitarRiff(seconds: 2).map { $0 * 0.5 }
        let controls = pedal.info.controls
        let (y, resets) = chainLike(pedal, x) { i in
            guard i % 4800 == 0 else { return }
            for (k, control) in controls.enumerated() {
                try? pedal.setControl(symbol: control.symbol, value: (i / 4800 + k) % 2 == 0 ? control.minimum : control.maximum)
            }
        }
        #expect(resets == 0, "\(c.uri) produced NaN/Inf on a control jump")
        #expect(Measure.allFinite(y))
        #expect(Measure.peak(y) < 100)
    }

    @Test(.enabled(if: !LV2Fixtures.installedCases.isEmpty, "none of the test plugins is installed (make deps-test)"),
          arguments: LV2Fixtures.installedCases)
    func blocksLargerThanTheLimitAreSplitAndAnyLengthWorks(_ c: LV2Fixtures.Case) throws {
        let x = Signal.guitarRiff(seconds: 1).map { $0 * 0.5 }
        let a = try LV2Pedal(uri: c.uri, sampleRate: 48_000, maximumBlockSize: 64)
        let b = try LV2Pedal(uri: c.uri, sampleRate: 48_000, maximumBlockSize: 64)
        for (symbol, value) in c.controls {
            try a.setControl(symbol: symbol, value: value)
            try b.setControl(symbol: symbol, value: value)
        }
        let whole = Render.through(a, x, block: 64)
        // One call with the whole second: split into blocks of 64 inside.
        let split = Render.through(b, x, block: x.count)
        #expect(whole == split)
    }

    @Test(.enabled(if: LV2Fixtures.fil4.isInstalled, "x42-plugins is not installed (make deps-test)"))
    func aNewRateMakesANewInstanceAndKeepsTheControls() throws {
        let pedal = try LV2Pedal(uri: LV2Fixtures.fil4.uri, sampleRate: 48_000, maximumBlockSize: 128)
        try pedal.setControl(symbol: "gain", value: -6)
        pedal.prepare(sampleRate: 44_100, maximumBlockSize: 256)
        #expect(pedal.lastError == nil)
        #expect(pedal.sampleRate == 44_100 && pedal.maximumBlockSize == 256)
        #expect(pedal.control(symbol: "gain") == -6)
        // -6 dB on a 1 kHz tone, fil4's other sections flat by default.
        let tone = Signal.sine(frequency: 1000, seconds: 1, sampleRate: 44_100, amplitude: 0.5)
        let y = Render.through(pedal, tone, block: 256)
        let gain = Measure.rms(y[22_050...]) / Measure.rms(tone[22_050...])
        #expect(abs(Measure.decibels(gain) + 6) < 0.2, "\(Measure.decibels(gain)) dB")
    }
}

// MARK: State

@Suite struct LV2StateTests {
    @Test(.enabled(if: LV2Fixtures.fil4.isInstalled, "x42-plugins is not installed (make deps-test)"))
    func saveAndRestoreRoundTrip() throws {
        let uri = LV2Fixtures.fil4.uri
        let a = try LV2Pedal(uri: uri, sampleRate: 48_000, maximumBlockSize: 128)
        try a.setControl(symbol: "gain", value: -4.5)
        try a.setControl(symbol: "HighPass", value: 1)
        _ = Render.through(a, Signal.noise(length: 4800), block: 128)
        let saved = try a.saveState()
        #expect(saved.uri == uri)
        #expect(saved.controls["gain"] == -4.5 && saved.controls["HighPass"] == 1)
        #expect(a.info.hasStateInterface)
        print("LV2 fil4 state: \(saved.controls.count) controls, properties \(saved.properties.sorted { $0.key < $1.key }.map { "\($0.key.split(separator: "#").last!) \($0.value.type.split(separator: "#").last!) \(Array($0.value.value))" })")
        // Through JSON, as a preset stores it.
        let json = try JSONEncoder().encode(saved)
        let decoded = try JSONDecoder().decode(LV2PedalState.self, from: json)
        #expect(decoded == saved)

        // fil4's own properties (its display settings): change one, so restoring is seen to act.
        let dbscale = "http://gareus.org/oss/lv2/fil4#dbscale"
        var changed = decoded
        var property = try #require(changed.properties[dbscale], "\(saved.properties.keys)")
        #expect(property.type == "http://lv2plug.in/ns/ext/atom#Float")
        #expect(property.value == withUnsafeBytes(of: Float(30)) { Data($0) }, "fil4's default scale is ±30 dB")
        property.value = withUnsafeBytes(of: Float(20)) { Data($0) }
        changed.properties[dbscale] = property

        let b = try LV2Pedal(uri: uri, sampleRate: 48_000, maximumBlockSize: 128)
        try b.restoreState(changed)
        #expect(b.controlValues == a.controlValues)
        let again = try b.saveState()
        #expect(again == changed, "the restored plugin saves the state it was given")
        // And it sounds the same from here on.
        let x = Signal.noise(length: 9600, seed: 3)
        _ = Render.through(b, Signal.noise(length: 4800), block: 128)
        #expect(Render.through(a, x, block: 128) == Render.through(b, x, block: 128))
    }

    @Test(.enabled(if: LV2Fixtures.fil4.isInstalled, "x42-plugins is not installed (make deps-test)"))
    func aStateOfAnotherPluginIsRefused() throws {
        let pedal = try LV2Pedal(uri: LV2Fixtures.fil4.uri, sampleRate: 48_000, maximumBlockSize: 128)
        let other = LV2PedalState(uri: "urn:other", controls: [:])
        #expect(throws: LV2Error.stateOfAnotherPlugin(uri: LV2Fixtures.fil4.uri, stateURI: "urn:other")) {
            try pedal.restoreState(other)
        }
    }
}

// MARK: Worker

@Suite struct LV2WorkerTests {
    static let cabinet = "http://guitarix.sourceforge.net/plugins/gx_cabinet#CABINET"

    /// Guitarix's cabinet loads a new impulse response through the LV2 worker when its model
    /// changes: the work runs on the pedal's host thread while the test's thread plays on, and
    /// the sound changes.
    @Test(.enabled(if: LV2Fixtures.installed(cabinet), "guitarix-lv2 is not installed (make deps-test)"))
    func aCabinetChangeRunsThroughTheWorker() throws {
        let pedal = try LV2Pedal(uri: Self.cabinet, sampleRate: 48_000, maximumBlockSize: 128)
        let reference = try LV2Pedal(uri: Self.cabinet, sampleRate: 48_000, maximumBlockSize: 128)
        #expect(pedal.info.usesWorker)
        let model = try #require(pedal.info.control("c_model"))
        #expect(model.isEnumeration && model.scalePoints.count == 19)

        let x = Signal.guitarRiff(seconds: 1).map { $0 * 0.5 }
        _ = Render.through(pedal, x, block: 128)
        _ = Render.through(reference, x, block: 128)
        let (worksBefore, responsesBefore) = (pedal.workCount, pedal.responseCount)

        try pedal.setControl(symbol: "c_model", value: 9)   // "AC30 Style"
        let deadline = Date().addingTimeInterval(5)
        var block = 0
        while pedal.workCount == worksBefore && Date() < deadline {
            _ = Render.through(pedal, Array(x[(block % 300) * 128..<(block % 300 + 1) * 128]), block: 128)
            block += 1
            usleep(1000)
        }
        #expect(pedal.workCount > worksBefore, "the plugin scheduled work and the host thread ran it")
        // Guitarix does its work without a response (it never calls respond()).
        #expect(pedal.responseCount == responsesBefore)

        // From here the two cabinets sound different.
        let a = Render.through(pedal, x, block: 128), b = Render.through(reference, x, block: 128)
        #expect(Measure.allFinite(a))
        #expect(Measure.rms(zip(a, b).map { $0 - $1 }) > 1e-3, "model 9 does not sound like model 0")
    }
}

extension LV2WorkerTests {
    static let convolver = "http://gareus.org/oss/lv2/convoLV2#Mono"

    /// x42's convolver gets its impulse response from its state: restore schedules the loading
    /// (run at once on the restoring thread, the synchronous worker LV2 gives restore), the
    /// worker's response swaps the new engine in on the next run (the audio thread), and the
    /// saved state names the file again.
    @Test(.enabled(if: LV2Fixtures.installed(convolver), "x42-plugins is not installed (make deps-test)"))
    func aRestoredConvolverLoadsItsImpulseThroughTheWorker() throws {
        let folder = TemporaryFolder("lv2-convolver")
        let irPath = folder.file("ir.wav")
        try AudioFile.write(AudioBuffer(samples: Signal.impulse(length: 256, at: 10, amplitude: 0.5), sampleRate: 48_000, channels: 1), to: irPath)
        let pedal = try LV2Pedal(uri: Self.convolver, sampleRate: 48_000, maximumBlockSize: 128)
        #expect(pedal.info.usesWorker && pedal.info.hasStateInterface)
        let x = Signal.noise(length: 48_000, amplitude: 0.4, seed: 5)
        let silent = Render.through(pedal, Array(x[..<12_800]), block: 128)
        #expect(Measure.peak(silent) == 0, "no impulse response yet: silence")

        var state = LV2PedalState(uri: Self.convolver, controls: [:])
        state.properties["http://gareus.org/oss/lv2/convoLV2#state"] = LV2StateProperty(
            type: "http://lv2plug.in/ns/ext/atom#String", flags: 3, value: Data("convolution.ir.gain.0=1.0\n".utf8 + [0]))
        state.properties["http://gareus.org/oss/lv2/convoLV2#impulse"] = LV2StateProperty(
            type: "http://lv2plug.in/ns/ext/atom#Path", flags: 3, value: Data(irPath.utf8 + [0]))
        try pedal.restoreState(state)
        #expect(pedal.workCount >= 1, "restore ran the loading at once")
        #expect(pedal.responseCount == 0, "the response waits for the next run")

        let y = Render.through(pedal, Array(x[12_800...]), block: 128)
        #expect(pedal.responseCount >= 1, "the response reached the plugin in run")
        // Now it convolves: the input, halved and 10 samples late.
        let input = Array(x[12_800...])
        let expected = (0..<input.count).map { $0 >= 10 ? 0.5 * input[$0 - 10] : 0 }
        let settled = 4800..<input.count
        let error = Measure.rms(settled.map { y[$0] - expected[$0] })
        print("LV2 convolver after restore: rms error \(error) against 0.5 × input delayed 10 (output rms \(Measure.rms(y[settled])))")
        #expect(error < 1e-4, "\(error)")

        let saved = try pedal.saveState()
        let impulse = try #require(saved.properties["http://gareus.org/oss/lv2/convoLV2#impulse"])
        #expect(impulse.type == "http://lv2plug.in/ns/ext/atom#Path")
        #expect(String(decoding: impulse.value.prefix { $0 != 0 }, as: UTF8.self) == irPath)
        #expect(saved.properties["http://gareus.org/oss/lv2/convoLV2#state"] != nil)
    }
}

// MARK: Threads

@Suite struct LV2ThreadTests {
    /// An "audio thread" runs the pedal without pause while another thread moves its knobs,
    /// saves and restores its state (which pauses it) and resets it: nothing hangs, every block
    /// stays finite, and the pedal runs on afterwards.
    @Test(.enabled(if: LV2Fixtures.fil4.isInstalled, "x42-plugins is not installed (make deps-test)"))
    func restoresAndResetsWhileAudioRuns() throws {
        let pedal = try LV2Pedal(uri: LV2Fixtures.fil4.uri, sampleRate: 48_000, maximumBlockSize: 128)
        let state = try pedal.saveState()
        let stop = Flag()
        let result = Box()
        let audio = Thread {
            var block = Signal.noise(length: 128, amplitude: 0.3)
            var blocks = 0, dry = 0
            while !stop.isSet {
                let input = block
                block.withUnsafeMutableBufferPointer { pedal.process($0) }
                if !Measure.allFinite(block) { result.nonFinite += 1 }
                if block == input { dry += 1 }
                block = Signal.noise(length: 128, amplitude: 0.3, seed: UInt64(blocks % 97 + 1))
                blocks += 1
            }
            result.blocks = blocks
            result.dry = dry
            stop.done()
        }
        audio.start()
        for i in 0..<50 {
            try pedal.setControl(symbol: "gain", value: Float(i % 7) - 3)
            try pedal.restoreState(state)
            if i % 5 == 0 { pedal.reset() }
            _ = try pedal.saveState()
            usleep(2000)
        }
        stop.set()
        #expect(stop.waitDone(timeout: 5), "the audio thread finished")
        #expect(result.nonFinite == 0)
        #expect(result.blocks > 100, "\(result.blocks) blocks ran")
        #expect(result.dry < result.blocks / 2, "\(result.dry) of \(result.blocks) blocks dry (paused)")
        #expect(pedal.waitUntilRunning())
    }

    /// Plugin pedals made and let go on four threads at once (x42's EQ and its limiter, two
    /// libraries): lilv counts each library's users in the world it shares, so freeing one
    /// instance while another thread makes one must go through the world's lock. Without it, a
    /// library could close under an instance still in use (a parallel unit-test run crashed
    /// connecting the ports of one just made). Each pedal then runs a block.
    @Test(.enabled(if: LV2Fixtures.fil4.isInstalled && LV2Fixtures.installed(LV2PedalKindTests.dpl), "x42-plugins is not installed (make deps-test)"))
    func pedalsMadeAndLetGoOnManyThreadsAtOnce() {
        let uris = [LV2Fixtures.fil4.uri, LV2PedalKindTests.dpl]
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for round in 0..<100 {
                let uri = uris[(thread + round) % 2]
                guard let pedal = try? LV2Pedal(uri: uri, sampleRate: 48_000, maximumBlockSize: 64) else {
                    failures.add(1, ordering: .relaxed)
                    continue
                }
                var block = [Float](repeating: 0.1, count: 64)
                block.withUnsafeMutableBufferPointer { pedal.process($0) }
                if !block.allSatisfy(\.isFinite) { failures.add(1, ordering: .relaxed) }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
    }
}

private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    private let finished = DispatchSemaphore(value: 0)
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
    func done() { finished.signal() }
    func waitDone(timeout: Double) -> Bool { finished.wait(timeout: .now() + timeout) == .success }
}

private final class Box: @unchecked Sendable {
    var blocks = 0, dry = 0, nonFinite = 0
}

// MARK: Plugins as pedal kinds

@Suite struct LV2PedalKindTests {
    static let dpl = "http://gareus.org/oss/lv2/dpl#mono"

    @Test(.enabled(if: LV2Fixtures.fil4.isInstalled, "x42-plugins is not installed (make deps-test)"))
    func aPluginsPortsBecomeItsParameters() throws {
        let kind = try PedalKind.lv2(id: "fil", uri: LV2Fixtures.fil4.uri)
        let info = try LV2Fixtures.world.plugin(uri: LV2Fixtures.fil4.uri)
        #expect(kind.parameterSpecs.map(\.id) == ["fil.enabled"] + info.controls.map { "fil.\($0.symbol)" })
        #expect(kind.enabledParameter.pedalValue == 0, "off until --add or the menu switches it on")
        let gain = kind.parameter("gain").spec
        #expect(gain.minimum == -18 && gain.maximum == 18 && gain.defaultValue == 0 && gain.unit == .decibels)
        #expect(kind.parameter("HighPass").spec.scale == .toggle)
        #expect(kind.parameter("HPfreq").spec.unit == .hertz)
        // Unknown keys are named with the plugin.
        #expect(throws: ParameterError.self) { try PedalKind.parameter(named: "fil.nope", on: [kind]) }
        #expect(try PedalKind.parameter(named: "fil.gain", on: [kind]) == kind.parameter("gain"))
        #expect(try PedalKind.parameter(named: "delay.time_ms", on: [kind]) == .delayTime)
    }

    @Test(.enabled(if: (try? LV2Fixtures.world.plugin(uri: dpl))?.canHost == true, "x42-plugins (dpl) is not installed (make deps-test)"))
    func aPluginsReportedLatencyIsTheChains() throws {
        let kind = try PedalKind.lv2(id: "limit", uri: Self.dpl)
        let chain = Chain(board: [kind])
        chain.parameters.set(kind.enabledParameter, 1)
        chain.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        _ = Render.through(chain, Signal.noise(length: 4800, amplitude: 0.1))
        print("dpl reports \(chain.latencySamples) samples of latency")
        #expect(chain.latencySamples > 0)
        #expect(chain.latencySamples == kind.latency(48_000))
    }

    @Test(.enabled(if: LV2Fixtures.fil4.isInstalled, "x42-plugins is not installed (make deps-test)"))
    func aPluginPedalTakenOffIsLetGo() throws {
        let kind = try PedalKind.lv2(id: "fil", uri: LV2Fixtures.fil4.uri)
        let chain = Chain(board: [.delay, kind])
        chain.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        weak let pedal = chain.effect(kind) as? LV2Pedal
        #expect(pedal != nil)
        try chain.setBoard([.delay])
        _ = Render.through(chain, Signal.silence(4800))
        chain.collectRetiredBoard()
        #expect(pedal == nil)
    }
}


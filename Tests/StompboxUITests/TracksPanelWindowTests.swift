import Foundation
import StompboxTestSupport
import StompboxTestTags
import Testing

/// The tracks panel on a 1280×720 screen with the live engine on the private PulseAudio (the
/// demo riff comes in, as in `PresetSoundWindowTests`): loop track 1 recorded by key (Space taps
/// the selected track), loop track 2 by a finger on its waveform; Save as… writes both as `loop`
/// tracks; Open… on that file shows them. Checked through the panel's state, the screen reader's
/// view (AT-SPI) and `stompbox session info`.
@Suite("Tracks panel", .serialized, .tags(.window))
struct TracksPanelWindowTests {
    static func tracks(_ session: PedalboardSession) -> [String: Any] { session.state()?["tracks"] as? [String: Any] ?? [:] }
    static func loop(_ session: PedalboardSession, _ n: Int) -> String {
        ((tracks(session)["loops"] as? [[String: Any]])?.first { $0["track"] as? Int == n }?["state"] as? String) ?? ""
    }
    static func sessionTracks(_ session: PedalboardSession) -> [[String: Any]] { tracks(session)["session"] as? [[String: Any]] ?? [] }

    /// 16-bit mono 48 kHz WAV of a 440 Hz tone.
    static func wav(seconds: Double) -> Data {
        let frames = Int(seconds * 48_000)
        var data = Data()
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { data.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8)); u32(36 + frames * 2); data.append(contentsOf: Array("WAVEfmt ".utf8))
        u32(16); u16(1); u16(1); u32(48_000); u32(96_000); u16(2); u16(16)
        data.append(contentsOf: Array("data".utf8)); u32(frames * 2)
        for i in 0..<frames {
            withUnsafeBytes(of: Int16(10_000 * sin(2 * Double.pi * 440 * Double(i) / 48_000)).littleEndian) { data.append(contentsOf: $0) }
        }
        return data
    }

    func addFile(_ session: PedalboardSession, _ path: String) throws {
        try session.click("tracks", "add")
        try session.choose(path, in: "Add Audio File")
    }

    @Test("two loop tracks, one recorded by key and one by touch, are saved and shown again when the session is opened",
          .enabled(if: AudioServerKind.pulseaudio.isAvailable, "\(AudioServerKind.pulseaudio.unavailableReason ?? "")"))
    func recordSaveReopen() throws {
        let session = try PedalboardSession(startFromDefaults: true, environment: try unlockedLooperEnvironment(),
                                            accessibility: true, screen: (1280, 720), touch: true)
        defer { session.stop() }
        #expect(waitUntil(seconds: 10) { session.engineState == "running" })
        // The panel opens from the strip (a finger on "Tracks").
        let button = try session.settledPoint(["tracks_button"])
        try session.touch("down 1 \(button[0]) \(button[1])")
        Thread.sleep(forTimeInterval: 0.08)
        try session.touch("up 1 \(button[0]) \(button[1])")
        _ = try session.settledPoint(["tracks", "loop2"])

        // Track 1 by key: Space taps the selected track (the first).
        try session.xdotool("key", "space")
        #expect(waitUntil(seconds: 5) { Self.loop(session, 1).hasPrefix("recording") }, "loop 1: \(Self.loop(session, 1))")
        Thread.sleep(forTimeInterval: 1.5)
        try session.xdotool("key", "space")
        #expect(waitUntil(seconds: 5) { Self.loop(session, 1).hasPrefix("playing") }, "loop 1: \(Self.loop(session, 1))")

        // Track 2 by a finger on its waveform: it is selected and records in sync with track 1.
        let face = try session.settledPoint(["tracks", "loop2"])
        func tap() throws {
            try session.touch("down 1 \(face[0]) \(face[1])")
            Thread.sleep(forTimeInterval: 0.08)
            try session.touch("up 1 \(face[0]) \(face[1])")
        }
        try tap()
        #expect(waitUntil(seconds: 8) { Self.loop(session, 2).hasPrefix("recording") && !Self.loop(session, 2).contains("waiting") },
                "loop 2: \(Self.loop(session, 2))")
        #expect(session.parameter("looper.track") == 1, "the tapped track is selected")
        #expect(Self.loop(session, 2).contains("selected"))
        Thread.sleep(forTimeInterval: 1.0)
        try tap()
        #expect(waitUntil(seconds: 8) { Self.loop(session, 2).hasPrefix("playing") }, "loop 2: \(Self.loop(session, 2))")
        let loops = (1...2).map { Self.loop(session, $0) }

        // A finger on loop 1's gain slider moves it there (the middle of -40…12 dB is -14 dB): the
        // parameter the Looper reads follows.
        let gain = try session.settledPoint(["tracks", "loop1_gain"])
        #expect(session.parameter("looper.track1_gain_db") == 0)
        try session.touch("down 1 \(gain[0]) \(gain[1])")
        Thread.sleep(forTimeInterval: 0.08)
        try session.touch("up 1 \(gain[0]) \(gain[1])")
        #expect(waitUntil(seconds: 3) { (session.parameter("looper.track1_gain_db") ?? 0) < -8 },
                "loop 1 gain: \(session.parameter("looper.track1_gain_db") ?? .nan) dB")

        // Save as… a new file.
        let folder = session.home.appendingPathComponent("files")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("jam.stompsession").path
        try session.click("tracks", "save_as")
        try session.keys(to: "Save Session", "ctrl+a")
        try session.type(to: "Save Session", path)
        try session.keys(to: "Save Session", "Return")
        #expect(waitUntil(seconds: 10) { FileManager.default.fileExists(atPath: path) })
        #expect(waitUntil(seconds: 5) { session.windows(named: "Save Session").isEmpty })
        #expect(waitUntil(seconds: 5) { (Self.tracks(session)["message"] as? String)?.contains("2 from the Looper") == true },
                "\(Self.tracks(session)["message"] ?? "no message")")
        let info = try shell([Paths.stompbox, "session", "info", path])
        #expect(info.status == 0, "\(info.output)")
        #expect(info.output.contains("loop-1") && info.output.contains("loop-2"), "\(info.output)")

        // Open… it: both loop tracks are listed, with their waveforms.
        try session.click("tracks", "open")
        try session.choose(path, in: "Open Session")
        #expect(waitUntil(seconds: 10) {
            let shown = Self.sessionTracks(session)
            return shown.map { $0["id"] as? String } == ["loop-1", "loop-2"] && shown.allSatisfy { ($0["peaks"] as? Int) == 256 }
        }, "\(Self.sessionTracks(session))")
        #expect(Self.tracks(session)["session_path"] as? String == path)

        // What a screen reader hears: each loop track's state, each session track's kind and
        // author, the mix controls with their values.
        let controls = try session.accessibleControls()
        func value(_ name: String) -> String? { controls.first { $0.name == name }?.value }
        #expect(value("Loop 1")?.hasPrefix("playing") == true, "\(value("Loop 1") ?? "missing")")
        #expect(value("Loop 2")?.hasPrefix("playing") == true, "\(value("Loop 2") ?? "missing")")
        for id in ["loop-1", "loop-2"] {
            #expect(value("Session track \(id)")?.hasPrefix("loop by ") == true, "\(value("Session track \(id)") ?? "missing")")
            #expect(controls.contains { $0.name == "Session track \(id) Gain" && !$0.range.isEmpty })
        }
        #expect(value("Loop 1 Gain") != nil && value("Loop 1 Pan") != nil && value("Loop 1 Mute") == "not muted")
        for name in ["Record", "Open session", "Save session", "Save session as", "Add audio file"] {
            #expect(controls.contains { $0.name == name }, "no accessible \(name)")
        }

        // Add audio file…: a file that is not audio gives one message and changes nothing; a WAV
        // becomes an import track.
        let notAudio = folder.appendingPathComponent("notes.wav").path
        try Data("not audio".utf8).write(to: URL(fileURLWithPath: notAudio))
        try addFile(session, notAudio)
        #expect(waitUntil(seconds: 5) { (Self.tracks(session)["message"] as? String)?.contains("notes.wav cannot be added") == true },
                "\(Self.tracks(session)["message"] ?? "no message")")
        #expect(Self.sessionTracks(session).count == 2)
        let wav = folder.appendingPathComponent("tone.wav").path
        try Self.wav(seconds: 0.5).write(to: URL(fileURLWithPath: wav))
        try addFile(session, wav)
        #expect(waitUntil(seconds: 5) { Self.sessionTracks(session).map { $0["id"] as? String }.last == "import-3" },
                "\(Self.sessionTracks(session))")

        // Record: two seconds of the riff and the board's sound go into the file as a `di` and a
        // `wet` track, shown in the panel (the import is saved into the file first; the Looper's
        // two loops, in the file already, are not added again).
        try session.click("tracks", "record")
        #expect(waitUntil(seconds: 5) { Self.tracks(session)["recording"] as? Bool == true }, "\(Self.tracks(session)["message"] ?? "no message")")
        Thread.sleep(forTimeInterval: 2)
        try session.click("tracks", "record")
        #expect(waitUntil(seconds: 10) {
            Array(Self.sessionTracks(session).compactMap { $0["id"] as? String }.suffix(2)) == ["di-4", "wet-5"]
        }, "\(Self.sessionTracks(session).map { $0["id"] ?? "?" }) \(Self.tracks(session)["message"] ?? "")")
        #expect(Self.tracks(session)["recording"] as? Bool == false)
        #expect((Self.tracks(session)["message"] as? String)?.hasPrefix("Recorded") == true, "\(Self.tracks(session)["message"] ?? "")")
        let recorded = try shell([Paths.stompbox, "session", "info", path])
        #expect(recorded.output.contains("di-4") && recorded.output.contains("wet-5") && recorded.output.contains("import-3"), "\(recorded.output)")
        #expect(!FileManager.default.fileExists(atPath: path + ".recording"))

        // The panel fits the 1280×720 screen beside the pedals.
        let panel = try #require((session.state()?["layout"] as? [String: Any]).flatMap { ($0["tracks"] as? [String: Any])?["panel"] as? [Int] })
        #expect(panel[0] >= 0 && panel[0] + panel[2] <= 1280 && panel[1] + panel[3] <= 720, "panel at \(panel)")
        let shot = Paths.artifacts.appendingPathComponent("tracks-panel-1280x720.png").path
        try session.screenshot(to: shot)
        print("tracks panel: loops \(loops), saved \(path); screenshot \(shot)")
    }

    /// A session made by `stompbox render --session` with two scripted loops, opened in a window
    /// whose Looper is empty: both loops play again on the Looper's first two tracks, the file's
    /// loop tracks are muted in its mix (the Looper plays them now), and Save does not add them
    /// a second time.
    @Test("an opened session's loop tracks play again on an empty Looper",
          .enabled(if: AudioServerKind.pulseaudio.isAvailable, "\(AudioServerKind.pulseaudio.unavailableReason ?? "")"))
    func loopsComeBack() throws {
        let environment = try unlockedLooperEnvironment()
        let folder = TemporaryFolder("stompbox-loops-back")
        let input = folder.url.appendingPathComponent("in.wav").path, path = folder.url.appendingPathComponent("jam.stompsession").path
        try Self.wav(seconds: 5).write(to: URL(fileURLWithPath: input))
        let made = try shell([Paths.stompbox, "render", input, folder.url.appendingPathComponent("out.wav").path, "--session", path,
                              "--author", "ana", "--chain", "looper", "--set", "looper.enabled=on",
                              "--at", "0.5:looper.tap", "--at", "1.5:looper.tap",
                              "--at", "1.6:looper.track=3", "--at", "1.7:looper.tap", "--at", "3.6:looper.tap"], environment: environment)
        #expect(made.status == 0, "\(made.output)")

        let session = try PedalboardSession(startFromDefaults: true, environment: environment, screen: (1280, 720))
        defer { session.stop() }
        #expect(waitUntil(seconds: 10) { session.engineState == "running" })
        try session.click("tracks_button")
        _ = try session.settledPoint(["tracks", "open"])
        try session.click("tracks", "open")
        try session.choose(path, in: "Open Session")
        #expect(waitUntil(seconds: 15) { (Self.tracks(session)["message"] as? String)?.contains("2 loop tracks back in the Looper") == true },
                "\(Self.tracks(session)["message"] ?? "no message")")
        #expect(waitUntil(seconds: 5) { Self.loop(session, 1).hasPrefix("playing") && Self.loop(session, 2).hasPrefix("playing") },
                "\(Self.loop(session, 1)) / \(Self.loop(session, 2))")
        #expect(session.parameter("looper.enabled") == 1)
        #expect(Self.sessionTracks(session).map { $0["id"] as? String } == ["di-1", "wet-2", "loop-3", "loop-4"])

        try session.click("tracks", "save")
        #expect(waitUntil(seconds: 10) { (Self.tracks(session)["message"] as? String)?.contains("0 from the Looper") == true },
                "\(Self.tracks(session)["message"] ?? "no message")")
        let info = try shell([Paths.stompbox, "session", "info", path, "--json"])
        #expect(info.status == 0 && !info.output.contains("loop-5"), "\(info.output)")
    }
}

import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP
import StompboxSession
import StompboxTestSupport
import Testing

/// `stompbox session …` and `render --session`, run as the built program.
@Suite struct SessionCommandTests {
    /// A folder with `in.wav`: a second of a mono riff at 48 kHz, 24-bit.
    final class Workspace {
        let folder = TemporaryFolder("stompbox-session-cli")
        init(seconds: Double = 1, rate: Int = 48_000) throws {
            let riff = Signal.guitarRiff(seconds: seconds, sampleRate: Double(rate)).map { $0 * 0.5 }
            try AudioFile.write(AudioBuffer(samples: riff, sampleRate: rate, channels: 1), to: folder.file("in.wav"))
        }
        var url: URL { folder.url }
        func file(_ name: String) -> String { folder.file(name) }
        func bytes(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: file(name))) }
    }

    static let board = ["--chain", "gate,overdrive,amp,cab,eq,tremolo,delay,reverb",
                        "--set", "overdrive.enabled=on", "--set", "amp.enabled=on", "--set", "cab.enabled=on",
                        "--set", "delay.enabled=on", "--set", "reverb.enabled=on", "--set", "tremolo.enabled=on",
                        "--at", "0.5:delay.time_ms=200"]

    /// Played again through the board it was recorded with, a DI track gives the recorded wet
    /// track again: the difference stays below −90 dBFS.
    @Test func reampThroughTheSameBoardNullsBelowMinus90dBFS() throws {
        let w = try Workspace()
        try expectSuccess(["render", "in.wav", "out.wav", "--session", "s.stompsession", "--author", "ana"] + Self.board, in: w.url)
        try expectSuccess(["session", "reamp", "s.stompsession", "--track", "di-1", "--author", "ben"], in: w.url)
        let session = try Session.open(w.file("s.stompsession"))
        #expect(session.manifest.tracks.map(\.kind) == [.di, .wet, .wet])
        #expect(session.manifest.tracks.map(\.author) == ["ana", "ana", "ben"])
        let recorded = try session.audio(of: "wet-2"), again = try session.audio(of: "wet-3")
        #expect(recorded.frames == again.frames && recorded.channels == 2)
        #expect(Measure.rms(recorded.samples) > 0.01)
        let difference = zip(recorded.samples, again.samples).map { $0 - $1 }
        #expect(Measure.decibels(Measure.peak(difference)) < -90)
        // The wet track is what render wrote.
        let out = try AudioFile.read(w.file("out.wav"))
        #expect(out.samples == recorded.samples)

        // Through another board it is another sound.
        try expectSuccess(["session", "reamp", "s.stompsession", "--track", "di-1", "--author", "ben",
                           "--chain", "tremolo", "--set", "tremolo.enabled=on"], in: w.url)
        let other = try Session.open(w.file("s.stompsession")).audio(of: "wet-4")
        #expect(Measure.decibels(Measure.peak(zip(recorded.samples, other.samples).map { $0 - $1 })) > -40)
    }

    /// The scripted Looper's tracks are saved as `loop` tracks: whole cycles long, starting where
    /// they started in IN, their audio what the Looper held, and the cycle in `cycle_frames`.
    @Test func renderSavesTheLoopTracks() throws {
        let w = try Workspace(seconds: 5)
        let unlocked = try RenderCommandTests.unlockedLooper()
        try expectSuccess(["render", "in.wav", "out.wav", "--session", "s.stompsession", "--author", "ana",
                           "--chain", "looper", "--set", "looper.enabled=on", "--set", "looper.track3_pan=-0.5",
                           "--at", "0.5:looper.tap", "--at", "1.5:looper.tap",
                           "--at", "1.6:looper.track=3", "--at", "1.7:looper.tap", "--at", "3.6:looper.tap"],
                          in: w.url, environment: unlocked.environment)
        let session = try Session.open(w.file("s.stompsession"))
        #expect(session.manifest.tracks.map(\.kind) == [.di, .wet, .loop, .loop])
        let cycle = session.manifest.cycleFrames
        #expect(cycle == 48_000, "the first loop, 0.5 s to 1.5 s, sets the cycle")
        let loops = session.manifest.tracks.filter { $0.kind == .loop }
        #expect(loops.map(\.start) == [24_000, 24_000 + 2 * cycle], "the second starts on the boundary after its press")
        #expect(loops.map(\.frames) == [cycle, 2 * cycle], "pressed at 3.6 s, it closes at the boundary at 4.5 s")
        #expect(loops.map(\.mute) == [true, true], "OUT holds the loops: the mix plays them once")
        #expect(loops[1].pan == -0.5)
        // The first loop is IN from 0.5 s to 1.5 s (the Looper records its input as it is), but
        // for its head, which the seam crossfades with the input after its end.
        let dry = try AudioFile.read(w.file("in.wav")).samples
        let first = try session.audio(of: loops[0].id)
        let seam = 2 * Int(Looper.seamTime * 48_000)
        let difference = zip(first.samples[seam...], dry[(24_000 + seam)..<72_000]).map { $0 - $1 }
        #expect(Measure.decibels(Measure.peak(difference)) < -90, "24-bit FLAC of the loop's samples")
        #expect(Measure.rms(first.samples) > 0.01)
    }

    /// `session info --json` gives every field scripts read; adding a track gives it its author.
    @Test func infoJSONHasTheManifestFields() throws {
        let w = try Workspace()
        try expectSuccess(["session", "new", "s.stompsession", "--rate", "44100", "--tempo", "96"], in: w.url)
        try expectSuccess(["session", "add", "s.stompsession", "in.wav", "--author", "cleo", "--start", "100",
                           "--gain-db", "-6", "--pan", "-0.5"], in: w.url)
        let result = try expectSuccess(["session", "info", "s.stompsession", "--json"], in: w.url)
        guard case .object(let top) = try JSONValue.parse(Data(result.stdout.utf8)),
              case .array(let tracks)? = top["tracks"], case .object(let track)? = tracks.first else {
            Issue.record("not the expected JSON: \(result.stdout)")
            return
        }
        #expect(top["sample_rate"] == .number(44_100) && top["tempo_bpm"] == .number(96) && top["cycle_frames"] == .number(0))
        #expect(track["id"] == .string("import-1") && track["author"] == .string("cleo") && track["kind"] == .string("import"))
        #expect(track["file"] == .string("audio/import-1.flac") && track["start"] == .number(100))
        // 48 000 frames at 48 kHz are 44 100 at 44.1 kHz.
        #expect(track["frames"] == .number(44_100))
        #expect(track["gain_db"] == .number(-6) && track["pan"] == .number(-0.5) && track["mute"] == .bool(false))
        guard case .string(let hash)? = track["sha256"] else { Issue.record("no sha256"); return }
        #expect(hash == Session.sha256(try Session.open(w.file("s.stompsession")).storedAudio(of: "import-1")!))
        let text = try expectSuccess(["session", "info", "s.stompsession"], in: w.url)
        #expect(text.stdout.contains("import-1  import by cleo  start 100  44100 frames"))
    }

    /// A file that is not audio: one message, and the session is the same file it was.
    @Test func addingAFileThatIsNotAudioLeavesTheSessionUntouched() throws {
        let w = try Workspace()
        try expectSuccess(["session", "new", "s.stompsession"], in: w.url)
        try expectSuccess(["session", "add", "s.stompsession", "in.wav", "--author", "ana"], in: w.url)
        let before = try w.bytes("s.stompsession")
        let listing = w.folder.contents()
        w.folder.write("a text, not a sound", to: "notes.txt")
        try expectFailure(["session", "add", "s.stompsession", "notes.txt", "--author", "ben"], in: w.url,
                          mentioning: ["'notes.txt' is not an audio file"])
        #expect(try w.bytes("s.stompsession") == before)
        #expect(w.folder.contents() == (listing + ["notes.txt"]).sorted())
        try expectFailure(["session", "new", "s.stompsession"], in: w.url, mentioning: ["exists already"])
        #expect(try w.bytes("s.stompsession") == before)
    }

    /// Mixdown twice gives the same files; stems are as long as the mix and named by track id.
    @Test func mixdownTwiceIsIdenticalWithStemsOfEqualLength() throws {
        let w = try Workspace()
        try expectSuccess(["session", "new", "s.stompsession"], in: w.url)
        try expectSuccess(["session", "add", "s.stompsession", "in.wav", "--author", "ana", "--gain-db", "-6"], in: w.url)
        try expectSuccess(["session", "add", "s.stompsession", "in.wav", "--author", "ben", "--start", "24000",
                           "--pan", "0.7", "--gain-db", "-9"], in: w.url)
        for round in ["1", "2"] {
            try expectSuccess(["session", "mixdown", "s.stompsession", "mix\(round).flac", "--stems", "stems\(round)"], in: w.url)
        }
        #expect(try w.bytes("mix1.flac") == w.bytes("mix2.flac"))
        let mix = try AudioFile.read(w.file("mix1.flac"))
        #expect(mix.channels == 2 && mix.frames == 72_000)
        let stems = try FileManager.default.contentsOfDirectory(atPath: w.file("stems1")).sorted()
        #expect(stems == ["import-1.flac", "import-2.flac"])
        for name in stems {
            #expect(try AudioFile.read(w.file("stems1/" + name)).frames == 72_000)
            #expect(try w.bytes("stems1/" + name) == w.bytes("stems2/" + name))
        }
    }

    /// A mix that would clip is written, with a warning that gives its peak.
    @Test func aClippingMixIsReportedWithItsPeak() throws {
        let w = try Workspace()
        try expectSuccess(["session", "new", "s.stompsession"], in: w.url)
        for _ in 0..<2 {
            try expectSuccess(["session", "add", "s.stompsession", "in.wav", "--author", "ana", "--gain-db", "12"], in: w.url)
        }
        let result = try runStompbox(["session", "mixdown", "s.stompsession", "mix.wav"], in: w.url)
        #expect(result.status == 0)
        #expect(result.stderrLines.count == 1 && result.stderr.contains("warning: the mix clips: its peak is +"), "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: w.file("mix.wav")))
    }

    /// Each command's mistakes are one line.
    @Test func mistakesAreOneLine() throws {
        let w = try Workspace()
        try expectFailure(["session", "info", "none.stompsession"], in: w.url, mentioning: ["none.stompsession", "does not exist"])
        try expectFailure(["session", "new", "s.stompsession", "--rate", "fast"], in: w.url, mentioning: ["--rate"])
        try expectSuccess(["session", "new", "s.stompsession"], in: w.url)
        try expectFailure(["session", "add", "s.stompsession", "in.wav", "--author", "a", "--pan", "2"], in: w.url, mentioning: ["--pan"])
        try expectFailure(["session", "reamp", "s.stompsession", "--track", "di-9", "--author", "a"], in: w.url, mentioning: ["no track 'di-9'"])
        try expectSuccess(["session", "add", "s.stompsession", "in.wav", "--author", "a"], in: w.url)
        try expectFailure(["session", "reamp", "s.stompsession", "--track", "import-1", "--author", "a"], in: w.url,
                          mentioning: ["no board of its own"])
    }

    /// A second render into the same session adds its two tracks and keeps the first two as they were.
    @Test func aSecondRenderAddsToTheSession() throws {
        let w = try Workspace()
        try expectSuccess(["render", "in.wav", "a.wav", "--session", "s.stompsession", "--author", "ana",
                           "--chain", "overdrive", "--set", "overdrive.enabled=on"], in: w.url)
        let first = try Session.open(w.file("s.stompsession")).manifest.tracks
        try expectSuccess(["render", "in.wav", "b.flac", "--session", "s.stompsession", "--author", "ben",
                           "--chain", "delay", "--set", "delay.enabled=on", "--tail", "0.25"], in: w.url)
        let tracks = try Session.open(w.file("s.stompsession")).manifest.tracks
        #expect(Array(tracks.prefix(2)) == first)
        #expect(tracks.map(\.id) == ["di-1", "wet-2", "di-3", "wet-4"])
        #expect(tracks.map(\.mute) == [true, false, true, false])
        #expect(tracks[3].author == "ben" && tracks[3].frames == 48_000 + 12_000)
        guard case .object(let board)? = tracks[3].board, case .array(let chain)? = board["chain"] else {
            Issue.record("the wet track has no board")
            return
        }
        #expect(chain == [.string("delay")])
        // Not a session: one line.
        try expectFailure(["session", "info", "a.wav"], in: w.url, mentioning: ["'a.wav'", "not a session file"])
    }

    /// `render --session` into a session at another rate is refused before anything is rendered.
    @Test func renderIntoASessionAtAnotherRateIsRefused() throws {
        let w = try Workspace()
        try expectSuccess(["session", "new", "s.stompsession", "--rate", "44100"], in: w.url)
        try expectFailure(["render", "in.wav", "out.wav", "--session", "s.stompsession"], in: w.url,
                          mentioning: ["44100 Hz", "48000 Hz"])
        #expect(!FileManager.default.fileExists(atPath: w.file("out.wav")))
    }
}

import Foundation
import StompboxAudio
import StompboxSession
import StompboxTestSupport
import StompboxTestTags
import Testing

/// `run --record` against a real server (a private jackd, dummy driver), the demo riff as the
/// guitar: killed mid-take, and stopped and recorded over by a second player.
@Suite(.serialized, .tags(.live), .enabled(if: PrivateJackServer.unavailableReason == nil, Comment(rawValue: PrivateJackServer.unavailableReason ?? "")))
struct RunRecordTests {
    typealias Run = LiveEngineMIDITests.Run

    static func record(_ session: String, author: String, folder: TemporaryFolder) throws -> Run {
        try Run(["run", "--headless", "--backend", "jack", "--no-connect", "--input", "demo", "--record", session, "--author", author],
                environment: ["XDG_CONFIG_HOME": folder.file("config"), "XDG_DATA_HOME": folder.file("data")], folder: folder)
    }

    /// Tracks as `session info --json` gives them.
    static func tracks(_ session: String) throws -> [[String: Any]] {
        let info = try runStompbox(["session", "info", session, "--json"])
        try #require(info.status == 0, "\(info.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any]
        return try #require(json?["tracks"] as? [[String: Any]])
    }

    /// SIGKILL four seconds into a take: the session opens, after `session recover`, with the DI
    /// and the wet track of all but at most the last second, the riff in them.
    @Test func aKilledRecordingKeepsAllButTheLastSecond() throws {
        let server = PrivateJackServer()
        try server.start()
        defer { server.stop() }
        let folder = TemporaryFolder("stompbox-kill")
        let session = folder.file("take.stompsession")
        let run = try Self.record(session, author: "ann", folder: folder)
        defer { run.stop() }
        let first = run.waitForLine(after: 0, seconds: 10) { $0.contains("recording_s=") }
        try #require(first != nil, "no recording status line: \(run.lines)")
        Thread.sleep(forTimeInterval: 4)
        // What the take holds at the kill: the seconds on disk its newest status line reports
        // (a line a second, read within 0.1 s of being printed), and the time since then.
        let fresh = run.waitForLine(after: run.lines.count, seconds: 3) { $0.contains("recording_s=") }
        let reportedAt = Date()
        kill(run.process.processIdentifier, SIGKILL)
        let reported = try #require(fresh.flatMap(Self.recordedSeconds), "no fresh status line: \(run.lines.suffix(2))")
        let recorded = reported + Date().timeIntervalSince(reportedAt)
        #expect(reported > 2, "\(fresh ?? "")")
        run.process.waitUntilExit()
        #expect(!FileManager.default.fileExists(atPath: session), "nothing is packed by a killed run")

        let recover = try runStompbox(["session", "recover", session])
        #expect(recover.status == 0, "\(recover.stderr)")
        #expect(recover.stdout.contains("not stopped"), "\(recover.stdout)")
        let tracks = try Self.tracks(session)
        #expect(tracks.map { $0["kind"] as? String } == ["di", "wet"])
        for t in tracks {
            let frames = try #require(t["frames"] as? Int)
            #expect(Double(frames) / 48_000 >= recorded - 1, "\(t["id"] ?? "?"): \(frames) frames of at least \(recorded) s")
            #expect(t["author"] as? String == "ann")
        }
        let mix = try runStompbox(["session", "mixdown", session, folder.file("mix.wav")])
        #expect(mix.status == 0, "\(mix.stderr)")
        let peak = try #require(Self.peak(folder.file("mix.wav")))
        #expect(peak > 0.05, "the riff is in the recording (peak \(peak))")
    }

    /// A take stopped by SIGTERM is packed (DI and wet, equal lengths); a second player's take
    /// on the same session plays the first one's along (heard at the output, not in the wet
    /// track), adds two tracks and leaves the first two byte for byte (same hashes).
    @Test func aSecondPlayerRecordsOverTheFirst() throws {
        let server = PrivateJackServer()
        try server.start()
        defer { server.stop() }
        let folder = TemporaryFolder("stompbox-overdub")
        let session = folder.file("song.stompsession")
        var annHashes: [String] = []
        for (author, expected) in [("ann", 2), ("bob", 4)] {
            let run = try Self.record(session, author: author, folder: folder)
            let line = run.waitForLine(after: 0, seconds: 10) { $0.contains("recording_s=2.") }
            #expect(line != nil, "\(run.lines.suffix(2))")
            run.stop()
            // No pedal is on: the output is the input, but for the first take played along.
            let louder = run.lines.filter { $0.contains("recording_s=") }.compactMap(Self.peaks).map { $0.output - $0.input }
            if author == "ann" {
                #expect(!louder.isEmpty && louder.allSatisfy { abs($0) < 0.5 }, "\(louder)")
            } else {
                #expect(louder.contains { $0 > 1 }, "the backing is heard: \(louder)")
            }
            #expect(run.process.terminationStatus == 0)
            let tracks = try Self.tracks(session)
            #expect(tracks.count == expected)
            #expect(!FileManager.default.fileExists(atPath: session + ".recording"), "the folder goes once packed")
            if author == "ann" { annHashes = tracks.compactMap { $0["sha256"] as? String } }
        }
        let tracks = try Self.tracks(session)
        #expect(tracks.map { $0["author"] as? String } == ["ann", "ann", "bob", "bob"])
        #expect(tracks[0]["frames"] as? Int == tracks[1]["frames"] as? Int)
        // The second take's wet track is what the board made of its DI, without the backing.
        let opened = try Session.open(session)
        let di = try opened.audio(of: "di-3").samples, wet = try opened.audio(of: "wet-4")
        let left = stride(from: 0, to: wet.samples.count, by: 2).map { wet.samples[$0] }
        #expect(Measure.decibels(Measure.peak(zip(di, left).map { $0 - $1 })) < -60)
        // The first player's tracks: their hashes as when they were first saved.
        #expect(annHashes.count == 2 && Array(tracks.prefix(2).compactMap { $0["sha256"] as? String }) == annHashes)
    }

    /// `recording_s` of a status line.
    static func recordedSeconds(_ line: String) -> Double? {
        guard let range = line.range(of: "recording_s=") else { return nil }
        return Double(line[range.upperBound...].prefix { $0 != " " })
    }

    /// `in_peak_db` and `out_peak_db` of a status line.
    static func peaks(_ line: String) -> (input: Double, output: Double)? {
        func value(_ key: String) -> Double? {
            guard let range = line.range(of: key + "=") else { return nil }
            return Double(line[range.upperBound...].prefix { $0 != " " })
        }
        guard let i = value("in_peak_db"), let o = value("out_peak_db") else { return nil }
        return (i, o)
    }

    static func peak(_ path: String) -> Float? {
        (try? AudioFile.read(path))?.samples.map(abs).max()
    }
}

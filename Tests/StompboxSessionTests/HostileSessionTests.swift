import Foundation
import StompboxAudio
import StompboxCore
import StompboxSession
import StompboxTestSupport
import Testing

/// Damaged and hostile session files, each refused whole with one message naming its problem,
/// with nothing written anywhere and the file itself left as it was.
@Suite struct HostileSessionTests {
    /// One crafted file: how to make it from a good session's entries, and what the refusal says.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        /// The words the message must hold.
        let mentions: [String]
        let craft: @Sendable (_ good: [(String, Data)], _ path: String) throws -> Void
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "an entry that climbs out", mentions: ["'../../evil.txt'", "climbs out"]) { good, path in
            try writeArchive(good + [("../../evil.txt", Data("owned".utf8))], to: path)
        },
        Case(name: "an absolute entry", mentions: ["'/tmp/evil.txt'", "climbs out"]) { good, path in
            try writeArchive(good + [("/tmp/evil.txt", Data("owned".utf8))], to: path)
        },
        Case(name: "a track file that climbs out", mentions: ["'audio/../../evil.flac'", "climbs out"]) { good, path in
            let object = changingTrack(try manifestObject(good), 0) { $0["file"] = .string("audio/../../evil.flac") }
            try writeArchive(replacingManifest(good, with: object), to: path)
        },
        Case(name: "a track file outside the audio folder", mentions: ["track 'di-1'", "'session.json' must be audio/NAME"]) { good, path in
            let object = changingTrack(try manifestObject(good), 0) { $0["file"] = .string("session.json") }
            try writeArchive(replacingManifest(good, with: object), to: path)
        },
        Case(name: "a symbolic link", mentions: ["'audio/passwd'", "symbolic link"]) { good, path in
            try writeArchive(good, to: path, symlinks: [("audio/passwd", "/etc/passwd")])
        },
        Case(name: "a huge declared size", mentions: ["'audio/di-1.flac'", "declares 4026531840 bytes"]) { good, path in
            try writeArchive(good, to: path)
            try patchDeclaredSize(of: "audio/di-1.flac", in: path, to: 0xF000_0000)
        },
        Case(name: "an entry that inflates past its declared size", mentions: ["'padding.bin'", "more bytes than it declares"]) { good, path in
            try writeArchive(good + [("padding.bin", Data(count: 4 << 20))], to: path, deflate: true)
            try patchDeclaredSize(of: "padding.bin", in: path, to: 1000)
        },
        Case(name: "not a ZIP archive", mentions: ["not a session file"]) { _, path in
            try Data("just text, no archive".utf8).write(to: URL(fileURLWithPath: path))
        },
        Case(name: "no manifest", mentions: ["no session.json"]) { good, path in
            try writeArchive(good.filter { $0.0 != "session.json" }, to: path)
        },
        Case(name: "bad JSON", mentions: ["session.json cannot be read", "not valid JSON"]) { good, path in
            try writeArchive(good.map { $0.0 == "session.json" ? ($0.0, Data(#"{"format": "stompbox-session", "version": 1,"#.utf8)) : $0 }, to: path)
        },
        Case(name: "a field of the wrong kind", mentions: ["track 'di-1'", "frames: expected a number"]) { good, path in
            let object = changingTrack(try manifestObject(good), 0) { $0["frames"] = .string("many") }
            try writeArchive(replacingManifest(good, with: object), to: path)
        },
        Case(name: "a newer version", mentions: ["newer Stompbox", "version 2", "up to version 1"]) { good, path in
            var object = try manifestObject(good)
            object["version"] = .number(2)
            // What a newer version may hold is not looked at: not even its tracks.
            object["tracks"] = .string("a newer layout")
            try writeArchive(replacingManifest(good, with: object), to: path)
        },
        Case(name: "a missing audio file", mentions: ["track 'wet-2'", "'audio/wet-2.flac' is missing"]) { good, path in
            try writeArchive(good.filter { $0.0 != "audio/wet-2.flac" }, to: path)
        },
        Case(name: "audio with the wrong hash", mentions: ["track 'wet-2'", "SHA-256"]) { good, path in
            try writeArchive(good.map { $0.0 == "audio/wet-2.flac" ? ($0.0, flipping($0.1)) : $0 }, to: path)
        },
        Case(name: "the wrong frame count", mentions: ["track 'di-1'", "holds 24000 frames", "says 24001"]) { good, path in
            let object = changingTrack(try manifestObject(good), 0) { $0["frames"] = .number(24_001) }
            try writeArchive(replacingManifest(good, with: object), to: path)
        },
        Case(name: "the wrong channel count", mentions: ["track 'wet-2'", "has 2 channels", "says 1"]) { good, path in
            let object = changingTrack(try manifestObject(good), 1) { $0["channels"] = .number(1) }
            try writeArchive(replacingManifest(good, with: object), to: path)
        },
        Case(name: "audio at another rate than the session", mentions: ["track 'di-1'", "44100 Hz", "session at 48000 Hz"]) { good, path in
            let other = try AudioData.encode(riff(rate: 44_100), format: .flac, name: "x")
            var object = changingTrack(try manifestObject(good), 0) {
                $0["sha256"] = .string(sha256Hex(other))
                $0["frames"] = .number(22_050)
            }
            object["sample_rate"] = .number(48_000)
            try writeArchive(replacingManifest(good, with: object).map { $0.0 == "audio/di-1.flac" ? ($0.0, other) : $0 }, to: path)
        },
        Case(name: "a track that is not audio", mentions: ["track 'di-1'", "not audio"]) { good, path in
            let text = Data("not audio at all".utf8)
            let object = changingTrack(try manifestObject(good), 0) { $0["sha256"] = .string(sha256Hex(text)) }
            try writeArchive(replacingManifest(good, with: object).map { $0.0 == "audio/di-1.flac" ? ($0.0, text) : $0 }, to: path)
        },
    ]

    @Test(arguments: cases)
    func isRefusedWithOneMessageAndNothingWritten(_ hostile: Case) throws {
        let sandbox = TemporaryFolder("stompbox-hostile")
        let good = try entries(of: try twoTrackSession(in: sandbox, name: "good.stompsession").path)
        try FileManager.default.createDirectory(atPath: sandbox.file("inner"), withIntermediateDirectories: false)
        let path = sandbox.file("inner/bad.stompsession")
        try hostile.craft(good, path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let before = snapshot(sandbox.url)
        let tmpBefore = Set((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])

        let error = #expect(throws: SessionError.self) { try Session.open(path) }
        let message = error?.description ?? ""
        #expect(message.hasPrefix("session '\(path)': "))
        #expect(!message.contains("\n"))
        for m in hostile.mentions { #expect(message.contains(m), "'\(message)' should mention \(m)") }

        #expect(snapshot(sandbox.url) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(!FileManager.default.fileExists(atPath: sandbox.file("evil.txt")))
        // Nothing new beside the sandbox in the temporary folder but other tests' own folders.
        let tmpAfter = Set((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])
        #expect(tmpAfter.subtracting(tmpBefore).allSatisfy { $0.hasPrefix("stompbox-") }, "\(tmpAfter.subtracting(tmpBefore))")
    }

    /// The real limits refuse a declared size above 2 GiB; tighter ones refuse sooner.
    @Test func limitsCanBeTightened() throws {
        let folder = TemporaryFolder("stompbox-hostile")
        let path = try twoTrackSession(in: folder).path
        var limits = SessionLimits()
        limits.entryBytes = 1000
        let error = #expect(throws: SessionError.self) { try Session.open(path, limits: limits) }
        guard case .tooLarge(let entry, _, let limit)? = error?.problem else {
            Issue.record("expected tooLarge, got \(String(describing: error))")
            return
        }
        #expect(entry.hasPrefix("audio/") && limit == 1000)
        #expect(try Session.open(path).manifest.tracks.count == 2)
    }
}

/// `data` with one byte in its middle changed.
private func flipping(_ data: Data) -> Data {
    var copy = data
    copy[copy.count / 2] ^= 0xFF
    return copy
}

private func sha256Hex(_ data: Data) -> String { Session.sha256(data) }

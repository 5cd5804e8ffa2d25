import Foundation
import StompboxAudio
@testable import StompboxSession
import StompboxTestSupport
import Testing

/// What the window's tracks panel does to an opened session: mix edits and loop tracks added
/// for one save and taken out again.
@Suite struct SessionEditTests {
    @Test func mixEditsKeepTheAudioAndTakingATrackOutLeavesTheOthersAsRead() throws {
        let folder = TemporaryFolder("stompbox-session")
        let session = try Session(path: folder.file("s.stompsession"), sampleRate: 48_000, tempoBPM: 120)
        let tone = AudioBuffer(samples: Signal.sine(frequency: 220, seconds: 0.5, sampleRate: 48_000, amplitude: 0.3), sampleRate: 48_000, channels: 1)
        let kept = try session.addTrack(tone, kind: .import, author: "ana")
        try session.save()
        let opened = try Session.open(session.path)
        let bytes = try #require(opened.storedAudio(of: kept.id))

        try opened.setMix(of: kept.id, gainDB: -6, pan: 0.5, mute: true)
        #expect(throws: SessionError.self) { try opened.setMix(of: kept.id, gainDB: 99, pan: 0, mute: false) }
        #expect(throws: SessionError.self) { try opened.setMix(of: "nope", gainDB: 0, pan: 0, mute: false) }
        let loop = try opened.addTrack(tone, kind: .loop, author: "ana")
        opened.cycleFrames = 24_000
        try opened.save(to: folder.file("t.stompsession"))
        opened.removeTrack(loop.id)
        #expect(opened.manifest.tracks.map(\.id) == [kept.id])
        #expect(opened.storedAudio(of: loop.id) == nil)

        let saved = try Session.open(folder.file("t.stompsession"))
        #expect(saved.manifest.tracks.map(\.kind) == [.import, .loop])
        #expect(saved.manifest.cycleFrames == 24_000)
        let edited = try #require(saved.manifest.track(kept.id))
        #expect(edited.gainDB == -6 && edited.pan == 0.5 && edited.mute)
        #expect(saved.storedAudio(of: kept.id) == bytes, "the opened track's audio is written back byte for byte")
        #expect(edited.sha256 == kept.sha256)
    }
}

/// Which loop tracks go back onto the Looper when a session is opened, and where each plays.
@Suite struct SessionLoopsTests {
    @Test func loopsInStepGoBackEachWhereTheCyclePutsIt() throws {
        let folder = TemporaryFolder("stompbox-session")
        let session = try Session(path: folder.file("s.stompsession"), sampleRate: 48_000, tempoBPM: 120)
        let cycle = 12_000
        func loop(_ cycles: Int, channels: Int = 1, seed: UInt64) -> AudioBuffer {
            let mono = Signal.noise(length: cycles * cycle, amplitude: 0.2, seed: seed)
            guard channels > 1 else { return AudioBuffer(samples: mono, sampleRate: 48_000, channels: 1) }
            return AudioBuffer(samples: mono.flatMap { [Float](repeating: $0, count: channels) }, sampleRate: 48_000, channels: channels)
        }
        try session.addTrack(riff(), kind: .wet, author: "ana")
        let a = try session.addTrack(loop(2, seed: 1), kind: .loop, author: "ana", start: 5 * cycle)
        let b = try session.addTrack(loop(1, channels: 2, seed: 2), kind: .loop, author: "ana", start: 2 * cycle)
        let c = try session.addTrack(loop(3, seed: 3), kind: .loop, author: "ben", start: 2 * cycle + 7)
        let d = try session.addTrack(AudioBuffer(samples: Signal.noise(length: 18_000, seed: 4), sampleRate: 48_000, channels: 1),
                                     kind: .loop, author: "ben", start: 0)
        let e = try session.addTrack(loop(1, channels: 3, seed: 5), kind: .loop, author: "ben", start: 3 * cycle)
        session.cycleFrames = cycle
        let loops = try #require(try session.loopsForLooper(rate: 48_000, maximumLength: 120 * 48_000))
        #expect(loops.cycle == cycle && loops.origin == 2 * cycle)
        #expect(loops.tracks.map(\.id) == [b.id, a.id])
        #expect(loops.loops.map(\.track) == [0, 1])
        // b starts its pass at the origin; a began 3 cycles later, so it is a cycle into its two.
        #expect(loops.loops.map(\.position) == [0, cycle])
        #expect(loops.loops[0].right != nil && loops.loops[1].right == nil)
        #expect(loops.loops[1].left == (try session.audio(of: a.id)).samples)
        let left = Dictionary(uniqueKeysWithValues: loops.left.map { ($0.id, $0.reason) })
        #expect(left[c.id] == "not in step with the other loops")
        #expect(left[d.id]?.hasPrefix("not a whole number") == true)
        #expect(left[e.id] == "3 channels")
        #expect(try session.loopsForLooper(rate: 44_100, maximumLength: 120 * 44_100) == nil, "another rate: none")
    }
}

/// Where a session's stored entries lie in its file, so opening maps them instead of reading.
@Suite struct ZipLayoutTests {
    @Test func storedEntriesAreFoundWhereTheirBytesAre() throws {
        let folder = TemporaryFolder("stompbox-session")
        let path = folder.file("s.zip")
        let files = ["audio/a.flac": Data((0..<70_000).map { UInt8($0 % 251) }), "audio/b.wav": Data("short".utf8), "x/empty": Data()]
        try SessionArchive.write(manifest: Data(#"{"format_version":1}"#.utf8), files: files, to: URL(fileURLWithPath: path))
        let zip = try Data(contentsOf: URL(fileURLWithPath: path))
        let stored = ZipLayout.storedData(in: zip)
        for (name, bytes) in files { #expect(stored[name].map { zip[$0] } == bytes, "\(name)") }
        #expect(stored["session.json"] == nil, "the manifest is compressed: read the ordinary way")
        #expect(ZipLayout.storedData(in: Data("not a zip".utf8)).isEmpty)
        #expect(ZipLayout.storedData(in: zip.prefix(zip.count - 10)).isEmpty, "a cut end record")
    }
}

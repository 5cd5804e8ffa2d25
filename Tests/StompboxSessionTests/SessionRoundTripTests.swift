import Foundation
import StompboxAudio
import StompboxCore
import StompboxSession
import StompboxTestSupport
import Testing

@Suite struct SessionRoundTripTests {
    /// Saved, opened, mixed down twice: the tracks come back as they went in, and both mixes are
    /// the same file, byte for byte.
    /// A track's `sha256` is the standard one, so anyone can check a file with `sha256sum`.
    @Test func hashesAreStandardSHA256() {
        #expect(Session.sha256(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Session.sha256(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func saveOpenAndMixDownTwiceGiveIdenticalFiles() throws {
        let folder = TemporaryFolder("stompbox-session")
        let made = try twoTrackSession(in: folder)
        let opened = try Session.open(made.path)
        #expect(opened.manifest == made.manifest)
        #expect(opened.manifest.sampleRate == 48_000 && opened.manifest.tempoBPM == 100)
        let wet = try opened.audio(of: "wet-2")
        #expect(wet.frames == riff().frames && wet.channels == 2)
        // 24-bit FLAC keeps the riff within half a step of 24 bits.
        #expect(zip(wet.samples, riff(channels: 2, seed: 3).samples).allSatisfy { abs($0 - $1) <= 1.0 / 8_388_608 })

        for name in ["one.wav", "two.wav"] {
            try AudioFile.write(try Session.open(made.path).mixdown().mix, to: folder.file(name))
        }
        let one = try Data(contentsOf: URL(fileURLWithPath: folder.file("one.wav")))
        #expect(one == (try Data(contentsOf: URL(fileURLWithPath: folder.file("two.wav")))))
        #expect(try AudioFile.read(folder.file("one.wav")).frames == 480 + riff().frames)
    }

    /// A bandmate opens the session and adds a track: the first author's tracks keep their
    /// audio bytes and hashes, and the new one carries its author.
    @Test func aSecondAuthorsTrackLeavesTheFirstAuthorsHashesUnchanged() throws {
        let folder = TemporaryFolder("stompbox-session")
        let made = try twoTrackSession(in: folder)
        let before = made.manifest.tracks.map { ($0.sha256, made.storedAudio(of: $0.id)!) }
        let theirs = try Session.open(made.path)
        try theirs.addTrack(riff(seconds: 0.3, seed: 11), kind: .import, author: "ben", start: 1000)
        try theirs.save()

        let reopened = try Session.open(made.path)
        #expect(reopened.manifest.tracks.count == 3)
        for (track, (hash, bytes)) in zip(reopened.manifest.tracks, before) {
            #expect(track.author == "ana")
            #expect(track.sha256 == hash)
            #expect(reopened.storedAudio(of: track.id) == bytes)
        }
        let added = try #require(reopened.manifest.tracks.last)
        #expect(added.author == "ben" && added.kind == .import && added.start == 1000)
    }

    /// Keys this version does not know, at the top and in a track, survive an open and a save.
    @Test func unknownKeysSurviveLoadAndSave() throws {
        let folder = TemporaryFolder("stompbox-session")
        let path = try twoTrackSession(in: folder).path
        var files = try entries(of: path)
        var object = try manifestObject(files)
        object["colour"] = .string("teal")
        object["future"] = .object(["nested": .array([.number(1), .bool(true)])])
        object = changingTrack(object, 1) { $0["take_notes"] = .string("second chorus") }
        files = replacingManifest(files, with: object)
        let crafted = folder.file("crafted.stompsession")
        try writeArchive(files, to: crafted)

        let session = try Session.open(crafted)
        try session.addTrack(riff(seed: 5), kind: .import, author: "ben")
        try session.save()
        let saved = try manifestObject(try entries(of: crafted))
        #expect(saved["colour"] == .string("teal"))
        #expect(saved["future"] == object["future"])
        guard case .array(let tracks)? = saved["tracks"], case .object(let wet) = tracks[1] else {
            Issue.record("no tracks in \(saved)")
            return
        }
        #expect(wet["take_notes"] == .string("second chorus"))
        #expect(tracks.count == 3)
    }

    /// A failed save (the folder is gone) leaves the session file as it was and no temporary file.
    @Test func aFailedSaveLosesNothing() throws {
        let folder = TemporaryFolder("stompbox-session")
        let session = try twoTrackSession(in: folder)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: session.path))
        let before = snapshot(folder.url)
        try session.addTrack(riff(seed: 9), kind: .import, author: "ben")
        #expect(throws: SessionError.self) { try session.save(to: folder.file("missing/elsewhere.stompsession")) }
        #expect(snapshot(folder.url) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: session.path)) == bytes)
    }

    /// Tracks can be stored as float WAV: every bit of a float signal, above full scale too.
    @Test func floatWAVTracksKeepEveryBit() throws {
        let folder = TemporaryFolder("stompbox-session")
        let session = try Session(path: folder.file("f.stompsession"), sampleRate: 48_000, tempoBPM: 120)
        let hot = AudioBuffer(samples: riff().samples.map { $0 * 3.3 }, sampleRate: 48_000, channels: 1)
        let track = try session.addTrack(hot, kind: .import, author: "ana", format: .floatWAV)
        try session.save()
        #expect(track.file.hasSuffix(".wav"))
        #expect(try Session.open(session.path).audio(of: track.id).samples == hot.samples)
    }
}

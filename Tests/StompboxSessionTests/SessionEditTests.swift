import Foundation
import StompboxAudio
import StompboxSession
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

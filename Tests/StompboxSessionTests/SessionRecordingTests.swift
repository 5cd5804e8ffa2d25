import Foundation
import StompboxAudio
import StompboxSession
import StompboxTestSupport
import Testing

/// A take packed into its session, as `run --record` and the window's Record button leave it.
@Suite struct SessionRecordingTests {
    /// Feeds `frames` frames of a counting signal in blocks of 256, as the block path does, with
    /// a backing playing along in a block's output; returns what the output held.
    static func play(_ recorder: Recorder, frames: Int) -> [Float] {
        var heard: [Float] = []
        var at = 0
        while at < frames {
            let n = min(256, frames - at)
            var dry = (0..<n).map { Float(at + $0) / 1_000_000 }
            var left = dry, right = dry.map { -$0 }
            dry.withUnsafeMutableBufferPointer { recorder.takeInput($0.baseAddress!, frames: n) }
            left.withUnsafeMutableBufferPointer { l in right.withUnsafeMutableBufferPointer { r in
                recorder.takeOutput(left: l.baseAddress!, right: r.baseAddress!, frames: n)
                _ = recorder.playBacking(left: l.baseAddress!, right: r.baseAddress!, frames: n)
            } }
            heard += left
            at += n
        }
        return heard
    }

    /// The backing is heard from the take's first frame, never recorded into it; packed, the take
    /// loses its head by the latency noted when it began, so it lines up with what was heard.
    @Test func aTakeAgainstABackingIsPutInTimeWithIt() throws {
        let folder = TemporaryFolder("stompbox-take")
        let path = folder.file("song.stompsession")
        let backing = (0..<4_000).flatMap { i in [Float(0.5), Float(i) / 10_000] }
        let recorder = try Recorder(folder: SessionRecording.folder(for: path), sampleRate: 48_000, author: "bob",
                                    backing: backing, latencyFrames: 100)
        let heard = Self.play(recorder, frames: 6_000)
        _ = recorder.finish()
        #expect(heard[0] == 0.5 && heard[3_999] == Float(3_999) / 1_000_000 + 0.5, "the backing from the first frame")
        #expect(heard[4_000] == Float(4_000) / 1_000_000, "and nothing after its end")
        let packed = try SessionRecording.pack(into: path, tempoBPM: 120, board: nil, format: .floatWAV)
        #expect(packed.tracks.map(\.id) == ["di-1", "wet-2"] && !packed.recovered)
        let session = try Session.open(path)
        let di = try session.audio(of: "di-1").samples, wet = try session.audio(of: "wet-2").samples
        #expect(di.count == 5_900 && wet.count == 2 * 5_900)
        #expect(di.first == Float(100) / 1_000_000 && wet[0] == Float(100) / 1_000_000 && wet[1] == Float(-100) / 1_000_000,
                "the take starts 100 frames in, and its wet track holds no backing")
        #expect(!SessionRecording.isPending(path), "the folder goes once the session is saved")
    }

    /// A folder that cannot be packed (its manifest gone) is refused with one message, and both the
    /// folder and the session stay as they were.
    @Test func aRecordingThatCannotBePackedIsKept() throws {
        let folder = TemporaryFolder("stompbox-take")
        let path = folder.file("song.stompsession")
        let recorder = try Recorder(folder: SessionRecording.folder(for: path), sampleRate: 48_000, author: "bob")
        _ = Self.play(recorder, frames: 1_000)
        _ = recorder.finish()
        try FileManager.default.removeItem(atPath: SessionRecording.folder(for: path) + "/" + RecordingFolder.manifest)
        #expect(throws: SessionError.self) { try SessionRecording.pack(into: path, tempoBPM: 120, board: nil) }
        #expect(SessionRecording.isPending(path) && !FileManager.default.fileExists(atPath: path))
    }
}

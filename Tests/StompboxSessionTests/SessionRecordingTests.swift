import Foundation
import StompboxAudio
@testable import StompboxSession
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

    /// A take on a bandmate's session at another rate: the session plays along converted to the
    /// take's rate, and the take goes into the file converted to the session's, as long as it
    /// lasted (within a frame) and in time (a click stays where it was, in seconds).
    @Test func aTakeOnASessionAtAnotherRateIsConvertedToIt() throws {
        let folder = TemporaryFolder("stompbox-take")
        let path = folder.file("song.stompsession")
        let session = try Session(path: path, sampleRate: 44_100, tempoBPM: 120)
        try session.addTrack(riff(seconds: 0.5, rate: 44_100, channels: 2), kind: .wet, author: "ana")
        try session.save()
        let backing = try #require(try SessionRecording.backing(for: try Session.open(path), at: 48_000))
        #expect(backing.frames == 24_000, "0.5 s at 48 kHz")

        let recorder = try Recorder(folder: SessionRecording.folder(for: path), sampleRate: 48_000, author: "bob",
                                    backingSource: backing, latencyFrames: 0)
        let frames = 48_000, click = 24_000
        var dry = (0..<frames).map { Float(0.2 * sin(2 * Double.pi * 1_000 * Double($0) / 48_000)) }
        dry[click] = 0.9
        var at = 0
        while at < frames {
            let n = min(256, frames - at)
            var block = Array(dry[at..<(at + n)])
            var left = block, right = block
            block.withUnsafeMutableBufferPointer { recorder.takeInput($0.baseAddress!, frames: n) }
            left.withUnsafeMutableBufferPointer { l in right.withUnsafeMutableBufferPointer { r in
                recorder.takeOutput(left: l.baseAddress!, right: r.baseAddress!, frames: n)
            } }
            at += n
        }
        _ = recorder.finish()
        let packed = try SessionRecording.pack(into: path, tempoBPM: 120, board: nil)
        #expect(packed.tracks.map(\.id) == ["di-2", "wet-3"])
        let opened = try Session.open(path)
        #expect(opened.manifest.sampleRate == 44_100)
        let di = try opened.audio(of: "di-2").samples
        #expect(di.count == 44_100 && opened.manifest.track("wet-3")?.frames == 44_100)
        let loudest = di.indices.max { abs(di[$0]) < abs(di[$1]) }!
        #expect(abs(loudest - 22_050) <= 2, "the click at 0.5 s is at frame \(loudest)")
        // Still 1 kHz: about 2,000 zero crossings over the second.
        let crossings = zip(di, di.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        #expect(abs(crossings - 2_000) <= 6, "\(crossings) crossings")
    }

    /// A backing that falls behind (its maker held up longer than its ring lasts): what is not
    /// ready is silence, and what is heard is still the backing's frame for the take's frame.
    /// The stall is a gate the test holds shut, so where it falls does not depend on how fast
    /// this machine is.
    @Test func aBackingThatFallsBehindStaysInTime() throws {
        final class Gated: BackingSource, @unchecked Sendable {
            let frames = 48_000
            /// Rendering past the ring's first fill waits for this.
            let gate = DispatchSemaphore(value: 0)
            func render(into: UnsafeMutablePointer<Float>, from: Int, count: Int) {
                if from == 8_192 { gate.wait() }
                for k in 0..<count { into[2 * k] = Float(from + k + 1) / 100_000; into[2 * k + 1] = -into[2 * k] }
            }
        }
        let source = Gated()
        let folder = TemporaryFolder("stompbox-take")
        // A ring of 8,192 frames: filled before the take starts, then the maker waits at the gate.
        let recorder = try Recorder(folder: folder.file("s.recording"), sampleRate: 48_000, author: "bob",
                                    backingSource: source, backingSeconds: 8_192.0 / 48_000)
        var heard: [Float] = []
        func play() {
            var left = [Float](repeating: 0, count: 256), right = left
            left.withUnsafeMutableBufferPointer { l in right.withUnsafeMutableBufferPointer { r in
                _ = recorder.playBacking(left: l.baseAddress!, right: r.baseAddress!, frames: 256)
            } }
            heard += left
        }
        // 48 blocks (12,288 frames) while the maker is held: the last 4,096 find nothing.
        for _ in 0..<48 { play() }
        source.gate.signal()
        // From then on each block waits until its frames are made (5 s at most).
        while heard.count < 48_000 / 256 * 256 {
            let end = heard.count + 256
            let deadline = Date().addingTimeInterval(5)
            while recorder.backingMade < end && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
            play()
        }
        _ = recorder.finish()
        let missed = recorder.backingMissed
        let played = heard.enumerated().filter { $0.element != 0 }
        #expect(missed > 0 && !played.isEmpty && played.count + missed == heard.count, "missed \(missed), played \(played.count), zero \(heard.filter { $0 == 0 }.count)")
        #expect(missed == 4_096 && heard[8_192..<12_288].allSatisfy { $0 == 0 }, "missed \(missed)")
        #expect(played.allSatisfy { $0.element == Float($0.offset + 1) / 100_000 }, "every frame heard is the backing's own")
        #expect(played.contains { $0.offset > 24_000 }, "it catches up after falling behind")
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

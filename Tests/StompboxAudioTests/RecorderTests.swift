import Foundation
@testable import StompboxAudio
import StompboxTestSupport
import Testing

@Suite struct RecorderRingTests {
    /// Frames go round the ring's end in order; a write that does not fit is dropped whole and
    /// counted, and the frames before it are kept.
    @Test func framesWrapAndAFullRingDropsWhole() {
        let ring = RecorderRing(channels: 3, capacity: 100)
        var next: Float = 0
        var expected: Float = 0
        func push(_ n: Int) -> Bool {
            let a = (0..<n).map { next + Float($0) }, b = a.map { -$0 }, c = a.map { $0 + 0.5 }
            let ok = a.withUnsafeBufferPointer { pa in b.withUnsafeBufferPointer { pb in c.withUnsafeBufferPointer { pc in
                ring.write((pa.baseAddress!, pb.baseAddress!, pc.baseAddress!), frames: n)
            } } }
            if ok { next += Float(n) }
            return ok
        }
        var out = [Float](repeating: 0, count: 300)
        func pull(_ n: Int) -> Int {
            let got = out.withUnsafeMutableBufferPointer { ring.read(into: $0.baseAddress!, frames: n) }
            for j in 0..<got {
                #expect(out[3 * j] == expected && out[3 * j + 1] == -expected && out[3 * j + 2] == expected + 0.5)
                expected += 1
            }
            return got
        }
        for _ in 0..<7 {
            #expect(push(60))
            #expect(pull(100) == 60)
        }
        #expect(push(70))
        #expect(!push(40), "40 more do not fit in 30 free")
        #expect(ring.dropped.load(ordering: .relaxed) == 40)
        #expect(push(30))
        #expect(pull(100) == 100)
        #expect(ring.available == 0)
    }
}

/// Feeds a recorder as the audio thread does: blocks of a counting signal (so a gap or a
/// repeat shows), at the pace of real time when `realTime`.
final class RecorderFeed {
    let recorder: Recorder
    let block = 256
    private(set) var frames = 0
    /// The longest a block's hand-over took, in seconds.
    private(set) var longestHandOver = 0.0

    init(_ recorder: Recorder) { self.recorder = recorder }

    static func dry(_ i: Int) -> Float { Float(i % 1_000_003) / 1_000_003 }
    static func wet(_ i: Int) -> Float { -dry(i) }

    func play(seconds: Double, realTime: Bool) {
        let count = Int(seconds * Double(recorder.sampleRate)) / block
        var input = [Float](repeating: 0, count: block), left = input, right = input
        let clock = ContinuousClock()
        let start = clock.now
        for b in 0..<count {
            for j in 0..<block {
                input[j] = Self.dry(frames + j)
                left[j] = Self.wet(frames + j)
                right[j] = 0.25 * Self.dry(frames + j)
            }
            let t0 = clock.now
            input.withUnsafeBufferPointer { recorder.takeInput($0.baseAddress!, frames: block) }
            left.withUnsafeBufferPointer { l in right.withUnsafeBufferPointer { r in
                recorder.takeOutput(left: l.baseAddress!, right: r.baseAddress!, frames: block)
            } }
            let took = clock.now - t0
            longestHandOver = max(longestHandOver, Double(took.components.attoseconds) * 1e-18 + Double(took.components.seconds))
            frames += block
            if realTime {
                let due = start + .microseconds(Int64(Double(b + 1) * Double(block) / Double(recorder.sampleRate) * 1e6))
                if due > clock.now { Thread.sleep(forTimeInterval: Double((due - clock.now).components.attoseconds) * 1e-18) }
            }
        }
    }

    /// Checks the folder's files hold frames 0..<`count` of the signal, every one in order.
    static func check(folder: String, count: Int) throws {
        let dry = try AudioFile.read(folder + "/" + RecordingFolder.di)
        let wet = try AudioFile.read(folder + "/" + RecordingFolder.wet)
        #expect(dry.frames == count && wet.frames == count, "di \(dry.frames), wet \(wet.frames), expected \(count)")
        let n = min(count, dry.frames, wet.frames)
        var firstBad: Int?
        for i in 0..<n where dry.samples[i] != Self.dry(i) || wet.samples[2 * i] != Self.wet(i) || wet.samples[2 * i + 1] != 0.25 * Self.dry(i) {
            firstBad = i
            break
        }
        #expect(firstBad == nil, "frame \(firstBad ?? -1) is not the one played there")
    }
}

/// Shell commands for the file-system tests, which run as root (mount, fsfreeze).
enum Shell {
    @discardableResult
    static func run(_ arguments: [String]) -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        do { try p.run() } catch { return (-1, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Why mounting file systems cannot be tested here, or nil.
    static let mountUnavailable: String? = {
        guard getuid() == 0 else { return "mounting a test file system needs root (CI runs as root)" }
        let probe = TemporaryFolder("stompbox-mount-probe")
        let r = run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", probe.path])
        guard r.status == 0 else { return "this machine refuses to mount a tmpfs: \(r.output)" }
        run(["umount", probe.path])
        return nil
    }()
}

@Suite(.serialized) struct RecorderTests {
    /// Everything played is on disk in order, and the manifest says the recording is complete.
    @Test func aRecordingHoldsEveryFramePlayed() throws {
        let folder = TemporaryFolder("stompbox-recorder")
        let recorder = try Recorder(folder: folder.file("take.recording"), sampleRate: 48_000, author: "ann")
        let feed = RecorderFeed(recorder)
        feed.play(seconds: 3, realTime: false)
        let status = recorder.finish()
        #expect(status.problem == nil && status.droppedFrames == 0)
        #expect(recorder.frames == feed.frames)
        try RecorderFeed.check(folder: recorder.folder, count: feed.frames)
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: recorder.folder + "/" + RecordingFolder.manifest))) as? [String: Any]
        #expect(manifest?["complete"] as? Bool == true && manifest?["frames"] as? Int == feed.frames && manifest?["author"] as? String == "ann")
        #expect(throws: AudioFileError.self, "a folder holding a recording is not recorded over") {
            _ = try Recorder(folder: recorder.folder, sampleRate: 48_000, author: "bob")
        }
    }

    /// The disk stops taking writes for 2 s (an ext4 image frozen with fsfreeze) while audio
    /// plays in real time: no block waits on it, no frame is dropped, none is missing.
    @Test(.enabled(if: Shell.mountUnavailable == nil, Comment(rawValue: Shell.mountUnavailable ?? "")))
    func aDiskThatStallsForTwoSecondsCostsNothing() throws {
        let folder = TemporaryFolder("stompbox-stall")
        let image = folder.file("disk.img"), mountPoint = folder.file("disk")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        #expect(Shell.run(["truncate", "-s", "64M", image]).status == 0)
        let mkfs = Shell.run(["mkfs.ext4", "-q", "-F", image])
        try #require(mkfs.status == 0, "mkfs.ext4: \(mkfs.output)")
        let mount = Shell.run(["mount", "-o", "loop", image, mountPoint])
        try #require(mount.status == 0, "mount -o loop: \(mount.output)")
        defer { Shell.run(["fsfreeze", "-u", mountPoint]); Shell.run(["umount", mountPoint]) }
        let recorder = try Recorder(folder: mountPoint + "/take.recording", sampleRate: 48_000, author: "ann")
        let feed = RecorderFeed(recorder)
        feed.play(seconds: 1, realTime: true)
        let freeze = Shell.run(["fsfreeze", "-f", mountPoint])
        try #require(freeze.status == 0, "fsfreeze: \(freeze.output)")
        let frozenAt = ContinuousClock.now
        let thaw = Thread {
            Thread.sleep(forTimeInterval: 2)
            Shell.run(["fsfreeze", "-u", mountPoint])
        }
        thaw.start()
        feed.play(seconds: 3, realTime: true)
        #expect(ContinuousClock.now - frozenAt >= .seconds(2.5))
        let status = recorder.finish()
        #expect(status.problem == nil, "\(status.problem ?? "")")
        #expect(status.droppedFrames == 0)
        // A block that waited on the disk would have taken the whole freeze (2 s); half of it
        // is far above anything the host's own stalls give a block.
        #expect(feed.longestHandOver < 1, "a block's hand-over took \(feed.longestHandOver) s")
        try RecorderFeed.check(folder: recorder.folder, count: feed.frames)
    }

    /// A disk that fills (a 1 MB tmpfs, about two seconds of DI and wet): the recording stops
    /// with a message, the audio path goes on taking blocks, and what was written reads back,
    /// every frame in order: at least all the frames the writer counted as written.
    @Test(.enabled(if: Shell.mountUnavailable == nil, Comment(rawValue: Shell.mountUnavailable ?? "")))
    func aDiskThatFillsStopsTheRecordingAndKeepsIt() throws {
        let folder = TemporaryFolder("stompbox-full")
        let mountPoint = folder.file("disk")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        let mount = Shell.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint])
        try #require(mount.status == 0, "mount tmpfs: \(mount.output)")
        defer { Shell.run(["umount", mountPoint]) }
        let recorder = try Recorder(folder: mountPoint + "/take.recording", sampleRate: 48_000, author: "ann")
        let feed = RecorderFeed(recorder)
        feed.play(seconds: 4, realTime: false)
        // The writer meets the full disk on its own time.
        let deadline = ContinuousClock.now + .seconds(10)
        while recorder.status.problem == nil && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let status = recorder.finish()
        let problem = try #require(status.problem, "no message for a full disk")
        #expect(problem.contains("No space left") || problem.contains("disk"), "\(problem)")
        #expect(!status.isRecording)
        let written = recorder.frames
        #expect(written > 10_000 && written < feed.frames, "\(written) of \(feed.frames)")
        // The chunk that met the full disk may be in the DI file and partly in the wet one.
        let dry = try AudioFile.read(recorder.folder + "/" + RecordingFolder.di)
        let wet = try AudioFile.read(recorder.folder + "/" + RecordingFolder.wet)
        #expect(min(dry.frames, wet.frames) >= written && max(dry.frames, wet.frames) <= written + 8192,
                "di \(dry.frames), wet \(wet.frames), counted \(written)")
        var firstBad: Int?
        for i in 0..<dry.frames where dry.samples[i] != RecorderFeed.dry(i) { firstBad = i; break }
        #expect(firstBad == nil)
    }
}

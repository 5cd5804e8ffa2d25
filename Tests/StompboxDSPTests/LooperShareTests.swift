import Synchronization
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// Keeps an image of each loop by position from the tap, as a recorder does.
private final class ImageTap: LoopTrackTap {
    var images: [Int: (left: [Float], right: [Float])] = [:]
    /// Per track, how many times each frame was handed over.
    var seen: [Int: [Int]] = [:]
    func loopTrackBlock(track: Int, position: Int, length: Int, cycleFrame: Int,
                        left: UnsafePointer<Float>, right: UnsafePointer<Float>, frames: Int) {
        if images[track]?.left.count != length {
            images[track] = ([Float](repeating: 0, count: length), [Float](repeating: 0, count: length))
            seen[track] = [Int](repeating: 0, count: length)
        }
        precondition(position + frames <= length)
        for j in 0..<frames {
            images[track]!.left[position + j] = left[j]
            images[track]!.right[position + j] = right[j]
            seen[track]![position + j] += 1
        }
    }
}

@Suite struct LooperShareTests {
    /// A loop recorded and overdubbed: over one more pass, the tap hands over every frame once
    /// and its image is the loop bit for bit.
    @Test func theTapRebuildsALoopBitForBit() throws {
        let rig = TrackRig(block: 200)
        let length = 30_011
        _ = rig.recordFirst(length)
        rig.run(Signal.noise(length: length + 500, amplitude: 0.2, seed: 4), nil, [(0, .send(.tap)), (length, .send(.tap))])
        #expect(rig.control.track(0).state == .playing)
        let tap = ImageTap()
        rig.control.setTap(tap)
        rig.silence(length)
        rig.control.setTap(nil)
        let audio = try #require(rig.looper.trackAudio(0))
        let image = try #require(tap.images[0])
        #expect(tap.seen[0]!.allSatisfy { $0 == 1 }, "each frame handed over once a pass")
        #expect(image.left == audio.left && image.right == audio.right)
        rig.silence(5_000)
        #expect(tap.seen[0]!.allSatisfy { $0 == 1 }, "a cleared tap is not called")
    }

    /// The overview's bins are the loop's peaks over equal shares of its length.
    @Test func theOverviewFollowsTheLoop() throws {
        let rig = TrackRig()
        #expect(rig.control.overview(track: 0).isEmpty)
        let bins = LooperControl.overviewBins
        let length = bins * 200
        // Loud in the first half, quiet in the second.
        let passage = (0..<length).map { i in Float(i < length / 2 ? 0.8 : 0.1) * (i % 2 == 0 ? 1 : -1) }
        rig.run(passage, nil, [(0, .send(.tap))])
        rig.silence(1, [(0, .send(.tap))])
        rig.silence(length + 10)
        let overview = rig.control.overview(track: 0)
        #expect(overview.count == bins)
        let audio = try #require(rig.looper.trackAudio(0))
        for b in 0..<bins - 1 {   // the last bin is stored when the next pass leaves it
            let slice = audio.left[(b * length / bins)..<((b + 1) * length / bins)]
            let peak = slice.map(abs).max()!
            #expect(abs(overview[b] - peak) < 1e-6, "bin \(b): \(overview[b]) vs \(peak)")
        }
        rig.silence(10, [(0, .send(.hold))])   // hold clears the track
        rig.silence(48_000)
        #expect(rig.control.overview(track: 0).isEmpty)
    }

    /// `copyTrack` from another thread while blocks run on this one gives the loop as
    /// `trackAudio` does; with no blocks running it gives up.
    @Test func aCopyFromAnotherThreadIsTheLoop() async throws {
        let rig = TrackRig(block: 64)
        let length = 100_003
        _ = rig.recordFirst(length)
        #expect(rig.control.copyTrack(0, timeout: .milliseconds(50)) == nil, "no blocks run")
        #expect(rig.control.copyTrack(3, timeout: .milliseconds(50)) == nil, "an empty track")
        let control = rig.control
        let copy = Task.detached { control.copyTrack(0, timeout: .seconds(20)) }
        let done = Atomic<Bool>(false)
        let watcher = Task.detached { _ = await copy.value; done.store(true, ordering: .releasing) }
        while !done.load(ordering: .acquiring) { rig.silence(64) }
        _ = await watcher.value
        let copied = try #require(await copy.value)
        let audio = try #require(rig.looper.trackAudio(0))
        #expect(copied == audio)
    }
}

import Foundation
import Synchronization

/// A loop to put back onto a track (a session's `loop` track): its sides, and where in it the
/// track plays when the loops start (a whole number of cycles in).
public struct LoopToLoad: Sendable {
    /// 0-based.
    public var track: Int
    public var left: [Float]
    /// nil for a mono loop.
    public var right: [Float]?
    public var position: Int

    public init(track: Int, left: [Float], right: [Float]?, position: Int) {
        self.track = track
        self.left = left
        self.right = right
        self.position = position
    }
}

public enum LoopLoadOutcome: Equatable, Sendable {
    case loaded
    /// The Looper holds a loop or is recording: nothing was changed.
    case busy
    /// The loops do not fit the Looper (the reason says how).
    case invalid(String)
    /// The audio thread did not take them in time (is the audio running?).
    case timedOut
}

/// One loop as the audio thread reads it: plain values and pointers, no reference counting.
struct LoopLoadItem {
    var track: Int
    var stereo: Bool
    var length: Int
    var position: Int
    var left: UnsafeMutablePointer<Float>
    var right: UnsafeMutablePointer<Float>
}

/// Loops put back onto the tracks while the audio runs: the caller's thread checks them, makes
/// the tapes resident and hands them over; the audio thread copies them onto the tapes a slice
/// a block (`copySlice`) and, once all are there, starts them all in the same block, in step,
/// with their cycle, fading in. Only into an empty Looper: one that holds a loop, or starts
/// recording meanwhile, refuses them whole, so a loop the player made is never overwritten.
extension Looper {
    /// Puts `loops` onto their tracks, keeping `cycle` (frames; every loop a whole number of
    /// cycles long, its position a whole number of cycles in). With `audioRunning` the audio
    /// thread takes them in over its next blocks and this waits up to `timeout`; without, they are
    /// put in here (not while `process` runs). Not on the audio thread.
    public func load(_ loops: [LoopToLoad], cycle: Int, audioRunning: Bool, timeout: Duration = .seconds(5)) -> LoopLoadOutcome {
        guard !loops.isEmpty else { return .loaded }
        guard cycle > 0 else { return .invalid("the loops have no cycle") }
        var seen = Set<Int>()
        for loop in loops {
            let name = "loop track \(loop.track + 1)"
            guard (0..<LooperControl.trackCount).contains(loop.track), seen.insert(loop.track).inserted else {
                return .invalid("\(name): no such track, or named twice")
            }
            let length = loop.left.count
            guard length > 0, length <= maximumLength else {
                return .invalid("\(name) is \(length) frames; a track holds 1 to \(maximumLength)")
            }
            guard loop.right == nil || loop.right!.count == length else { return .invalid("\(name)'s sides differ in length") }
            guard length % cycle == 0, loop.position % cycle == 0, (0..<length).contains(loop.position) else {
                return .invalid("\(name) (\(length) frames from \(loop.position)) is not a whole number of cycles of \(cycle) frames")
            }
        }
        return control.loading.withLock { _ -> LoopLoadOutcome in
            let items = UnsafeMutablePointer<LoopLoadItem>.allocate(capacity: loops.count)
            for (i, loop) in loops.enumerated() {
                let left = UnsafeMutablePointer<Float>.allocate(capacity: loop.left.count)
                left.initialize(from: loop.left, count: loop.left.count)
                var right = left
                if let r = loop.right {
                    right = .allocate(capacity: r.count)
                    right.initialize(from: r, count: r.count)
                }
                (items + i).initialize(to: LoopLoadItem(track: loop.track, stereo: loop.right != nil, length: loop.left.count,
                                                        position: loop.position, left: left, right: right))
                tapes?.makeResident(2 * loop.track, upTo: loop.left.count)
                if loop.right != nil { tapes?.makeResident(2 * loop.track + 1, upTo: loop.left.count) }
            }
            func free() {
                for i in 0..<loops.count {
                    if items[i].right != items[i].left { items[i].right.deallocate() }
                    items[i].left.deallocate()
                }
                items.deallocate()
            }
            control.loadItems.store(Int(bitPattern: items), ordering: .relaxed)
            control.loadCount.store(loops.count, ordering: .relaxed)
            control.loadCycle.store(cycle, ordering: .relaxed)
            control.loadState.store(CopyState.requested.rawValue, ordering: .releasing)
            if !audioRunning {
                while [CopyState.requested, .copying].contains(CopyState(rawValue: control.loadState.load(ordering: .acquiring)) ?? .idle) {
                    serviceLoad()
                }
            }
            let state = SliceHandshake.wait(control.loadState, timeout: timeout)
            // Cancelled mid-load: the buffers stay allocated, never freed under the audio thread.
            if state != .cancelled { free() }
            switch state {
            case .done: return .loaded
            case .failed: return .busy
            default: return .timedOut
            }
        }
    }

    /// True when no track holds, records, waits for or fades a loop.
    private var isEmpty: Bool {
        for t in 0..<LooperControl.trackCount where !tracks[t].isIdle { return false }
        return cycle.length == 0
    }

    /// Audio thread, at a block's start: advances a load by one slice, and starts the loops once
    /// every one is on its tape.
    func serviceLoad() {
        let (work, began) = SliceHandshake.take(control.loadState)
        guard work else { return }
        if began {
            loadIndex = 0
            loadOffset = 0
        }
        let count = control.loadCount.load(ordering: .relaxed)
        guard isEmpty, let items = UnsafeMutablePointer<LoopLoadItem>(bitPattern: control.loadItems.load(ordering: .relaxed)) else {
            finishLoad(.failed)
            return
        }
        if loadIndex < count {
            let item = items[loadIndex]
            let track = tracks[item.track]
            let end = min(item.length, loadOffset + Looper.copySlice)
            (track.tapeLeft + loadOffset).update(from: item.left + loadOffset, count: end - loadOffset)
            if item.stereo { (track.tapeRight + loadOffset).update(from: item.right + loadOffset, count: end - loadOffset) }
            loadOffset = end
            if end == item.length {
                loadIndex += 1
                loadOffset = 0
            }
            return
        }
        // Every loop is on its tape: they start together, each where the cycle puts it.
        let cycleLength = control.loadCycle.load(ordering: .relaxed)
        for i in 0..<count {
            let item = items[i]
            let track = tracks + item.track
            track.pointee.forget()
            track.pointee.touchedBy.update(repeating: 0, count: track.pointee.chunkCount)
            track.pointee.stereo = item.stereo
            track.pointee.length = item.length
            track.pointee.limit = track.pointee.capacity
            track.pointee.position = item.position
            track.pointee.startFrame = clock - item.position
            track.pointee.state = .playing
            track.pointee.fadeIn = true
        }
        cycle = LoopCycle(length: cycleLength, position: 0, clock: clock)
        control.cycleValue.store(cycleLength, ordering: .relaxed)
        control.loadClockValue.store(clock, ordering: .relaxed)
        finishLoad(.done)
    }

    private func finishLoad(_ state: CopyState) { SliceHandshake.end(control.loadState, state) }
}

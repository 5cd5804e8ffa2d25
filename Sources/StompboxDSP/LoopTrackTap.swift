import Foundation
import Synchronization

/// Receives, on the audio thread, what each loop track holds at the frames it just played: a
/// recorder keeps an image of every loop by position from it, without asking the Looper for
/// a copy.
public protocol LoopTrackTap: AnyObject {
    /// After each Looper block, once per track that plays a loop, with the track's own content
    /// for the frames just passed (what it played, before its gain, pan and mute; a mono track
    /// gives the same pointer twice). `position` is the loop index of the first frame (a block
    /// that wraps the loop's end calls twice), `length` the loop's length, and `cycleFrame` the
    /// Looper's clock (frames since `prepare`) at the first frame. Audio thread: must not
    /// allocate, lock or block.
    func loopTrackBlock(track: Int, position: Int, length: Int, cycleFrame: Int,
                        left: UnsafePointer<Float>, right: UnsafePointer<Float>, frames: Int)
}

/// Holds the tap so the audio thread can reach it through one address without retaining it.
final class TapBox {
    unowned(unsafe) let tap: LoopTrackTap
    init(_ tap: LoopTrackTap) { self.tap = tap }
}

/// The states of a request the audio thread carries out in slices over its next blocks: a
/// `copyTrack` out of the Looper, a `Looper.load` into it.
enum CopyState: Int {
    /// No request.
    case idle
    /// Asked for; the audio thread has not started.
    case requested
    /// The audio thread is copying slices.
    case copying
    /// Every frame is copied.
    case done
    /// The track changed (cleared, re-recorded, another length) before the copy finished.
    case failed
    /// The caller gave up while the audio thread was copying; the audio thread drops it.
    case cancelled
}

/// The hand-over of such a request through one atomic cell: the caller asks (`requested`), the
/// audio thread takes it (`copying`) and ends it (`done` or `failed`); a caller that gives up
/// withdraws a request not yet taken, or cancels one under way.
enum SliceHandshake {
    /// Audio thread, at a block's start: whether there is work this block, and whether it was
    /// taken just now (the caller's buffers are then read from the start).
    static func take(_ cell: borrowing Atomic<Int>) -> (work: Bool, began: Bool) {
        switch CopyState(rawValue: cell.load(ordering: .acquiring)) ?? .idle {
        case .idle, .done, .failed: return (false, false)
        case .cancelled:
            _ = cell.compareExchange(expected: CopyState.cancelled.rawValue, desired: CopyState.idle.rawValue,
                                     ordering: .acquiringAndReleasing)
            return (false, false)
        case .requested:
            let taken = cell.compareExchange(expected: CopyState.requested.rawValue, desired: CopyState.copying.rawValue,
                                             ordering: .acquiringAndReleasing).exchanged
            return (taken, taken)
        case .copying: return (true, false)
        }
    }

    /// Audio thread: ends the work unless its caller gave up on it meanwhile.
    static func end(_ cell: borrowing Atomic<Int>, _ state: CopyState) {
        if !cell.compareExchange(expected: CopyState.copying.rawValue, desired: state.rawValue,
                                 ordering: .acquiringAndReleasing).exchanged {
            _ = cell.compareExchange(expected: CopyState.cancelled.rawValue, desired: CopyState.idle.rawValue,
                                     ordering: .acquiringAndReleasing)
        }
    }

    /// Caller, after storing `requested`: waits until the audio thread ends it (returning `done`
    /// or `failed`, the cell idle again) or `timeout` passes. Then a request not yet taken is
    /// withdrawn (`.idle`: the caller's buffers may go); one under way gets two seconds more, and
    /// is cancelled after (`.cancelled`: the audio thread stopped mid-way and may resume, so the
    /// buffers must stay).
    static func wait(_ cell: borrowing Atomic<Int>, timeout: Duration) -> CopyState {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let state = CopyState(rawValue: cell.load(ordering: .acquiring)) ?? .idle
            if state == .done || state == .failed {
                cell.store(CopyState.idle.rawValue, ordering: .releasing)
                return state
            }
            if clock.now >= deadline {
                if cell.compareExchange(expected: CopyState.requested.rawValue, desired: CopyState.idle.rawValue,
                                        ordering: .acquiringAndReleasing).exchanged {
                    return .idle
                }
                if clock.now >= deadline + .seconds(2),
                   cell.compareExchange(expected: CopyState.copying.rawValue, desired: CopyState.cancelled.rawValue,
                                        ordering: .acquiringAndReleasing).exchanged {
                    return .cancelled
                }
            }
            Thread.sleep(forTimeInterval: 0.002)
        }
    }
}

extension LooperControl {
    /// Points a track's waveform overview has, over the loop's length.
    public static let overviewBins = 256

    /// Track `track`'s (0-based) waveform: `overviewBins` peaks (0…1, clipped) of the loop as it
    /// last played, each over an equal share of its length; empty while it has no loop. The
    /// audio thread redraws a bin each time it plays through it, so an overdub or an undo shows
    /// within one pass. Any thread.
    public func overview(track: Int) -> [Float] {
        precondition((0..<Self.trackCount).contains(track), "no track \(track)")
        guard self.track(track).length > 0, overviewLengths[track].load(ordering: .acquiring) > 0 else { return [] }
        let cells = overviewCells + track * Self.overviewBins
        return (0..<Self.overviewBins).map { Float(bitPattern: cells[$0].load(ordering: .relaxed)) }
    }

    /// Sets or clears the tap the audio thread calls after each Looper block. Any thread but the
    /// audio thread: when it returns, the tap it replaced is no longer called (it waits for one
    /// Looper block to pass, or 200 ms when none runs).
    public func setTap(_ tap: LoopTrackTap?) {
        heldTap.withLock { held in
            let box = tap.map(TapBox.init)
            let old = held
            held = box
            let address = box.map { Int(bitPattern: Unmanaged.passUnretained($0).toOpaque()) } ?? 0
            tapAddress.store(address, ordering: .releasing)
            if old != nil { waitForBlock(timeout: .milliseconds(200)) }
        }
    }

    /// A copy of track `track`'s (0-based) loop as it plays now, made by the audio thread in
    /// slices over its next blocks (so a long loop never costs it one long block); nil when the
    /// track has no loop, or no Looper block runs within `timeout`, or the loop changed length
    /// or was cleared during the copy. An overdub during the copy lands in the frames not yet
    /// copied. Any thread but the audio thread; with no audio running, an offline caller reads
    /// `Looper.trackAudio` instead.
    public func copyTrack(_ track: Int, timeout: Duration = .seconds(2)) -> LoopTrackAudio? {
        precondition((0..<Self.trackCount).contains(track), "no track \(track)")
        return copying.withLock { _ -> LoopTrackAudio? in
            let length = self.track(track).length
            guard length > 0 else { return nil }
            let left = UnsafeMutablePointer<Float>.allocate(capacity: length)
            let right = UnsafeMutablePointer<Float>.allocate(capacity: length)
            copyTrackIndex.store(track, ordering: .relaxed)
            copyLeft.store(Int(bitPattern: left), ordering: .relaxed)
            copyRight.store(Int(bitPattern: right), ordering: .relaxed)
            copyLength.store(length, ordering: .relaxed)
            copyState.store(CopyState.requested.rawValue, ordering: .releasing)
            let state = SliceHandshake.wait(copyState, timeout: timeout)
            // Cancelled mid-copy: the buffers stay allocated, never freed under the audio thread.
            guard state != .cancelled else { return nil }
            defer { left.deallocate(); right.deallocate() }
            guard state == .done else { return nil }
            return LoopTrackAudio(track: track, start: copyStart.load(ordering: .relaxed), length: length,
                                  left: Array(UnsafeBufferPointer(start: left, count: length)),
                                  right: Array(UnsafeBufferPointer(start: right, count: length)),
                                  isStereo: copyStereo.load(ordering: .relaxed))
        }
    }

    /// Waits until one more Looper block has run, or `timeout`.
    private func waitForBlock(timeout: Duration) {
        let first = blocksRun.load(ordering: .acquiring)
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        // Two counts: the block that may have loaded the old address when it was replaced ends.
        while blocksRun.load(ordering: .acquiring) - first < 2 && clock.now < deadline {
            Thread.sleep(forTimeInterval: 0.001)
        }
    }
}

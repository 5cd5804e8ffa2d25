import Synchronization

/// The looper's gestures. Sent without a track they act on the selected track (`looper.track`).
public enum LooperAction: String, CaseIterable, Sendable {
    /// stopped → recording → playing → overdubbing → playing → …
    case tap
    /// The long press: stop and clear.
    case hold
    /// Removes the last overdub.
    case undo
    /// Puts back the overdub the last undo removed.
    case redo
    /// Stops and clears, as `hold` (the name a tracks panel's button carries).
    case clear
    /// Selects the lowest-numbered empty track and taps it (records there, in sync).
    case recordNext = "record_next"
}

public enum LooperState: Int, Sendable {
    case stopped, recording, playing, overdubbing

    public var name: String {
        switch self {
        case .stopped: "stopped"
        case .recording: "recording"
        case .playing: "playing"
        case .overdubbing: "overdubbing"
        }
    }
}

/// Looper requests (UI → audio) and status (audio → UI), all lock-free.
/// A request is a counter the UI bumps; the audio thread acts once per increment it has not seen,
/// at the start of its next block.
///
/// The top-level status (`state`, `position`, `length`, `canUndo`) is the selected track's, so a
/// player who never selects another track sees what the single Looper always showed; `track(_:)`
/// reports each track.
public final class LooperControl: @unchecked Sendable {
    /// How many tracks every Looper has.
    public static let trackCount = 8

    let tapRequests = Atomic<Int>(0)
    let holdRequests = Atomic<Int>(0)
    let undoRequests = Atomic<Int>(0)
    let redoRequests = Atomic<Int>(0)
    let recordNextRequests = Atomic<Int>(0)
    /// Per track, `Request` counters (requests naming a track).
    let trackRequests: UnsafeMutablePointer<Atomic<Int>>

    /// Plain counts rather than `allCases`, which the audio thread must not build.
    enum Request: Int, CaseIterable {
        case tap, hold, undo, redo
        static var count: Int { 4 }
    }

    let stateValue = Atomic<Int>(LooperState.stopped.rawValue)
    let positionValue = Atomic<Int>(0)
    let lengthValue = Atomic<Int>(0)
    let undoAvailableValue = Atomic<Bool>(false)
    let countingInValue = Atomic<Bool>(false)
    let cycleValue = Atomic<Int>(0)
    /// Per track, `Status` cells.
    let trackStatus: UnsafeMutablePointer<Atomic<Int>>

    enum Status: Int, CaseIterable {
        case state, position, length, undoSteps, redoSteps, waiting
        static var count: Int { 6 }
    }

    /// Per track, `overviewBins` peaks (a Float's bits) of the loop as it last played
    /// (`LooperControl+Share.swift`).
    let overviewCells: UnsafeMutablePointer<Atomic<UInt32>>
    /// The loop length each track's overview was drawn over (0: none).
    let overviewLengths: UnsafeMutablePointer<Atomic<Int>>
    /// The tap the audio thread calls (an unretained `TapBox`'s address, 0 for none), and the
    /// count of Looper blocks that have run, so a caller knows when the old tap is out of use.
    let tapAddress = Atomic<Int>(0)
    let blocksRun = Atomic<Int>(0)
    /// The Looper's clock (frames since `prepare`) after its last block.
    let clockValue = Atomic<Int>(0)
    /// A copy the audio thread makes for `copyTrack`: its state (`CopyState`), the track, the
    /// caller's buffers and their length, how far it has come, and where the track started.
    let copyState = Atomic<Int>(0)
    let copyTrackIndex = Atomic<Int>(0)
    let copyLeft = Atomic<Int>(0)
    let copyRight = Atomic<Int>(0)
    let copyLength = Atomic<Int>(0)
    let copyStart = Atomic<Int>(0)
    let copyStereo = Atomic<Bool>(false)
    /// Control threads only (never locked on the audio thread): the tap kept alive while the
    /// audio thread may call it, held while one `setTap` runs.
    let heldTap = Mutex<TapBox?>(nil)
    /// Held while one `copyTrack` runs: one copy at a time.
    let copying = Mutex<Void>(())
    /// Loops `Looper.load` hands to the audio thread: its state (`CopyState`), the address and
    /// count of its `LoopLoadItem`s, and the cycle they keep. Held while one load runs.
    let loadState = Atomic<Int>(0)
    let loadItems = Atomic<Int>(0)
    let loadCount = Atomic<Int>(0)
    let loadCycle = Atomic<Int>(0)
    let loading = Mutex<Void>(())
    /// The Looper's clock when the last load started its loops.
    let loadClockValue = Atomic<Int>(0)

    public init() {
        let requests = Self.trackCount * Request.count
        trackRequests = .allocate(capacity: requests)
        for i in 0..<requests { (trackRequests + i).initialize(to: Atomic(0)) }
        let cells = Self.trackCount * Status.count
        trackStatus = .allocate(capacity: cells)
        for i in 0..<cells { (trackStatus + i).initialize(to: Atomic(0)) }
        overviewCells = .allocate(capacity: Self.trackCount * Self.overviewBins)
        for i in 0..<Self.trackCount * Self.overviewBins { (overviewCells + i).initialize(to: Atomic(0)) }
        overviewLengths = .allocate(capacity: Self.trackCount)
        for i in 0..<Self.trackCount { (overviewLengths + i).initialize(to: Atomic(0)) }
    }

    deinit {
        trackRequests.deinitialize(count: Self.trackCount * Request.count)
        trackRequests.deallocate()
        trackStatus.deinitialize(count: Self.trackCount * Status.count)
        trackStatus.deallocate()
        overviewCells.deinitialize(count: Self.trackCount * Self.overviewBins)
        overviewCells.deallocate()
        overviewLengths.deinitialize(count: Self.trackCount)
        overviewLengths.deallocate()
    }

    @inline(__always)
    func request(_ track: Int, _ kind: Request) -> UnsafeMutablePointer<Atomic<Int>> {
        trackRequests + track * Request.count + kind.rawValue
    }

    @inline(__always)
    func status(_ track: Int, _ kind: Status) -> UnsafeMutablePointer<Atomic<Int>> {
        trackStatus + track * Status.count + kind.rawValue
    }

    /// Any thread: a gesture on the selected track.
    public func send(_ action: LooperAction) {
        switch action {
        case .tap: tapRequests.add(1, ordering: .releasing)
        case .hold, .clear: holdRequests.add(1, ordering: .releasing)
        case .undo: undoRequests.add(1, ordering: .releasing)
        case .redo: redoRequests.add(1, ordering: .releasing)
        case .recordNext: recordNextRequests.add(1, ordering: .releasing)
        }
    }

    /// Any thread: a gesture on track `track` (0-based), whichever track is selected.
    /// `recordNext` names no track and is sent as `send(.recordNext)`.
    public func send(_ action: LooperAction, track: Int) {
        precondition((0..<Self.trackCount).contains(track), "no track \(track)")
        let kind: Request
        switch action {
        case .tap: kind = .tap
        case .hold, .clear: kind = .hold
        case .undo: kind = .undo
        case .redo: kind = .redo
        case .recordNext: return send(.recordNext)
        }
        request(track, kind).pointee.add(1, ordering: .releasing)
    }

    public var state: LooperState { LooperState(rawValue: stateValue.load(ordering: .acquiring)) ?? .stopped }
    /// Playback position in samples within the loop.
    public var position: Int { positionValue.load(ordering: .relaxed) }
    /// Loop length in samples (0 while nothing is recorded; grows while recording the first pass).
    public var length: Int { lengthValue.load(ordering: .relaxed) }
    public var canUndo: Bool { undoAvailableValue.load(ordering: .relaxed) }
    /// True while a count-in runs (the metronome clicks for it).
    public var isCountingIn: Bool { countingInValue.load(ordering: .relaxed) }
    /// The cycle every track's length is a whole multiple of, in frames (0: no loop yet).
    public var cycle: Int { cycleValue.load(ordering: .relaxed) }
    /// The Looper's clock (frames since it was prepared) as of its last block: a loop track's
    /// `start` is on it, so a recorder that notes it when it starts can place the loops.
    public var clock: Int { clockValue.load(ordering: .relaxed) }

    /// The Looper's clock at the block where the last `Looper.load` started its loops: a loaded
    /// loop at position P started its pass at this clock − P.
    public var loadClock: Int { loadClockValue.load(ordering: .relaxed) }

    /// One track's status, as the audio thread last published it.
    public struct TrackStatus: Sendable, Equatable {
        public var state: LooperState
        /// Where it plays within its loop (while recording: frames recorded).
        public var position: Int
        public var length: Int
        /// How many overdubs undo can take back, and redo put back.
        public var undoSteps: Int
        public var redoSteps: Int
        /// Waiting for a count-in or a cycle boundary to start, or for a boundary to close.
        public var isWaiting: Bool
    }

    /// Track `track`'s status (0-based). Any thread.
    public func track(_ track: Int) -> TrackStatus {
        func load(_ s: Status) -> Int { status(track, s).pointee.load(ordering: .relaxed) }
        return TrackStatus(state: LooperState(rawValue: load(.state)) ?? .stopped, position: load(.position),
                           length: load(.length), undoSteps: load(.undoSteps), redoSteps: load(.redoSteps),
                           isWaiting: load(.waiting) != 0)
    }
}

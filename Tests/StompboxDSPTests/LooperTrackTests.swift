import Foundation
import Synchronization
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// Drives a looper with tracks as the audio thread would: gestures and parameter changes land
/// exactly at the sample they are given (blocks are split there), in mono or on a stereo board.
final class TrackRig {
    enum Gesture {
        case send(LooperAction)
        case on(Int, LooperAction)
        case set(Parameter, Float)
    }

    let controls = EngineControls()
    let looper: Looper
    let block: Int
    let rate = 48_000.0
    /// Samples processed so far (the Looper's clock).
    private(set) var clock = 0

    init(block: Int = 256, poolSeconds: Double = Looper.undoPoolSeconds) {
        looper = Looper(parameters: controls.parameters, control: controls.looper)
        looper.poolSeconds = poolSeconds
        looper.prepare(sampleRate: rate, maximumBlockSize: block)
        self.block = block
    }

    var control: LooperControl { controls.looper }
    var parameters: ParameterStore { controls.parameters }
    var fadeLength: Int { Int((Looper.seamTime * rate).rounded()) }
    func ms(_ milliseconds: Double) -> Int { Int((milliseconds / 1000 * rate).rounded()) }

    /// Processes `left` (and `right`, on a stereo board); gestures at offsets into the input.
    @discardableResult
    func run(_ left: [Float], _ right: [Float]? = nil, _ gestures: [(Int, Gesture)] = []) -> (left: [Float], right: [Float]) {
        var l = left, r = right ?? []
        var start = 0
        var pending = gestures.sorted { $0.0 < $1.0 }[...]
        l.withUnsafeMutableBufferPointer { lp in
            r.withUnsafeMutableBufferPointer { rp in
                while start < lp.count || pending.first?.0 == start {
                    while let next = pending.first, next.0 == start {
                        switch next.1 {
                        case .send(let action): control.send(action)
                        case .on(let track, let action): control.send(action, track: track)
                        case .set(let p, let value): parameters.set(p, value)
                        }
                        pending = pending.dropFirst()
                    }
                    guard start < lp.count else { break }
                    var end = min(start + block, lp.count)
                    if let next = pending.first?.0, next < end { end = next }
                    if right == nil {
                        looper.process(UnsafeMutableBufferPointer(rebasing: lp[start..<end]))
                    } else {
                        looper.process(left: UnsafeMutableBufferPointer(rebasing: lp[start..<end]),
                                       right: UnsafeMutableBufferPointer(rebasing: rp[start..<end]))
                    }
                    start = end
                }
            }
        }
        clock += left.count
        return (l, right == nil ? l : r)
    }

    @discardableResult
    func silence(_ n: Int, _ gestures: [(Int, Gesture)] = []) -> [Float] { run(Signal.silence(n), nil, gestures).left }

    /// Records a first loop of `length` frames of noise on track 1 (0-based track 0).
    func recordFirst(_ length: Int, seed: UInt64 = 1) -> [Float] {
        let passage = Signal.noise(length: length, amplitude: 0.3, seed: seed)
        run(passage, nil, [(0, .send(.tap))])
        silence(1, [(0, .send(.tap))])
        return passage
    }

    /// Frames from now to the next cycle boundary.
    var toBoundary: Int {
        let c = looper.cycleLength
        let first = looper.trackAudio(0)!
        return (c - (clock - first.start) % c) % c
    }
}

@Suite struct LooperTrackSyncTests {
    static let cycle = 50_000

    /// Track 1 holds a loop of `cycle`; track 2 is selected and its recording started on a
    /// boundary (pressed 10 ms after it). Returns the rig at that boundary + `into` frames.
    static func secondTrackRecording(into: Int) -> (TrackRig, Int) {
        let rig = TrackRig()
        _ = rig.recordFirst(cycle)
        rig.silence(rig.toBoundary + 7_000, [(0, .set(.looperTrack, 1))])
        let boundary = rig.clock + rig.toBoundary
        rig.silence(boundary - rig.clock + rig.ms(10), [(boundary - rig.clock + rig.ms(10), .send(.tap))])
        rig.silence(into - rig.ms(10))
        return (rig, boundary)
    }

    @Test func aStopPressedSixtyMillisecondsAfterTheSecondBoundaryMakesTwoCycles() throws {
        let (rig, start) = Self.secondTrackRecording(into: 2 * Self.cycle + Self.rig60)
        #expect(rig.control.track(1).state == .recording)
        rig.silence(4_000, [(0, .send(.tap))])
        let track = rig.control.track(1)
        #expect(track.state == .playing && track.length == 2 * Self.cycle, "\(track)")
        let audio = try #require(rig.looper.trackAudio(1))
        #expect(audio.start == start && audio.length == 2 * Self.cycle)
        #expect((audio.start - rig.looper.trackAudio(0)!.start) % Self.cycle == 0)
    }
    static let rig60 = 2_880 // 60 ms at 48 kHz

    @Test func aStopPressedHalfWayThroughTheThirdCycleMakesThree() throws {
        let (rig, start) = Self.secondTrackRecording(into: 2 * Self.cycle + Self.cycle / 2)
        rig.silence(100, [(0, .send(.tap))])
        #expect(rig.control.track(1).state == .recording, "records on to the next boundary")
        #expect(rig.control.track(1).isWaiting)
        rig.silence(Self.cycle / 2 + 1_000)
        let track = rig.control.track(1)
        #expect(track.state == .playing && track.length == 3 * Self.cycle, "\(track)")
        #expect(try #require(rig.looper.trackAudio(1)).start == start)
    }

    /// A record press 60 ms late starts on the boundary it missed (with the input since then),
    /// one 0.5 s late on the next.
    @Test(arguments: [(60.0, 0), (500.0, 1)])
    func aLateRecordPress(late: Double, boundariesLater: Int) throws {
        let rig = TrackRig()
        _ = rig.recordFirst(Self.cycle)
        rig.silence(rig.toBoundary + 1_000, [(0, .set(.looperTrack, 2))])
        let boundary = rig.clock + rig.toBoundary
        let press = boundary + rig.ms(late)
        let played = Signal.noise(length: 3 * Self.cycle, amplitude: 0.2, seed: 9)
        let offset = rig.clock
        rig.run(played, nil, [(press - offset, .send(.tap))])
        rig.silence(10, [(0, .send(.tap))])  // closes at the next boundary after this
        rig.silence(2 * Self.cycle)
        let audio = try #require(rig.looper.trackAudio(2))
        let expected = boundary + boundariesLater * Self.cycle
        #expect(audio.start == expected, "started at \(audio.start), boundary \(boundary)")
        // What it holds is what was played from that boundary on, frame for frame (past the head's
        // crossfade: this recording closed on time, so its seam blends the input that followed).
        let from = expected - offset
        #expect(firstDifference(audio.left[rig.fadeLength..<Self.cycle], played[(from + rig.fadeLength)..<(from + Self.cycle)]) == nil)
    }

    /// Ten minutes of playing three tracks of one, two and three cycles, processed in one-second
    /// blocks: every track's clicks still land on the frame they were recorded at.
    @Test func afterTenMinutesTheTracksAreStillAlignedToTheFrame() throws {
        let rig = TrackRig(block: 48_000)
        let c = 37_013  // not a divisor of the block: boundaries fall anywhere in it
        // Clicks past the head's seam crossfade (5 ms), which blends in what followed the close.
        var first = Signal.silence(c)
        first[1_000] = 0.5
        rig.run(first, nil, [(0, .send(.tap))])
        rig.silence(1, [(0, .send(.tap))])
        // Tracks 2 and 3: an impulse at each boundary they record over, recorded by record-next.
        for cycles in [2, 3] {
            let wait = rig.toBoundary
            var input = Signal.silence(wait + cycles * c + 100)
            for k in 0..<cycles { input[wait + k * c + 1_000 + 11 * cycles] = 0.25 }
            rig.run(input, nil, [(wait - 100, .send(.recordNext)), (wait + (cycles - 1) * c + c / 2, .send(.tap))])
        }
        for t in 0..<3 { #expect(rig.control.track(t).state == .playing, "track \(t + 1)") }
        #expect(rig.control.track(1).length == 2 * c && rig.control.track(2).length == 3 * c)
        for _ in 0..<(10 * 60) { rig.silence(48_000) }
        // One more period of all three (six cycles), against the sum of their recordings.
        let out = rig.silence(6 * c)
        let tracks = try (0..<3).map { try #require(rig.looper.trackAudio($0)) }
        var worst: Float = 0
        for i in 0..<out.count {
            var expected: Float = 0
            for t in tracks { expected += t.left[(rig.clock - out.count + i - t.start) % t.length] }
            worst = max(worst, abs(out[i] - expected))
        }
        #expect(worst <= 1e-6, "worst \(worst)")
        for t in tracks { #expect((t.start - tracks[0].start) % c == 0) }
        let impulses = out.indices.filter { out[$0] > 0.1 }
        #expect(impulses.count == 3 * 6, "\(impulses.count) clicks in six cycles")
    }
}

@Suite struct LooperTrackHistoryTests {
    /// Sixteen overdubs on one track, then sixteen undos and sixteen redos: after each step the
    /// track holds exactly, bit for bit, what it held at that layer.
    @Test func sixteenUndoAndRedoStepsRestoreEveryBitExactly() throws {
        let rig = TrackRig()
        rig.parameters.set(.looperUndoSteps, 15)
        let l = 40_000
        _ = rig.recordFirst(l)
        rig.silence(l - 1)
        var layers = [try #require(rig.looper.trackAudio(0))]
        for k in 0..<16 {
            // Overdubs of different lengths and places, so they touch different chunks.
            let from = (k * 3_001) % (l / 2), length = 4_000 + k * 1_000
            rig.silence(from)
            rig.run(Signal.noise(length: length, amplitude: 0.05, seed: UInt64(100 + k)), nil, [(0, .send(.tap)), (length - 1, .send(.tap))])
            rig.silence(l - from - length)
            layers.append(try #require(rig.looper.trackAudio(0)))
        }
        #expect(rig.control.track(0).undoSteps == 16)
        for k in stride(from: 15, through: 0, by: -1) {
            rig.silence(1_000, [(0, .send(.undo))])
            #expect(rig.looper.trackAudio(0) == layers[k], "after undo back to layer \(k)")
        }
        #expect(!rig.control.canUndo && rig.control.track(0).redoSteps == 16)
        rig.silence(1_000, [(0, .send(.undo))])
        #expect(rig.looper.trackAudio(0) == layers[0], "nothing left to undo")
        for k in 1...16 {
            rig.silence(1_000, [(0, .send(.redo))])
            #expect(rig.looper.trackAudio(0) == layers[k], "after redo to layer \(k)")
        }
        // And it plays what it holds.
        let out = rig.silence(l)
        let position = rig.control.track(0).position
        for i in stride(from: 0, to: l, by: 97) {
            #expect(out[i] == layers[16].left[(position - l + i + 2 * l) % l])
        }
    }

    /// A full pool forgets the oldest steps first; the steps it keeps still undo bit for bit.
    /// (A pool of 2 s holds a pass of this 0.5 s loop kept free plus about three whole-pass steps.)
    @Test func aFullPoolDropsTheOldestStepsFirst() throws {
        let rig = TrackRig(poolSeconds: 2)
        rig.parameters.set(.looperUndoSteps, 15)
        let l = 24_000
        _ = rig.recordFirst(l)
        rig.silence(l - 1)
        var layers = [try #require(rig.looper.trackAudio(0))]
        for k in 0..<10 {
            rig.run(Signal.noise(length: l, amplitude: 0.05, seed: UInt64(200 + k)), nil, [(0, .send(.tap)), (l - 1, .send(.tap))])
            rig.silence(l)
            layers.append(try #require(rig.looper.trackAudio(0)))
        }
        let kept = rig.control.track(0).undoSteps
        #expect(kept >= 2 && kept < 10, "\(kept) steps kept")
        for k in stride(from: 9, through: 10 - kept, by: -1) {
            rig.silence(1_000, [(0, .send(.undo))])
            #expect(rig.looper.trackAudio(0) == layers[k], "after undo back to layer \(k)")
        }
        #expect(!rig.control.canUndo)
        rig.silence(1_000, [(0, .send(.undo))])
        #expect(rig.looper.trackAudio(0) == layers[10 - kept], "the older steps are gone")
    }

    /// Overdubs that go round a long loop many times: once their steps are dropped, the loop's
    /// current layer goes back onto its tape, so the pool holds only what undo can reach and the
    /// track keeps all 16 steps. (The pool holds a pass of the loop kept free plus 16 of these
    /// overdubs and a little; were the current layer left in the pool, 9 steps would fit.)
    @Test func overdubsRoundALongLoopKeepSixteenStepsInASmallPool() throws {
        let chunk = LoopPool.chunkSize, l = 48 * chunk, dub = 4 * chunk
        let poolChunks = 48 + 16 * 5 + 4
        let rig = TrackRig(poolSeconds: Double(poolChunks * chunk) / 48_000)
        rig.parameters.set(.looperUndoSteps, 15)
        _ = rig.recordFirst(l)
        rig.silence(l - 1)
        var layers = [try #require(rig.looper.trackAudio(0))]
        for k in 0..<40 {
            rig.run(Signal.noise(length: dub - 1_000, amplitude: 0.05, seed: UInt64(300 + k)), nil,
                    [(0, .send(.tap)), (dub - 1_001, .send(.tap))])
            rig.silence(1_000)
            layers.append(try #require(rig.looper.trackAudio(0)))
        }
        rig.silence(4 * rig.block)
        #expect(rig.control.track(0).undoSteps == 16)
        let inPool = rig.looper.pool.pointee.chunks - rig.looper.pool.pointee.available
        #expect(inPool <= 16 * 5, "\(inPool) pool chunks in use for 16 steps of at most 5 chunks")
        for k in stride(from: 39, through: 24, by: -1) {
            rig.silence(1_000, [(0, .send(.undo))])
            #expect(rig.looper.trackAudio(0) == layers[k], "after undo back to layer \(k)")
        }
        #expect(!rig.control.canUndo)
        for k in 25...40 {
            rig.silence(1_000, [(0, .send(.redo))])
            #expect(rig.looper.trackAudio(0) == layers[k], "after redo to layer \(k)")
        }
    }

    @Test func aNewOverdubAfterUndoDropsTheRedoSteps() {
        let rig = TrackRig()
        rig.parameters.set(.looperUndoSteps, 15)
        _ = rig.recordFirst(20_000)
        for _ in 0..<2 { rig.silence(5_000, [(0, .send(.tap)), (2_000, .send(.tap))]) }
        rig.silence(1_000, [(0, .send(.undo))])
        #expect(rig.control.track(0).redoSteps == 1)
        rig.silence(3_000, [(0, .send(.tap)), (2_000, .send(.tap))])
        #expect(rig.control.track(0).redoSteps == 0 && rig.control.track(0).undoSteps == 2)
    }
}

@Suite struct LooperTrackMixTests {
    /// On a stereo board: a mono track panned hard left plays on the left only, at its gain; a
    /// muted track goes silent (after its 20 ms ramp); the live input passes on each side.
    @Test func gainPanAndMute() {
        let rig = TrackRig()
        let passage = Signal.noise(length: 24_000, amplitude: 0.3, seed: 4)
        rig.run(passage, passage, [(0, .send(.tap))])
        rig.run(Signal.silence(1), Signal.silence(1), [(0, .send(.tap))])
        let silence = Signal.silence(24_000)
        rig.parameters.set(.looperTrackPan(0), -1)
        rig.parameters.set(.looperTrackGain(0), -6)
        rig.run(silence, silence)   // the ramps settle
        let (left, right) = rig.run(silence, silence)
        #expect(right.allSatisfy { $0 == 0 })
        let g = decibelsToGain(-6)
        let p = rig.control.track(0).position
        for i in stride(from: 0, to: 24_000, by: 53) where (p + i) % 24_000 >= rig.fadeLength {
            // (The head's first 5 ms are the seam crossfade.)
            let loop = passage[(p + i) % 24_000]
            #expect(abs(left[i] - g * loop) <= 1e-6)
        }
        rig.parameters.set(.looperTrackMute(0), 1)
        let muted = rig.run(silence, silence)
        #expect(muted.left[2_000...].allSatisfy { $0 == 0 })
        #expect(abs(muted.left[0]) > 0, "the mute ramps down rather than cutting")
    }

    /// With `looper.stereo` on, a track records each side of a stereo board and plays each back.
    @Test func aStereoTrackKeepsItsSides() throws {
        let rig = TrackRig()
        rig.parameters.set(.looperStereo, 1)
        let a = Signal.noise(length: 24_000, amplitude: 0.3, seed: 5), b = Signal.noise(length: 24_000, amplitude: 0.3, seed: 6)
        rig.run(a, b, [(0, .send(.tap))])
        rig.run(Signal.silence(24_000), Signal.silence(24_000), [(0, .send(.tap))])
        let audio = try #require(rig.looper.trackAudio(0))
        #expect(audio.isStereo)
        #expect(firstDifference(audio.left[rig.fadeLength...], a[rig.fadeLength...]) == nil)
        #expect(firstDifference(audio.right[rig.fadeLength...], b[rig.fadeLength...]) == nil)
    }

    /// Tracks are independent: clearing one leaves the others playing; clearing the last
    /// forgets the cycle, so the next loop sets a new one.
    @Test func clearingATrackLeavesTheOthers() {
        let rig = TrackRig()
        _ = rig.recordFirst(30_000)
        rig.silence(rig.toBoundary + 100, [(0, .send(.recordNext))])
        rig.silence(30_000, [(0, .send(.tap))])
        #expect(rig.control.track(1).state == .playing && rig.control.track(1).length == 30_000)
        #expect(rig.parameters.load(.looperTrack) == 1, "record-next selected track 2")
        rig.silence(1_000, [(0, .on(0, .clear))])
        #expect(rig.control.track(0).state == .stopped && rig.control.track(1).state == .playing)
        #expect(rig.looper.cycleLength == 30_000)
        rig.silence(1_000, [(0, .send(.hold))])
        #expect(rig.looper.cycleLength == 0)
    }
}

@Suite struct LooperTrackLengthTests {
    /// `looper.bars` 2 at 120 bpm and 4 beats a bar: the first loop closes by itself after
    /// exactly 8 beats; a tap while it records waits for that.
    @Test func aFixedLengthLoopClosesByItself() {
        let rig = TrackRig()
        rig.parameters.set(.looperBars, 2)
        rig.parameters.set(.tempo, 120)
        rig.run(Signal.noise(length: 200_000, amplitude: 0.2, seed: 3), nil, [(0, .send(.tap)), (50_000, .send(.tap))])
        #expect(rig.control.track(0).length == 192_000)
        #expect(rig.control.track(0).state == .overdubbing, "the waiting tap acted once the loop closed")
    }

    /// A count-in of one bar: the recording starts one bar (4 beats at 120 bpm) after the tap,
    /// and the metronome clicks the count-in through the chain although it is switched off.
    @Test func aCountInStartsTheRecordingABarLaterWithClicks() {
        let chain = Chain(board: [.looper])
        chain.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        chain.parameters[.looperEnabled] = 1
        chain.parameters[.looperCountIn] = 1
        chain.parameters[.tempo] = 120
        let looper = chain.controls.looper
        looper.send(.tap)
        let counted = Render.through(chain, Signal.silence(95_744))
        #expect(looper.state == .stopped && looper.isCountingIn)
        for beat in 0..<4 { #expect(Measure.peak(counted[(beat * 24_000)..<(beat * 24_000 + 500)]) > 0.01, "click \(beat)") }
        #expect(Measure.peak(counted[1_000..<24_000]) == 0, "only the clicks")
        let after = Render.through(chain, Signal.silence(24_256))
        #expect(looper.state == .recording && !looper.isCountingIn)
        #expect(looper.length == 24_000, "recording started at the end of the bar")
        #expect(Measure.peak(after[1_000...]) == 0, "no clicks once it records")
    }

    /// `looper.sync` with `looper.round_to` = bar: the first loop is a whole number of bars.
    @Test func syncRoundsToWholeBarsWhenAsked() {
        let rig = TrackRig()
        rig.parameters.set(.looperSync, 1)
        rig.parameters.set(.looperRoundTo, 1)
        rig.parameters.set(.tempo, 120)
        rig.run(Signal.noise(length: 120_000, amplitude: 0.2, seed: 3), nil, [(0, .send(.tap)), (62_400, .send(.tap))])
        #expect(rig.control.track(0).length == 96_000)
    }
}

@Suite struct LooperTrackKeepTests {
    /// A track tapped while the first loop records starts where that loop closes.
    @Test func aTrackTappedDuringTheFirstPassStartsWhereItCloses() throws {
        let rig = TrackRig()
        rig.run(Signal.noise(length: 40_000, amplitude: 0.2, seed: 2), nil, [(0, .send(.tap)), (10_000, .on(1, .tap)), (30_000, .send(.tap))])
        #expect(rig.control.track(1).state == .recording)
        rig.silence(40_000, [(0, .on(1, .tap))])
        let first = try #require(rig.looper.trackAudio(0)), second = try #require(rig.looper.trackAudio(1))
        #expect(first.length == 30_000 && second.length == 30_000)
        #expect(second.start == first.start + 30_000)
    }

    /// A new sample rate keeps every track: the cycle is converted once and each track stays a
    /// whole number of it, in step with the clock.
    @Test func aNewRateKeepsTheTracksInStep() throws {
        let rig = TrackRig()
        _ = rig.recordFirst(30_000)
        rig.silence(rig.toBoundary + 5_000, [(0, .send(.recordNext))])
        rig.silence(30_000 + 2_000, [(26_000, .send(.tap))])  // 1 000 frames after its second boundary
        rig.silence(40_000)
        #expect(rig.control.track(1).length == 60_000)
        let kept = try #require(rig.looper.keepLoop())
        let nearest: LoopResampler = { loop, ratio in
            (0..<Int((Double(loop.count) * ratio).rounded())).map { loop[min(loop.count - 1, Int(Double($0) / ratio))] }
        }
        rig.looper.prepare(sampleRate: 44_100, maximumBlockSize: rig.block)
        rig.looper.restoreLoop(kept, fromRate: 48_000, toRate: 44_100, resample: nearest)
        let cycle = Int((30_000 * 44_100 / 48_000.0).rounded())
        #expect(rig.looper.cycleLength == cycle)
        for _ in 0..<5 { rig.silence(10_007) }
        let tracks = try (0..<2).map { try #require(rig.looper.trackAudio($0)) }
        #expect(tracks[0].length == cycle && tracks[1].length == 2 * cycle)
        #expect((tracks[1].start - tracks[0].start) % cycle == 0)
        for t in 0..<2 {
            #expect((rig.looper.clock - tracks[t].start) % tracks[t].length == rig.control.track(t).position, "track \(t + 1)")
        }
    }
}

/// Loops put back onto the tracks (a session's loop tracks) while the audio runs.
@Suite struct LooperLoadTests {
    /// Loads `loops` from another thread while the rig plays blocks, as the window does while
    /// the audio runs; returns the outcome.
    static func load(_ rig: TrackRig, _ loops: [LoopToLoad], cycle: Int) -> LoopLoadOutcome {
        let outcome = Mutex<LoopLoadOutcome?>(nil)
        let looper = UncheckedBox(rig.looper)
        Thread.detachNewThread {
            let result = looper.value.load(loops, cycle: cycle, audioRunning: true)
            outcome.withLock { $0 = result }
        }
        for _ in 0..<2_000 {
            if let done = outcome.withLock({ $0 }) { return done }
            rig.silence(rig.block)
            Thread.sleep(forTimeInterval: 0.001)
        }
        return .timedOut
    }

    @Test func loopsComeBackInStepAndPlaySampleExact() throws {
        let rig = TrackRig()
        let cycle = 12_000
        let first = Signal.noise(length: 2 * cycle, amplitude: 0.3, seed: 41)
        let second = (Signal.noise(length: cycle, amplitude: 0.2, seed: 42), Signal.noise(length: cycle, amplitude: 0.2, seed: 43))
        let outcome = Self.load(rig, [LoopToLoad(track: 0, left: first, right: nil, position: cycle),
                                      LoopToLoad(track: 2, left: second.0, right: second.1, position: 0)], cycle: cycle)
        #expect(outcome == .loaded)
        #expect(rig.looper.cycleLength == cycle)
        let a = try #require(rig.looper.trackAudio(0)), b = try #require(rig.looper.trackAudio(2))
        #expect(a.left == first && !a.isStereo && a.length == 2 * cycle)
        #expect(b.left == second.0 && b.right == second.1 && b.isStereo)
        // In step: both are the same number of frames into their cycle.
        let p0 = rig.control.track(0).position, p2 = rig.control.track(2).position
        #expect(p0 % cycle == p2, "\(p0) \(p2)")
        // What track 1 alone plays, once the fade-in is over, is its loop sample for sample.
        rig.parameters.set(.looperTrackMute(2), 1)
        rig.silence(4_800)
        let start = rig.control.track(0).position
        let out = rig.silence(2 * cycle)
        for i in stride(from: 0, to: 2 * cycle, by: 7) { #expect(out[i] == first[(start + i) % (2 * cycle)]) }
        // A new track records in whole cycles of the loaded ones, and the loaded one overdubs and undoes.
        rig.parameters.set(.looperTrack, 4)
        rig.silence(rig.toBoundary + 100, [(0, .send(.tap))])
        rig.run(Signal.noise(length: cycle, amplitude: 0.1, seed: 44), nil, [(cycle / 2, .send(.tap))])
        rig.silence(2 * cycle)
        #expect(rig.control.track(4).length == cycle)
        rig.silence(1_000, [(0, .on(0, .tap))])
        rig.run(Signal.noise(length: 3_000, amplitude: 0.1, seed: 45), nil, [(2_999, .on(0, .tap))])
        rig.silence(1_000, [(0, .on(0, .undo))])
        #expect(try #require(rig.looper.trackAudio(0)).left == first)
    }

    @Test func aLooperThatHoldsALoopRefusesThemAndKeepsIt() throws {
        let rig = TrackRig()
        _ = rig.recordFirst(10_000)
        rig.silence(1_000)
        let before = try #require(rig.looper.trackAudio(0))
        let outcome = Self.load(rig, [LoopToLoad(track: 1, left: Signal.noise(length: 10_000, seed: 5), right: nil, position: 0)], cycle: 10_000)
        #expect(outcome == .busy)
        #expect(rig.looper.trackAudio(0) == before && rig.looper.trackAudio(1) == nil)
    }

    @Test func loopsThatAreNotWholeCyclesAreRefused() {
        let rig = TrackRig()
        let outcome = rig.looper.load([LoopToLoad(track: 0, left: Signal.noise(length: 15_000, seed: 6), right: nil, position: 0)],
                                      cycle: 10_000, audioRunning: false)
        guard case .invalid(let why) = outcome else { Issue.record("\(outcome)"); return }
        #expect(why.contains("whole number of cycles"))
        #expect(rig.looper.trackAudio(0) == nil)
    }
}

/// Hands the Looper to the thread that loads into it (`load` is made to run beside `process`).
struct UncheckedBox<T>: @unchecked Sendable { let value: T; init(_ value: T) { self.value = value } }

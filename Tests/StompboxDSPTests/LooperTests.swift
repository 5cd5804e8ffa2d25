import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// Drives a looper as the audio thread would, sending footswitch actions at exact samples.
final class LooperRig {
    let controls = EngineControls()
    let looper: Looper
    let block: Int
    /// Samples processed so far.
    private(set) var clock = 0

    init(rate: Double = 48_000, block: Int = 256) {
        looper = Looper(parameters: controls.parameters, control: controls.looper)
        looper.prepare(sampleRate: rate, maximumBlockSize: block)
        self.block = block
    }

    var control: LooperControl { controls.looper }
    var fadeLength: Int { Int((Looper.seamTime * 48_000).rounded()) }

    /// Processes `input`; each action is sent just before the sample at its offset in `input`
    /// (blocks are split there, so it acts exactly at that sample).
    @discardableResult
    func run(_ input: [Float], _ actions: [(Int, LooperAction)] = []) -> [Float] {
        var out = input
        var start = 0
        var pending = actions.sorted { $0.0 < $1.0 }[...]
        out.withUnsafeMutableBufferPointer { all in
            while start < all.count || pending.first?.0 == start {
                while let next = pending.first, next.0 == start {
                    control.send(next.1)
                    pending = pending.dropFirst()
                }
                guard start < all.count else { break }
                var end = min(start + block, all.count)
                if let next = pending.first?.0, next < end { end = next }
                looper.process(UnsafeMutableBufferPointer(rebasing: all[start..<end]))
                start = end
            }
        }
        clock += input.count
        return out
    }

    func silence(_ n: Int, _ actions: [(Int, LooperAction)] = []) -> [Float] { run(Signal.silence(n), actions) }
}

/// The first index where two signals differ (nil when they are identical), so a failure names
/// a sample instead of printing a million of them.
func firstDifference(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>, tolerance: Float = 0) -> Int? {
    guard a.count == b.count else { return -1 }
    for (i, (x, y)) in zip(a, b).enumerated() where !(abs(x - y) <= tolerance) { return i }
    return nil
}

@Suite struct LooperTests {
    static let length = 72_000 // 1.5 s at 48 kHz

    /// Records `passage` (tap at its first sample, tap after its last), then returns the rig.
    static func recorded(_ passage: [Float], then after: [Float] = [], block: Int = 256) -> (LooperRig, [Float]) {
        let rig = LooperRig(block: block)
        let out = rig.run(passage + after, [(0, .tap), (passage.count, .tap)])
        return (rig, out)
    }

    @Test func recordingPassesTheInputAndEveryPassPlaysBackSampleExact() {
        let passage = Signal.noise(length: Self.length, amplitude: 0.4, seed: 11)
        let (rig, during) = Self.recorded(passage)
        #expect(firstDifference(during[...], passage[...]) == nil, "recording passes the input through unchanged")
        #expect(rig.control.state == .recording)

        let fade = rig.fadeLength
        for pass in 0..<4 {
            let out = rig.silence(Self.length)
            #expect(rig.control.state == .playing && rig.control.length == Self.length)
            // Outside the seam crossfade at the head, bit-exact.
            #expect(firstDifference(out[fade...], passage[fade...]) == nil, "pass \(pass)")
            // In it, the head fades in (the input after the closing tap was silence here).
            for i in 0..<fade { #expect(abs(out[i] - passage[i]) <= abs(passage[i]) + 1e-6) }
            #expect(out[0] == 0)
        }
    }

    @Test func playbackStaysExactWhileThePlayerGoesOn() {
        // Output = input + loop: the loop is recovered within float rounding of that sum.
        let passage = Signal.noise(length: Self.length, amplitude: 0.4, seed: 12)
        let (rig, _) = Self.recorded(passage, block: 100)
        let fade = rig.fadeLength
        for pass in 0..<3 {
            let live = Signal.noise(length: Self.length, amplitude: 0.3, seed: UInt64(20 + pass))
            let out = rig.run(live)
            var worst: Float = 0
            for i in fade..<Self.length { worst = max(worst, abs(out[i] - live[i] - passage[i])) }
            #expect(worst <= 1e-6, "pass \(pass): \(worst)")
        }
    }

    @Test func theSeamDoesNotClick() {
        // The player holds a 220 Hz note through the closing tap, then stops. The loop's length is
        // not a whole number of periods, so tail and head do not meet in phase.
        let length = Self.length + 123
        let note = Signal.sine(frequency: 220, seconds: 2, amplitude: 0.5)
        let rig = LooperRig()
        rig.run(Array(note[0..<(length + 2_000)]), [(0, .tap), (length, .tap)])
        _ = rig.silence(length - 2_000 - 500)
        // Now 500 samples before the seam of the second pass: play across it.
        let across = rig.silence(3_000)
        let own = Float(0.5 * 2 * Double.pi * 220 / 48_000)
        let step = Measure.largestStep(across)
        #expect(step < 1.5 * own, "largest step \(step) across the seam; the note's own is \(own)")
        // Without a crossfade the seam would jump from the tail to the head's value.
        let jump = abs(note[length - 1] - note[0])
        #expect(jump > 10 * own, "the test must put a real discontinuity at the seam (\(jump))")
    }

    @Test func tapsCycleTheStatesAndStatusIsReported() {
        let rig = LooperRig()
        #expect(rig.control.state == .stopped && rig.control.length == 0 && !rig.control.canUndo)
        rig.run(Signal.noise(length: 30_000), [(0, .tap)])
        #expect(rig.control.state == .recording)
        #expect(rig.control.length == 30_000 && rig.control.position == 30_000)
        rig.run(Signal.noise(length: 10_000, seed: 2), [(0, .tap)])
        #expect(rig.control.state == .playing)
        #expect(rig.control.length == 30_000 && rig.control.position == 10_000)
        rig.silence(25_000, [(0, .tap)])
        #expect(rig.control.state == .overdubbing && rig.control.canUndo)
        #expect(rig.control.position == 5_000, "position wraps at the loop length")
        rig.silence(1_000, [(0, .tap)])
        #expect(rig.control.state == .playing && rig.control.canUndo)
        rig.silence(1_000, [(0, .tap)])
        #expect(rig.control.state == .overdubbing)
        rig.silence(1_000, [(0, .tap)])
        #expect(rig.control.state == .playing)
        rig.silence(1_000, [(0, .undo)])
        #expect(rig.control.state == .playing && rig.control.canUndo, "the first overdub is still there to undo")
        rig.silence(1_000, [(0, .undo)])
        #expect(rig.control.state == .playing && !rig.control.canUndo)
        rig.silence(1_000, [(0, .hold)])
        #expect(rig.control.state == .stopped && rig.control.length == 0 && !rig.control.canUndo)
    }

    @Test func overdubAddsAndUndoRestoresThePreviousLayerExactly() {
        let l = Self.length
        let a = Signal.noise(length: l, amplitude: 0.3, seed: 31)
        let b = Signal.noise(length: l, amplitude: 0.3, seed: 32)
        let (rig, _) = Self.recorded(a)
        let fade = rig.fadeLength
        let layerA = rig.silence(l)           // pass 1: what the loop holds now

        // Overdub b over exactly one pass, punching in and out at the seam.
        let during = rig.run(b, [(0, .tap)])
        // While overdubbing you hear the input once plus the old loop (not the input doubled).
        var worst: Float = 0
        for i in 0..<l { worst = max(worst, abs(during[i] - (b[i] + layerA[i]))) }
        #expect(worst <= 1e-6)
        let layerAB = rig.silence(l, [(0, .tap)])
        #expect(rig.control.state == .playing && rig.control.canUndo)
        // Outside the punch-in ramp the new layer is exactly old + overdub.
        for i in fade..<l where layerAB[i] != layerA[i] + b[i] {
            Issue.record("sample \(i): \(layerAB[i]) != \(layerA[i] + b[i])")
            break
        }

        // Undo in the middle of a pass: a short crossfade, then the old layer, exactly.
        let mid = 30_000
        let out = rig.silence(l, [(mid, .undo)])
        #expect(firstDifference(out[..<mid], layerAB[..<mid]) == nil)
        #expect(firstDifference(out[(mid + fade)...], layerA[(mid + fade)...]) == nil)
        #expect(!rig.control.canUndo)
        // And on every later pass, everywhere.
        #expect(firstDifference(rig.silence(l)[...], layerA[...]) == nil)
        #expect(firstDifference(rig.silence(l)[...], layerA[...]) == nil)
    }

    @Test func undoCrossfadesInsteadOfClicking() {
        // A 110 Hz loop with a 170 Hz overdub: undoing near the overdub's crest must not step.
        let l = Self.length
        let (rig, _) = Self.recorded(Signal.sine(frequency: 110, seconds: 1.5, amplitude: 0.3))
        rig.silence(l)
        rig.run(Signal.sine(frequency: 170, seconds: 1.5, amplitude: 0.3), [(0, .tap)])
        rig.silence(l, [(0, .tap)])
        // 170 Hz crest at a quarter period past a whole number of periods.
        let at = Int((Double(100) / 170 + 0.25 / 170) * 48_000)
        let out = rig.silence(l, [(at, .undo)])
        let own = Float(0.3 * 2 * Double.pi * (110 + 170) / 48_000)
        let step = Measure.largestStep(Array(out[(at - 100)..<(at + 2 * rig.fadeLength)]))
        #expect(step < 1.5 * own, "undo step \(step), the loop's own up to \(own)")
    }

    @Test func overdubPunchInAndOutDoNotClick() {
        // A silent loop, then a 170 Hz overdub punched in and out at crests of the note.
        let l = Self.length
        let (rig, _) = Self.recorded(Signal.silence(l))
        rig.silence(l)
        let note = Signal.sine(frequency: 170, seconds: 1.5, amplitude: 0.3)
        let period = 48_000.0 / 170
        let punchIn = Int((20.25 * period).rounded()), punchOut = Int((150.25 * period).rounded())
        rig.run(note, [(punchIn, .tap), (punchOut, .tap)])
        let layer = rig.silence(l)
        let own = Float(0.3 * 2 * Double.pi * 170 / 48_000)
        let step = Measure.largestStep(layer)
        #expect(step < 1.5 * own, "largest step \(step) in the overdubbed layer, the note's own \(own)")
        // Between the ramps the overdub is the note itself, exactly.
        let inside = (punchIn + rig.fadeLength)..<(punchOut - 1)
        #expect(firstDifference(layer[inside], note[inside]) == nil)
    }

    @Test func holdFadesOutWithoutAClick() {
        let l = Self.length
        let (rig, _) = Self.recorded(Signal.sine(frequency: 110, seconds: 1.5, amplitude: 0.5))
        rig.silence(l)
        let crest = Int((30.25 * 48_000 / 110).rounded())
        let out = rig.silence(crest + 2_000, [(crest, .hold)])
        let own = Float(0.5 * 2 * Double.pi * 110 / 48_000)
        #expect(Measure.largestStep(out) < 1.5 * own)
        #expect(out[(crest + rig.fadeLength)...].allSatisfy { $0 == 0 })
    }

    @Test func undoRemovesOnlyTheLastOverdub() {
        let l = Self.length
        let a = Signal.noise(length: l, amplitude: 0.2, seed: 41)
        let (rig, _) = Self.recorded(a)
        let layerA = rig.silence(l)
        rig.run(Signal.noise(length: l, amplitude: 0.2, seed: 42), [(0, .tap)])
        let layerAB = rig.silence(l, [(0, .tap)])
        // A second overdub, shorter than the loop and off the seam.
        rig.silence(10_000)
        rig.run(Signal.noise(length: 20_000, amplitude: 0.2, seed: 43), [(0, .tap)])
        rig.silence(l - 30_000, [(0, .tap)])
        let layerABC = rig.silence(l)
        #expect(firstDifference(layerABC[...], layerAB[...]) != nil)
        rig.silence(l, [(0, .undo)])
        #expect(firstDifference(rig.silence(l)[...], layerAB[...]) == nil)
        #expect(firstDifference(layerAB[...], layerA[...]) != nil)
        // A second undo takes the first overdub back too; a third has nothing left to remove.
        rig.silence(l, [(0, .undo)])
        #expect(firstDifference(rig.silence(l)[...], layerA[...]) == nil)
        rig.silence(l, [(0, .undo)])
        #expect(firstDifference(rig.silence(l)[...], layerA[...]) == nil)
    }

    @Test func undoDuringAnOverdubDropsIt() {
        let l = Self.length
        let (rig, _) = Self.recorded(Signal.noise(length: l, amplitude: 0.2, seed: 51))
        let layerA = rig.silence(l)
        rig.run(Signal.noise(length: 40_000, amplitude: 0.2, seed: 52), [(0, .tap), (39_000, .undo)])
        #expect(rig.control.state == .playing && !rig.control.canUndo)
        rig.silence(l - 40_000)
        #expect(firstDifference(rig.silence(l)[...], layerA[...]) == nil)
    }

    @Test func holdStopsClearsAndFadesOut() {
        let l = Self.length
        let (rig, _) = Self.recorded(Signal.noise(length: l, amplitude: 0.4, seed: 61))
        rig.silence(20_000)
        let out = rig.silence(l, [(0, .hold)])
        #expect(rig.control.state == .stopped && rig.control.length == 0)
        let fade = rig.fadeLength
        #expect(out[fade...].allSatisfy { $0 == 0 }, "silence in, silence out once the fade is over")
        // The fade-out is monotone in gain: no sample louder than the loop would have been.
        #expect(Measure.peak(out[..<fade]) <= 0.4)
        // Taps work as from scratch: a new, shorter loop plays back exactly.
        let fresh = Signal.noise(length: 30_000, amplitude: 0.4, seed: 62)
        rig.run(fresh, [(0, .tap)])
        rig.silence(1, [(0, .tap)])
        #expect(rig.control.length == 30_000)
        let back = rig.silence(30_000)
        #expect(firstDifference(back[(fade - 1)..<(30_000 - 1)], fresh[fade...]) == nil)
    }

    @Test func aTooShortFirstPassIsDiscarded() {
        let rig = LooperRig()
        rig.run(Signal.noise(length: 1_000), [(0, .tap), (500, .tap)])
        #expect(rig.control.state == .stopped && rig.control.length == 0)
        // Two taps in one block: recording opens and closes at once, nothing is kept.
        rig.silence(256, [(0, .tap), (0, .tap)])
        #expect(rig.control.state == .stopped)
    }

    @Test func requestsInOneBlockAreHandledTapsFirstThenHoldThenUndo() {
        let l = Self.length
        let (rig, _) = Self.recorded(Signal.noise(length: l, amplitude: 0.2, seed: 71))
        // hold and tap together: the tap (→ overdubbing) comes first, then hold clears.
        rig.silence(1_000, [(0, .hold), (0, .tap)])
        #expect(rig.control.state == .stopped && rig.control.length == 0)
    }

    @Test func aTapDuringTheSeamCrossfadeWaitsForItsEnd() {
        // Close the loop and tap again 1 ms later: the overdub starts once the 5 ms seam
        // crossfade is done (at the first block after it), not in the middle of it.
        let l = Self.length
        let rig = LooperRig(block: 48)
        rig.run(Signal.noise(length: l, amplitude: 0.2, seed: 99), [(0, .tap)])
        rig.silence(48, [(0, .tap)])
        rig.silence(48, [(0, .tap)])
        #expect(rig.control.state == .playing, "still sealing the seam")
        rig.silence(48 * 4)
        #expect(rig.control.state == .overdubbing)
        #expect(rig.control.canUndo)
    }

    @Test func tapeFullClosesTheLoopAtTheMaximumLength() {
        let rig = LooperRig(block: 4096)
        let maximum = rig.looper.maximumLength
        #expect(maximum >= 120 * 48_000)
        // Record past the end: the loop closes by itself exactly at the maximum and plays.
        let n = maximum + 48_000
        var input = [Float](repeating: 0, count: n)
        var x: UInt32 = 1
        for i in 0..<n { x = x &* 1_664_525 &+ 1_013_904_223; input[i] = Float(Int32(bitPattern: x) >> 8) / Float(1 << 24) }
        let out = rig.run(input, [(0, .tap)])
        #expect(rig.control.state == .playing)
        #expect(rig.control.length == maximum)
        #expect(rig.control.position == 48_000)
        // After the full tape, what plays is the tape's head (plus the live input).
        let fade = rig.fadeLength
        for i in stride(from: fade, to: 48_000, by: 37) {
            #expect(abs(out[maximum + i] - (input[maximum + i] + input[i])) <= 1e-6)
        }
    }

    /// The two-minute tapes cost memory only as far as they are used: tape A ten seconds ahead
    /// of the recording, tape B (overdubs' layer beneath) up to the loop's length once there is
    /// one; the loop plays back exactly all the same.
    @Test func tapesAreResidentOnlyAsFarAsTheyAreUsed() throws {
        let rig = LooperRig()
        let ahead = Int(Looper.residentAhead * 48_000)
        let start = try #require(rig.looper.residentTape, "the tapes were not reserved lazily")
        #expect(start.a >= ahead && start.a < ahead + 1024, "tape A resident \(start.a) before recording")
        #expect(start.b == 0)
        let passage = Signal.noise(length: 3 * 48_000, amplitude: 0.4, seed: 5)
        rig.run(passage, [(0, .tap)])
        rig.looper.updateTapes()
        let recording = try #require(rig.looper.residentTape)
        #expect(recording.a >= passage.count + ahead && recording.a < passage.count + ahead + 1024)
        #expect(recording.b == 0, "tape B is not needed while the first pass records")
        let out = rig.run(passage, [(0, .tap)])
        rig.looper.updateTapes()
        let looping = try #require(rig.looper.residentTape)
        #expect(looping.b >= passage.count && looping.b < passage.count + 1024, "tape B resident \(looping.b) for a loop of \(passage.count)")
        // Far below the 2 × 120 s reserved.
        #expect(looping.a + looping.b < rig.looper.maximumLength / 4)
        let fade = rig.fadeLength
        #expect(firstDifference(out[fade...], zip(passage, passage).map { $0 + $1 }[fade...], tolerance: 1e-6) == nil)
    }

    /// A system that will not reserve the whole (strict overcommit, a limit on address space):
    /// the tapes are shorter and the Looper still loops, sample-exact.
    @Test func aRefusedReservationGivesShorterTapesNotACrash() {
        let controls = EngineControls()
        let looper = Looper(parameters: controls.parameters, control: controls.looper)
        looper.reservableBytes = 250 << 20
        looper.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        #expect(looper.maximumLength == 48_000 * 30, "a quarter of the two minutes fits 250 MB")
        looper.reservableBytes = 0
        looper.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        #expect(looper.maximumLength == 48_000 * 15)
        let passage = Signal.noise(length: 20_000, amplitude: 0.3, seed: 5)
        var block = passage
        controls.looper.send(.tap)
        block.withUnsafeMutableBufferPointer { looper.process($0) }
        controls.looper.send(.tap)
        var out = Signal.silence(20_000)
        out.withUnsafeMutableBufferPointer { looper.process($0) }
        let fade = Int(Looper.seamTime * 48_000)
        #expect(Array(out[fade..<20_000]) == Array(passage[fade..<20_000]))
    }

    @Test func resetKeepsTheRecording() {
        let passage = Signal.noise(length: Self.length, amplitude: 0.4, seed: 81)
        let (rig, _) = Self.recorded(passage)
        let first = rig.silence(Self.length)
        rig.looper.reset()
        #expect(rig.control.state == .playing)
        #expect(firstDifference(rig.silence(Self.length)[...], first[...]) == nil)
    }

    @Test func levelScalesPlaybackAndMovesSmoothly() {
        let passage = Signal.sine(frequency: 100, seconds: 1.5, amplitude: 0.5)
        let (rig, _) = Self.recorded(passage)
        let full = rig.silence(Self.length)
        rig.controls.parameters[.looperLevel] = 0
        let jump = rig.silence(Self.length)
        // 20 ms ramp to silence: no step larger than the note's own slope plus the ramp's share.
        let own = Float(0.5 * 2 * Double.pi * 100 / 48_000)
        #expect(Measure.largestStep(Array(full.suffix(1)) + jump) < 2 * own)
        #expect(jump[2_000...].allSatisfy { $0 == 0 })
        rig.controls.parameters[.looperLevel] = 0.5
        rig.silence(Self.length)
        let half = rig.silence(Self.length)
        for i in stride(from: 1_000, to: Self.length, by: 101) { #expect(abs(half[i] - 0.5 * full[i]) < 1e-6) }
    }

    @Test func nonFiniteInputIsRecordedAsSilence() {
        var passage = Signal.noise(length: Self.length, amplitude: 0.4, seed: 91)
        passage[1_000] = .nan
        passage[2_000] = .infinity
        let (rig, out) = Self.recorded(passage)
        #expect(Measure.allFinite(out))
        let back = rig.silence(Self.length)
        #expect(Measure.allFinite(back))
        #expect(back[1_000] == 0 && back[2_000] == 0)
    }

    @Test func processBeforePrepareOnlyPassesThrough() {
        let controls = EngineControls()
        let looper = Looper(parameters: controls.parameters, control: controls.looper)
        #expect(looper.maximumLength == 0)
        controls.looper.send(.tap)
        let input = Signal.noise(length: 512)
        #expect(firstDifference(Render.through(looper, input)[...], input[...]) == nil)
    }
}

@Suite struct LooperInChainTests {
    static func chain() -> Chain {
        let chain = Chain()
        chain.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        return chain
    }

    @Test func tapsWhileTheLooperIsOffAreIgnored() {
        let chain = Self.chain()
        let looper = chain.controls.looper
        looper.send(.tap)
        _ = Render.through(chain, Signal.noise(length: 4_800, amplitude: 0.2))
        #expect(looper.state == .stopped)
        chain.parameters[.looperEnabled] = 1
        _ = Render.through(chain, Signal.noise(length: 4_800, amplitude: 0.2))
        #expect(looper.state == .stopped, "the tap made while off is not replayed on switch-on")
        looper.send(.tap)
        _ = Render.through(chain, Signal.noise(length: 4_800, amplitude: 0.2))
        #expect(looper.state == .recording)
    }

    @Test func switchingTheLooperOffAndOnKeepsTheLoop() {
        let chain = Self.chain()
        chain.parameters[.looperEnabled] = 1
        let looper = chain.controls.looper
        let passage = Signal.noise(length: 48_000, amplitude: 0.2, seed: 5)
        looper.send(.tap)
        _ = Render.through(chain, passage)
        looper.send(.tap)
        let first = Render.through(chain, Signal.silence(48_000))
        chain.parameters[.looperEnabled] = 0
        _ = Render.through(chain, Signal.silence(4_800))
        looper.send(.hold)      // ignored: the pedal is off
        _ = Render.through(chain, Signal.silence(256))
        chain.parameters[.looperEnabled] = 1
        _ = Render.through(chain, Signal.silence(4_800))
        #expect(looper.state == .playing && looper.length == 48_000)
        // Still the same loop: a full pass matches the first one (away from the switch fades).
        let position = looper.position
        let again = Render.through(chain, Signal.silence(48_000))
        var worst: Float = 0
        for i in 1_000..<47_000 {
            worst = max(worst, abs(again[i] - first[(position + i) % 48_000]))
        }
        #expect(worst < 1e-6)
    }
}

/// `looper.sync`: the first pass closes on the next whole bar of the tempo, or beat with
/// `looper.round_to` = beat.
@Suite struct LooperSyncTests {
    @Test(arguments: [(Float(120), 62_400, 72_000), (100, 28_800, 28_800), (97, 10_000, 29_691)])
    func theLoopIsAWholeNumberOfBeats(bpm: Float, tappedAt: Int, length: Int) {
        let rig = LooperRig(block: 100)
        rig.controls.parameters.set(.looperSync, 1)
        rig.controls.parameters.set(.looperRoundTo, 0)
        rig.controls.parameters.set(.tempo, bpm)
        let input = Signal.sine(frequency: 220, seconds: 3, amplitude: 0.3)
        rig.run(input, [(0, .tap), (tappedAt, .tap), (tappedAt + 5, .tap)])
        #expect(rig.control.length == length, "length \(rig.control.length)")
        // The tap that came while it waited is kept: overdubbing now.
        #expect(rig.control.state == .overdubbing)
    }

    @Test func withoutSyncTheLoopIsWhereTheTapWas() {
        let rig = LooperRig(block: 100)
        rig.controls.parameters.set(.tempo, 120)
        rig.run(Signal.sine(frequency: 220, seconds: 2, amplitude: 0.3), [(0, .tap), (62_400, .tap)])
        #expect(rig.control.length == 62_400 && rig.control.state == .playing)
    }

    @Test func aHoldWhileWaitingClears() {
        let rig = LooperRig(block: 100)
        rig.controls.parameters.set(.looperSync, 1)
        rig.controls.parameters.set(.tempo, 60)
        rig.run(Signal.sine(frequency: 220, seconds: 2, amplitude: 0.3), [(0, .tap), (50_000, .tap), (60_000, .hold)])
        #expect(rig.control.state == .stopped && rig.control.length == 0)
    }
}

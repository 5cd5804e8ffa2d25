import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// The board: which pedals are on it, in what order, and a change of either while playing.
@Suite struct BoardTests {
    /// A prepared chain with `board`, every pedal on it switched on, and a few knobs away from
    /// their defaults (nothing ramping when it starts).
    func chain(_ board: [PedalKind]) -> Chain {
        let c = Chain(board: board)
        for kind in board { c.parameters.set(kind.enabledParameter, 1) }
        c.parameters.set(.overdriveDrive, 0.7)
        c.parameters.set(.delayTime, 120)
        c.parameters.set(.delayMix, 0.5)
        c.prepare(sampleRate: testRate, maximumBlockSize: 256)
        return c
    }

    /// Quiet enough that the limiter never acts, so composition is exact.
    let riff = Signal.guitarRiff(seconds: 1.5, sampleRate: testRate).map { $0 * 0.2 }

    @Test func reorderingEqualsComposition() {
        let both = Render.through(chain([.overdrive, .delay]), riff)
        let composed = Render.through(chain([.delay]), Render.through(chain([.overdrive]), riff))
        #expect(Measure.peak(both) < 0.9, "the limiter must stay out of it")
        #expect(both == composed, "overdrive,delay = delay(overdrive(x))")

        let reversed = Render.through(chain([.delay, .overdrive]), riff)
        let reversedComposed = Render.through(chain([.overdrive]), Render.through(chain([.delay]), riff))
        #expect(reversed == reversedComposed, "delay,overdrive = overdrive(delay(x))")
        // And the order matters: the echoes of a driven signal are not driven echoes.
        let difference = zip(both, reversed).map { $0 - $1 }
        #expect(Measure.rms(difference) > 0.01 * Measure.rms(both))
    }

    @Test func anEmptyBoardPassesTheSignal() {
        let out = Render.through(chain([]), riff)
        #expect(out == riff)
    }

    @Test func pedalsOffTheBoardAreNotPlayed() {
        let c = chain([.overdrive])
        c.parameters.set(.delayEnabled, 1)  // on, but not on the board
        #expect(Render.through(c, riff) == Render.through(chain([.overdrive]), riff))
    }

    /// Rearranging while playing: the new order takes over within a few blocks, with a fade
    /// through the dry signal that never steps further than the signal itself does.
    @Test(arguments: [64, 256, 1024])
    func aNewOrderTakesOverWithoutAClick(block: Int) {
        let c = Chain(board: [.overdrive, .delay])
        for kind in c.board { c.parameters.set(kind.enabledParameter, 1) }
        c.parameters.set(.overdriveDrive, 0.8)
        c.parameters.set(.delayFeedback, 0)  // every echo from after the swap once 350 ms have passed
        c.prepare(sampleRate: testRate, maximumBlockSize: block)
        let x = Signal.sine(frequency: 220, seconds: 1).map { $0 * 0.3 }
        var y: [Float] = []
        var i = 0
        let switchAt = 24_000 / block * block
        while i < x.count {
            if i == switchAt { try! c.setBoard([.delay, .overdrive]) }
            y += Render.through(c, Array(x[i..<min(i + block, x.count)]))
            i += block
        }
        // Settled on the new order: the same as a chain that always had it, a second later.
        let fresh = Render.through(chain2([.delay, .overdrive], drive: 0.8, block: block), x)
        let tail = (x.count - 4800)..<x.count
        let error = zip(y[tail], fresh[tail]).map { abs($0 - $1) }.max()!
        let old = Render.through(chain2([.overdrive, .delay], drive: 0.8, block: block), x)
        let fromOld = zip(y[tail], old[tail]).map { abs($0 - $1) }.max()!
        // (What is left is the overdrive's slow filters remembering another past: −50 dB.)
        #expect(error < 2e-3 && fromOld > 50 * error, "block \(block): \(error) from the new order, \(fromOld) from the old")
        // No click: the largest step around the swap is within the steady signal's own.
        func largestStep(_ r: Range<Int>) -> Float { r.dropFirst().map { abs(y[$0] - y[$0 - 1]) }.max()! }
        let steady = max(largestStep(12_000..<20_000), largestStep((x.count - 8000)..<x.count))
        let around = largestStep((switchAt - 256)..<(switchAt + 2 * block + 1200))
        #expect(around <= 1.25 * steady, "block \(block): step \(around) against \(steady)")
        c.collectRetiredBoard()
    }

    func chain2(_ board: [PedalKind], drive: Float, block: Int) -> Chain {
        let c = Chain(board: board)
        for kind in board { c.parameters.set(kind.enabledParameter, 1) }
        c.parameters.set(.overdriveDrive, drive)
        c.parameters.set(.delayFeedback, 0)
        c.prepare(sampleRate: testRate, maximumBlockSize: block)
        return c
    }

    /// The Looper taken off the board and put back keeps its loop.
    @Test func aPedalPutBackKeepsItsState() {
        let c = Chain(board: PedalKind.builtIn)
        c.parameters.set(.looperEnabled, 1)
        c.prepare(sampleRate: testRate, maximumBlockSize: 256)
        let x = Signal.sine(frequency: 330, seconds: 0.5).map { $0 * 0.3 }
        c.controls.looper.send(.tap)
        _ = Render.through(c, x)
        c.controls.looper.send(.tap)
        _ = Render.through(c, [Float](repeating: 0, count: 2560))
        let length = c.controls.looper.length
        #expect(length > 20_000)
        try! c.setBoard(PedalKind.builtIn.filter { $0 != .looper })
        _ = Render.through(c, [Float](repeating: 0, count: 4800))
        c.collectRetiredBoard()
        try! c.setBoard(PedalKind.builtIn)
        let back = Render.through(c, [Float](repeating: 0, count: 9600))
        #expect(c.controls.looper.length == length)
        #expect(Measure.rms(Array(back[4800...])) > 0.05, "the loop plays again")
    }

    @Test func boardsAreParsedAndCheckedByName() throws {
        #expect(try PedalKind.board(parsing: "overdrive, delay") == [.overdrive, .delay])
        #expect(try PedalKind.board(parsing: "") == [])
        #expect(throws: PedalError.unknownPedal("fuzz")) { try PedalKind.board(parsing: "overdrive,fuzz") }
        #expect(throws: PedalError.duplicate("delay")) { try PedalKind.board(parsing: "delay,reverb,delay") }
        #expect(throws: PedalError.duplicate("eq")) { try Chain().setBoard([.eq, .eq]) }
        #expect(throws: PedalError.notOnBoard(pedal: "reverb", parameter: "reverb.mix")) {
            try PedalKind.check(.reverbMix, on: [.overdrive])
        }
        try PedalKind.check(.outputGain, on: [])
        #expect(PedalError.unknownPedal("fuzz").description.contains("overdrive, amp, neural, cab, eq"))
    }

    /// Every pedal is described once: its parameters are the table's, under its id, and the
    /// chain makes its DSP from the registry.
    @Test func theRegistryDescribesEveryPedal() {
        var ids = Set<String>()
        for kind in PedalKind.builtIn {
            #expect(ids.insert(kind.id).inserted)
            #expect(kind.parameterSpecs.allSatisfy { $0.pedal == kind.id && $0.id.hasPrefix("\(kind.id).") })
            #expect(kind.controls.count == kind.parameterSpecs.count - 1)
        }
        let pedalParameters = Parameter.table.filter { $0.pedal != nil }.count
        #expect(pedalParameters == PedalKind.builtIn.reduce(0) { $0 + $1.parameterSpecs.count })
        // The overdrive's 5.125 samples and the amp's 5.375 (every other pedal has none).
        #expect(PedalKind.overdrive.latency(testRate) == 5.125)
        #expect(PedalKind.amp.latency(testRate) == 5.375)
        #expect(Chain().latencySamples == 5.125 + 5.375)
    }

    /// A pedal that only delays its input by `samples` and reports that as its latency, as a
    /// plugin with lookahead does.
    final class Lag: AudioEffect {
        let samples: Int
        let values: PedalValues
        var line: [Float]
        init(_ samples: Int, _ values: PedalValues) {
            self.samples = samples
            self.values = values
            line = [Float](repeating: 0, count: samples)
        }
        func prepare(sampleRate: Double, maximumBlockSize: Int) { reset() }
        func reset() {
            line = [Float](repeating: 0, count: samples)
            values.latencyCell.pointee.store(Float(samples), ordering: .relaxed)
        }
        func process(_ block: UnsafeMutableBufferPointer<Float>) {
            for i in block.indices {
                line.append(block[i])
                block[i] = line.removeFirst()
            }
        }
    }

    /// While a pedal with latency switches, its dry path is as late as the pedal: switched on,
    /// the dry path glides to the pedal's delay, then the two cross. A pure delay switched on
    /// and off is then, through both fades, the input 7 samples late (where a fade against the
    /// undelayed input would comb-filter it), and off it adds no delay.
    @Test func theDryPathFollowsAPedalsLatencyWhileItSwitches() {
        let lag = PedalKind(id: "lag", name: "Lag", controls: [], plugin: PluginSource(uri: "urn:stompbox:test:lag")) { Lag(7, $0) }
        let c = Chain(board: [lag])
        c.prepare(sampleRate: testRate, maximumBlockSize: 128)
        let x = Signal.noise(length: 19_200, amplitude: 0.3)
        var y: [Float] = []
        let onAt = 30 * 128, offAt = 90 * 128, glide = 240, fade = 240
        for (k, start) in stride(from: 0, to: x.count, by: 128).enumerated() {
            if k == 30 { c.parameters.set(lag.enabledParameter, 1) }
            if k == 90 { c.parameters.set(lag.enabledParameter, 0) }
            y += Render.through(c, Array(x[start..<start + 128]))
        }
        #expect(c.latencySamples == 7)
        let late = [Float](repeating: 0, count: 7) + x.dropLast(7)
        func worst(_ range: Range<Int>, _ expected: [Float]) -> Float { range.map { abs(y[$0] - expected[$0]) }.max()! }
        // Off: the input itself, before and after.
        #expect(worst(0..<onAt, x) == 0)
        #expect(worst((offAt + fade + glide)..<x.count, x) == 0)
        // On, and through the crossfades both ways: the input 7 samples late.
        let aligned = worst((onAt + glide)..<(offAt + fade), late)
        #expect(aligned < 1e-6, "the output strays \(aligned) from the input 7 samples late")
        // The glides themselves are smooth (a delay moving by 7 samples in 5 ms): no step
        // larger than the noise's own.
        #expect(Measure.largestStep(Array(y[onAt..<(onAt + glide + 1)])) <= 1.05 * Measure.largestStep(x))
    }

    /// The overdrive (5.125 samples late) crossfading in at its clean setting: at 1 kHz the level
    /// moves from the dry signal's (0 dB) to the pedal's (−0.5 dB) and never dips below both
    /// (−0.38 dB at its lowest); against an undelayed dry signal, 38° away from the pedal's, it
    /// dipped to −0.93 dB in the middle of the fade.
    @Test func theOverdriveFadesInWithoutAPhaseDip() {
        let c = Chain(board: [.overdrive])
        c.parameters.set(.overdriveDrive, 0)
        c.parameters.set(.overdriveTone, 1)
        c.parameters.set(.overdriveLevel, 0)
        c.prepare(sampleRate: testRate, maximumBlockSize: 64)
        let x = Signal.sine(frequency: 1000, seconds: 0.2, amplitude: 0.01)
        var y: [Float] = []
        for (k, start) in stride(from: 0, to: x.count, by: 48).enumerated() {
            if k == 100 { c.parameters.set(.overdriveEnabled, 1) }
            y += Render.through(c, Array(x[start..<start + 48]))
        }
        // The level over each 1 ms (one period of 1 kHz) from before the fade to after it.
        func level(_ ms: Int) -> Double {
            let part = y[(ms * 48)..<(ms * 48 + 48)]
            return (part.reduce(0.0) { $0 + Double($1 * $1) } / 48).squareRoot()
        }
        let before = level(90), after = level(120)
        let lowest = (99...108).map(level).min()!
        print("overdrive fading in at 1 kHz: \(decibels(before / 0.01 * 2.squareRoot())) dB before, \(decibels(after / 0.01 * 2.squareRoot())) dB after, lowest \(decibels(lowest / 0.01 * 2.squareRoot())) dB")
        #expect(lowest > min(before, after) * 0.995, "the fade dips to \(decibels(lowest / min(before, after))) dB below the lower end")
    }
}

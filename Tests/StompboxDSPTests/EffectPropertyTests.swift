import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// Properties every pedal must have, checked for each one in `PedalKind.builtIn` and for a few
/// installed LV2 plugins as pedals (`TestPlugins`) through the real `Chain` (or, where noted,
/// the effect alone), so a pedal added to the table is covered without a new test.
@Suite struct EffectPropertyTests {
    static let block = 256

    /// Every built-in pedal, then the test plugins that are installed.
    static var everyKind: [PedalKind] { PedalKind.builtIn + TestPlugins.pedals }

    /// A prepared chain with only `kind` on (none when nil) and `settings` applied first, so
    /// nothing is ramping or crossfading when it starts. A plugin pedal (`on` it, or `off` it,
    /// for switching it later) stands after the built-in ones.
    func chain(_ kind: PedalKind?, _ settings: [Parameter: Float] = [:], off: PedalKind? = nil) -> Chain {
        TestCabinets.install()
        let plugins = [kind, off].compactMap { $0 }.filter { $0.plugin != nil }
        let c = Chain(controls: EngineControls(), board: PedalKind.builtIn + plugins)
        for plugin in plugins { c.parameters.set(plugin.enabledParameter, 0) }
        if let kind { c.parameters.set(kind.enabledParameter, 1) }
        for (p, v) in settings { c.parameters.set(p, v) }
        c.prepare(sampleRate: testRate, maximumBlockSize: EffectPropertyTests.block)
        return c
    }

    /// Renders `input` through `chain` in blocks, applying `changes[i]` just before sample i
    /// (i a multiple of the block size), as a UI would between audio callbacks.
    func render(_ chain: Chain, _ input: [Float], changes: [Int: [(Parameter, Float)]] = [:]) -> [Float] {
        var out = [Float]()
        out.reserveCapacity(input.count)
        var i = 0
        while i < input.count {
            for (p, v) in changes[i] ?? [] { chain.parameters.set(p, v) }
            let n = min(EffectPropertyTests.block, input.count - i)
            out += Render.through(chain, Array(input[i..<i + n]))
            i += n
        }
        return out
    }

    /// `x` with a 50 ms raised-cosine fade-in.
    func fadedIn(_ x: [Float]) -> [Float] {
        let n = 2400
        return x.enumerated().map { i, v in
            i >= n ? v : v * Float(0.5 - 0.5 * cos(Double.pi * Double(i) / Double(n)))
        }
    }

    /// Every continuous control of the built-in pedals, and the first three of each test plugin
    /// (each on a plugin pedal of its own: tests run in parallel, and a plugin pedal's values are its kind's).
    static let continuousControls: [(PedalKind, Parameter)] = PedalKind.builtIn.flatMap { kind in
        kind.controls.filter { !$0.spec.isDiscrete }.map { (kind, $0) }
    } + (0..<3).flatMap { i in
        TestPlugins.pedals.compactMap { kind in kind.controls.filter { !$0.spec.isDiscrete }.dropFirst(i).first.map { (kind, $0) } }
    }

    @Test(.enabled(if: TestPlugins.missing.isEmpty, "\(TestPlugins.missing)"))
    func theTestPluginsAreInstalled() {
        #expect(TestPlugins.pedals.count == TestPlugins.uris.count)
    }

    // MARK: NaN and Inf

    /// A second of noise with NaN and ±∞ over 64 samples at 0.2 s, the same noise with zeros
    /// there instead, and where they are.
    static func poisonedNoise() -> (x: [Float], clean: [Float], poisoned: Range<Int>) {
        var x = Signal.noise(length: 48_000, amplitude: 0.3)
        var clean = x
        let poisoned = 9600..<9664
        for i in poisoned {
            x[i] = [Float.nan, .infinity, -.infinity, .signalingNaN][i % 4]
            clean[i] = 0
        }
        return (x, clean, poisoned)
    }

    /// A slot whose pedal (the delay's switch) is on, prepared and settled.
    static func switchedOnSlot() -> (slot: PedalSlot, parameters: ParameterStore) {
        let p = ParameterStore()
        p.set(.delayEnabled, 1)
        var slot = PedalSlot(.delayEnabled)
        slot.prepare(sampleRate: testRate)
        slot.snap(p)
        return (slot, p)
    }

    @Test(arguments: everyKind)
    func nonFiniteInputNeverReachesTheOutputOfTheChain(_ kind: PedalKind) {
        let (x, clean, poisoned) = Self.poisonedNoise()
        let y = render(chain(kind), x)
        let reference = render(chain(kind), clean)
        let finite = Measure.allFinite(y)
        #expect(finite, "\(kind)")
        // 100 ms after the last bad sample the chain sounds as it would have anyway.
        let later = (poisoned.upperBound + 4800)...
        let difference = zip(y[later], reference[later]).map { $0 - $1 }
        #expect(Measure.rms(difference) <= 1e-3 * Measure.rms(reference[later]), "\(kind)")
        // (A plugin at its defaults may be quiet, as Guitarix's TS9 is: then half its own level.)
        #expect(Measure.rms(y[later]) > min(0.05, 0.5 * Measure.rms(reference[later])), "\(kind) went silent")
    }

    /// On a stereo board, after a pedal that makes the sides differ (a ping-pong delay; for the
    /// delay itself, the reverb): a stereo pedal gets two different sides, a built-in mono one
    /// runs per side. Non-finite input reaches neither side, both recover, and silence ends in
    /// silence.
    @Test(arguments: everyKind)
    func onAStereoBoardNothingNonFiniteGetsOutAndSilenceEndsInSilence(_ kind: PedalKind) {
        TestCabinets.install()
        let widener: PedalKind = kind == .delay ? .reverb : .delay
        func stereoChain() -> Chain {
            let c = Chain(controls: EngineControls(), board: [widener, kind])
            c.parameters.set(widener.enabledParameter, 1)
            c.parameters.set(kind.enabledParameter, 1)
            c.parameters.set(.delayPingPong, 1)
            c.parameters.set(.delayTime, 30)
            c.prepare(sampleRate: testRate, maximumBlockSize: EffectPropertyTests.block)
            return c
        }
        let (x, clean, poisoned) = Self.poisonedNoise()
        let c = stereoChain()
        let y = Render.stereo(c, x, block: EffectPropertyTests.block)
        let reference = Render.stereo(stereoChain(), clean, block: EffectPropertyTests.block)
        #expect(Measure.allFinite(y.left) && Measure.allFinite(y.right), "\(kind)")
        // A mono plugin (no twin: its state is its own) plays the middle of the sides on both;
        // everything else keeps them apart.
        if kind.values != nil && !StereoPlan.makesStereo(c.effect(kind)) {
            #expect(y.left == y.right, "\(kind)")
        } else {
            #expect(y.left != y.right, "\(kind): the sides are the same")
        }
        let later = (poisoned.upperBound + 4800)...
        for (side, expected) in [(y.left, reference.left), (y.right, reference.right)] {
            let difference = zip(side[later], expected[later]).map { $0 - $1 }
            #expect(Measure.rms(difference) <= 1e-3 * Measure.rms(expected[later]), "\(kind)")
        }
        let tail = Render.stereo(c, Signal.silence(10 * 48_000), block: EffectPropertyTests.block)
        let last = (9 * 48_000)...
        #expect(Measure.peak(tail.left[last]) < 1e-6 && Measure.peak(tail.right[last]) < 1e-6, "\(kind) hums after 9 s")
    }

    /// Built-in pedals only: a plugin's own code is not ours to hold to this; for plugin pedals
    /// the chain's guard (its slot resets a pedal whose output is not finite) is what counts
    /// (LV2PedalPropertyTests.recoversFromNaN).
    @Test(arguments: PedalKind.builtIn)
    func nonFiniteInputNeverReachesTheOutputOfTheEffectAlone(_ kind: PedalKind) {
        // The effect without the chain's guards: it must neither pass NaN on nor stay broken.
        let make = { () -> AudioEffect in
            let c = Chain(controls: EngineControls())
            c.prepare(sampleRate: testRate, maximumBlockSize: 512)
            return c.effect(kind)
        }
        let effect = make()
        var x = Signal.noise(length: 48_000, amplitude: 0.3)
        for i in 9600..<9610 { x[i] = i.isMultiple(of: 2) ? .nan : .infinity }
        let y = Render.through(effect, x)
        let finite = Measure.allFinite(y)
        #expect(finite, "\(kind) let a non-finite value out")
        let later = (9610 + 4800)...
        let reference = Render.through(make(), x.map { $0.isFinite ? $0 : 0 })
        let ratio = Double(Measure.rms(y[later]) / Measure.rms(reference[later]))
        #expect(ratio.isFinite && abs(decibels(ratio)) < 6, "\(kind): level \(decibels(ratio)) dB from normal 100 ms later")
    }

    /// The pedals that clear no memory on bad input (they read it as silence) match a fresh
    /// instance exactly once the bad samples have passed through.
    @Test(arguments: [PedalKind.overdrive, .eq, .flanger, .tremolo])
    func sanitisingEffectsMatchAFreshInstanceAfterNaN(_ kind: PedalKind) {
        let settings: [Parameter: Float] = [.eqBand2: 6, .eqBand5: -4]
        func make() -> AudioEffect {
            let c = chain(nil, settings)
            return c.effect(kind)
        }
        var x = Signal.noise(length: 24_000, amplitude: 0.3)
        var clean = x
        for i in 4800..<4810 { x[i] = .nan; clean[i] = 0 }
        let y = Render.through(make(), x)
        let reference = Render.through(make(), clean)
        let later = (4810 + 4800)...
        let error = zip(y[later], reference[later]).map { abs($0 - $1) }.max()!
        #expect(error < 1e-4, "\(kind): \(error)")
    }

    @Test func pedalSlotResetsAnEffectThatFailsAndPassesTheDrySignal() {
        final class Failing: AudioEffect {
            var resets = 0
            func prepare(sampleRate: Double, maximumBlockSize: Int) {}
            func reset() { resets += 1 }
            func process(_ block: UnsafeMutableBufferPointer<Float>) { block[3] = .nan }
        }
        var (slot, p) = Self.switchedOnSlot()
        let effect = Failing()
        let dry = UnsafeMutableBufferPointer<Float>.allocate(capacity: 64)
        defer { dry.deallocate() }
        var x = Signal.sine(frequency: 440, seconds: 64 / testRate)
        let input = x
        x.withUnsafeMutableBufferPointer { slot.run(effect, $0, dry: dry, parameters: p) }
        let unchanged = x == input
        #expect(unchanged)
        #expect(effect.resets == 1)
    }

    // MARK: Silence

    @Test(arguments: everyKind)
    func silenceInGivesSilenceOutOnceTheTailHasDied(_ kind: PedalKind) {
        let c = chain(kind)
        // From the start: nothing comes out of nothing.
        #expect(Measure.peak(render(c, Signal.silence(24_000))) < 1e-6, "\(kind) hums")
        _ = render(c, Signal.noise(length: 24_000, amplitude: 0.5))
        let tail = render(c, Signal.silence(10 * 48_000))
        let last = tail[(9 * 48_000)...]
        #expect(Measure.peak(last) < 1e-6, "\(kind): \(gainToDecibels(Measure.peak(last))) dBFS after 9 s")
    }

    // MARK: Knob jumps

    /// The largest second difference |x[n] − 2x[n−1] + x[n−2]|: a high-pass that barely sees a
    /// low note but shows any corner or step in the waveform.
    static func largestBend(_ x: ArraySlice<Float>) -> Float {
        var m: Float = 0
        var i = x.startIndex + 2
        while i < x.endIndex {
            m = max(m, abs(x[i] - 2 * x[i - 1] + x[i - 2]))
            i += 1
        }
        return m
    }

    /// A measure of clicks (largest step or bend): steady before a jump, in the 250 ms after it,
    /// steady after.
    func aroundJump(_ y: [Float], at jump: Int, _ measure: (ArraySlice<Float>) -> Float)
        -> (before: Float, during: Float, after: Float) {
        let quarter = 12_000
        return (measure(y[(jump - quarter)..<jump]),
                measure(y[(jump - 2)..<(jump + quarter)]),
                measure(y[(jump + quarter)..<(jump + 2 * quarter)]))
    }

    @Test(arguments: continuousControls)
    func turningAKnobFromEndToEndAtOnceDoesNotClick(_ kind: PedalKind, _ control: Parameter) {
        let s = control.spec
        let c = chain(kind, [control: s.minimum])
        // A low note with an overtone, quiet enough that the limiter stays out of the way, faded
        // in so that its own onset (and that onset's echoes) makes no corner to mistake for a click.
        let x = fadedIn(zip(Signal.sine(frequency: 110, seconds: 1.6, amplitude: 0.08),
                            Signal.sine(frequency: 330, seconds: 1.6, amplitude: 0.02)).map { $0 + $1 })
        let up = 24_064, down = 48_128 // multiples of the block size
        let y = render(c, x, changes: [up: [(control, s.maximum)], down: [(control, s.minimum)]])
        let finite = Measure.allFinite(y)
        #expect(finite)
        for (jump, name) in [(up, "min→max"), (down, "max→min")] {
            let steps = aroundJump(y, at: jump) { Measure.largestStep(Array($0)) }
            #expect(steps.during <= 2 * max(steps.before, steps.after) + 0.002,
                    "\(s.id) \(name): step \(steps.during) after the jump, steady \(steps.before) / \(steps.after)")
            let bends = aroundJump(y, at: jump, EffectPropertyTests.largestBend)
            print("knob \(s.id) \(name): step \(steps.during) vs \(steps.before)/\(steps.after); bend \(bends.during) vs \(bends.before)/\(bends.after)")
            #expect(bends.during <= 3 * max(bends.before, bends.after) + 2e-4,
                    "\(s.id) \(name): bend \(bends.during) after the jump, steady \(bends.before) / \(bends.after)")
        }
    }

    // MARK: Bypass

    @Test(arguments: everyKind)
    func switchingOnAndOffCrossfadesWithin10msWithoutAClick(_ kind: PedalKind) {
        let x = fadedIn(zip(Signal.sine(frequency: 110, seconds: 1.2, amplitude: 0.1),
                            Signal.sine(frequency: 440, seconds: 1.2, amplitude: 0.03)).map { $0 + $1 })
        let on = 19_200, off = 43_008 // multiples of the block size
        let fade = 480 // 10 ms
        // (With its trails switch off: switched off with trails on, a delay or reverb rings out; `TrailsTests`.)
        let trailsOff = kind.trailsParameter.map { [$0: Float(0)] } ?? [:]
        let y = render(chain(nil, trailsOff, off: kind), x, changes: [on: [(kind.enabledParameter, 1)], off: [(kind.enabledParameter, 0)]])
        // From 10 ms after switching on, the output is the pedal's: what a chain that had it on
        // (and freshly cleared, as switching on clears it) makes of the same input.
        let fresh = render(chain(kind, trailsOff), Array(x[on...]))
        let onError = zip(y[(on + fade)..<off], fresh[fade..<(off - on)]).map { abs($0 - $1) }.max()!
        #expect(onError < 1e-5, "\(kind): \(onError) from the pedal's own output 10 ms after switching on")
        // From 10 ms after switching off, the output is the input, untouched.
        let offError = zip(y[(off + fade)...], x[(off + fade)...]).map { abs($0 - $1) }.max()!
        #expect(offError == 0, "\(kind) still audible 10 ms after switching off: \(offError)")
        // No click either way: no step beyond those of the signals being crossfaded.
        let wet = Measure.largestStep(Array(fresh[fade..<(off - on)]))
        let dry = Measure.largestStep(Array(x[..<on]))
        for edge in [on, off] {
            let step = Measure.largestStep(Array(y[(edge - 1)..<(edge + 2 * fade)]))
            #expect(step <= 1.5 * max(wet, dry) + 0.002, "\(kind): step \(step) at switch, signals \(dry) / \(wet)")
        }
    }

    // MARK: Limiter

    /// The pedals whose sound does not depend on how the host cuts the signal into blocks (no
    /// control-rate modulation): the same output, to rounding, for blocks of 256 and for pieces
    /// of 1 to 256 samples across every boundary of their own four- and eight-sample groups and
    /// the cabinet's 128-sample partitions.
    @Test(arguments: [PedalKind.gate, .overdrive, .amp, .cab, .eq])
    func theOutputDoesNotDependOnTheBlockSizes(_ kind: PedalKind) {
        let input = Signal.guitarRiff(seconds: 1, sampleRate: testRate)
        let settings: [Parameter: Float] = [.overdriveDrive: 1, .overdriveTone: 0.3, .ampGain: 0.8, .ampModel: 2,
                                            .ampBass: 0.8, .ampTreble: 0.3]
            .merging(zip(Parameter.eqBands, [6, -4, 3, -6, 5, -3] as [Float]), uniquingKeysWith: { $1 })
        let whole = render(chain(kind, settings), input)
        let c = chain(kind, settings)
        var pieces = [Float]()
        let sizes = [1, 3, 7, 64, 128, 33, 256, 5, 130, 2]
        var i = 0, k = 0
        while i < input.count {
            let n = min(sizes[k % sizes.count], input.count - i)
            pieces += Render.through(c, Array(input[i..<i + n]))
            i += n
            k += 1
        }
        let peak = Measure.peak(whole)
        let worst = zip(whole, pieces).map { abs($0 - $1) }.max()!
        // (Rounding differs with the grouping; the lead amp's +40 dB lifts 1e-7 to 3e-5 of the peak.
        // A state carried wrongly between pieces is an error the size of the signal.)
        print("\(kind.id) in pieces: largest difference \(worst) (peak \(peak))")
        #expect(peak > 0.01 && worst <= 1e-4 * peak, "\(kind.id): largest difference \(worst) (peak \(peak))")
    }

    @Test(arguments: [true, false])
    func loudInputWithEverythingOnAtExtremesStaysWithinOne(_ atMaximum: Bool) {
        var settings: [Parameter: Float] = [:]
        for p in Parameter.allCases {
            let s = p.spec
            settings[p] = s.isToggle ? 1 : (atMaximum ? s.maximum : s.minimum)
        }
        settings[.inputGain] = 24
        settings[.outputGain] = 12
        let c = chain(nil, settings)
        let x = Signal.guitarRiff(seconds: 2).map { $0 * 4 } + Signal.noise(length: 48_000, amplitude: 2)
        let y = render(c, x)
        let finite = Measure.allFinite(y)
        #expect(finite)
        #expect(Measure.peak(y) <= 1.0, "peak \(Measure.peak(y))")
    }
}

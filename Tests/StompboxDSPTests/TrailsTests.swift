import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// Trails: switched off with its trails switch on (the default), a delay or reverb stops taking
/// in the input but lets its echoes or tail ring out, instead of fading them within 5 ms.
@Suite struct TrailsTests {
    static let kinds = PedalKind.builtIn.filter { $0.trailsParameter != nil }
    static let block = 128

    func chain(_ kind: PedalKind, trails: Bool, _ settings: [Parameter: Float] = [:]) -> Chain {
        let c = Chain(board: [kind])
        c.parameters.set(kind.enabledParameter, 1)
        c.parameters.set(kind.trailsParameter!, trails ? 1 : 0)
        for (p, v) in settings { c.parameters.set(p, v) }
        c.prepare(sampleRate: testRate, maximumBlockSize: TrailsTests.block)
        return c
    }

    /// Renders in blocks, calling `change` before the block that starts at each key.
    func render(_ c: Chain, _ x: [Float], _ changes: [Int: () -> Void] = [:]) -> [Float] {
        var y: [Float] = []
        for start in stride(from: 0, to: x.count, by: TrailsTests.block) {
            changes[start]?()
            y += Render.through(c, Array(x[start..<min(start + TrailsTests.block, x.count)]))
        }
        return y
    }

    @Test func theDelayAndTheReverbHaveTrailsOnByDefault() {
        #expect(Self.kinds.map(\.id) == ["delay", "reverb"])
        for kind in Self.kinds { #expect(kind.trailsParameter!.spec.defaultValue == 1 && kind.trailsParameter!.spec.scale == .toggle) }
        #expect(Parameter.delayTrails.id == "delay.trails" && Parameter.reverbTrails.id == "reverb.trails")
    }

    /// A burst, then silence; the pedal switched off in the silence. With trails the output
    /// after the switch is exactly what the pedal left on makes of the silence (its echoes or
    /// tail); without, it is silent within 5 ms.
    @Test(arguments: kinds)
    func switchedOffItsEchoesRingOut(_ kind: PedalKind) {
        let settings: [Parameter: Float] = [.delayTime: 200, .delayFeedback: 0.6, .delayMix: 0.5, .reverbSize: 0.7, .reverbMix: 0.5]
        let x = Signal.noise(length: 4_800, amplitude: 0.3) + Signal.silence(96_000 - 4_800)
        let off = 9_600
        let left = render(chain(kind, trails: true, settings), x)
        let c = chain(kind, trails: true, settings)
        let y = render(c, x, [off: { c.parameters.set(kind.enabledParameter, 0) }])
        let worst = zip(y[off...], left[off...]).map { abs($0 - $1) }.max()!
        #expect(worst < 1e-6, "\(kind): the tail strays \(worst) from the pedal left on")
        let ringing = Measure.rms(Array(y[(off + 4_800)..<(off + 24_000)]))
        #expect(ringing > 1e-3, "\(kind): the tail rings on after switching off (rms \(ringing))")

        let cut = chain(kind, trails: false, settings)
        let z = render(cut, x, [off: { cut.parameters.set(kind.enabledParameter, 0) }])
        #expect(Measure.peak(Array(z[(off + 240)...])) == 0, "\(kind): without trails it is cut within 5 ms")
        print("\(kind) switched off: tail rms \(ringing) with trails, peak \(Measure.peak(Array(z[(off + 240)...]))) without")
    }

    /// What is played after the switch goes straight through: no echo of it, only the old tail.
    @Test(arguments: kinds)
    func whatIsPlayedAfterwardsIsNotEchoed(_ kind: PedalKind) {
        let settings: [Parameter: Float] = [.delayTime: 200, .delayFeedback: 0.5, .delayMix: 0.5, .reverbSize: 0.6, .reverbMix: 0.5]
        let note = Signal.sine(frequency: 330, seconds: 0.1, amplitude: 0.3)
        // A note, the switch at 0.2 s, another note at 0.5 s; the pedal's tail of the first alone
        // is what the pedal makes of the first note with silence after it.
        var x = note + Signal.silence(Int(testRate) * 3 - note.count)
        let second = Int(testRate * 0.5)
        let off = 9_600
        let firstOnly = render(chain(kind, trails: true, settings), x)
        for i in 0..<note.count { x[second + i] += note[i] }
        let c = chain(kind, trails: true, settings)
        let y = render(c, x, [off: { c.parameters.set(kind.enabledParameter, 0) }])
        // From 5 ms after the switch: the input plus the first note's tail, nothing more.
        var worst: Float = 0
        for i in (off + 240)..<x.count {
            let tailOfFirst = firstOnly[i] - (i < note.count ? note[i] : 0)
            worst = max(worst, abs(y[i] - (x[i] + tailOfFirst)))
        }
        #expect(worst < 1e-5, "\(kind): the second note is echoed or the tail changed (\(worst))")
    }

    /// Switched back on while ringing out: it plays on as if it had never been off (the tail is
    /// not cleared), within 5 ms of the switch, and without a click.
    @Test(arguments: kinds)
    func switchedBackOnWhileRingingItPlaysOn(_ kind: PedalKind) {
        let x = Signal.noise(length: 4_800, amplitude: 0.3) + Signal.silence(24_000 - 4_800)
        let off = 6_400, on = 12_800
        let left = render(chain(kind, trails: true), x)
        let c = chain(kind, trails: true)
        let y = render(c, x, [off: { c.parameters.set(kind.enabledParameter, 0) },
                              on: { c.parameters.set(kind.enabledParameter, 1) }])
        // Silence went in all along after the burst, so nothing differs at all.
        let worst = zip(y, left).map { abs($0 - $1) }.max()!
        #expect(worst < 1e-6, "\(kind): \(worst)")
        // And with a signal playing through the switches: no step beyond the signal's own.
        let tone = Signal.sine(frequency: 220, seconds: 0.5, amplitude: 0.2)
        let d = chain(kind, trails: true)
        let z = render(d, tone, [6_400: { d.parameters.set(kind.enabledParameter, 0) },
                                 12_800: { d.parameters.set(kind.enabledParameter, 1) }])
        let steady = Measure.largestStep(Array(render(chain(kind, trails: true), tone)[4_800...]))
        for edge in [6_400, 12_800] {
            let step = Measure.largestStep(Array(z[(edge - 1)..<(edge + 480)]))
            #expect(step <= 1.5 * max(steady, Measure.largestStep(tone)) + 0.002, "\(kind): step \(step) at \(edge)")
        }
    }

    /// Once the tail has died away the pedal is bypassed again: the output is the input to the bit.
    @Test func aTailThatHasDiedAwayLeavesThePedalBypassed() {
        let c = chain(.delay, trails: true, [.delayTime: 100, .delayFeedback: 0.3])
        let burst = Signal.noise(length: 2_400, amplitude: 0.3)
        _ = render(c, burst)
        c.parameters.set(.delayEnabled, 0)
        // 0.3 per echo falls below −100 dBFS after 10 echoes (1 s); 2.5 s more and it is let go.
        _ = render(c, Signal.silence(Int(testRate) * 4))
        let x = Signal.noise(length: 9_600, amplitude: 0.3, seed: 9)
        #expect(render(c, x) == x)
    }
}

import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// The board's stereo output (`Chain.process(left:right:)`): mono until the first stereo pedal
/// that plays, then two sides; the reverb's sides decorrelated, the delay's ping-pong, the
/// flanger's spread, mono pedals after a stereo one run per side, the limiter linked.
@Suite struct StereoTests {
    static let block = 256

    /// A prepared chain of `board` with `on` switched on and `settings` applied.
    func chain(_ board: [PedalKind], on: [PedalKind], _ settings: [Parameter: Float] = [:]) -> Chain {
        let c = Chain(controls: EngineControls(), board: board)
        for kind in board { c.parameters.set(kind.enabledParameter, on.contains(kind) ? 1 : 0) }
        for (p, v) in settings { c.parameters.set(p, v) }
        c.prepare(sampleRate: testRate, maximumBlockSize: StereoTests.block)
        return c
    }

    /// The mono output of the same chain, in the same blocks.
    func mono(_ board: [PedalKind], on: [PedalKind], _ settings: [Parameter: Float] = [:], _ input: [Float]) -> [Float] {
        let c = chain(board, on: on, settings)
        var out: [Float] = []
        var i = 0
        while i < input.count {
            let n = min(StereoTests.block, input.count - i)
            out += Render.through(c, Array(input[i..<i + n]))
            i += n
        }
        return out
    }

    func guitar(_ seconds: Double = 1) -> [Float] {
        let n = Int(seconds * testRate)
        let noise = Signal.noise(length: n, amplitude: 0.05)
        return zip(Signal.sine(frequency: 196, seconds: seconds, amplitude: 0.2), noise).map { $0 + $1 }
    }

    /// Pearson correlation of two equally long stretches.
    func correlation(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
        let x = a.map(Double.init), y = b.map(Double.init)
        let mx = x.reduce(0, +) / Double(x.count), my = y.reduce(0, +) / Double(y.count)
        var sxy = 0.0, sxx = 0.0, syy = 0.0
        for (u, v) in zip(x, y) {
            sxy += (u - mx) * (v - my)
            sxx += (u - mx) * (u - mx)
            syy += (v - my) * (v - my)
        }
        return sxy / (sxx * syy).squareRoot()
    }

    @Test("without a stereo pedal playing, both sides are the mono output, sample for sample")
    func monoPedalsGiveTwoEqualSides() {
        let board: [PedalKind] = [.overdrive, .eq, .flanger, .tremolo, .delay, .reverb]
        let settings: [Parameter: Float] = [.eqBand2: 4, .eqBand5: -3]
        let input = guitar()
        let (left, right) = Render.stereo(chain(board, on: [.overdrive, .eq, .tremolo], settings), input, block: StereoTests.block)
        #expect(left == mono(board, on: [.overdrive, .eq, .tremolo], settings, input))
        #expect(right == left)
    }

    @Test("the reverb's sides are decorrelated: a burst's tails correlate below 0.2, within 1.5 dB of each other, each within 2 dB of the mono reverb")
    func reverbSidesAreDecorrelated() {
        let board: [PedalKind] = [.reverb]
        let settings: [Parameter: Float] = [.reverbMix: 1, .reverbSize: 0.6]
        let input = Signal.noise(length: 4_800, amplitude: 0.3) + Signal.silence(Int(1.9 * testRate))
        let (left, right) = Render.stereo(chain(board, on: board, settings), input)
        let tail = Int(0.3 * testRate)..<Int(1.9 * testRate)
        let rho = correlation(left[tail], right[tail])
        #expect(abs(rho) < 0.2, "left/right correlation \(rho)")
        let balance = gainToDecibels(Measure.rms(left[tail]) / Measure.rms(right[tail]))
        #expect(abs(balance) < 1.5, "left is \(balance) dB against right")
        // The wet sound alone (the dry burst is the same on both sides and in mono).
        let monoWet = zip(mono(board, on: board, settings, input), input).map { $0 - $1 }
        for (name, side) in [("left", left), ("right", right)] {
            let level = gainToDecibels(Measure.rms(zip(side, input).map { $0 - $1 }) / Measure.rms(monoWet))
            #expect(abs(level) < 2, "the \(name) side is \(level) dB against the mono reverb")
        }
    }

    @Test("ping-pong: echo k sounds on the left for odd k and on the right for even k, each `feedback` times the one before; off, both sides echo alike")
    func pingPongAlternates() {
        let board: [PedalKind] = [.delay]
        var settings: [Parameter: Float] = [.delayTime: 100, .delayFeedback: 0.5, .delayMix: 1, .delayPingPong: 1]
        var impulse = Signal.silence(Int(0.45 * testRate))
        impulse[0] = 0.5
        let (left, right) = Render.stereo(chain(board, on: board, settings), impulse)
        #expect(left[0] == 0.5 && right[0] == 0.5, "the dry impulse on both sides")
        let d = 4_800
        for k in 1...4 {
            let expected = 0.5 * pow(0.5, Float(k - 1))
            let (sounding, quiet) = k % 2 == 1 ? (left, right) : (right, left)
            #expect(abs(sounding[k * d] - expected) < 1e-6, "echo \(k): \(sounding[k * d]), expected \(expected)")
            #expect(quiet[k * d] == 0, "echo \(k) on the other side too: \(quiet[k * d])")
        }
        // Nothing between the echoes.
        let elsewhere = (1..<impulse.count).filter { $0 % d != 0 }
        #expect(elsewhere.allSatisfy { left[$0] == 0 && right[$0] == 0 })

        settings[.delayPingPong] = 0
        let (l2, r2) = Render.stereo(chain(board, on: board, settings), impulse)
        #expect(l2 == r2)
        #expect(abs(l2[d] - 0.5) < 1e-6 && abs(l2[2 * d] - 0.25) < 1e-6)
    }

    @Test("the flanger's spread moves the right side's sweep away from the left's; at 0 the sides are equal, and the left is always the mono output")
    func flangerSpread() {
        let board: [PedalKind] = [.flanger]
        // Two whole sweeps: each side passes through every delay of the sweep once.
        let input = guitar(2)
        let (same, sameRight) = Render.stereo(chain(board, on: board, [.flangerSpread: 0]), input)
        #expect(same == sameRight)
        let settings: [Parameter: Float] = [.flangerSpread: 1, .flangerRate: 1]
        let (left, right) = Render.stereo(chain(board, on: board, settings), input)
        #expect(left == mono(board, on: board, settings, input))
        let difference = zip(left, right).map { $0 - $1 }
        #expect(Measure.rms(difference) > 0.02, "the sides differ by \(Measure.rms(difference)) rms")
        // Half a cycle apart: the right side's delay is long where the left's is short, so their
        // combs differ; both still carry the guitar at the same level.
        let balance = gainToDecibels(Measure.rms(left) / Measure.rms(right))
        #expect(abs(balance) < 1, "left is \(balance) dB against right")
    }

    @Test("a mono pedal after a stereo one runs once per side, as if each side went through a pedal of its own")
    func monoPedalAfterStereoRunsPerSide() {
        let input = Signal.noise(length: 4_800, amplitude: 0.2) + Signal.silence(24_000)
        let reverbSettings: [Parameter: Float] = [.reverbMix: 0.8]
        let eqSettings: [Parameter: Float] = [.eqBand1: 6, .eqBand4: -4]
        let (l1, r1) = Render.stereo(chain([.reverb], on: [.reverb], reverbSettings), input)
        let expectedLeft = mono([.eq], on: [.eq], eqSettings, l1)
        let expectedRight = mono([.eq], on: [.eq], eqSettings, r1)
        let (left, right) = Render.stereo(chain([.reverb, .eq], on: [.reverb, .eq], reverbSettings.merging(eqSettings) { $1 }), input)
        #expect(firstDifference(left[...], expectedLeft[...], tolerance: 1e-6) == nil)
        #expect(firstDifference(right[...], expectedRight[...], tolerance: 1e-6) == nil)
        #expect(left != right)
    }

    @Test("twins only where needed: on the default board every pedal after the flanger takes both sides itself (no second Looper or Tremolo) and the EQ after the cabinet gets one (for a stereo file), while an EQ or an overdrive moved after the delay gets one")
    func twinsOnlyForMonoPedalsAfterAStereoOne() {
        let controls = EngineControls()
        func twinned(_ board: [PedalKind]) -> [String] {
            let effects = board.map { $0.makeEffect(controls) }
            return zip(board, Chain.makeTwins(board, effects, controls: controls, kept: [:]).list).compactMap { $1 == nil ? nil : $0.id }
        }
        #expect(twinned(PedalKind.builtIn) == ["eq"])
        #expect(twinned([.overdrive, .eq, .flanger, .tremolo, .delay, .reverb, .looper]) == [])
        #expect(twinned([.gate, .delay, .tremolo, .eq, .overdrive, .looper, .cab]) == ["eq", "overdrive"])
    }

    @Test("the limiter holds both sides with one gain: a loud left ducks the quiet right by as much")
    func limiterIsLinked() {
        var limiter = SafetyLimiter()
        limiter.prepare(sampleRate: testRate)
        var left = [Float](repeating: 1.96, count: 64), right = [Float](repeating: 0.5, count: 64)
        left.withUnsafeMutableBufferPointer { l in right.withUnsafeMutableBufferPointer { r in _ = limiter.process(l, r) } }
        #expect(left.allSatisfy { abs($0 - 0.98) < 1e-6 })
        #expect(right.allSatisfy { abs($0 - 0.25) < 1e-6 })
    }

    @Test("the Looper on a stereo board records the middle of the sides and plays it on both; each side's own signal passes")
    func looperInStereo() {
        let controls = EngineControls()
        let looper = Looper(parameters: controls.parameters, control: controls.looper)
        looper.prepare(sampleRate: testRate, maximumBlockSize: StereoTests.block)
        let n = Int(testRate)
        let a = Signal.sine(frequency: 440, seconds: 1, amplitude: 0.3), b = Signal.sine(frequency: 660, seconds: 1, amplitude: 0.2)
        func run(_ l: [Float], _ r: [Float]) -> ([Float], [Float]) {
            var left = l, right = r
            left.withUnsafeMutableBufferPointer { lp in
                right.withUnsafeMutableBufferPointer { rp in
                    var start = 0
                    while start < lp.count {
                        let k = min(StereoTests.block, lp.count - start)
                        looper.process(left: UnsafeMutableBufferPointer(rebasing: lp[start..<start + k]),
                                       right: UnsafeMutableBufferPointer(rebasing: rp[start..<start + k]))
                        start += k
                    }
                }
            }
            return (left, right)
        }
        controls.looper.send(.tap)
        let (recordedLeft, recordedRight) = run(a, b)
        #expect(recordedLeft == a && recordedRight == b, "recording passes each side through")
        controls.looper.send(.tap)
        // Playing over silence: the loop, the same on both sides, at the middle's level.
        let silence = Signal.silence(n)
        let (left, right) = run(silence, silence)
        #expect(left == right)
        let middle = zip(a, b).map { 0.5 * ($0 + $1) }
        let steady = Int(0.1 * testRate)..<Int(0.9 * testRate)
        #expect(firstDifference(left[steady], middle[steady], tolerance: 1e-6) == nil)
        // Playing over a signal: each side's own on top of the loop.
        let (l2, r2) = run(a, b)
        #expect(firstDifference(l2[steady], zip(a, middle).map { $0 + $1 }[steady], tolerance: 1e-6) == nil)
        #expect(firstDifference(r2[steady], zip(b, middle).map { $0 + $1 }[steady], tolerance: 1e-6) == nil)
    }

    @Test("a stereo pedal that fails is reset and both sides carry the dry signal for that block")
    func failingStereoPedalPassesBothSidesDry() {
        final class Failing: StereoEffect {
            var resets = 0
            func prepare(sampleRate: Double, maximumBlockSize: Int) {}
            func reset() { resets += 1 }
            func process(_ block: UnsafeMutableBufferPointer<Float>) {}
            func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {
                for i in left.indices { left[i] *= 2; right[i] = -right[i] }
                right[3] = .nan
            }
        }
        var (slot, p) = EffectPropertyTests.switchedOnSlot()
        let effect = Failing()
        let dry = UnsafeMutableBufferPointer<Float>.allocate(capacity: 64), dryRight = UnsafeMutableBufferPointer<Float>.allocate(capacity: 64)
        defer { dry.deallocate(); dryRight.deallocate() }
        var left = Signal.sine(frequency: 440, seconds: 64 / testRate)
        var right = Signal.sine(frequency: 660, seconds: 64 / testRate)
        let (inLeft, inRight) = (left, right)
        left.withUnsafeMutableBufferPointer { l in
            right.withUnsafeMutableBufferPointer { r in
                slot.run(effect, StereoPlan(stereo: effect, twin: nil, makesStereo: true), l, r, dry: dry, dryRight: dryRight, parameters: p)
            }
        }
        #expect(left == inLeft && right == inRight)
        #expect(effect.resets == 1)
    }
}

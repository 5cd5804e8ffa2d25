import Testing
@testable import StompboxDSP
import StompboxTestSupport

@Suite struct ReverbTests {
    static let rate = 48_000.0

    /// A reverb at the given knobs, prepared and reset.
    static func make(size: Float, damping: Float = 0, mix: Float = 1, rate: Double = rate) -> Reverb {
        let p = ParameterStore()
        p[.reverbSize] = size
        p[.reverbDamping] = damping
        p[.reverbMix] = mix
        let r = Reverb(parameters: p)
        r.prepare(sampleRate: rate, maximumBlockSize: 256)
        return r
    }

    /// The wet impulse response (output minus the dry impulse).
    static func impulseResponse(size: Float, damping: Float = 0, seconds: Double, rate: Double = rate) -> [Float] {
        let r = make(size: size, damping: damping, mix: 1, rate: rate)
        var ir = Render.through(r, Signal.impulse(length: Int(seconds * rate)), block: 256)
        ir[0] -= 1
        return ir
    }

    /// The network runs sixteen steps at a time; a block of any length ends in a partial
    /// group, and the lines wrap at any point of one. Blocks of 1, 37 and 250 samples give the
    /// reverb that blocks of 128 give, mono and stereo, to within what the modulation's glide
    /// (one straight line per block) changes: a wrong carry, write or wrap would differ by far
    /// more than 5e-4 of the peak.
    @Test(arguments: [1, 37, 250])
    func anyBlockLengthGivesTheSameReverb(_ block: Int) {
        let input = Signal.noise(length: 24_000, amplitude: 0.5, seed: 3) + [Float](repeating: 0, count: 24_000)
        func rendered(_ length: Int, stereo: Bool) -> [Float] {
            let r = Self.make(size: 0.8, damping: 0.3, mix: 1)
            var left = input, right = input.map { -0.5 * $0 }
            left.withUnsafeMutableBufferPointer { l in
                right.withUnsafeMutableBufferPointer { rr in
                    var start = 0
                    while start < l.count {
                        let n = min(length, l.count - start)
                        let a = UnsafeMutableBufferPointer(rebasing: l[start..<start + n])
                        if stereo {
                            r.process(left: a, right: UnsafeMutableBufferPointer(rebasing: rr[start..<start + n]))
                        } else {
                            r.process(a)
                        }
                        start += n
                    }
                }
            }
            return stereo ? left + right : left
        }
        for stereo in [false, true] {
            let reference = rendered(128, stereo: stereo), other = rendered(block, stereo: stereo)
            let peak = reference.map { abs($0) }.max() ?? 0
            let difference = zip(reference, other).map { abs($0 - $1) }.max() ?? 0
            print("reverb, blocks of \(block), \(stereo ? "stereo" : "mono"): largest difference \(difference), peak \(peak)")
            #expect(peak > 0.1)
            #expect(difference < 5e-4 * peak, "blocks of \(block), \(stereo ? "stereo" : "mono"): differs by \(difference) (peak \(peak))")
        }
    }

    @Test func decayTimeGrowsStrictlyWithSize() throws {
        var previous = 0.0
        for size: Float in [0, 0.2, 0.4, 0.6, 0.8, 1] {
            let expected = Reverb.decayTime(size: size)
            let ir = Self.impulseResponse(size: size, seconds: expected * 1.2 + 0.3)
            let measured = try #require(Measure.decayTime(ir, sampleRate: Self.rate))
            // The loop gains are set for exactly this RT60; the diffusers add little.
            #expect(abs(measured / expected - 1) < 0.15, "size \(size): measured \(measured) s, designed \(expected) s")
            #expect(measured > previous * 1.3, "size \(size): \(measured) s is not longer than \(previous) s")
            previous = measured
        }
        #expect(Reverb.decayTime(size: 0) == Reverb.shortestDecay)
        #expect(Reverb.decayTime(size: 1) == Reverb.longestDecay)
    }

    @Test(arguments: [44_100.0, 96_000.0])
    func decayTimeDoesNotDependOnTheSampleRate(_ rate: Double) throws {
        let ir = Self.impulseResponse(size: 0.5, seconds: 2.5, rate: rate)
        let measured = try #require(Measure.decayTime(ir, sampleRate: rate))
        let reference = try #require(Measure.decayTime(Self.impulseResponse(size: 0.5, seconds: 2.5), sampleRate: Self.rate))
        #expect(abs(measured / reference - 1) < 0.1, "\(rate) Hz: \(measured) s vs \(reference) s at 48 kHz")
    }

    @Test func dampingShortensTheHighFrequencyDecayOnly() throws {
        let open = Self.impulseResponse(size: 0.6, damping: 0, seconds: 3)
        let damped = Self.impulseResponse(size: 0.6, damping: 1, seconds: 3)
        let highOpen = try #require(Measure.decayTime(AnalysisFilter.highPass(open, cutoff: 5000)))
        let highDamped = try #require(Measure.decayTime(AnalysisFilter.highPass(damped, cutoff: 5000)))
        let lowOpen = try #require(Measure.decayTime(AnalysisFilter.lowPass(open, cutoff: 300)))
        let lowDamped = try #require(Measure.decayTime(AnalysisFilter.lowPass(damped, cutoff: 300)))
        #expect(highDamped < 0.5 * highOpen, "above 5 kHz: \(highDamped) s damped vs \(highOpen) s open")
        #expect(abs(lowDamped / lowOpen - 1) < 0.2, "below 300 Hz: \(lowDamped) s damped vs \(lowOpen) s open")
        // And the half-way setting sits in between.
        let half = Self.impulseResponse(size: 0.6, damping: 0.5, seconds: 3)
        let highHalf = try #require(Measure.decayTime(AnalysisFilter.highPass(half, cutoff: 5000)))
        #expect(highHalf < highOpen && highHalf > highDamped)
    }

    @Test func tailIsDense() {
        // Past the first echoes the response should look like noise (kurtosis near 3),
        // not a train of separate clicks (kurtosis of tens or more).
        let ir = Self.impulseResponse(size: 0.5, seconds: 0.5)
        let k = Measure.kurtosis(ir[Int(0.1 * Self.rate)..<Int(0.2 * Self.rate)])
        #expect(k < 6, "kurtosis \(k) between 100 and 200 ms")
        // And dense from early on: once the shortest line (about 30 ms) has spoken, no stretch
        // of 5 ms is silent.
        let window = Int(0.005 * Self.rate)
        for start in stride(from: Int(0.035 * Self.rate), to: Int(0.3 * Self.rate), by: window) {
            #expect(Measure.peak(ir[start..<start + window]) > 1e-4, "silent gap at \(start)")
        }
    }

    /// Every corner of the knob cube: a loud noise burst never blows up and dies below −90 dB.
    @Test(arguments: [Float(0), 1], [Float(0), 1])
    func everyCornerDecaysToSilence(size: Float, damping: Float) {
        for mix: Float in [0, 1] {
            let r = Self.make(size: size, damping: damping, mix: mix)
            let burst = Signal.noise(length: Int(0.3 * Self.rate), amplitude: 1, seed: 3)
            let tailSeconds = Reverb.decayTime(size: size) * 1.6 + 0.5
            let out = Render.through(r, burst + Signal.silence(Int(tailSeconds * Self.rate)), block: 256)
            #expect(Measure.allFinite(out))
            #expect(Measure.peak(out) < 4, "size \(size) damping \(damping) mix \(mix): peak \(Measure.peak(out))")
            let last = out[(out.count - Int(0.25 * Self.rate))...]
            #expect(Measure.peakDecibels(last) < -90, "size \(size) damping \(damping) mix \(mix): \(Measure.peakDecibels(last)) dB")
        }
    }

    @Test func silenceAfterTheTailIsExactlyZero() {
        // The denormal flush makes a dead tail end in true zeros (no denormal crawl).
        let r = Self.make(size: 0.3, damping: 0.5, mix: 0.5)
        let out = Render.through(r, Signal.noise(length: 4800) + Signal.silence(Int(12 * Self.rate)), block: 256)
        #expect(out[(out.count - 4800)...].allSatisfy { $0 == 0 })
    }

    @Test func mixIsTheWetLevelAndDryStaysUnity() throws {
        let full = Self.impulseResponse(size: 0.5, seconds: 0.5)
        let r = Self.make(size: 0.5, mix: 0.3)
        let out = Render.through(r, Signal.impulse(length: Int(0.5 * Self.rate)), block: 256)
        // The first output sample carries the dry impulse plus the wet response's first sample.
        #expect(abs(out[0] - (1 + 0.3 * full[0])) < 1e-6)
        for i in stride(from: 1, to: out.count, by: 97) {
            #expect(abs(out[i] - 0.3 * full[i]) < 1e-6)
        }
    }

    @Test func knobJumpsDoNotClick() {
        let p = ParameterStore()
        p[.reverbSize] = 0; p[.reverbDamping] = 0; p[.reverbMix] = 0
        let r = Reverb(parameters: p)
        r.prepare(sampleRate: Self.rate, maximumBlockSize: 128)
        let sine = Signal.sine(frequency: 220, seconds: 2, amplitude: 0.5)
        let before = Render.through(r, Array(sine[0..<48_000]), block: 128)
        p[.reverbSize] = 1; p[.reverbDamping] = 1; p[.reverbMix] = 1
        let after = Render.through(r, Array(sine[48_000...]), block: 128)
        // A 220 Hz sine at 0.5 steps at most 0.0144 per sample; the reverb's wet sum of it may
        // add a few times that, but an unsmoothed mix jump would step by the whole wet level.
        let stepBefore = Measure.largestStep(before)
        let stepJump = Measure.largestStep(Array(after[0..<4800]))
        #expect(stepJump < 3 * stepBefore, "step \(stepJump) after the jump vs \(stepBefore) before")
    }

    @Test func nonFiniteInputDoesNotPoisonTheTail() {
        let r = Self.make(size: 0.8, damping: 0.2, mix: 0.5)
        var input = Signal.noise(length: 4800)
        input[100] = .nan
        input[2000] = .infinity
        input[3000] = -.infinity
        let out = Render.through(r, input + Signal.noise(length: 48_000, seed: 9), block: 256)
        #expect(Measure.allFinite(out))
        #expect(Measure.rms(out[48_000...]) > 0.1)
        // A huge but finite input must not overflow the network either.
        let loud = Render.through(r, [Float](repeating: 3e38, count: 512) + Signal.noise(length: 4800), block: 256)
        #expect(Measure.allFinite(loud))
    }

    @Test func resetClearsTheTail() {
        let r = Self.make(size: 1, mix: 1)
        _ = Render.through(r, Signal.noise(length: 4800), block: 256)
        r.reset()
        let out = Render.through(r, Signal.silence(4800), block: 256)
        #expect(out.allSatisfy { $0 == 0 })
    }
}

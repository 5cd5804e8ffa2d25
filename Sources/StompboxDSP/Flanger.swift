import Foundation

/// A flanger: the signal plus a copy through a delay that a sine LFO sweeps around `delay_ms`,
/// by ±90 % of it at depth 1 (so 2 ms sweeps 0.2…3.8 ms), with feedback from the delayed copy
/// back into the line. The delay is read between samples with 4-point (Catmull-Rom) cubic
/// interpolation, so the sweep is smooth. The wet path is scaled by √(1 − feedback²), which
/// keeps the level of a broadband signal about the same whatever the feedback.
///
/// out = (1 − mix)·x + mix·√(1 − fb²)·d,  line ← x + fb·d,  d = line[t − delay(t)].
///
/// Threads: `init`/`prepare` off the audio thread; `process`/`reset` on it, allocation-free.
public final class Flanger: AudioEffect {
    let parameters: ParameterStore
    private let table = SineTable()
    /// Sweep half-width at depth 1, as a fraction of the centre delay.
    static let sweepAtFullDepth: Float = 0.9

    private var sampleRate: Double = 48_000
    private var line = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var lineMask = 0
    private var writeIndex = 0
    /// The shortest delay the 4-point read allows: it needs one sample after the read point.
    private let minimumDelay: Float = 2

    private var phase: Double = 0
    private var increment = SmoothedValue(0)
    private var centre = SmoothedValue(96)
    private var depth = SmoothedValue(0.7)
    private var feedback = SmoothedValue(0.5)
    private var mix = SmoothedValue(0.5)

    public init(parameters: ParameterStore) {
        self.parameters = parameters
        line.initialize(to: 0)
    }

    deinit { line.deallocate() }

    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        let maximum = Double(Parameter.flangerDelay.spec.maximum) / 1000 * sampleRate
            * Double(1 + Flanger.sweepAtFullDepth)
        var size = 1
        while size < Int(maximum) + 8 { size *= 2 }
        line.deallocate()
        line = .allocate(capacity: size)
        line.initialize(repeating: 0, count: size)
        lineMask = size - 1
        increment.prepare(sampleRate: sampleRate)
        // The delay glides over 100 ms: faster, a big turn of the knob would bend the pitch
        // by half an octave. Feedback ramps over 50 ms, as the comb's resonances ring.
        centre.prepare(sampleRate: sampleRate, rampTime: 0.1)
        depth.prepare(sampleRate: sampleRate)
        feedback.prepare(sampleRate: sampleRate, rampTime: 0.05)
        mix.prepare(sampleRate: sampleRate)
        reset()
    }

    public func reset() {
        line.update(repeating: 0, count: lineMask + 1)
        writeIndex = 0
        phase = 0
        increment.snap(to: targetIncrement())
        centre.snap(to: targetCentre())
        depth.snap(to: parameters.load(.flangerDepth))
        feedback.snap(to: parameters.load(.flangerFeedback))
        mix.snap(to: parameters.load(.flangerMix))
    }

    private func targetIncrement() -> Float { Float(Double(parameters.load(.flangerRate)) / sampleRate) }
    private func targetCentre() -> Float { Float(Double(parameters.load(.flangerDelay)) / 1000 * sampleRate) }

    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        increment.setTarget(targetIncrement())
        centre.setTarget(targetCentre())
        depth.setTarget(parameters.load(.flangerDepth))
        feedback.setTarget(parameters.load(.flangerFeedback))
        mix.setTarget(parameters.load(.flangerMix))

        let mask = lineMask
        let sweep = Flanger.sweepAtFullDepth
        for i in block.indices {
            let x = block[i].isFinite ? block[i] : 0
            let lfo = table.sine(Float(phase))
            phase += Double(increment.next())
            if phase >= 1 { phase -= 1 }

            let delay = max(centre.next() * (1 + sweep * depth.next() * lfo), minimumDelay)
            let whole = Int(delay)
            let f = delay - Float(whole)
            // y1 is `whole` samples old, y2 one older; the value sought lies between them.
            let r = writeIndex - whole
            let y0 = line[(r + 1) & mask]
            let y1 = line[r & mask]
            let y2 = line[(r - 1) & mask]
            let y3 = line[(r - 2) & mask]
            let c1 = 0.5 * (y2 - y0)
            let c2 = y0 - 2.5 * y1 + 2 * y2 - 0.5 * y3
            let c3 = 0.5 * (y3 - y0) + 1.5 * (y1 - y2)
            let d = ((c3 * f + c2) * f + c1) * f + y1

            let fb = feedback.next()
            // A decaying tail ends in exact zero instead of denormals.
            line[writeIndex & mask] = flushed(x + fb * d)
            writeIndex = (writeIndex + 1) & mask
            let m = mix.next()
            block[i] = (1 - m) * x + m * (1 - fb * fb).squareRoot() * d
        }
    }
}

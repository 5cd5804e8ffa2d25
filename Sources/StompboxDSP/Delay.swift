import Foundation

/// A digital delay: echoes `delay.time_ms` apart, each `delay.feedback` times the one before;
/// the first at `delay.mix` (wet level; the dry signal stays at unity).
///
/// The loop is a plain power-of-two ring buffer read at a whole-sample distance, so an impulse's
/// echoes keep their peak exactly (no filter in the loop, only a denormal flush). A change of
/// time does not glide the read position (that would bend the pitch); as in x42 nodelay the old
/// and the new read position are crossfaded over `fadeTime`. While the knob keeps moving, each
/// fade runs to its end and the next one starts from there towards the latest time.
///
/// In stereo each side has its own line with the same time and feedback, or with
/// `delay.ping_pong` on the echoes bounce: the middle of the two sides goes into the left line,
/// whose echoes feed the right line, whose echoes feed back into the left, so echo k (each
/// `feedback` times the one before, as in mono) sounds on the left for odd k and on the right
/// for even k.
///
/// Thread contract: `prepare` off the audio thread (allocates); `reset` and `process` on the
/// audio thread, allocation- and lock-free.
public final class Delay: StereoEffect {
    let parameters: ParameterStore

    /// Length of the crossfade between two delay times.
    public static let fadeTime = 0.03
    /// The longest delay the buffer holds.
    public static let maximumTime = 2.0
    /// The delay time in ms: `delay.time_ms`, or with `delay.sync` on, the note value at `tempo.bpm`.
    @inline(__always)
    func timeMilliseconds() -> Float {
        guard let seconds = TempoSync.seconds(parameters.load(.delaySync), bpm: parameters.load(.tempo)) else {
            return parameters.load(.delayTime)
        }
        return Float(1000 * seconds)
    }

    private var buffer = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    /// The right side's line, in stereo.
    private var bufferRight = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var mask = 0
    private var writeIndex = 0
    private var sampleRate = 48_000.0
    private var maximumDelay = 1

    /// The delay in samples being read (the old one while fading).
    private var currentDelay = 1
    /// The delay being faded to.
    private var nextDelay = 1
    private var fadeLength = 1
    /// Samples into the running fade; `fadeLength` or more means no fade is running.
    private var fadeIndex = 1
    private var inverseFadeLength: Float = 1

    private var feedback = SmoothedValue(Parameter.delayFeedback.spec.defaultValue)
    private var mix = SmoothedValue(Parameter.delayMix.spec.defaultValue)

    public init(parameters: ParameterStore) {
        self.parameters = parameters
        buffer.initialize(to: 0)
        bufferRight.initialize(to: 0)
        prepare(sampleRate: 48_000, maximumBlockSize: 1)
    }

    deinit {
        buffer.deallocate()
        bufferRight.deallocate()
    }

    /// Allocates a ring buffer holding `maximumTime` at `sampleRate`. Not on the audio thread.
    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        maximumDelay = max(2, Int((Delay.maximumTime * sampleRate).rounded(.up)))
        var size = 1
        while size <= maximumDelay + 1 { size <<= 1 }
        buffer.deallocate()
        buffer = .allocate(capacity: size)
        bufferRight.deallocate()
        bufferRight = .allocate(capacity: size)
        mask = size - 1
        fadeLength = max(1, Int(Delay.fadeTime * sampleRate))
        inverseFadeLength = 1 / Float(fadeLength)
        feedback.prepare(sampleRate: sampleRate)
        mix.prepare(sampleRate: sampleRate)
        reset()
    }

    /// Clears the echoes and snaps time, feedback and mix to the current parameters.
    /// Audio thread safe (clears the buffers: about 0.5 MB each at 48 kHz).
    public func reset() {
        buffer.update(repeating: 0, count: mask + 1)
        bufferRight.update(repeating: 0, count: mask + 1)
        writeIndex = 0
        currentDelay = delaySamples(timeMilliseconds())
        nextDelay = currentDelay
        fadeIndex = fadeLength
        feedback.snap(to: parameters.load(.delayFeedback))
        mix.snap(to: parameters.load(.delayMix))
    }

    /// The delay in whole samples for a time in milliseconds, within the buffer.
    @inline(__always)
    func delaySamples(_ milliseconds: Float) -> Int {
        let samples = (Double(milliseconds) * sampleRate / 1000).rounded()
        guard samples.isFinite else { return maximumDelay }
        return min(max(Int(samples), 1), maximumDelay)
    }

    /// Where the line and its fades stand: a stereo block runs each side from the same place.
    private struct Motion {
        var writeIndex: Int, currentDelay: Int, nextDelay: Int, fadeIndex: Int
        var feedback: SmoothedValue, mix: SmoothedValue
    }

    private var motion: Motion {
        get { Motion(writeIndex: writeIndex, currentDelay: currentDelay, nextDelay: nextDelay, fadeIndex: fadeIndex, feedback: feedback, mix: mix) }
        set {
            writeIndex = newValue.writeIndex
            currentDelay = newValue.currentDelay
            nextDelay = newValue.nextDelay
            fadeIndex = newValue.fadeIndex
            feedback = newValue.feedback
            mix = newValue.mix
        }
    }

    /// The delay in samples the knobs (or the tempo) ask for, with feedback and mix set gliding.
    /// A tempo change moves a synced delay's time through the same crossfade as the knob.
    @inline(__always)
    private func readKnobs() -> Int {
        feedback.setTarget(parameters.load(.delayFeedback))
        mix.setTarget(parameters.load(.delayMix))
        return delaySamples(timeMilliseconds())
    }

    /// Audio thread.
    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        guard let io = block.baseAddress else { return }
        let target = readKnobs()
        if !run(io, block.count, line: buffer, target: target) {
            // Only absurd input levels get here (non-finite input is replaced by silence).
            reset()
            block.update(repeating: 0)
        }
    }

    /// Audio thread.
    public func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {
        guard let l = left.baseAddress, let r = right.baseAddress else { return }
        let target = readKnobs()
        let fine: Bool
        if parameters.isOn(.delayPingPong) {
            fine = pingPong(l, r, left.count, target: target)
        } else {
            // Each side through its own line, the knobs' glides the same on both.
            let start = motion
            let leftFine = run(l, left.count, line: buffer, target: target)
            let end = motion
            motion = start
            let rightFine = run(r, right.count, line: bufferRight, target: target)
            motion = end
            fine = leftFine && rightFine
        }
        if !fine {
            reset()
            left.update(repeating: 0)
            right.update(repeating: 0)
        }
    }

    /// Ping-pong: left line ← middle + feedback·right echo, right line ← feedback·left echo.
    /// False when what entered the lines was not finite.
    private func pingPong(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, _ n: Int, target: Int) -> Bool {
        let a = buffer, b = bufferRight, mask = self.mask
        var w = writeIndex
        var check: Float = 0
        for i in 0..<n {
            if fadeIndex >= fadeLength && target != currentDelay {
                nextDelay = target
                fadeIndex = 0
            }
            let xl = left[i].isFinite ? left[i] : 0, xr = right[i].isFinite ? right[i] : 0
            let echoL: Float, echoR: Float
            if fadeIndex < fadeLength {
                let t = Float(fadeIndex) * inverseFadeLength
                let g = t * t * (3 - 2 * t)
                let r0 = (w &- currentDelay) & mask, r1 = (w &- nextDelay) & mask
                echoL = a[r0] + g * (a[r1] - a[r0])
                echoR = b[r0] + g * (b[r1] - b[r0])
                fadeIndex += 1
                if fadeIndex >= fadeLength { currentDelay = nextDelay }
            } else {
                let r = (w &- currentDelay) & mask
                echoL = a[r]
                echoR = b[r]
            }
            let fb = feedback.next()
            let intoLeft = flushDenormal(0.5 * (xl + xr) + fb * echoR), intoRight = flushDenormal(fb * echoL)
            a[w] = intoLeft
            b[w] = intoRight
            check += intoLeft + intoRight
            let wet = mix.next()
            left[i] = xl + wet * echoL
            right[i] = xr + wet * echoR
            w = (w &+ 1) & mask
        }
        writeIndex = w
        return check.isFinite
    }

    /// One side (or the mono signal) through `line`, in place. False when what entered the line
    /// was not finite.
    private func run(_ io: UnsafeMutablePointer<Float>, _ n: Int, line buffer: UnsafeMutablePointer<Float>, target: Int) -> Bool {
        let mask = self.mask
        var w = writeIndex
        // Sum of what entered the loop: not finite means the state is poisoned.
        var check: Float = 0
        var i = 0
        while i < n {
            if fadeIndex >= fadeLength && target != currentDelay {
                nextDelay = target
                fadeIndex = 0
            }
            if fadeIndex >= fadeLength && !feedback.isRamping && !mix.isRamping {
                // Steady knobs (the usual case): runs that neither wrap nor reach what they
                // write (at most `d` samples) have independent samples, eight at a time.
                let d = currentDelay, size = mask &+ 1
                let fb = feedback.current, wet = mix.current
                var sums = SIMD8<Float>()
                while i < n {
                    let r = (w &- d) & mask
                    let m = min(min(n - i, d), min(size - d, min(size - w, size - r)))
                    sums += Delay.steadyRun(io + i, read: buffer + r, write: buffer + w, count: m,
                                            feedback: fb, mix: wet)
                    i += m
                    w = (w &+ m) & mask
                }
                check += sums.sum()
            } else if fadeIndex >= fadeLength {
                let d = currentDelay
                while i < n {
                    let x = io[i].isFinite ? io[i] : 0
                    let echo = buffer[(w &- d) & mask]
                    let v = flushDenormal(x + feedback.next() * echo)
                    buffer[w] = v
                    check += v
                    io[i] = x + mix.next() * echo
                    w = (w &+ 1) & mask
                    i += 1
                }
            } else {
                let d0 = currentDelay, d1 = nextDelay
                let end = min(n, i + fadeLength - fadeIndex)
                var k = fadeIndex
                while i < end {
                    let x = io[i].isFinite ? io[i] : 0
                    let t = Float(k) * inverseFadeLength
                    let g = t * t * (3 - 2 * t)
                    let a = buffer[(w &- d0) & mask]
                    let b = buffer[(w &- d1) & mask]
                    let echo = a + g * (b - a)
                    let v = flushDenormal(x + feedback.next() * echo)
                    buffer[w] = v
                    check += v
                    io[i] = x + mix.next() * echo
                    w = (w &+ 1) & mask
                    i += 1
                    k += 1
                }
                fadeIndex = k
                if fadeIndex >= fadeLength { currentDelay = nextDelay }
            }
        }
        writeIndex = w
        return check.isFinite
    }
}

extension Delay {
    /// One steady run: line ← flush(x + feedback·echo), out = x + mix·echo. Returns the sums
    /// of what entered the line (lane-wise), for the caller's finiteness check.
    @inline(__always)
    static func steadyRun(_ io: UnsafeMutablePointer<Float>, read: UnsafePointer<Float>,
                          write: UnsafeMutablePointer<Float>, count: Int,
                          feedback: Float, mix: Float) -> SIMD8<Float> {
        let fb = SIMD8<Float>(repeating: feedback), wet = SIMD8<Float>(repeating: mix)
        let magnitude = SIMD8<UInt32>(repeating: 0x7fff_ffff)
        let finiteLimit = SIMD8<UInt32>(repeating: 0x7f80_0000)
        let floor = SIMD8<UInt32>(repeating: Float(1e-15).bitPattern)
        var sums = SIMD8<Float>()
        var i = 0
        while i + 8 <= count {
            let raw = UnsafeRawPointer(io + i).loadUnaligned(as: SIMD8<Float>.self)
            let rawBits = unsafeBitCast(raw, to: SIMD8<UInt32>.self)
            let x = raw.replacing(with: 0, where: (rawBits & magnitude) .>= finiteLimit)
            let echo = UnsafeRawPointer(read + i).loadUnaligned(as: SIMD8<Float>.self)
            let fed = x + fb * echo
            let fedBits = unsafeBitCast(fed, to: SIMD8<UInt32>.self)
            let v = fed.replacing(with: 0, where: (fedBits & magnitude) .< floor)
            UnsafeMutableRawPointer(write + i).storeBytes(of: v, as: SIMD8<Float>.self)
            sums += v
            UnsafeMutableRawPointer(io + i).storeBytes(of: x + wet * echo, as: SIMD8<Float>.self)
            i += 8
        }
        var tail: Float = 0
        while i < count {
            let x = io[i].isFinite ? io[i] : 0
            let echo = read[i]
            let v = flushDenormal(x + feedback * echo)
            write[i] = v
            tail += v
            io[i] = x + mix * echo
            i += 1
        }
        sums[0] += tail
        return sums
    }
}

/// Values below 1e-15 (−300 dB) become exactly zero, so decaying feedback loops end in true
/// silence instead of crawling through denormals (rounding tricks can stick at one ulp when
/// the loop gain exceeds 0.5). Louder values pass unchanged.
@inline(__always)
private func flushDenormal(_ x: Float) -> Float {
    abs(x) < 1e-15 ? 0 : x
}

extension PedalKind {
    /// Time, feedback, mix; its own feedback loop; click-free time changes.
    public static let delay = PedalKind(
        id: "delay", name: "Delay",
        controls: [
            PedalControl("time_ms", "Time", .milliseconds, 20...2000, default: 350, .logarithmic),
            PedalControl("feedback", "Feedback", .none, 0...0.95, default: 0.4),
            PedalControl("mix", "Mix", .none, 0...1, default: 0.35),
            PedalControl("trails", "Trails", .none, 0...1, default: 1, .toggle),
            TempoSync.control(),
            // "Bounce" on the pedal (a switch's label has room for six letters).
            PedalControl("ping_pong", "Bounce", .none, 0...1, default: 0, .toggle, name: "Delay Ping-pong"),
        ],
        // Three knobs on top; the trails and ping-pong toggles below them, the sync menu over
        // the LED (set lower than on the other pedals to make room).
        face: PedalFace(ledY: 170, places: [
            .init("time_ms", x: 4, y: 12, diameter: 40, width: 56),
            .init("feedback", x: 63, y: 12, diameter: 40, width: 56),
            .init("mix", x: 122, y: 12, diameter: 40, width: 56),
            .init("trails", x: 8, y: 82, width: 52),
            .init("ping_pong", x: 66, y: 82, width: 52),
            .init("sync", x: 38, y: 128, width: 108, menu: true, labels: TempoSync.labels, caption: "SYNC"),
        ], artwork: .init(body: "#2d6fd2", dark: "#173f82", text: "#eef4ff", accent: "#9cc1ff", name: "DELAY", subtitle: "ANALOG ECHO", nameY: 204)),
        trails: "trails",
        make: { Delay(parameters: $0.parameters) })
}

extension Parameter {
    public static let delayEnabled = PedalKind.delay.enabledParameter
    public static let delayTime = PedalKind.delay.parameter("time_ms")
    public static let delayFeedback = PedalKind.delay.parameter("feedback")
    public static let delayMix = PedalKind.delay.parameter("mix")
    public static let delayTrails = PedalKind.delay.parameter("trails")
    public static let delaySync = PedalKind.delay.parameter("sync")
    public static let delayPingPong = PedalKind.delay.parameter("ping_pong")
}

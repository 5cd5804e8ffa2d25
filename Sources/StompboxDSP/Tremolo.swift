import Foundation

/// Amplitude modulation: the signal is multiplied by a gain that swings between 1 − depth and 1
/// at `rate_hz`, following a sine, a triangle or a square whose edges are rounded over about
/// 2 ms (a bare square would click twice per cycle). The gain is 1 at phase 0 and 1 − depth
/// at phase ½. Changing the shape crossfades the old curve into the new one over ~20 ms.
///
/// Threads: `init`/`prepare` off the audio thread; `process`/`reset` on it, allocation-free.
public final class Tremolo: StereoEffect {
    let parameters: ParameterStore
    private var sampleRate: Double = 48_000
    /// Phase in cycles, 0 ≤ phase < 1 (Double: a Float would round each tiny step).
    private var phase: Double = 0
    private var increment = SmoothedValue(5.0 / 48_000)
    private var depth = SmoothedValue(1)
    private var shape = TremoloShape.triangle
    private var previousShape = TremoloShape.triangle
    /// 1 = only `shape`; below 1 while fading in from `previousShape`.
    private var shapeFade = SmoothedValue(1)
    /// Half the width of a square edge, in cycles.
    private var edge: Float = 0.01
    /// Time of a square edge.
    static let edgeTime = 0.002
    /// On a stereo board: the block's gains (the same on both sides).
    private var gains = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)

    public init(parameters: ParameterStore) {
        self.parameters = parameters
    }

    deinit { gains.deallocate() }

    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        gains.deallocate()
        gains = .allocate(capacity: max(1, maximumBlockSize))
        gains.initialize(repeating: 0)
        increment.prepare(sampleRate: sampleRate)
        depth.prepare(sampleRate: sampleRate)
        shapeFade.prepare(sampleRate: sampleRate)
        reset()
    }

    public func reset() {
        phase = 0
        increment.snap(to: currentIncrement())
        depth.snap(to: parameters.load(.tremoloDepth))
        shape = currentShape()
        previousShape = shape
        shapeFade.snap(to: 1)
    }

    /// Cycles per sample: `tremolo.rate_hz`, or with `tremolo.sync` on, one cycle per note value
    /// at `tempo.bpm` (a new tempo glides there with the rate's smoothing).
    private func currentIncrement() -> Float {
        if let seconds = TempoSync.seconds(parameters.load(.tremoloSync), bpm: parameters.load(.tempo)) {
            return Float(1 / (seconds * sampleRate))
        }
        return Float(Double(parameters.load(.tremoloRate)) / sampleRate)
    }

    private func currentShape() -> TremoloShape {
        TremoloShape(rawValue: Int(parameters.load(.tremoloShape))) ?? .triangle
    }

    /// How far the gain is pulled down at `phase`: 0 at phase 0, 1 at phase ½.
    @inline(__always)
    private func modulation(_ shape: TremoloShape, _ phase: Float) -> Float {
        switch shape {
        case .sine:
            // ½ − ½·cos 2πφ = sin² πφ = cos² π(φ − ½): a polynomial, no table lookup, so the
            // steady loop vectorises (a table read per lane is a gather).
            let c = Tremolo.cosPi(phase - 0.5)
            return c * c
        case .triangle:
            return phase < 0.5 ? 2 * phase : 2 - 2 * phase
        case .square:
            // Down for the middle half of the cycle, edges at ¼ and ¾ rounded by a smoothstep.
            let distance = abs(phase - 0.5) // 0 in the middle, ½ at the ends
            let t = min(max((0.25 + edge - distance) / (2 * edge), 0), 1)
            return t * t * (3 - 2 * t)
        }
    }

    /// cos πu for |u| ≤ ½ (Taylor to u¹⁰; error below 5e-7).
    @inline(__always)
    static func cosPi(_ u: Float) -> Float {
        let z = (Float.pi * u) * (Float.pi * u)
        let a5: Float = -1 / 3_628_800, a4: Float = 1 / 40_320, a3: Float = -1 / 720
        let a2: Float = 1 / 24, a1: Float = -0.5
        return 1 + z * (a1 + z * (a2 + z * (a3 + z * (a4 + z * a5))))
    }

    @inline(__always)
    private func apply(_ shape: TremoloShape, _ block: UnsafeMutableBufferPointer<Float>, _ phase: inout Double,
                       _ increment: inout SmoothedValue, _ depth: inout SmoothedValue) {
        var p = phase
        if increment.isRamping || depth.isRamping {
            for i in block.indices {
                let m = modulation(shape, Float(p))
                let x = block[i]
                block[i] = x.isFinite ? x * (1 - depth.next() * m) : 0
                p += Double(increment.next())
                if p >= 1 { p -= 1 }
            }
        } else {
            // Steady knobs: each sample's phase follows from the first, so the samples are
            // independent of each other and the loop vectorises. Runs of 256 samples advance
            // less than a cycle (15 Hz at 48 kHz: 0.08), so one wrap suffices.
            // Within a run the phase offsets are small, so Float suffices there (error ~1e-7
            // of a cycle, not accumulated: each run starts again from the Double phase).
            let inc = Double(increment.current), d = depth.current
            let incF = increment.current
            guard let base = block.baseAddress else { return }
            var start = 0
            while start < block.count {
                let n = min(256, block.count - start)
                let x = base + start
                let pF = Float(p)
                // An Int32 counter beside the index: its conversion to Float vectorises, Int64's
                // does not (and a Range<Int32> loop allocates in debug builds).
                var k: Int32 = 0
                for i in 0..<n {
                    var q = pF + Float(k) * incF
                    k &+= 1
                    q = q >= 1 ? q - 1 : q
                    let v = x[i]
                    x[i] = v.isFinite ? v * (1 - d * modulation(shape, q)) : 0
                }
                p += Double(n) * inc
                p -= p.rounded(.down)
                start += n
            }
        }
        phase = p
    }

    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        increment.setTarget(currentIncrement())
        depth.setTarget(parameters.load(.tremoloDepth))
        let wanted = currentShape()
        if wanted != shape {
            previousShape = shape
            shape = wanted
            shapeFade.snap(to: 0)
            shapeFade.setTarget(1)
        }
        // Square edges: ~2 ms, but never more than a tenth of the cycle at fast rates.
        edge = min(Float(Tremolo.edgeTime * 0.5 * Double(increment.target) * sampleRate), 0.05)

        // Locals, not properties, in the loop: no exclusivity checks, values stay in registers.
        var phase = self.phase, increment = self.increment, depth = self.depth
        var shapeFade = self.shapeFade
        let shape = self.shape, previousShape = self.previousShape
        if shapeFade.isRamping {
            for i in block.indices {
                let p = Float(phase)
                let f = shapeFade.next()
                let m = f * modulation(shape, p) + (1 - f) * modulation(previousShape, p)
                let x = block[i]
                block[i] = x.isFinite ? x * (1 - depth.next() * m) : 0
                phase += Double(increment.next())
                if phase >= 1 { phase -= 1 }
            }
        } else {
            // The usual case: one shape, chosen once for the block.
            switch shape {
            case .sine: apply(.sine, block, &phase, &increment, &depth)
            case .triangle: apply(.triangle, block, &phase, &increment, &depth)
            case .square: apply(.square, block, &phase, &increment, &depth)
            }
        }
        self.phase = phase
        self.increment = increment
        self.depth = depth
        self.shapeFade = shapeFade
    }

    /// Both sides swing together: it is no reason to make a board stereo.
    public var playsInStereo: Bool { false }

    /// Both sides swing together: the block's gains are the mono path's output for a block of
    /// ones, then applied to each side.
    public func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {
        let n = left.count
        let g = UnsafeMutableBufferPointer(rebasing: gains[0..<n])
        g.update(repeating: 1)
        process(g)
        for i in 0..<n {
            let x = left[i], y = right[i]
            left[i] = x.isFinite ? x * g[i] : 0
            right[i] = y.isFinite ? y * g[i] : 0
        }
    }
}

extension PedalKind {
    /// Rate, depth and a three-way shape switch; multiplies the signal.
    public static let tremolo = PedalKind(
        id: "tremolo", name: "Tremolo",
        controls: [
            PedalControl("rate_hz", "Rate", .hertz, 0.5...15, default: 5, .logarithmic),
            PedalControl("depth", "Depth", .none, 0...1, default: 1),
            PedalControl("shape", "Shape", .none, 0...2, default: 1, .choice(TremoloShape.allCases.map(\.name))),
            TempoSync.control(),
        ],
        // Rate and depth knobs either side of the shape switch.
        face: PedalFace(places: [
            .init("rate_hz", x: 6, y: 22, diameter: 46, width: 62),
            .init("depth", x: 116, y: 22, diameter: 46, width: 62),
            .init("shape", x: 72, y: 18, width: 40),
            .init("sync", x: 38, y: 114, width: 108, menu: true, labels: TempoSync.labels, caption: "SYNC"),
        ], artwork: .init(body: "#1f8f6a", dark: "#0f5a41", text: "#eafff6", accent: "#8fe3c4", name: "TREMOLO", subtitle: "OPTO TREMOLO")),
        make: { Tremolo(parameters: $0.parameters) })
}

extension Parameter {
    public static let tremoloEnabled = PedalKind.tremolo.enabledParameter
    public static let tremoloRate = PedalKind.tremolo.parameter("rate_hz")
    public static let tremoloDepth = PedalKind.tremolo.parameter("depth")
    public static let tremoloShape = PedalKind.tremolo.parameter("shape")
    public static let tremoloSync = PedalKind.tremolo.parameter("sync")
}

/// NAM's WaveNet, played a block at a time, layer by layer: each dilated convolution is one
/// matrix product over the block whose taps read the layer's history ring in place
/// (`NeuralRing`) and whose last columns are the input mixin; the activation and the skip sum
/// take one pass over the result, and the 1×1 adds the residual as it writes the next layer's
/// ring. Everything the
/// format describes — gated and blended activations, FiLM, grouped convolutions, head1x1, a
/// head convolution over the skip sum, the post-stack head, a conditioning WaveNet — runs on
/// the same product (`NeuralGEMM`). Matches NeuralAmpModelerCore's output to single-precision
/// rounding and its exact tanh to about 1e-6.
final class NAMWaveNetNetwork: NeuralNetwork {
    typealias Plan = NAMWaveNetPlan
    typealias Segment = NeuralGEMM.Segment

    let config: NAMWaveNetConfig
    let weights: NAMWaveNetWeights
    /// The conditioning network (its output is the layers' condition), when the file has one.
    let condition: NAMWaveNetNetwork?
    private var conditionRef: Unmanaged<NAMWaveNetNetwork>?
    let receptiveField: Int
    /// The layer arrays' and the post-stack head's convolutions' counts, kept apart from
    /// `config` so the audio thread reads no array (no reference counting).
    private let arrayCount: Int
    private let postHeadCount: Int
    var isRecurrent: Bool { false }

    private var arena = NeuralArena()
    /// Frames per block at most, rounded up to 16: every buffer's row length.
    private var pad = 0
    private var arrays: UnsafeMutablePointer<Plan.LayerArray>!
    private var postHead: UnsafeMutablePointer<Plan.HeadConv>!
    private var headScale: Float = 1
    private var postHeadActivation = NAMActivation.identity
    private var input: UnsafeMutablePointer<Float>!
    /// The network's output channels, `pad` apart.
    private(set) var outputRows: UnsafeMutablePointer<Float>!
    // Scratch rows for the general layer steps, `pad` apart.
    private var z: UnsafeMutablePointer<Float>!
    private var mix: UnsafeMutablePointer<Float>!
    private var headScratch: UnsafeMutablePointer<Float>!
    private var residual: UnsafeMutablePointer<Float>!
    private var film: UnsafeMutablePointer<Float>!
    private var filmedCondition: UnsafeMutablePointer<Float>!
    private var raw: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)!
    private var conditionSegment: UnsafeMutablePointer<Segment>!

    init(config: NAMWaveNetConfig, weights: NAMWaveNetWeights, condition: NAMWaveNetNetwork?) {
        self.config = config
        self.weights = weights
        self.condition = condition
        conditionRef = condition.map { Unmanaged.passUnretained($0) }
        // As NeuralAmpModelerCore counts it: one sample (or the conditioning network's field),
        // every layer's and head convolution's reach, the post-stack head's.
        var field = condition?.receptiveField ?? 1
        for array in config.arrays {
            field += zip(array.kernelSizes, array.dilations).reduce(0) { $0 + $1.1 * ($1.0 - 1) }
            field += array.headDilation * (array.headKernelSize - 1)
        }
        field += config.postHead?.kernelSizes.reduce(0) { $0 + $1 - 1 } ?? 0
        receptiveField = field
        arrayCount = config.arrays.count
        postHeadCount = config.postHead?.kernelSizes.count ?? 0
        prepare(maximumBlockSize: 256)
    }

    func prepare(maximumBlockSize: Int) {
        condition?.prepare(maximumBlockSize: maximumBlockSize)
        let pad = (max(1, maximumBlockSize) + 15) / 16 * 16
        let arena = NeuralArena()
        self.pad = pad
        arrays = arena.uninitialized(config.arrays.count)
        var maxRows = 1, maxCondition = 1
        for (index, array) in config.arrays.enumerated() {
            let w = weights.arrays[index]
            let bg = 2 * array.bottleneck
            maxRows = max(maxRows, bg, array.channels, array.headInputs, array.conditionSize, array.headSize)
            maxCondition = max(maxCondition, array.conditionSize)
            let layers: UnsafeMutablePointer<Plan.Layer> = arena.uninitialized(array.dilations.count)
            for l in 0..<array.dilations.count {
                let lw = w.layers[l]
                let films = arena.values(8, nil as Plan.FiLM?)
                for (f, dense) in lw.films.enumerated() {
                    guard let dense else { continue }
                    films[f] = Plan.FiLM(gemm: Self.gemm(dense, arena), dimension: array.films[f].shift ? dense.rows / 2 : dense.rows, shift: array.films[f].shift)
                    maxRows = max(maxRows, dense.rows)
                }
                let gating = array.gating[l]
                let anyFiLM = array.films.contains { $0.active }
                let mixinFused = !array.films[1].active && !array.films[2].active && !array.films[3].active
                let fused = gating == .none && !anyFiLM && !array.head1x1
                let lookback = array.dilations[l] * (array.kernelSizes[l] - 1)
                (layers + l).initialize(to: Plan.Layer(
                    ring: NeuralRing(rows: array.channels, lookback: lookback, pad: pad, arena: arena),
                    kernelSize: array.kernelSizes[l], dilation: array.dilations[l],
                    conv: Self.gemm(mixinFused ? lw.conv.appending(lw.mixin) : lw.conv, arena),
                    mixin: mixinFused ? nil : Self.gemm(lw.mixin, arena), mixinFused: mixinFused,
                    segments: arena.values(array.kernelSizes[l] + 1, Segment(base: UnsafePointer(bitPattern: 16)!, stride: 0, count: 0)),
                    activation: Self.activation(array.activations[l], arena),
                    secondary: Self.activation(array.secondary[l], arena), gating: gating,
                    layer1x1: lw.layer1x1.map { Self.gemm($0, arena) }, head1x1: lw.head1x1.map { Self.gemm($0, arena) },
                    films: films, fused: fused))
            }
            (arrays + index).initialize(to: Plan.LayerArray(
                channels: array.channels, bottleneck: array.bottleneck, inputSize: array.inputSize,
                headInputs: array.headInputs, headSize: array.headSize,
                rechannel: Self.gemm(w.rechannel, arena), layers: layers, layerCount: array.dilations.count,
                headRing: NeuralRing(rows: array.headInputs, lookback: array.headDilation * (array.headKernelSize - 1), pad: pad, arena: arena),
                headKernel: array.headKernelSize, headDilation: array.headDilation, head: Self.gemm(w.head, arena),
                headSegments: arena.values(array.headKernelSize, Segment(base: UnsafePointer(bitPattern: 16)!, stride: 0, count: 0)),
                output: arena.floats(array.channels * pad), headOutput: arena.floats(array.headSize * pad)))
        }
        if let head = config.postHead {
            postHead = arena.uninitialized(head.kernelSizes.count)
            for (i, dense) in weights.postHead.enumerated() {
                let inputs = dense.inner / head.kernelSizes[i]
                maxRows = max(maxRows, inputs, dense.rows)
                (postHead + i).initialize(to: Plan.HeadConv(ring: NeuralRing(rows: inputs, lookback: head.kernelSizes[i] - 1, pad: pad, arena: arena),
                                            kernelSize: head.kernelSizes[i], conv: Self.gemm(dense, arena),
                                            segments: arena.values(head.kernelSizes[i], Segment(base: UnsafePointer(bitPattern: 16)!, stride: 0, count: 0))))
            }
        }
        headScale = weights.headScale
        postHeadActivation = config.postHead.map { Self.activation($0.activation, arena) } ?? .identity
        input = arena.floats(pad)
        outputRows = arena.floats(config.outputChannels * pad)
        z = arena.floats(maxRows * pad)
        mix = arena.floats(maxRows * pad)
        headScratch = arena.floats(maxRows * pad)
        residual = arena.floats(maxRows * pad)
        film = arena.floats(2 * maxRows * pad)
        filmedCondition = arena.floats(maxCondition * pad)
        raw = (arena.floats(maxRows * pad), arena.floats(maxRows * pad))
        conditionSegment = arena.values(1, Segment(base: UnsafePointer(bitPattern: 16)!, stride: 0, count: 0))
        self.arena = arena
    }

    private static func gemm(_ dense: NAMWaveNetWeights.Dense, _ arena: NeuralArena) -> NeuralGEMM {
        NeuralGEMM(rows: dense.rows, inner: dense.inner, weights: dense.weights, bias: dense.bias, arena: arena)
    }

    private static func activation(_ parsed: (NAMActivation, [Float]), _ arena: NeuralArena) -> NAMActivation {
        var activation = parsed.0
        if !parsed.1.isEmpty {
            let slopes = arena.floats(parsed.1.count)
            for (i, slope) in parsed.1.enumerated() { slopes[i] = slope }
            activation.slopes = UnsafePointer(slopes)
        }
        return activation
    }

    func reset() {
        condition?.reset()
        for a in 0..<arrayCount {
            let array = arrays[a]
            for l in 0..<array.layerCount { array.layers[l].ring.clear() }
            array.headRing.clear()
        }
        for i in 0..<postHeadCount { postHead[i].ring.clear() }
    }

    func process(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, count: Int) {
        var done = 0
        while done < count {
            let frames = min(pad, count - done)
            let padded = (frames + 15) & ~15
            self.input.update(from: input + done, count: frames)
            (self.input + frames).update(repeating: 0, count: padded - frames)
            run(self.input, frames: frames, padded: padded)
            (output + done).update(from: outputRows, count: frames)
            done += frames
        }
    }

    /// Runs one block from `source` (one row, `padded` frames, zero past `frames`) into `outputRows`.
    func run(_ source: UnsafePointer<Float>, frames: Int, padded: Int) {
        var conditionRows = source
        if let conditionRef {
            conditionRef._withUnsafeGuaranteedRef { $0.run(source, frames: frames, padded: padded) }
            conditionRows = UnsafePointer(conditionRef._withUnsafeGuaranteedRef { $0.outputRows! })
        }
        let count = arrayCount
        for a in 0..<count {
            runArray(arrays + a, previous: a == 0 ? nil : arrays + (a - 1), source: source, condition: conditionRows, frames: frames, padded: padded)
        }
        let last = arrays[count - 1]
        let rows = last.headSize
        if postHeadCount == 0 {
            scale(last.headOutput, into: outputRows, rows: rows, padded: padded)
        } else {
            runPostHead(last.headOutput, rows: rows, frames: frames, padded: padded)
        }
    }

    private func scale(_ from: UnsafePointer<Float>, into to: UnsafeMutablePointer<Float>, rows: Int, padded: Int) {
        let factor = SIMD16<Float>(repeating: headScale)
        for i in stride(from: 0, to: rows * pad, by: pad) {
            for t in stride(from: 0, to: padded, by: 16) { store(factor * load(from + i + t), to + i + t) }
        }
    }

    private func runArray(_ array: UnsafeMutablePointer<Plan.LayerArray>, previous: UnsafeMutablePointer<Plan.LayerArray>?,
                          source: UnsafePointer<Float>, condition: UnsafePointer<Float>, frames: Int, padded: Int) {
        let headWindow = array.pointee.headRing.window()
        let headStride = array.pointee.headRing.stride
        for r in 0..<array.pointee.headInputs {
            if let previous {
                (headWindow + r * headStride).update(from: previous.pointee.headOutput + r * pad, count: padded)
            } else {
                (headWindow + r * headStride).update(repeating: 0, count: padded)
            }
        }
        // The rechannel writes the first layer's input.
        conditionSegment.pointee = Segment(base: previous.map { UnsafePointer($0.pointee.output) } ?? source, stride: pad, count: array.pointee.inputSize)
        let (firstTarget, firstStride) = target(array.pointee.layers, 0)
        array.pointee.rechannel.run(conditionSegment, 1, frames: padded, out: firstTarget, outStride: firstStride)
        for l in 0..<array.pointee.layerCount {
            let layer = array.pointee.layers + l
            let isLast = l == array.pointee.layerCount - 1
            let (next, nextStride) = isLast ? (array.pointee.output, pad) : target(array.pointee.layers, l + 1)
            runLayer(layer, array: array, input: l & 1, condition: condition, next: next, nextStride: nextStride,
                     head: headWindow, headStride: headStride, frames: frames, padded: padded)
        }
        // The head convolution over the skip sum's history.
        array.pointee.headRing.mirror(frames: padded)
        let ring = array.pointee.headRing
        let kernel = array.pointee.headKernel
        for k in 0..<kernel {
            array.pointee.headSegments[k] = Segment(base: ring.window(back: array.pointee.headDilation * (kernel - 1 - k)), stride: ring.stride, count: ring.rows)
        }
        array.pointee.head.run(array.pointee.headSegments, kernel, frames: padded, out: array.pointee.headOutput, outStride: pad)
        array.pointee.headRing.advance(frames)
    }

    /// Where layer `l`'s input is written: its ring, or a plain buffer its conv_pre_film reads.
    private func target(_ layers: UnsafeMutablePointer<Plan.Layer>, _ l: Int) -> (UnsafeMutablePointer<Float>, Int) {
        if layers[l].preFiLM { return (l & 1 == 0 ? raw.0 : raw.1, pad) }
        return (layers[l].ring.window(), layers[l].ring.stride)
    }

    private func runLayer(_ layer: UnsafeMutablePointer<Plan.Layer>, array: UnsafeMutablePointer<Plan.LayerArray>, input rawIndex: Int,
                          condition: UnsafePointer<Float>, next: UnsafeMutablePointer<Float>, nextStride: Int,
                          head: UnsafeMutablePointer<Float>, headStride: Int, frames: Int, padded: Int) {
        let channels = array.pointee.channels
        let bottleneck = array.pointee.bottleneck
        let ring = layer.pointee.ring
        // The layer's input: the residual path reads it, the convolution its history.
        let x: UnsafeMutablePointer<Float>
        let xStride: Int
        if let preFiLM = layer.pointee.films[0] {
            x = rawIndex == 0 ? raw.0 : raw.1
            xStride = pad
            applyFiLM(preFiLM, x, xStride, into: ring.window(), ring.stride, condition: condition, padded: padded)
        } else {
            x = ring.window()
            xStride = ring.stride
        }
        ring.mirror(frames: padded)
        let kernel = layer.pointee.kernelSize
        for k in 0..<kernel {
            layer.pointee.segments[k] = Segment(base: ring.window(back: layer.pointee.dilation * (kernel - 1 - k)), stride: ring.stride, count: channels)
        }
        var segmentCount = kernel
        if layer.pointee.mixinFused {
            let conditionRows = layer.pointee.conv.inner - kernel * channels
            layer.pointee.segments[kernel] = Segment(base: condition, stride: pad, count: conditionRows)
            segmentCount += 1
        }
        if layer.pointee.fused {
            layer.pointee.conv.run(layer.pointee.segments, segmentCount, frames: padded, out: z, outStride: pad)
            layer.pointee.activation.apply(z, stride: pad, rows: bottleneck, frames: padded, sum: head, sumStride: headStride)
        } else {
            generalActivation(layer, bottleneck: bottleneck, condition: condition, segmentCount: segmentCount, head: head, headStride: headStride, padded: padded)
        }
        // The residual: input plus layer1x1 of the activation, written as the next layer's input.
        if let layer1x1 = layer.pointee.layer1x1 {
            conditionSegment.pointee = Segment(base: z, stride: pad, count: bottleneck)
            if let postFiLM = layer.pointee.films[6], layer.pointee.gating == .blended {
                // NeuralAmpModelerCore applies layer1x1_post_film after a blended activation only.
                layer1x1.run(conditionSegment, 1, frames: padded, out: residual, outStride: pad)
                applyFiLM(postFiLM, residual, pad, into: residual, pad, condition: condition, padded: padded)
                add(x, xStride, residual, pad, into: next, nextStride, rows: channels, padded: padded)
            } else {
                layer1x1.run(conditionSegment, 1, frames: padded, out: next, outStride: nextStride, addend: x, addendStride: xStride)
            }
        } else {
            for r in 0..<channels { (next + r * nextStride).update(from: x + r * xStride, count: padded) }
        }
        layer.pointee.ring.advance(frames)
    }

    /// The layer's steps one at a time, for gating, FiLM, a separate mixin or head1x1; leaves
    /// the activation's output in `z` and adds what goes to the head into `head`.
    private func generalActivation(_ layer: UnsafeMutablePointer<Plan.Layer>, bottleneck: Int, condition: UnsafePointer<Float>, segmentCount: Int,
                                   head: UnsafeMutablePointer<Float>, headStride: Int, padded: Int) {
        let films = layer.pointee.films
        let zRows = layer.pointee.conv.rows
        layer.pointee.conv.run(layer.pointee.segments, segmentCount, frames: padded, out: z, outStride: pad)
        if let film = films[1] { applyFiLM(film, z, pad, into: z, pad, condition: condition, padded: padded) }
        if let mixin = layer.pointee.mixin {
            var mixinInput = condition
            if let film = films[2] {
                applyFiLM(film, UnsafeMutablePointer(mutating: condition), pad, into: filmedCondition, pad, condition: condition, padded: padded)
                mixinInput = UnsafePointer(filmedCondition)
            }
            conditionSegment.pointee = Segment(base: mixinInput, stride: pad, count: mixin.inner)
            mixin.run(conditionSegment, 1, frames: padded, out: mix, outStride: pad)
            if let film = films[3] { applyFiLM(film, mix, pad, into: mix, pad, condition: condition, padded: padded) }
            add(z, pad, mix, pad, into: z, pad, rows: zRows, padded: padded)
        }
        if let film = films[4] { applyFiLM(film, z, pad, into: z, pad, condition: condition, padded: padded) }
        let activation = layer.pointee.activation
        let secondary = layer.pointee.secondary
        for r in 0..<bottleneck {
            let top = z + r * pad
            let bottom = z + (r + bottleneck) * pad
            for t in stride(from: 0, to: padded, by: 16) {
                let value = load(top + t)
                switch layer.pointee.gating {
                case .none: store(activation.apply(value, channel: r), top + t)
                case .gated: store(activation.apply(value, channel: r) * secondary.apply(load(bottom + t), channel: r), top + t)
                case .blended:
                    let alpha = secondary.apply(load(bottom + t), channel: r)
                    store(alpha * activation.apply(value, channel: r) + (1 - alpha) * value, top + t)
                }
            }
        }
        if let film = films[5] { applyFiLM(film, z, pad, into: z, pad, condition: condition, padded: padded) }
        if let head1x1 = layer.pointee.head1x1 {
            conditionSegment.pointee = Segment(base: z, stride: pad, count: bottleneck)
            head1x1.run(conditionSegment, 1, frames: padded, out: headScratch, outStride: pad)
            if let film = films[7] { applyFiLM(film, headScratch, pad, into: headScratch, pad, condition: condition, padded: padded) }
            add(head, headStride, headScratch, pad, into: head, headStride, rows: head1x1.rows, padded: padded)
        } else {
            add(head, headStride, z, pad, into: head, headStride, rows: bottleneck, padded: padded)
        }
    }

    /// `to = from · scale(condition) (+ shift(condition))`, row by row; `to` may be `from`.
    private func applyFiLM(_ plan: Plan.FiLM, _ from: UnsafeMutablePointer<Float>, _ fromStride: Int,
                           into to: UnsafeMutablePointer<Float>, _ toStride: Int, condition: UnsafePointer<Float>, padded: Int) {
        let segment = conditionSegment!
        segment.pointee = Segment(base: condition, stride: pad, count: plan.gemm.inner)
        plan.gemm.run(segment, 1, frames: padded, out: film, outStride: pad)
        for r in 0..<plan.dimension {
            let scale = film + r * pad
            let shift = film + (r + plan.dimension) * pad
            for t in stride(from: 0, to: padded, by: 16) {
                var value = load(from + r * fromStride + t) * load(scale + t)
                if plan.shift { value += load(shift + t) }
                store(value, to + r * toStride + t)
            }
        }
    }

    private func add(_ a: UnsafePointer<Float>, _ aStride: Int, _ b: UnsafePointer<Float>, _ bStride: Int,
                     into to: UnsafeMutablePointer<Float>, _ toStride: Int, rows: Int, padded: Int) {
        for r in 0..<rows {
            for t in stride(from: 0, to: padded, by: 16) {
                store(load(a + r * aStride + t) + load(b + r * bStride + t), to + r * toStride + t)
            }
        }
    }

    /// The post-stack head: head_scale, then (activation, convolution) for each of its kernels.
    private func runPostHead(_ final: UnsafePointer<Float>, rows: Int, frames: Int, padded: Int) {
        let count = postHeadCount
        for i in 0..<count {
            let conv = postHead + i
            let ring = conv.pointee.ring
            let window = ring.window()
            if i == 0 {
                for r in 0..<rows {
                    for t in stride(from: 0, to: padded, by: 16) {
                        store(headScale * load(final + r * pad + t), window + r * ring.stride + t)
                    }
                }
            }
            let headActivation = postHeadActivation
            for r in 0..<ring.rows {
                let row = window + r * ring.stride
                for t in stride(from: 0, to: padded, by: 16) { store(headActivation.apply(load(row + t), channel: r), row + t) }
            }
            ring.mirror(frames: padded)
            let kernel = conv.pointee.kernelSize
            for k in 0..<kernel {
                conv.pointee.segments[k] = Segment(base: ring.window(back: kernel - 1 - k), stride: ring.stride, count: ring.rows)
            }
            let (out, outStride) = i == count - 1 ? (outputRows!, pad) : (postHead[i + 1].ring.window(), postHead[i + 1].ring.stride)
            conv.pointee.conv.run(conv.pointee.segments, kernel, frames: padded, out: out, outStride: outStride)
            conv.pointee.ring.advance(frames)
        }
    }
}

import Foundation
import StompboxDSP

/// Everything a render does besides the audio: the starting parameter values, the actions at
/// times, and the tail of silence fed in after the input so echoes and reverb can ring out.
public struct RenderPlan: Equatable, Sendable {
    /// One value per `Parameter`, in table order (`ParameterStore.snapshot()` form). Plugin
    /// pedals on the board keep their values in their kinds.
    public var parameters: [Float]
    /// Applied in time order; actions at the same time in the order given.
    public var actions: [RenderAction]
    public var tailSeconds: Double
    /// The pedals on the board, in signal order.
    public var board: [PedalKind]
    /// Built-in pedals' own states by pedal id (a preset's `states`; `--set cab.ir=FILE`).
    public var states: [String: String] = [:]
    /// The output's channels: 1 for the board's mono output, 2 for its stereo one; nil for the
    /// input's channel count (a stereo output's sides alternate over more than two channels).
    public var channels: Int?

    /// Every parameter at its default, every pedal in the classic order, no actions, no tail.
    public init(parameters: [Float] = Parameter.allCases.map { $0.spec.defaultValue },
                actions: [RenderAction] = [], tailSeconds: Double = 0, board: [PedalKind] = PedalKind.builtIn) {
        precondition(parameters.count == Parameter.allCases.count, "one value per parameter")
        self.parameters = parameters
        self.actions = actions
        self.tailSeconds = tailSeconds
        self.board = board
    }

    public subscript(_ p: Parameter) -> Float {
        get { p.pedalValue ?? parameters[p.rawValue] }
        set {
            if p.isInTable { parameters[p.rawValue] = p.spec.clamp(newValue) } else { p.setPedalValue(newValue) }
        }
    }

    /// The longest tail accepted (an hour of silence is already more than any reverb needs).
    public static let maximumTailSeconds: Double = 3600

    /// Every value the render will give a parameter: the starting values, then each `--at`
    /// assignment in time order. The single place to ask "may this be switched on?".
    public var parameterWrites: [ParameterAssignment] {
        Parameter.allCases.map { ParameterAssignment($0, parameters[$0.rawValue]) }
            + board.filter { $0.values != nil }.flatMap { $0.parameters.map { ParameterAssignment($0, $0.pedalValue!) } }
            + sortedActions.compactMap { if case .set(let a) = $0.kind { a } else { nil } }
    }

    /// The pedals of `board` that the render ever switches on. A pedal that stays off passes the
    /// signal through untouched, so rendering without it is the same to the bit; leaving it off
    /// the chain keeps its buffers (the Looper's 46 MB of tape) from being made at all.
    public var boardInUse: [PedalKind] {
        let switchedOn = Set(parameterWrites.filter { $0.value >= 0.5 }.compactMap { write in
            board.first { $0.enabledParameter == write.parameter }?.id
        })
        return board.filter { switchedOn.contains($0.id) }
    }

    /// Looper gestures that would reach the looper while it is switched off (they do nothing
    /// audible), so the command can point out the missing `looper.enabled=on`.
    public var looperActionsWhileOff: [RenderAction] {
        var on = parameters[Parameter.looperEnabled.rawValue] >= 0.5
        var ignored: [RenderAction] = []
        for action in sortedActions {
            switch action.kind {
            case .set(let a) where a.parameter == .looperEnabled: on = a.value >= 0.5
            case .looper where !on: ignored.append(action)
            default: break
            }
        }
        return ignored
    }

    /// Actions by time; a stable sort keeps the command line's order for equal times.
    var sortedActions: [RenderAction] {
        actions.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }
}

public enum RenderError: Error, Equatable, CustomStringConvertible {
    case file(AudioFileError)
    case badTail(Double)
    case actionAfterEnd(RenderAction, lengthSeconds: Double)
    /// A write the `permit` check refused (a locked effect, for instance).
    case refused(ParameterAssignment, reason: String)
    case board(PedalError)
    /// A pedal's state (a cabinet's file) that cannot be used.
    case state(String)
    /// An output channel count below one.
    case badChannels(Int)

    public var description: String {
        switch self {
        case .file(let e): e.description
        case .badTail(let t):
            t < 0 ? "the tail must not be negative (got \(t) s)"
                : "the tail must be between 0 and \(Int(RenderPlan.maximumTailSeconds)) seconds (got \(t))"
        case .actionAfterEnd(let action, let length):
            "--at \(action) is at or after the end of the render (\(formatSeconds(length)) s long; add --tail to make it longer)"
        case .refused(let a, let reason): "cannot set \(a): \(reason)"
        case .board(let e): e.description
        case .state(let why): why
        case .badChannels(let n): "the output needs at least one channel (got \(n))"
        }
    }
}

/// Renders an audio file through a `Chain`, offline, as fast as the machine goes.
///
/// The input's channels are averaged into the mono guitar signal. The output is the board's
/// mono output (one channel) or its stereo one (two or more: left, right, left, …), at the
/// input's rate, with `plan.channels` channels or the input's count. It is the input's length
/// plus the tail. Actions apply at their exact sample: a block is cut
/// where an action falls, because the chain reads parameters and looper requests at block start.
public final class OfflineRenderer {
    /// The chain's block size between actions. A setting that does not change gives the same
    /// samples in any block size (every ramp and control-rate step runs on its own fixed grid);
    /// 1024 rather than 256 saves 10% of a 60 s render's CPU in the pedals' per-block work and
    /// the file calls.
    public static let blockSize = 1024
    /// Frames read from and written to the files at a time (a multiple of `blockSize`).
    public static let ioChunk = 16 * 1024

    public let plan: RenderPlan
    /// Called once for every parameter write of the plan before anything is read or written;
    /// throwing refuses the render. Licence checks for locked effects belong here.
    public var permit: (ParameterAssignment) throws(RenderError) -> Void = { _ in }
    /// Told, before the render starts, what will not sound as set (a cabinet whose response
    /// cannot be read passes its input through).
    public var warn: (String) -> Void = { _ in }
    /// Called with the chain once the render is written, before it goes: what the Looper holds
    /// then is read here (`Chain.looperTrackAudio`).
    public var finished: (Chain) -> Void = { _ in }
    /// How the output's samples are stored: 24-bit PCM (the default), or 32-bit float in a WAV
    /// (a session's float track keeps every bit of the render).
    public var samples: AudioSampleFormat = .pcm24

    public init(plan: RenderPlan) {
        self.plan = plan
    }

    /// What a render produced.
    public struct Summary: Equatable, Sendable {
        public var sampleRate: Int
        public var channels: Int
        public var inputFrames: Int
        public var outputFrames: Int
        /// The pedals the render built, in signal order.
        public var board: [PedalKind]
    }

    /// Renders `input` to `output` (format from its extension), through `chain` if given (with
    /// the plan's whole board), else through a chain of the pedals the plan switches on. On any error `output` is left
    /// as it was and no temporary file remains.
    @discardableResult
    public func render(input: String, output: String, chain: Chain? = nil) throws(RenderError) -> Summary {
        guard plan.tailSeconds.isFinite, (0...RenderPlan.maximumTailSeconds).contains(plan.tailSeconds) else {
            throw .badTail(plan.tailSeconds)
        }
        for write in plan.parameterWrites { try permit(write) }

        let reader: AudioFileReader
        do { reader = try AudioFileReader(path: input) } catch { throw .file(error) }
        let rate = Double(reader.sampleRate)
        let inputFrames = max(0, reader.frames)
        let totalFrames = inputFrames + Int((plan.tailSeconds * rate).rounded())

        let actions = plan.sortedActions
        for action in actions where action.sampleIndex(sampleRate: rate) >= max(totalFrames, 1) {
            throw .actionAfterEnd(action, lengthSeconds: Double(totalFrames) / rate)
        }

        let outputChannels = plan.channels ?? reader.channels
        guard outputChannels >= 1 else { throw .badChannels(outputChannels) }
        let writer: AtomicAudioFileWriter
        do {
            writer = try AtomicAudioFileWriter(path: output, sampleRate: reader.sampleRate, channels: outputChannels, samples: samples)
        } catch { throw .file(error) }
        // From here on, any throw leaves through `writer`'s deinit, which removes the temporary file.

        // A chain of its own holds only the pedals in use; a chain handed in plays the plan's board.
        let board = chain == nil ? plan.boardInUse : plan.board
        let chain = chain ?? Chain(board: board)
        do { try chain.setBoard(board) } catch { throw .board(error) }
        chain.parameters.restore(plan.parameters)
        chain.prepare(sampleRate: rate, maximumBlockSize: Self.blockSize)
        do { for problem in try chain.restore(states: plan.states) { warn(problem) } } catch { throw .state(error.description) }
        if board.contains(.cab), let cabinet = chain.effect(.cab) as? Cabinet {
            for problem in Self.cabinetProblems(cabinet, plan: plan) { warn(problem) }
        }

        let channels = reader.channels
        let taps = TapTempo()
        // The files move a chunk of `ioChunk` frames at a time (fewer, larger reads and writes);
        // the chain works on the chunk in place, block by block.
        let chunkFrames = Self.ioChunk
        let interleaved = UnsafeMutablePointer<Float>.allocate(capacity: chunkFrames * max(channels, outputChannels))
        let mono = UnsafeMutableBufferPointer<Float>.allocate(capacity: chunkFrames)
        let stereo = outputChannels >= 2
        let right = UnsafeMutableBufferPointer<Float>.allocate(capacity: stereo ? chunkFrames : 1)
        defer {
            interleaved.deallocate()
            mono.deallocate()
            right.deallocate()
        }

        var schedule = RenderSchedule(totalFrames: totalFrames, blockSize: Self.blockSize,
                                      actionSamples: actions.map { $0.sampleIndex(sampleRate: rate) }, chunk: chunkFrames)
        var inputLeft = inputFrames
        let scale = 1 / Float(channels)
        // A mono file is read into and written from the chunk itself, without copies.
        let isMono = channels == 1
        var chunkStart = 0, chunkCount = 0
        func writeChunk() throws(AudioFileError) {
            if outputChannels == 1 { return try writer.write(mono.baseAddress!, frames: chunkCount) }
            for i in 0..<chunkCount {
                let l = mono[i], r = right[i]
                for c in 0..<outputChannels { interleaved[i * outputChannels + c] = c & 1 == 0 ? l : r }
            }
            try writer.write(interleaved, frames: chunkCount)
        }
        do {
            while let block = schedule.next() {
                if block.frames.lowerBound == chunkStart + chunkCount {
                    // The chunk is done: out with it, in with the next (zeros past the input's
                    // end, or past a file cut shorter than its header says).
                    if chunkCount > 0 { try writeChunk() }
                    chunkStart = block.frames.lowerBound
                    chunkCount = min(chunkFrames, totalFrames - chunkStart)
                    var got = 0
                    while got < chunkCount && inputLeft > 0 {
                        let n = try reader.read(into: (isMono ? mono.baseAddress! : interleaved) + got * channels,
                                                frames: min(chunkCount - got, inputLeft))
                        if n == 0 { inputLeft = 0; break }
                        got += n
                        inputLeft -= n
                    }
                    if !isMono {
                        for i in 0..<got {
                            var sum: Float = 0
                            for c in 0..<channels { sum += interleaved[i * channels + c] }
                            mono[i] = sum * scale
                        }
                    }
                    for i in got..<chunkCount { mono[i] = 0 }
                }
                for i in block.actions { apply(actions[i], to: chain, taps: taps) }
                let offset = block.frames.lowerBound - chunkStart
                let frames = offset..<(offset + block.frames.count)
                if stereo {
                    chain.process(left: UnsafeMutableBufferPointer(rebasing: mono[frames]), right: UnsafeMutableBufferPointer(rebasing: right[frames]))
                } else {
                    chain.process(UnsafeMutableBufferPointer(rebasing: mono[frames]))
                }
            }
            if chunkCount > 0 { try writeChunk() }
            try writer.commit()
        } catch {
            writer.discard()
            throw .file(error)
        }
        finished(chain)
        return Summary(sampleRate: reader.sampleRate, channels: outputChannels,
                       inputFrames: inputFrames, outputFrames: totalFrames, board: board)
    }

    /// For each response the plan sets the cabinet to that could not be read: one sentence.
    static func cabinetProblems(_ cabinet: Cabinet, plan: RenderPlan) -> [String] {
        var chosen = [Int(plan[.cabImpulse].rounded())]
        for write in plan.parameterWrites where write.parameter == .cabImpulse { chosen.append(Int(write.value.rounded())) }
        var said = Set<String>()
        return chosen.compactMap { index in
            let id = index < Cabinet.bundled.count ? Cabinet.bundled[max(0, index)] : Cabinet.fileChoice
            guard let why = cabinet.problems[id], said.insert(id).inserted else { return nil }
            let name = index < Cabinet.bundled.count ? "the cabinet \(Cabinet.names[max(0, index)])" : "the impulse response file"
            return "the Cabinet cannot play \(name) (\(why)); it passes its input through"
        }
    }

    private func apply(_ action: RenderAction, to chain: Chain, taps: TapTempo) {
        switch action.kind {
        case .set(let a): chain.parameters.set(a.parameter, a.value)
        case .looper(let gesture): chain.controls.looper.send(gesture)
        case .tempoTap: if let bpm = taps.tap(at: action.time) { chain.parameters.set(.tempo, Float(bpm)) }
        }
    }
}

/// Cuts a render into blocks of at most `blockSize` frames, also cutting wherever an action
/// falls, so each action is applied just before the block that starts at its sample.
public struct RenderSchedule: IteratorProtocol {
    public struct Block: Equatable {
        /// The output frames of this block.
        public var frames: Range<Int>
        /// Indices into the (time-sorted) actions to apply before processing it.
        public var actions: Range<Int>
    }

    public let totalFrames: Int
    public let blockSize: Int
    /// No block crosses a multiple of this (the renderer's file chunks), when given.
    public let chunk: Int?
    private let actionSamples: [Int]
    private var position = 0
    private var nextAction = 0

    /// `actionSamples` must be sorted (the plan's actions in time order).
    public init(totalFrames: Int, blockSize: Int, actionSamples: [Int], chunk: Int? = nil) {
        precondition(blockSize > 0 && actionSamples == actionSamples.sorted() && (chunk ?? 1) > 0)
        self.totalFrames = totalFrames
        self.blockSize = blockSize
        self.chunk = chunk
        self.actionSamples = actionSamples
    }

    public mutating func next() -> Block? {
        guard position < totalFrames else { return nil }
        let first = nextAction
        while nextAction < actionSamples.count, actionSamples[nextAction] <= position { nextAction += 1 }
        var end = min(position + blockSize, totalFrames)
        if let chunk { end = min(end, (position / chunk + 1) * chunk) }
        if nextAction < actionSamples.count { end = min(end, actionSamples[nextAction]) }
        defer { position = end }
        return Block(frames: position..<end, actions: first..<nextAction)
    }
}

func formatSeconds(_ s: Double) -> String {
    String(format: "%.3f", s).replacingOccurrences(of: #"\.?0+$"#, with: "", options: .regularExpression)
}

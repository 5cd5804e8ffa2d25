import Foundation
import Synchronization

/// The Amp Model pedal: plays a captured amp, a neural network in a model file (a Neural Amp
/// Modeler `.nam` capture or an AIDA-X / RTNeural model; `NeuralModels` reads them).
///
/// - `neural.file` is `none` (the signal passes through untouched) or `file`: the model loaded
///   with `load(file:)`, which reads and builds it on the caller's thread, prepares and
///   prewarms it, and hands it to the audio thread through an atomic; the audio thread runs the
///   new model unheard for its receptive field, then crossfades from the old model to the new
///   over 25 ms, both fed the same input, so a model changed while playing never clicks, and the one replaced is released off the audio thread.
///   A file that cannot be played throws `NeuralModelError` and the pedal keeps its model.
/// - `neural.input_db` and `neural.output_db` are the gains into and out of the model (20 ms
///   glides). `neural.normalize` brings a model whose file states its loudness to −18 dB (the
///   NAM plugin's "Normalized"); off, it plays as loud as captured. `neural.input_dbu` is the
///   interface's full-scale level in dBu (0: not set): with it and a file that states the level
///   its capture's input stood for, the input is calibrated by their difference.
/// - A model trained at another rate than the session's runs at its own rate inside the pedal,
///   resampled in and out (`NeuralRateBridge`); the pedal reports that latency to the chain
///   (`LatencyReportingEffect`).
///
/// Threads: `init`/`prepare`/`load`/`restore`/`status` off the audio thread (one at a time);
/// `process`/`reset` on it, allocation- and lock-free.
public final class NeuralAmp: AudioEffect, RestorableEffect, FileLoadingEffect, StereoEffect, LatencyReportingEffect, @unchecked Sendable {
    /// `neural.file`'s choices: no model, or the file loaded.
    public static let choices = ["none", Cabinet.fileChoice]
    static let fileIndex = 1
    /// How long a change of model, or between a model and none, crossfades.
    static let crossfadeTime = 0.025
    /// Where it reports its latency (its model's resampling), in session samples.
    public let latencyCell: UnsafeMutablePointer<Atomic<Float>> = {
        let cell = UnsafeMutablePointer<Atomic<Float>>.allocate(capacity: 1)
        cell.initialize(to: Atomic(0))
        return cell
    }()

    let parameters: ParameterStore
    public let fileDescription = "model"
    /// The model file loaded (its path), or the one a preset named that could not be loaded. The
    /// thread that loads.
    public private(set) var file: String?
    /// Why the file a preset named could not be loaded (the pedal then passes its input through).
    public private(set) var problem: String?
    private var model: NeuralModel?
    private var sampleRate: Double = 0
    private var capacity = 0
    /// The player made for the loaded model at the session's rate (owned: +1 retained), and
    /// the same for the audio thread.
    private var loaded: Unmanaged<NeuralPlayer>?
    /// What plays now (nil: the dry signal), and during a crossfade what it fades to.
    private var playing: Unmanaged<NeuralPlayer>?
    private var fadeTo: Unmanaged<NeuralPlayer>?
    private var fading = false
    /// A player replaced while it was playing, released when its fade ends (+1 retained).
    private var replaced: Unmanaged<NeuralPlayer>?
    /// A new player waiting for the audio thread, and one it let go (+1 retained, or 0).
    private let pending = Atomic<UInt>(0)
    private let retired = Atomic<UInt>(0)
    private var fadePosition = 0
    private var fadeLength = 1200
    private var dry = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var wet = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var other = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var inputGain = DecibelGain()
    private var outputGain = DecibelGain()

    public init(parameters: ParameterStore) {
        self.parameters = parameters
    }

    deinit {
        collectRetired()
        let waiting = pending.exchange(0, ordering: .acquiringAndReleasing)
        if waiting > NeuralAmp.none { NeuralAmp.player(waiting).release() }
        loaded?.release()
        replaced?.release()
        latencyCell.deinitialize(count: 1)
        latencyCell.deallocate()
        dry.deallocate()
        wet.deallocate()
        other.deallocate()
    }

    private static func player(_ cell: UInt) -> Unmanaged<NeuralPlayer> {
        Unmanaged<NeuralPlayer>.fromOpaque(UnsafeRawPointer(bitPattern: cell)!)
    }

    private func collectRetired() {
        let old = retired.exchange(0, ordering: .acquiringAndReleasing)
        if old != 0 { NeuralAmp.player(old).release() }
    }

    // MARK: Loading (not on the audio thread)

    /// Reads the model in `path`, prepares and prewarms it, and hands it to the audio thread;
    /// `neural.file` is set to `file`. Throws `NeuralModelError`, changing nothing, when the file
    /// cannot be played. Not on the audio thread; one thread at a time.
    public func load(file path: String) throws {
        let model = try NeuralModels.load(file: path)
        install(model, file: path)
        parameters.set(.neuralFile, Float(NeuralAmp.fileIndex))
    }

    private func install(_ model: NeuralModel, file path: String) {
        self.model = model
        file = path
        problem = nil
        collectRetired()
        guard capacity > 0 else { return }
        let player = NeuralPlayer(model, file: path, sessionRate: sampleRate, maximumBlockSize: capacity)
        player.reset(inputGain: 1, outputGain: 1)
        let new = UInt(bitPattern: Unmanaged.passRetained(player).toOpaque())
        let waiting = pending.exchange(new, ordering: .acquiringAndReleasing)
        if waiting > NeuralAmp.none { NeuralAmp.player(waiting).release() }
    }

    public func stateJSON() -> String? { file.map { FileState.json(file: $0) } }

    /// Loads the model a preset's state names (`{"file": "…"}`). A file that is missing or
    /// cannot be played does not fail the preset: the pedal passes its input through, says why
    /// (`problem`, `status`), and keeps the path so that saving writes it back.
    public func restore(stateJSON: String) throws {
        guard let path = FileState.file(in: stateJSON), path != file || problem != nil else { return }
        let choice = parameters.load(.neuralFile)
        do {
            try load(file: path)
        } catch {
            unload()
            file = path
            problem = (error as? NeuralModelError)?.problem ?? "\(error)"
        }
        parameters.set(.neuralFile, choice)
    }

    public var restoreProblem: String? {
        guard let problem, let file else { return nil }
        return "cannot load \((file as NSString).lastPathComponent) (\(problem)); it is bypassed and passes its input through"
    }

    /// Lets the model go: the pedal passes its input through.
    private func unload() {
        model = nil
        file = nil
        problem = nil
        guard capacity > 0 else { return }
        // An empty hand-over: the audio thread fades to the dry signal and lets the old one go.
        let waiting = pending.exchange(NeuralAmp.none, ordering: .acquiringAndReleasing)
        if waiting > NeuralAmp.none { NeuralAmp.player(waiting).release() }
    }

    /// A pending cell meaning "no model".
    private static let none: UInt = 1

    /// What the pedal plays, for the window and `status`: the model's name and what its file
    /// says, or why it plays nothing. Not on the audio thread.
    public var status: NeuralAmpStatus {
        collectRetired()
        if let problem, let file { return NeuralAmpStatus(file: file, info: nil, missing: problem, note: "") }
        guard let model, let file else { return NeuralAmpStatus(file: nil, info: nil, missing: nil, note: "") }
        let rate = model.info.rate
        let note = sampleRate > 0 && abs(rate - sampleRate) >= 0.5 ? NeuralAmpStatus.resampledNote(rate) : ""
        return NeuralAmpStatus(file: file, info: model.info, missing: nil, note: note)
    }

    // MARK: Life

    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        capacity = max(1, maximumBlockSize)
        reallocateZeroed(&dry, count: capacity)
        reallocateZeroed(&wet, count: capacity)
        reallocateZeroed(&other, count: capacity)
        fadeLength = max(1, Int(sampleRate * NeuralAmp.crossfadeTime))
        // The audio thread is stopped: everything it held is let go here, and the model made
        // again at this rate.
        collectRetired()
        let waiting = pending.exchange(0, ordering: .acquiringAndReleasing)
        if waiting > NeuralAmp.none { NeuralAmp.player(waiting).release() }
        replaced?.release()
        replaced = nil
        loaded?.release()
        loaded = nil
        playing = nil
        fadeTo = nil
        fading = false
        if let model, let file, problem == nil {
            loaded = Unmanaged.passRetained(NeuralPlayer(model, file: file, sessionRate: sampleRate, maximumBlockSize: capacity))
        }
        latencyCell.pointee.store(Float(loaded?.takeUnretainedValue().latency ?? 0), ordering: .relaxed)
        reset()
    }

    public func reset() {
        fading = false
        fadeTo = nil
        if let replaced {
            self.replaced = nil
            retire(replaced)
        }
        playing = wanted()
        if let playing { resetPlayer(playing) }
        fadePosition = fadeLength
        report()
    }

    @inline(__always)
    private func wanted() -> Unmanaged<NeuralPlayer>? {
        parameters.load(.neuralFile) >= 0.5 ? loaded : nil
    }

    @inline(__always)
    private func targets(_ player: NeuralPlayer) -> (input: Float, output: Float) {
        let input = player.inputDecibels(knob: parameters.load(.neuralInput), interfaceDBu: parameters.load(.neuralInputDBu))
        let output = player.outputDecibels(knob: parameters.load(.neuralOutput), normalize: parameters.load(.neuralNormalize) >= 0.5)
        return (inputGain(input), outputGain(output))
    }

    @inline(__always)
    private func resetPlayer(_ player: Unmanaged<NeuralPlayer>) {
        player._withUnsafeGuaranteedRef { p in
            let (input, output) = targets(p)
            p.reset(inputGain: input, outputGain: output)
        }
    }

    /// Audio thread: hands a player back to be released off it (kept until the slot is free).
    @inline(__always)
    private func retire(_ player: Unmanaged<NeuralPlayer>) {
        retired.store(UInt(bitPattern: player.toOpaque()), ordering: .releasing)
    }

    /// Audio thread: the latency of what plays (or what it fades to).
    @inline(__always)
    private func report() {
        let now = fading ? fadeTo : playing
        latencyCell.pointee.store(Float(now?._withUnsafeGuaranteedRef { $0.latency } ?? 0), ordering: .relaxed)
    }

    /// Audio thread, between crossfades: takes a new model in. The one it replaces fades out if
    /// it is playing, and is let go.
    @inline(__always)
    private func takeNewModel() {
        guard retired.load(ordering: .acquiring) == 0, replaced == nil else { return }
        let new = pending.exchange(0, ordering: .acquiringAndReleasing)
        guard new != 0 else { return }
        let old = loaded
        loaded = new == NeuralAmp.none ? nil : NeuralAmp.player(new)
        guard let old else { return }
        if playing?.toOpaque() == old.toOpaque() {
            replaced = old
        } else {
            retire(old)
        }
    }

    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        guard let x = block.baseAddress else { return }
        run(x, nil, min(block.count, capacity))
    }

    /// Audio thread, a stereo board: the model (an amp: one input) plays the middle of the sides
    /// on both; without one each side passes through as it is.
    public func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {
        guard let l = left.baseAddress, let r = right.baseAddress else { return }
        run(l, r, min(left.count, capacity))
    }

    /// It makes no difference between the sides (and undoes none while it passes through).
    public var playsInStereo: Bool { false }

    private func run(_ x: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, _ n: Int) {
        guard capacity > 0, n > 0 else { return }
        if !fading {
            takeNewModel()
            let want = wanted()
            if want?.toOpaque() != playing?.toOpaque() {
                // A model fades in once it has heard its receptive field of the signal (it plays
                // meanwhile, unheard): its first samples are not a reply to silence.
                if let want { resetPlayer(want) }
                fadeTo = want
                fading = true
                fadePosition = -(want?._withUnsafeGuaranteedRef { $0.warmup } ?? 0)
                report()
            }
        }
        for i in 0..<n where !x[i].isFinite { x[i] = 0 }
        if let right {
            for i in 0..<n where !right[i].isFinite { right[i] = 0 }
            for i in 0..<n { dry[i] = 0.5 * (x[i] + right[i]) }
        } else {
            dry.update(from: x, count: n)
        }
        // What plays now into `wet`, what it fades to into `other`; nil is each side's own input.
        if let playing { play(playing, into: wet, n) }
        if fading, let fadeTo { play(fadeTo, into: other, n) }
        let from = playing == nil ? nil : wet, to = fadeTo == nil ? nil : other
        @inline(__always) func mix(_ side: UnsafeMutablePointer<Float>) {
            if fading {
                for i in 0..<n {
                    let a = from?[i] ?? side[i], b = to?[i] ?? side[i]
                    let g = min(max(Float(fadePosition + i) / Float(fadeLength), 0), 1)
                    side[i] = a + g * (b - a)
                }
            } else if let from {
                side.update(from: from, count: n)
            }
        }
        mix(x)
        if let right { mix(right) }
        if fading {
            fadePosition += n
            if fadePosition >= fadeLength {
                fading = false
                playing = fadeTo
                fadeTo = nil
                if let replaced, replaced.toOpaque() != playing?.toOpaque() {
                    self.replaced = nil
                    retire(replaced)
                }
                report()
            }
        }
    }

    @inline(__always)
    private func play(_ player: Unmanaged<NeuralPlayer>, into y: UnsafeMutablePointer<Float>, _ n: Int) {
        player._withUnsafeGuaranteedRef { p in
            let (input, output) = targets(p)
            p.process(dry, y, count: n, inputGain: input, outputGain: output)
        }
    }
}

/// What the Amp Model pedal plays, as the window and `stompbox` show it.
public struct NeuralAmpStatus: Sendable, Equatable {
    /// The model file (loaded, or named by a preset and missing).
    public var file: String?
    /// What the loaded model's file says of it.
    public var info: NeuralModelInfo?
    /// Why the file a preset named plays nothing ("no such file"), if it does not.
    public var missing: String?
    /// "runs at 44.1 kHz (resampled)" when the model's rate is not the session's, else "".
    public var note: String

    /// The name to show: the model's own, else its file's, else "No model".
    public var name: String {
        if let name = info?.name, !name.isEmpty { return name }
        if let file { return ((file as NSString).lastPathComponent as NSString).deletingPathExtension }
        return "No model"
    }

    /// One line for the pedal: what plays, or that it passes its input through, and why.
    public var summary: String {
        if let missing { return "\(name): \(missing); passes the signal through" }
        guard let info else { return "No model loaded: passes the signal through" }
        return "\(name) (\(info.format) \(info.architecture))" + (note.isEmpty ? "" : ", \(note)")
    }

    static func resampledNote(_ rate: Double) -> String {
        let khz = rate / 1000
        let text = khz == khz.rounded() ? String(Int(khz)) : String(format: "%.1f", khz)
        return "runs at \(text) kHz (resampled)"
    }
}

extension PedalKind {
    /// A model file's amp: a neural network captured from real gear, off until a model is chosen.
    public static let neural = PedalKind(
        id: "neural", name: "Amp Model",
        controls: [
            PedalControl("file", "Model", .none, 0...1, default: 0, .choice(NeuralAmp.choices), name: "Amp Model File"),
            PedalControl("input_db", "In", .decibels, -24...24, default: 0, name: "Amp Model Input"),
            PedalControl("output_db", "Out", .decibels, -36...12, default: 0, name: "Amp Model Output"),
            PedalControl("normalize", "Normalize", .none, 0...1, default: 1, .toggle, name: "Amp Model Normalize"),
            PedalControl("input_dbu", "Interface", .none, 0...30, default: 0,
                         name: "Amp Model Interface Level (dBu at full scale; 0: not calibrated)"),
        ],
        face: PedalFace(width: 224, places: [
            .init("file", x: 14, y: 16, width: 196, menu: true, labels: ["No model", "Model file"]),
            .init("input_db", x: 14, y: 80, diameter: 40, width: 56),
            .init("normalize", x: 84, y: 86, width: 56),
            .init("output_db", x: 154, y: 80, diameter: 40, width: 56),
        ], hidden: ["input_dbu"], ink: (0.80, 0.93, 0.95),
        artwork: .init(body: "#1f2c33", dark: "#0c1317", text: "#d6eef2", accent: "#4fb8c4", name: "AMP MODEL", subtitle: "NEURAL CAPTURE")),
        make: { NeuralAmp(parameters: $0.parameters) })
}

extension Parameter {
    public static let neuralEnabled = PedalKind.neural.enabledParameter
    public static let neuralFile = PedalKind.neural.parameter("file")
    public static let neuralInput = PedalKind.neural.parameter("input_db")
    public static let neuralOutput = PedalKind.neural.parameter("output_db")
    public static let neuralNormalize = PedalKind.neural.parameter("normalize")
    public static let neuralInputDBu = PedalKind.neural.parameter("input_dbu")
}

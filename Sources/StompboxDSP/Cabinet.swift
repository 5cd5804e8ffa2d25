import Foundation
import Synchronization

/// An impulse response: one array of samples per channel, at a sample rate.
public struct ImpulseResponse: Sendable, Equatable {
    public var channels: [[Float]]
    public var sampleRate: Double

    public init(channels: [[Float]], sampleRate: Double) {
        self.channels = channels
        self.sampleRate = sampleRate
    }

    public var frames: Int { channels.first?.count ?? 0 }
}

/// Where the cabinet pedal finds the bundled cabinets' impulse responses at a sample rate (files
/// read and resampled in StompboxAudio). The program installs one at start (`Cabinet.install`);
/// without one the cabinet passes its input through.
public protocol CabinetSource: Sendable {
    /// The impulse response of the bundled cabinet `id` (one of `Cabinet.bundled`) at `sampleRate`.
    /// Not on the audio thread.
    func impulseResponse(cabinet id: String, sampleRate: Double) throws -> ImpulseResponse
    /// The impulse response in an audio file of one's own, at `sampleRate`. Not on the audio thread.
    func impulseResponse(file path: String, sampleRate: Double) throws -> ImpulseResponse
}

/// A speaker cabinet: the signal convolved with a cabinet's impulse response (a speaker and its
/// box as a microphone heard them), which shapes a guitar's sound more than anything else after
/// the strings: the low thump, the mid-range voice, and the steep fall above 5 kHz that takes the
/// fizz off distortion.
///
/// - `cab.ir` chooses one of the bundled cabinets (`Cabinet.bundled`, made by the project:
///   `data/cabinets/README.md`), or `file`: an impulse response of one's own, loaded with
///   `load(file:)` (WAV, FLAC or AIFF, any rate; its first channel). A change crossfades from the
///   old cabinet to the new over 20 ms, both running from the same input history, so it never
///   clicks; so does a new file, which is read and transformed on the caller's thread and handed
///   to the audio thread through an atomic (the one it replaces is released off the audio thread).
/// - `cab.level_db` is the output level; at 0 dB the impulse response is applied exactly as
///   recorded.
///
/// The convolution is a uniformly partitioned FFT convolution (`Convolver`, FFTW) with no
/// added latency: a whole block of a partition is convolved in the call that brings it, and
/// smaller pieces get the first partition in the time domain. Impulse responses longer than 1 s are cut
/// there (with a short fade).
///
/// A stereo impulse response file (two channels or more) plays its first channel on the left
/// and its second on the right of a stereo board (a mono board hears the first). The bundled
/// cabinets are mono: on a stereo board each side goes through the same one.
///
/// Threads: `init`/`prepare` off the audio thread (they read and transform the impulse
/// responses); `process`/`reset` on it, allocation- and lock-free.
public final class Cabinet: AudioEffect, RestorableEffect, FileLoadingEffect, StereoEffect, @unchecked Sendable {
    /// The bundled cabinets' ids, in the order of `cab.ir`'s choices (the catalogue
    /// `data/cabinets/cabinets.json` lists them with their names).
    public static let bundled = ["american-1x12-open", "british-2x12-closed", "british-4x12-closed"]
    /// Their names, as the window's menu shows them (and the catalogue has them).
    public static let names = ["American 1x12 Open Back", "British 2x12 Closed Back", "British 4x12 Closed Back"]
    /// `cab.ir`'s last choice: the impulse response loaded from a file.
    public static let fileChoice = "file"
    static let fileIndex = bundled.count
    /// While a new file's response crossfades in, the one it replaces plays from here.
    static let replacedIndex = bundled.count + 1
    /// The longest impulse response applied, in seconds.
    public static let longest = 1.0
    /// How long a change of cabinet crossfades.
    static let crossfadeTime = 0.02

    private static let source = Mutex<(any CabinetSource)?>(nil)

    /// Installs where the bundled cabinets come from (the program does this once at start).
    public static func install(_ source: any CabinetSource) { self.source.withLock { $0 = source } }
    public static var installedSource: (any CabinetSource)? { source.withLock { $0 } }

    let parameters: ParameterStore
    private var sampleRate: Double = 48_000
    private var convolver: Convolver?
    private var convolverRef: Unmanaged<Convolver>?
    /// The right side's, on a stereo board.
    private var convolverRight: Convolver?
    private var convolverRightRef: Unmanaged<Convolver>?
    /// Whether the right side played the last block. When it starts (the sides part here), its
    /// convolver takes the left's history: until then both sides were the same signal.
    private var rightPlaying = false
    /// One kernel per bundled cabinet (nil where it could not be read), and the same unretained
    /// for the audio thread (no reference counting there).
    private var kernels: [ConvolutionKernel?] = []
    private var kernelRefs: UnsafeMutablePointer<Unmanaged<ConvolutionKernel>?> = {
        let refs = UnsafeMutablePointer<Unmanaged<ConvolutionKernel>?>.allocate(capacity: Cabinet.bundled.count + 2)
        refs.initialize(repeating: nil, count: Cabinet.bundled.count + 2)
        return refs
    }()
    /// The file loaded (its path), if any. The thread that loads.
    public private(set) var file: String?
    public let fileDescription = "impulse response"
    /// A file's kernel waiting for the audio thread, and one it let go (+1 retained, or 0).
    private let pendingFile = Atomic<UInt>(0)
    /// Whether the file waiting is stereo: the board turns stereo here from the block that takes
    /// it, as its crossfade begins (the audio thread does not look into a kernel it does not own).
    private let pendingIsStereo = Atomic<Bool>(false)
    private let retiredFile = Atomic<UInt>(0)
    /// Why a cabinet could not be read (for messages), by id.
    public private(set) var problems: [String: String] = [:]
    private var current = 0
    private var next = 0
    private var fadePosition = 0
    private var fadeLength = 960
    private var level = SmoothedValue(1)
    private var levelGain = DecibelGain()
    private var scratch = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var scratchRight = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var capacity = 0

    public init(parameters: ParameterStore) {
        self.parameters = parameters
    }

    deinit {
        scratch.deallocate()
        scratchRight.deallocate()
        collectRetired()
        for cell in [pendingFile.exchange(0, ordering: .acquiringAndReleasing)] where cell != 0 { Cabinet.release(cell) }
        for i in [Cabinet.fileIndex, Cabinet.replacedIndex] { kernelRefs[i]?.release() }
        kernelRefs.deallocate()
    }

    private static func release(_ cell: UInt) {
        Unmanaged<ConvolutionKernel>.fromOpaque(UnsafeRawPointer(bitPattern: cell)!).release()
    }

    /// Releases a file's kernel the audio thread has let go. Not on the audio thread.
    private func collectRetired() {
        let old = retiredFile.exchange(0, ordering: .acquiringAndReleasing)
        if old != 0 { Cabinet.release(old) }
    }

    /// Reads the impulse response in `path` (through the installed source), makes it ready off
    /// the audio thread and hands it over; `cab.ir` is set to `file`. Throws, changing nothing,
    /// when the file cannot be used. Not on the audio thread; one thread at a time.
    public func load(file path: String) throws {
        guard let source = Cabinet.installedSource else { throw CabinetLoadError.noSource }
        let ir = try source.impulseResponse(file: path, sampleRate: sampleRate)
        let kernel = Cabinet.kernel(ir, longest: Int(Cabinet.longest * sampleRate))
        file = path
        collectRetired()
        if convolverRef == nil {
            // Not prepared yet: `prepare` makes it at the session's rate.
            parameters.set(.cabImpulse, Float(Cabinet.fileIndex))
            return
        }
        let new = UInt(bitPattern: Unmanaged.passRetained(kernel).toOpaque())
        pendingIsStereo.store(kernel.right != nil, ordering: .relaxed)
        let waiting = pendingFile.exchange(new, ordering: .acquiringAndReleasing)
        if waiting != 0 { Cabinet.release(waiting) }
        parameters.set(.cabImpulse, Float(Cabinet.fileIndex))
    }

    public func stateJSON() -> String? { file.map { FileState.json(file: $0) } }

    /// Loads the file a preset's state names (`{"file": "…"}`); a state without one unloads nothing.
    /// The parameters are the preset's: `cab.ir` is left as they set it.
    public func restore(stateJSON: String) throws {
        guard let path = FileState.file(in: stateJSON), path != file else { return }
        let choice = parameters.load(.cabImpulse)
        try load(file: path)
        parameters.set(.cabImpulse, choice)
    }

    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        self.sampleRate = sampleRate
        capacity = maximumBlockSize
        reallocateZeroed(&scratch, count: max(1, maximumBlockSize))
        reallocateZeroed(&scratchRight, count: max(1, maximumBlockSize))
        level.prepare(sampleRate: sampleRate)
        fadeLength = max(1, Int(sampleRate * Cabinet.crossfadeTime))
        let longest = Int(Cabinet.longest * sampleRate)
        var taps: [[Float]?] = []
        problems = [:]
        let source = Cabinet.installedSource
        for id in Cabinet.bundled {
            guard let source else { taps.append(nil); problems[id] = "no cabinets are installed"; continue }
            do {
                let ir = try source.impulseResponse(cabinet: id, sampleRate: sampleRate)
                taps.append(Cabinet.taps(ir, channel: 0, longest: longest))
            } catch {
                taps.append(nil)
                problems[id] = "\(error)"
            }
        }
        // Room for a file of up to `longest` whatever is loaded later (the work is the kernel's).
        let made = Convolver(longestKernel: longest)
        convolver = made
        convolverRef = Unmanaged.passUnretained(made)
        let madeRight = Convolver(longestKernel: longest)
        convolverRight = madeRight
        convolverRightRef = Unmanaged.passUnretained(madeRight)
        kernels = taps.map { $0.map { ConvolutionKernel(taps: $0) } }
        for (i, kernel) in kernels.enumerated() { kernelRefs[i] = kernel.map { Unmanaged.passUnretained($0) } }
        // A file's response again at this rate (a new file waiting is made at the old one: read again).
        collectRetired()
        let waiting = pendingFile.exchange(0, ordering: .acquiringAndReleasing)
        if waiting != 0 { Cabinet.release(waiting) }
        for i in [Cabinet.fileIndex, Cabinet.replacedIndex] {
            kernelRefs[i]?.release()
            kernelRefs[i] = nil
        }
        if let file, let source {
            do {
                let ir = try source.impulseResponse(file: file, sampleRate: sampleRate)
                kernelRefs[Cabinet.fileIndex] = Unmanaged.passRetained(Cabinet.kernel(ir, longest: longest))
            } catch {
                problems[Cabinet.fileChoice] = "\(error)"
            }
        }
        reset()
    }

    /// The kernel for a file's `ir`: its first channel, and its second as the right side.
    static func kernel(_ ir: ImpulseResponse, longest: Int) -> ConvolutionKernel {
        guard ir.channels.count >= 2 else { return ConvolutionKernel(taps: taps(ir, channel: 0, longest: longest)) }
        return ConvolutionKernel(left: taps(ir, channel: 0, longest: longest), right: taps(ir, channel: 1, longest: longest))
    }

    /// The taps applied for `ir`'s `channel` (cut at `longest` with a 5 ms fade).
    static func taps(_ ir: ImpulseResponse, channel: Int, longest: Int) -> [Float] {
        let recorded = channel < ir.channels.count ? ir.channels[channel] : [0]
        var taps = Array(recorded.prefix(longest))
        if taps.isEmpty { taps = [0] }
        if recorded.count > longest {
            let fade = min(taps.count, max(1, Int(0.005 * ir.sampleRate)))
            for i in 0..<fade { taps[taps.count - 1 - i] *= Float(i) / Float(fade) }
        }
        return taps.map { $0.isFinite ? $0 : 0 }
    }

    public func reset() {
        convolver?.reset()
        convolverRight?.reset()
        rightPlaying = false
        current = choice()
        next = current
        fadePosition = fadeLength
        level.snap(to: decibelsToGain(parameters.load(.cabLevel)))
    }

    @inline(__always)
    private func choice() -> Int { min(max(Int(parameters.load(.cabImpulse).rounded()), 0), Cabinet.fileIndex) }

    /// Audio thread, between crossfades: takes in a new file's kernel. The one it replaces is
    /// crossfaded from (if it is playing) and then let go, or let go at once.
    @inline(__always)
    private func takeNewFile() {
        guard retiredFile.load(ordering: .acquiring) == 0, kernelRefs[Cabinet.replacedIndex] == nil else { return }
        let new = pendingFile.exchange(0, ordering: .acquiringAndReleasing)
        guard new != 0 else { return }
        let old = kernelRefs[Cabinet.fileIndex]
        kernelRefs[Cabinet.fileIndex] = Unmanaged<ConvolutionKernel>.fromOpaque(UnsafeRawPointer(bitPattern: new)!)
        guard let old else { return }
        if current == Cabinet.fileIndex {
            kernelRefs[Cabinet.replacedIndex] = old
            current = Cabinet.replacedIndex
            next = Cabinet.fileIndex
            fadePosition = 0
        } else {
            retiredFile.store(UInt(bitPattern: old.toOpaque()), ordering: .releasing)
        }
    }

    /// Audio thread: a crossfade has ended on `current`; a replaced file's kernel is let go.
    @inline(__always)
    private func fadeEnded() {
        if current != Cabinet.replacedIndex, let old = kernelRefs[Cabinet.replacedIndex] {
            kernelRefs[Cabinet.replacedIndex] = nil
            retiredFile.store(UInt(bitPattern: old.toOpaque()), ordering: .releasing)
        }
    }

    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        guard let x = block.baseAddress else { return }
        run(x, nil, block.count)
    }

    /// Audio thread: each side through its own convolver, the right side with a stereo file's
    /// second channel (or the same response).
    public func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {
        guard let l = left.baseAddress, let r = right.baseAddress else { return }
        run(l, r, left.count)
    }

    /// A mono response makes no difference between the sides.
    public var playsInStereo: Bool { false }

    /// A stereo file would.
    public var mayWiden: Bool { true }

    /// A stereo file is loaded (playing, crossfading out, or waiting to be taken): the board turns
    /// stereo here, and the right side's convolver keeps up with its input. Audio thread.
    public var widensNow: Bool {
        @inline(__always) func stereo(_ i: Int) -> Bool {
            guard let kernel = kernelRefs[i] else { return false }
            return kernel._withUnsafeGuaranteedRef { $0.right != nil }
        }
        return stereo(Cabinet.fileIndex) || stereo(Cabinet.replacedIndex)
            || (pendingFile.load(ordering: .relaxed) != 0 && pendingIsStereo.load(ordering: .relaxed))
    }

    /// The kernel a side plays: the right side a stereo response's second channel.
    @inline(__always)
    private static func side(_ kernel: Unmanaged<ConvolutionKernel>, right: Bool) -> Unmanaged<ConvolutionKernel> {
        guard right else { return kernel }
        return kernel._withUnsafeGuaranteedRef { $0.right } ?? kernel
    }

    private func run(_ x: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, _ n: Int) {
        guard let convolverRef, let convolverRightRef else { return }
        if right != nil && !rightPlaying {
            convolverRightRef._withUnsafeGuaranteedRef { right in
                convolverRef._withUnsafeGuaranteedRef { right.copyState(from: $0) }
            }
        }
        rightPlaying = right != nil
        for i in 0..<n where !x[i].isFinite { x[i] = 0 }
        if let right { for i in 0..<n where !right[i].isFinite { right[i] = 0 } }
        level.setTarget(levelGain(parameters.load(.cabLevel)))
        if fadePosition >= fadeLength { takeNewFile() }
        let wanted = choice()
        if fadePosition >= fadeLength && wanted != current {
            next = wanted
            fadePosition = 0
        }
        if fadePosition < fadeLength, let from = kernelRefs[current], let to = kernelRefs[next] {
            // Both cabinets from the same input; the output glides from one to the other.
            @inline(__always) func both(_ convolver: Unmanaged<Convolver>, _ io: UnsafeMutablePointer<Float>,
                                        _ scratch: UnsafeMutablePointer<Float>, right side: Bool) {
                let first = Cabinet.side(from, right: side), second = Cabinet.side(to, right: side)
                convolver._withUnsafeGuaranteedRef { convolver in
                    first._withUnsafeGuaranteedRef { first in
                        second._withUnsafeGuaranteedRef { second in
                            convolver.process(io, count: n, first: first, into: io, second: second, into: scratch)
                        }
                    }
                }
                for i in 0..<n {
                    let g = min(Float(fadePosition + i) / Float(fadeLength), 1)
                    io[i] += g * (scratch[i] - io[i])
                }
            }
            both(convolverRef, x, scratch, right: false)
            if let right { both(convolverRightRef, right, scratchRight, right: true) }
            fadePosition += n
            if fadePosition >= fadeLength {
                current = next
                fadeEnded()
            }
        } else {
            if fadePosition < fadeLength {
                current = next
                fadePosition = fadeLength
                fadeEnded()
            }
            // A cabinet that could not be read passes the signal through.
            if let kernel = kernelRefs[current] {
                @inline(__always) func one(_ convolver: Unmanaged<Convolver>, _ io: UnsafeMutablePointer<Float>, right side: Bool) {
                    convolver._withUnsafeGuaranteedRef { convolver in
                        Cabinet.side(kernel, right: side)._withUnsafeGuaranteedRef { convolver.process(io, count: n, first: $0, into: io) }
                    }
                }
                one(convolverRef, x, right: false)
                if let right { one(convolverRightRef, right, right: true) }
            }
        }
        // The same level glide on both sides.
        @inline(__always) func applyLevel(_ io: UnsafeMutablePointer<Float>) -> SmoothedValue {
            var level = self.level
            if level.isRamping {
                for i in 0..<n { io[i] *= level.next() }
            } else if level.current != 1 {
                let g = level.current
                for i in 0..<n { io[i] *= g }
            }
            for i in 0..<n { io[i] = flushed(io[i]) }
            return level
        }
        let glided = applyLevel(x)
        if let right { _ = applyLevel(right) }
        level = glided
    }
}

extension PedalKind {
    /// Which cabinet, its level; a zero-latency partitioned convolution.
    public static let cab = PedalKind(
        id: "cab", name: "Cabinet",
        controls: [
            PedalControl("ir", "Cabinet", .none, 0...Float(Cabinet.bundled.count), default: 0,
                         .choice(Cabinet.bundled + [Cabinet.fileChoice]), name: "Cabinet"),
            PedalControl("level_db", "Level", .decibels, -24...12, default: 0),
        ],
        face: PedalFace(width: 224, places: [
            .init("ir", x: 14, y: 16, width: 196, menu: true, labels: Cabinet.names + ["Impulse response file"]),
            .init("level_db", x: 80, y: 74, diameter: 44),
        ], ink: (0.93, 0.86, 0.70),
        artwork: .init(body: "#3a2f26", dark: "#1c1510", text: "#efe1c4", accent: "#c8a86a", name: "CABINET", subtitle: "IMPULSE RESPONSE")),
        make: { Cabinet(parameters: $0.parameters) })
}

extension Parameter {
    public static let cabEnabled = PedalKind.cab.enabledParameter
    public static let cabImpulse = PedalKind.cab.parameter("ir")
    public static let cabLevel = PedalKind.cab.parameter("level_db")
}

/// A pedal that loads a file of one's own (the cabinet's impulse response): the window offers a
/// file chooser for it, presets keep the file in the pedal's state.
public protocol FileLoadingEffect: AnyObject {
    /// What the file is, for the chooser's title ("impulse response").
    var fileDescription: String { get }
    /// The file loaded, if any.
    var file: String? { get }
    /// Loads `path`, or throws an error that names it. Not on the audio thread.
    func load(file path: String) throws
    /// The file chooser's title and filter: which files it offers.
    var fileChooserTitle: String { get }
    var fileTypes: (name: String, patterns: [String]) { get }
    /// What the pedal's menu shows for `path` (the file's name; a model's own name).
    func label(forFile path: String) -> String
    /// Why the file named cannot play (a preset's model file gone), shown on the pedal; nil when it plays.
    var fileProblem: String? { get }
    /// What plays, in a sentence for the pedal's tooltip (a model's name, kind and rate), if more than its name.
    var fileDetail: String? { get }
}

extension FileLoadingEffect {
    public var fileChooserTitle: String { "Load an \(fileDescription)" }
    public var fileTypes: (name: String, patterns: [String]) {
        ("Audio files (WAV, FLAC, AIFF)", ["*.wav", "*.WAV", "*.flac", "*.FLAC", "*.aif", "*.aiff", "*.AIF", "*.AIFF"])
    }
    public func label(forFile path: String) -> String { (path as NSString).lastPathComponent }
    public var fileProblem: String? { nil }
    public var fileDetail: String? { nil }
}

/// How a file-loading pedal's state names its file: `{"file":"<path>"}`.
public enum FileState {
    public static func json(file path: String) -> String {
        (try? JSONSerialization.data(withJSONObject: ["file": path])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    public static func file(in json: String) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["file"] as? String
    }
}

public enum CabinetLoadError: Error, CustomStringConvertible {
    case noSource
    public var description: String { "no impulse responses can be read (Stompbox's data folder was not found)" }
}

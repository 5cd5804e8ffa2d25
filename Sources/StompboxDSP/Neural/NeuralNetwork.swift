import Foundation

/// A trained network that turns a guitar's signal into an amp's: a Neural Amp Modeler capture
/// (`.nam`) or an AIDA-X / RTNeural model (`.json`, `.aidax`). Every architecture the files name
/// is one class behind this protocol; the pedal (`NeuralAmp`) knows none of them.
///
/// Life: made from a file off the audio thread (`NeuralModels.load`), `prepare`d there, then
/// prewarmed (`NeuralModels.prewarm`) and handed to the audio thread, which calls `process`
/// and `reset` only: no allocation, no locks, no reference counting there. Weights are laid out
/// for SIMD when the network is made, never while it plays.
public protocol NeuralNetwork: AnyObject {
    /// How many past input samples an output sample depends on (a WaveNet's receptive field, a
    /// Linear model's taps); 1 for a recurrent network, whose memory is its state.
    var receptiveField: Int { get }
    /// Whether its memory is a recurrent state (LSTM, GRU): prewarmed with 0.5 s of silence
    /// rather than its receptive field.
    var isRecurrent: Bool { get }
    /// Sizes its scratch for blocks of at most `maximumBlockSize`. Not on the audio thread.
    func prepare(maximumBlockSize: Int)
    /// Clears its history and state to silence's. Allocation-free.
    func reset()
    /// Runs `count` (at most `maximumBlockSize`) samples: `input` to `output`, which may be the
    /// same memory. Audio thread: allocation- and lock-free.
    func process(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, count: Int)
}

/// What a model file says about itself besides its weights. Shown on the pedal and by
/// `stompbox models FILE --json`.
public struct NeuralModelInfo: Sendable, Equatable, Codable {
    /// "NAM" or "AIDA-X".
    public var format: String
    /// The file's format version ("0.5.4"; nil where the format has none).
    public var version: String?
    /// "WaveNet", "LSTM", "ConvNet", "Linear", "SlimmableContainer", "GRU"…
    public var architecture: String
    /// The rate it was trained at; nil when the file does not say (then it is 48 kHz).
    public var sampleRate: Double?
    public var name: String?
    public var modeledBy: String?
    public var gearMake: String?
    public var gearModel: String?
    public var gearType: String?
    public var toneType: String?
    /// The output's loudness in dB for NAM's standard input (the "Normalized" reference).
    public var loudness: Double?
    /// The input level, in dBu, that a full-scale sample stood for when it was captured.
    public var inputLevelDBu: Double?
    public var outputLevelDBu: Double?

    public init(format: String, version: String? = nil, architecture: String, sampleRate: Double? = nil) {
        self.format = format
        self.version = version
        self.architecture = architecture
        self.sampleRate = sampleRate
    }

    /// The rate it runs at: the file's, or 48 kHz when it does not say.
    public var rate: Double { sampleRate ?? 48_000 }
}

/// A model read from a file: its network (not yet prepared) and what the file says of it.
public struct NeuralModel {
    public var info: NeuralModelInfo
    public var network: any NeuralNetwork

    public init(info: NeuralModelInfo, network: any NeuralNetwork) {
        self.info = info
        self.network = network
    }
}

/// Why a file could not be played as a model: one message naming the file and the problem.
public struct NeuralModelError: Error, Equatable, CustomStringConvertible {
    public var file: String
    public var problem: String

    public init(file: String, problem: String) {
        self.file = file
        self.problem = problem
    }

    public var description: String { "\(file): \(problem)" }
}

/// The problem alone, thrown by an architecture's builder; `NeuralModels` adds the file's name.
public struct NeuralModelProblem: Error, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

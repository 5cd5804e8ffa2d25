import Foundation
import StompboxDSP

/// Where the guitar comes from.
public enum LiveInput: Equatable, Sendable {
    /// The server's default source.
    case defaultSource
    /// A PulseAudio source by name (e.g. `alsa_input.usb-…` or `guitar_in.monitor`).
    case source(String)
    /// The bundled guitar riff, looped, for people without a guitar at hand.
    case demo
}

/// What the live loop should open. Changing it restarts the streams.
public struct LiveSettings: Equatable, Sendable {
    public var input: LiveInput = .defaultSource
    /// 1-based channel of the input that carries the guitar.
    public var inputChannel: Int = 1
    /// A sink by name; nil for the server's default sink.
    public var output: String? = nil
    public var sampleRate: Int = 48_000
    /// Frames per block, 64…1024.
    public var blockSize: Int = 128
    /// Playback buffer target in milliseconds.
    public var latencyMs: Double = 10

    public init() {}
}

public enum LiveState: String, Sendable {
    case stopped
    case running
    case waitingForInput = "waiting-for-input"
    case waitingForOutput = "waiting-for-output"
    case noServer = "no-server"
}

/// A snapshot of the live loop, safe to read from any thread.
public struct LiveStatus: Equatable, Sendable {
    public var state: LiveState = .stopped
    /// Measured from the streams (capture + playback + one block); nil when not running.
    public var latencyMs: Double? = nil
    public var underruns: Int = 0
    public var overruns: Int = 0
    /// Peak levels since the previous status read, in dBFS.
    public var inputPeakDB: Double = -120
    public var outputPeakDB: Double = -120
    /// A plain sentence for the user when something is wrong (no server, device gone, no RT priority).
    public var message: String? = nil

    public init() {}

    /// `state=running latency_ms=8.1 underruns=0 overruns=0 in_peak_db=-12.3 out_peak_db=-9.8`
    public var statusLine: String {
        var line = "state=\(state.rawValue)"
        if let l = latencyMs { line += " latency_ms=\(String(format: "%.1f", l))" }
        line += " underruns=\(underruns) overruns=\(overruns)"
        line += " in_peak_db=\(String(format: "%.1f", inputPeakDB)) out_peak_db=\(String(format: "%.1f", outputPeakDB))"
        return line
    }
}

/// A PulseAudio source or sink.
public struct AudioDevice: Equatable, Sendable, Codable {
    public var name: String
    public var description: String
    public var sampleRate: Int
    public var channels: Int
    /// True for a sink's monitor source.
    public var isMonitor: Bool

    public init(name: String, description: String, sampleRate: Int, channels: Int, isMonitor: Bool) {
        self.name = name
        self.description = description
        self.sampleRate = sampleRate
        self.channels = channels
        self.isMonitor = isMonitor
    }
}

/// PLACEHOLDER API for the live PulseAudio loop (record → chain → playback on its own thread).
/// The window and `stompbox run --headless` drive the same class.
public final class LiveEngine: @unchecked Sendable {
    public let chain: Chain
    public private(set) var settings: LiveSettings

    public init(chain: Chain, settings: LiveSettings) {
        self.chain = chain
        self.settings = settings
    }

    /// Starts the audio thread; returns at once. It keeps retrying while the server or a
    /// device is missing, reporting that in `status`.
    public func start() {}

    /// Stops the audio thread and closes the streams; returns when it has stopped.
    public func stop() {}

    /// Reopens the streams with new settings (device picker).
    public func apply(_ settings: LiveSettings) { self.settings = settings }

    /// The current state; peaks are those since the previous call.
    public func status() -> LiveStatus { LiveStatus() }

    /// Lists the server's sources and sinks.
    public static func devices() throws -> (sources: [AudioDevice], sinks: [AudioDevice]) { ([], []) }
}

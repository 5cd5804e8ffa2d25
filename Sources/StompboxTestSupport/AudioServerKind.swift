import Foundation

/// Which program answers the PulseAudio protocol in a `PrivatePulseServer`.
///
/// - `pulseaudio`: PulseAudio itself (Debian 12: 16.1), one process.
/// - `pipewire`: PipeWire's PulseAudio server (Debian 12: 0.3.65), four processes: a private
///   session bus (`dbus-daemon`), `pipewire`, the session manager `wireplumber` (it links streams
///   to devices; without it nothing passes audio) and `pipewire-pulse` (the protocol server).
///
/// Differences on PipeWire found on this machine (0.3.65, WirePlumber 0.4.13) are listed on
/// `PrivatePulseServer`.
public enum AudioServerKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case pulseaudio
    case pipewire

    public var description: String { rawValue }

    /// Programs `start()` needs besides the client tools.
    public var serverBinaries: [String] {
        switch self {
        case .pulseaudio: ["pulseaudio"]
        case .pipewire: ["pipewire", "wireplumber", "pipewire-pulse", "dbus-daemon"]
        }
    }

    /// The client tools every kind needs (pulseaudio-utils).
    public static let clientBinaries = ["pactl", "pacat", "parec"]

    /// Debian packages that provide the binaries.
    public var packages: String {
        switch self {
        case .pulseaudio: "pulseaudio pulseaudio-utils"
        case .pipewire: "pipewire pipewire-bin pipewire-pulse wireplumber dbus pulseaudio-utils"
        }
    }

    /// Binaries that are not on PATH (empty when the kind can run here).
    public var missingBinaries: [String] {
        (serverBinaries + Self.clientBinaries).filter { PrivatePulseServer.which($0) == nil }
    }

    public var isAvailable: Bool { missingBinaries.isEmpty }

    /// Why this kind cannot run here, for a test's skip message; nil when it can.
    public var unavailableReason: String? {
        let missing = missingBinaries
        guard !missing.isEmpty else { return nil }
        return "\(missing.joined(separator: ", ")) not installed; `apt-get install \(packages)` to run the \(rawValue) tests"
    }

    /// Whether `module-pipe-source` makes a source that runs on the clock of whoever writes
    /// its FIFO (so a `PacedWriter` at 48 014.4 samples/s is a source 300 ppm fast, and a
    /// stalled writer blocks the source's readers).
    ///
    /// True on PulseAudio: its pipe source posts what it reads, when it reads it.
    ///
    /// Measured on PulseAudio 16.1: a writer at 47 520/s gives a reader 47 519.6/s, all samples
    /// in order; while the writer is stalled the reader gets nothing (0 frames in 1.5 s), and
    /// likewise after the writer closed the FIFO (no silence is generated).
    ///
    /// False on pipewire-pulse 0.3.65: `module-pipe-source` loads (it is
    /// `libpipewire-module-pipe-tunnel` in `tunnel.mode=source`), creates the FIFO and passes
    /// the writer's samples bit-exactly, but the node is a *follower* of the graph driver (a
    /// CLOCK_MONOTONIC timer): each graph cycle takes one quantum from the FIFO. Measured: a
    /// writer at 47 520/s gives a reader 48 007/s with ~2 400 samples of silence inserted a
    /// second (underruns), not a slow stream; a writer at 50 400/s gives the reader exactly
    /// 48 000/s and, once the FIFO is full, has its chunks refused (9 898 of 495 100 samples in
    /// 10 s); a stalled or closed writer gives silence at 48 000/s, not blocked reads. Nothing else in 0.3.65 gives a source
    /// on its own clock either: drivers (`support.node.driver`, `support.null-audio-sink`)
    /// all run a CLOCK_MONOTONIC timer at the nominal rate with no rate offset, and a client
    /// cannot drive the graph without its own libpipewire code (a `pw_stream` with
    /// `PW_STREAM_FLAG_DRIVER` triggered by the writer). PipeWire 1.x rewrote the pipe
    /// tunnel as a driver paced by its FIFO, which is not checked here. So drifting and
    /// stalling sources are PulseAudio-only in these tests.
    public var pipeSourceRunsOnWriterClock: Bool { self == .pulseaudio }
}

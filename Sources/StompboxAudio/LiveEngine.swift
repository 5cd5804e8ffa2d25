import CAudioShim
import CPulse
import Foundation
import StompboxDSP
import Synchronization

/// Where the guitar comes from.
public enum LiveInput: Equatable, Sendable {
    /// The server's default source.
    case defaultSource
    /// A PulseAudio source by name (e.g. `alsa_input.usb-…` or `guitar_in.monitor`).
    case source(String)
    /// The bundled guitar riff, looped, for people without a guitar at hand.
    case demo
}

/// Which audio server the live loop plays through.
public enum LiveBackend: String, Equatable, Sendable, CaseIterable {
    /// PulseAudio's simple streams (PipeWire's pulse server too): every desktop has it.
    case pulse
    /// A JACK client (jackd, or PipeWire's JACK): the chain runs inside the graph's cycle.
    case jack
    /// JACK when a JACK server answers, PulseAudio otherwise (asked again at every reconnection).
    case auto

    /// The command line's help for `--backend` (run, the window).
    public static let help = "auto (the default: JACK when a JACK server answers, jackd or PipeWire's JACK, else PulseAudio), pulse (PulseAudio), or jack (a JACK client inside the graph's cycle)."
    /// The command line's help for `--no-connect`.
    public static let noConnectHelp = "With JACK: leave stompbox:in and stompbox:out_1/out_2 unconnected, for your patchbay (by default they go to the first physical capture and playback ports, or --input/--output)."

    /// Whether a JACK server answers now (what `auto` asks; about a millisecond).
    public static func jackServerAnswers() -> Bool { JackSession.serverAnswers() }

    /// `--backend VALUE`, or an error naming the choices.
    public static func parse(_ text: String) -> LiveBackend? { LiveBackend(rawValue: text.lowercased()) }
}

/// What the live loop should open. Changing it restarts the streams.
public struct LiveSettings: Equatable, Sendable {
    public var backend: LiveBackend = .auto
    /// JACK: connect `in` to the input (the first physical capture port by default) and the
    /// outputs to the output ports (the first two physical playback ports); false leaves the
    /// wiring to the user's patchbay.
    public var connectPorts = true
    /// A PulseAudio source, or with JACK the port to connect `in` to.
    public var input: LiveInput = .defaultSource
    /// 1-based channel of the input that carries the guitar.
    public var inputChannel: Int = 1
    /// A sink by name; nil for the server's default sink. With JACK: the port for `out_1`, or
    /// two ports `PORT1,PORT2` for `out_1` and `out_2`.
    public var output: String? = nil
    public var sampleRate: Int = 48_000
    /// Frames per block, 64…1024.
    public var blockSize: Int = 128
    /// The playback margin in milliseconds: how much output is still queued when a block is
    /// written, the cushion against a late wake-up. End to end, the guitar reaches the output
    /// after about this plus one block plus the interface's own buffers.
    public var latencyMs: Double = 8
    /// Raise the margin step by step when dropouts keep happening (up to `autoLatencyCapMs`).
    public var autoLatency = true
    public var autoLatencyCapMs: Double = 40
    /// The bundled demo riff (`data/demo-riff.flac`) for the `.demo` input; without it the riff
    /// is synthesised.
    public var demoFile: String? = nil

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
    /// End to end, from the server's timing of both streams (capture, waiting input, playback);
    /// nil when not running.
    public var latencyMs: Double? = nil
    /// The playback margin in force (raised by automatic latency, or as set); nil when not running.
    public var targetLatencyMs: Double? = nil
    /// The input's clock against the output's, in ppm (positive: the input runs fast), once the
    /// loop follows it; nil while both share one clock (no resampling).
    public var driftPPM: Double? = nil
    /// True when automatic latency has raised the margin above the one in the settings.
    public var autoLatencyRaised = false
    public var underruns: Int = 0
    public var overruns: Int = 0
    /// Peak levels since the previous status read, in dBFS.
    public var inputPeakDB: Double = -120
    public var outputPeakDB: Double = -120
    /// A plain sentence for the user when something is wrong (no server, device gone, no RT priority).
    public var message: String? = nil
    /// The server played through (`auto` resolved); nil when not connected.
    public var backend: LiveBackend? = nil
    /// JACK: the server's DSP load in percent (all clients), its period in frames and its rate.
    public var dspLoadPercent: Double? = nil
    public var periodFrames: Int? = nil
    public var serverRate: Int? = nil
    /// The audio thread's real-time priority while running (nil until it is known).
    public var realtime: RealtimePriority? = nil

    public init() {}

    /// `state=running latency_ms=8.1 underruns=0 overruns=0 in_peak_db=-12.3 out_peak_db=-9.8 target_ms=8 drift_ppm=0.0 rt=fifo:10`
    public var statusLine: String {
        var line = "state=\(state.rawValue)"
        if let l = latencyMs { line += " latency_ms=\(String(format: "%.1f", l))" }
        line += " underruns=\(underruns) overruns=\(overruns)"
        line += " in_peak_db=\(String(format: "%.1f", inputPeakDB)) out_peak_db=\(String(format: "%.1f", outputPeakDB))"
        if let t = targetLatencyMs { line += " target_ms=\(LiveStatus.milliseconds(t))" }
        if state == .running { line += " drift_ppm=\(String(format: "%.1f", driftPPM ?? 0))" }
        if let realtime { line += " rt=\(realtime)" }
        if backend == .jack {
            line += " backend=jack"
            if let p = periodFrames { line += " period=\(p)" }
            if let r = serverRate { line += " rate=\(r)" }
            if let d = dspLoadPercent { line += " dsp_load=\(String(format: "%.1f", d))" }
        }
        return line
    }

    /// "14" or "12.5".
    static func milliseconds(_ ms: Double) -> String {
        let r = (ms * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(format: "%.1f", r)
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


/// The live loop: record → chain → playback on its own thread, with the streams closed and
/// reopened as the server and the chosen devices come and go. The window and
/// `stompbox run --headless` drive the same class.
///
/// Each opening is one session of an `AudioBackend` (`PulseSession` or `JackSession`), made
/// with a `LiveHost` that holds what they share: the settings, the stop check, the status and
/// the block path (input or demo riff → chain → output). The retry loop (`run`) answers every
/// backend's `BackendOutcome` the same way.
///
/// Threads: the caller's (start/stop/apply/status), and the audio thread, which runs the
/// PulseAudio mainloop: the connection, the device watch, the streams and the block path all
/// live there, so nothing is shared with a server thread. The caller reaches it through
/// atomics and `PulseConnection.wakeup`, so a stop is seen at once even while a device is
/// stalled or the server does not answer.
///
/// The chain is prepared for the largest block (`LiveEngine.maximumBlock`) in `start` and
/// when the sample rate changes, always on the caller's thread with the audio thread stopped:
/// a new block size or latency reopens the streams and keeps every buffer and the Looper's
/// recording.
public final class LiveEngine: @unchecked Sendable {
    public let chain: Chain
    /// MIDI arriving at `stompbox:midi_in` on the JACK backend (see `MIDIInputs`).
    public let jackMIDI = MIDIInbox()
    public var settings: LiveSettings { settingsBox.withLock { $0.settings } }

    private struct SettingsBox { var settings: LiveSettings; var generation: Int }
    private let settingsBox: Mutex<SettingsBox>
    /// Read by the audio thread: a change means "reopen with the new settings".
    private let settingsGeneration = Atomic<Int>(0)
    private let stopRequested = Atomic<Bool>(false)
    private let autoLatencyReset = Atomic<Bool>(false)

    // Status, written by the audio thread.
    private let stateValue = Atomic<Int>(LiveEngine.stateCode(.stopped))
    private let latencyBits = Atomic<UInt64>(Double.nan.bitPattern)
    private let targetBits = Atomic<UInt64>(Double.nan.bitPattern)
    private let driftBits = Atomic<UInt64>(Double(0).bitPattern)
    private let followingDrift = Atomic<Bool>(false)
    private let underrunCount = Atomic<Int>(0)
    private let overrunCount = Atomic<Int>(0)
    /// The target automatic latency settled on (ms bits) and the dropouts that led there.
    private let raisedTargetBits = Atomic<UInt64>(Double.nan.bitPattern)
    private let raisedAfterDropouts = Atomic<Int>(0)
    private let inputStalled = Atomic<Bool>(false)
    /// The backend of the running session (0: none, 1: PulseAudio, 2: JACK), JACK's DSP load
    /// (percent bits) and period.
    private let backendCode = Atomic<Int>(0)
    private let dspLoadBits = Atomic<UInt64>(Double.nan.bitPattern)
    private let jackPeriod = Atomic<Int>(0)
    private let jackRate = Atomic<Int>(0)
    /// The JACK process callback's own timing (see `JackTiming`), kept across sessions.
    public let jackTiming = JackTiming()
    private let messageBox = Mutex<String?>(nil)
    /// The recorder the block path feeds (an unretained `Recorder`'s address, 0 for none), the
    /// recorder kept alive meanwhile, and the blocks played, so `stopRecording` knows when the
    /// block path let go (`LiveEngine+Recording.swift`).
    let recorderAddress = Atomic<Int>(0)
    let heldRecorder = Mutex<Recorder?>(nil)
    let blocksPlayed = Atomic<Int>(0)
    private let realtimeMessage = Mutex<String?>(nil)
    /// The audio thread's real-time priority, as the status line says it (`rt=`).
    private let realtime = Mutex<RealtimePriority?>(nil)

    private var thread: Thread?
    private let threadDone = DispatchSemaphore(value: 0)
    private var connection: PulseConnection?
    private var buffers: PulseBuffers?
    /// Audio thread only (a PulseAudio session's policy raises it after dropouts).
    var autoLatency = AutoLatency(requested: 0.011, cap: 0.04, step: 0.002)

    /// The bundled riff for `.demo`, loaded before the thread starts.
    private var demo: UnsafeMutableBufferPointer<Float>?
    private var demoLoadedFor: (rate: Int, file: String?)?

    /// The largest block the chain is prepared for: PulseAudio's blocks are at most this, and
    /// JACK periods longer than this are processed in blocks by the chain.
    static let maximumBlock = 1024

    /// SCHED_FIFO priority asked for by the audio thread (below PulseAudio's own, usually 5…20).
    static let realtimePriority: Int32 = 10
    /// How often a missing server or device is looked for again.
    static let retryInterval: TimeInterval = 0.5

    public init(chain: Chain, settings: LiveSettings) {
        self.chain = chain
        settingsBox = Mutex(SettingsBox(settings: settings, generation: 0))
    }

    deinit {
        stop()
        demo?.deallocate()
    }

    /// Prepares the chain (if the rate changed) and starts the audio thread; returns at once.
    /// It keeps retrying while the server or a device is missing, reporting that in `status`.
    public func start() {
        guard thread == nil else { return }
        let s = settings
        // On JACK the server's rate rules: asked here, so the chain is prepared on this thread.
        let rate = s.backend == .pulse ? s.sampleRate : JackSession.serverRate() ?? s.sampleRate
        chain.prepareForLive(rate: rate)
        if s.input == .demo, demoLoadedFor == nil || demoLoadedFor! != (s.sampleRate, s.demoFile) {
            demo?.deallocate()
            demo = DemoRiff.load(sampleRate: s.sampleRate, file: s.demoFile)
            demoLoadedFor = (s.sampleRate, s.demoFile)
        }
        if buffers == nil { buffers = PulseBuffers() }
        let connection = PulseConnection()
        self.connection = connection
        stopRequested.store(false, ordering: .releasing)
        let t = Thread { [self] in
            run(connection)
            threadDone.signal()
        }
        t.name = "Stompbox audio"
        t.stackSize = 1 << 20
        thread = t
        t.start()
    }

    /// Stops the audio thread and closes the streams; returns when it has stopped (within about
    /// a tenth of a second, whatever state the server or the devices are in). A thread held inside
    /// a server's library for longer than `stopTimeout` is left there: `stop` returns anyway (the
    /// program can quit) and says so on stderr, and this engine does not start again.
    public func stop() {
        guard thread != nil, !wedged else { return }
        stopRequested.store(true, ordering: .releasing)
        connection?.wakeup()
        if threadDone.wait(timeout: .now() + Self.stopTimeout) == .timedOut {
            wedged = true
            FileHandle.standardError.write(Data("stompbox: the audio thread did not stop within \(Int(Self.stopTimeout)) s (held inside the audio server's library); leaving it\n".utf8))
            return
        }
        thread = nil
        connection = nil
    }

    /// How long `stop` waits for the audio thread.
    static let stopTimeout = 3.0
    /// The audio thread did not stop in time (`stop`): it is abandoned, and nothing restarts it.
    private var wedged = false

    /// Reopens the streams with new settings (device picker). A new sample rate (or demo file)
    /// stops the audio thread, prepares the chain here and starts it again; anything else keeps
    /// the chain as it is. A new latency target also resets automatic latency.
    public func apply(_ settings: LiveSettings) {
        let old = self.settings
        guard old != settings else { return }
        if old.latencyMs != settings.latencyMs || old.blockSize != settings.blockSize
            || old.autoLatency != settings.autoLatency || old.autoLatencyCapMs != settings.autoLatencyCapMs {
            autoLatencyReset.store(true, ordering: .releasing)
        }
        let restart = thread != nil && (old.sampleRate != settings.sampleRate || old.demoFile != settings.demoFile
                                        || (settings.input == .demo && old.input != .demo))
        if restart { stop() }
        settingsBox.withLock { box in
            box.settings = settings
            box.generation += 1
            settingsGeneration.store(box.generation, ordering: .releasing)
        }
        if restart { start() } else { connection?.wakeup() }
    }

    /// Forgets what automatic latency learnt: back to the target in the settings.
    public func resetAutoLatency() {
        autoLatencyReset.store(true, ordering: .releasing)
        settingsBox.withLock { box in
            box.generation += 1
            settingsGeneration.store(box.generation, ordering: .releasing)
        }
        connection?.wakeup()
    }

    /// The current state; peaks are those since the previous call.
    public func status() -> LiveStatus {
        var s = LiveStatus()
        s.state = LiveEngine.state(code: stateValue.load(ordering: .acquiring))
        let running = s.state == .running
        let latency = Double(bitPattern: latencyBits.load(ordering: .relaxed))
        s.latencyMs = running && latency.isFinite ? latency : nil
        let target = Double(bitPattern: targetBits.load(ordering: .relaxed))
        s.targetLatencyMs = running && target.isFinite ? target : nil
        if running && followingDrift.load(ordering: .relaxed) {
            s.driftPPM = Double(bitPattern: driftBits.load(ordering: .relaxed)) * 1e6
        }
        s.underruns = underrunCount.load(ordering: .relaxed)
        s.overruns = overrunCount.load(ordering: .relaxed)
        switch backendCode.load(ordering: .relaxed) {
        case 1: s.backend = .pulse
        case 2:
            s.backend = .jack
            let load = Double(bitPattern: dspLoadBits.load(ordering: .relaxed))
            s.dspLoadPercent = load.isFinite ? load : nil
            let p = jackPeriod.load(ordering: .relaxed)
            s.periodFrames = p > 0 ? p : nil
            let r = jackRate.load(ordering: .relaxed)
            s.serverRate = r > 0 ? r : nil
        default: break
        }
        // The chain meters its own input and output; reading them here clears them.
        let peaks = chain.controls.meters.takePeaks()
        s.inputPeakDB = LiveEngine.decibels(peaks.input)
        s.outputPeakDB = LiveEngine.decibels(peaks.output)
        if running { s.realtime = realtime.withLock { $0 } }
        var messages = [messageBox.withLock { $0 }, realtimeMessage.withLock { $0 }].compactMap { $0 }
        let raised = Double(bitPattern: raisedTargetBits.load(ordering: .relaxed))
        if raised.isFinite {
            s.autoLatencyRaised = true
            let n = raisedAfterDropouts.load(ordering: .relaxed)
            messages.append("latency raised to \(LiveStatus.milliseconds(raised)) ms after \(n) dropout\(n == 1 ? "" : "s")")
        }
        if running && inputStalled.load(ordering: .relaxed) {
            messages.append("no sound arrives from \(settings.input.sourceName ?? "the default input"); is the interface stalled?")
        }
        s.message = messages.isEmpty ? nil : messages.joined(separator: "; ")
        return s
    }

    /// What `backend` can play from and to: PulseAudio's sources and sinks, or JACK's ports
    /// (`auto`: JACK's when a JACK server answers). Call it off the GUI thread.
    public static func devices(backend: LiveBackend) throws -> (sources: [AudioDevice], sinks: [AudioDevice]) {
        if backend == .jack || (backend == .auto && JackSession.serverAnswers()) { return try JackSession.ports() }
        return try devices()
    }

    /// Lists the server's sources and sinks. Never waits more than about two seconds (a server
    /// that does not answer is reported as an error); call it off the GUI thread.
    public static func devices() throws -> (sources: [AudioDevice], sinks: [AudioDevice]) {
        let connection = PulseConnection()
        guard connection.connect(name: "Stompbox (devices)", timeout: PulseConnection.queryTimeout, cancelled: { false }) else {
            throw LiveEngineError.noServer(LiveEngine.serverDescription)
        }
        defer { connection.disconnect() }
        guard let sources = connection.sources(), let sinks = connection.sinks() else {
            throw LiveEngineError.noAnswer(LiveEngine.serverDescription)
        }
        return (sources.map(\.device), sinks.map(\.device))
    }

    static var serverDescription: String {
        ProcessInfo.processInfo.environment["PULSE_SERVER"].map { "PulseAudio server \($0)" } ?? "the PulseAudio server"
    }

    // MARK: Status helpers

    private static func stateCode(_ s: LiveState) -> Int {
        switch s {
        case .stopped: 0
        case .running: 1
        case .waitingForInput: 2
        case .waitingForOutput: 3
        case .noServer: 4
        }
    }

    private static func state(code: Int) -> LiveState {
        [.stopped, .running, .waitingForInput, .waitingForOutput, .noServer][code]
    }

    private static func decibels(_ peak: Float) -> Double {
        peak > 1e-6 ? max(-120, 20 * log10(Double(peak))) : -120
    }

    private func publish(_ state: LiveState, _ message: String?) {
        messageBox.withLock { $0 = message }
        if state != .running {
            latencyBits.store(Double.nan.bitPattern, ordering: .relaxed)
            inputStalled.store(false, ordering: .relaxed)
        }
        if state == .noServer || state == .stopped { backendCode.store(0, ordering: .relaxed) }
        stateValue.store(LiveEngine.stateCode(state), ordering: .releasing)
    }

    // MARK: The audio thread

    private func run(_ connection: PulseConnection) {
        stompbox_enable_flush_to_zero()
        let rt = RealtimePriority.request(LiveEngine.realtimePriority)
        noteRealtime(rt.granted, refused: rt.refused)
        let buffers = self.buffers!
        var autoFor = -1
        let cancelled = { [unowned self] in stopRequested.load(ordering: .acquiring) }
        /// Sleeps (no CPU) until woken (a device event, new settings, stop) or the timeout.
        func idle(_ seconds: Double) {
            let deadline = monotonicSeconds() + seconds
            let events = connection.deviceEvents
            let generation = settingsGeneration.load(ordering: .acquiring)
            while !cancelled() && monotonicSeconds() < deadline && connection.deviceEvents == events
                    && settingsGeneration.load(ordering: .acquiring) == generation {
                if connection.isConnected { connection.iterate(timeout: deadline - monotonicSeconds()) } else { usleep(20_000) }
            }
        }

        // One session per pass, whatever the backend; its outcome says when to try again.
        while !cancelled() {
            let (settings, generation) = settingsBox.withLock { ($0.settings, $0.generation) }
            if autoLatencyReset.exchange(false, ordering: .acquiring) || autoFor < 0 {
                autoFor = generation
                let requested = settings.latencyMs / 1000
                autoLatency = AutoLatency(requested: requested, cap: settings.autoLatency ? settings.autoLatencyCapMs / 1000 : requested,
                                          step: max(0.002, 0.5 * Double(settings.blockSize) / Double(settings.sampleRate)))
                raisedTargetBits.store(Double.nan.bitPattern, ordering: .relaxed)
            }
            let host = LiveHost(engine: self, settings: settings, generation: generation)
            let backend: AudioBackend
            if settings.backend == .jack || (settings.backend == .auto && JackSession.serverAnswers()) {
                if connection.isConnected { connection.disconnect() }
                backend = JackSession(host: host, timing: jackTiming)
            } else {
                backend = PulseSession(host: host, connection: connection, buffers: buffers,
                                       targetMs: 1000 * autoLatency.target, cancelled: cancelled)
            }
            switch backend.play() {
            case .stopped, .settingsChanged, .deviceGone:
                break
            case .failed(let state, let message):
                publish(state, message)
                idle(LiveEngine.retryInterval)
            }
        }
        connection.disconnect()
        publish(.stopped, nil)
    }

    // MARK: Used by the backends and their host (audio thread: atomics only)

    var isStopRequested: Bool { stopRequested.load(ordering: .relaxed) }
    var currentGeneration: Int { settingsGeneration.load(ordering: .relaxed) }
    func noteUnderrun() { underrunCount.add(1, ordering: .relaxed) }
    func noteOverrun() { overrunCount.add(1, ordering: .relaxed) }
    func noteLatency(_ ms: Double, targetMs: Double, drift: Double, following: Bool) {
        latencyBits.store(ms.bitPattern, ordering: .relaxed)
        targetBits.store(targetMs.bitPattern, ordering: .relaxed)
        driftBits.store(drift.bitPattern, ordering: .relaxed)
        followingDrift.store(following, ordering: .relaxed)
    }
    func noteStalledInput(_ name: String?) { inputStalled.store(name != nil, ordering: .relaxed) }
    func noteBackend(_ backend: LiveBackend) { backendCode.store(backend == .jack ? 2 : 1, ordering: .relaxed) }
    /// What real-time priority the audio thread has; without it, the status says so (once, in
    /// its message) and the engine plays on.
    func noteRealtime(_ granted: RealtimePriority, refused: String?) {
        realtime.withLock { $0 = granted }
        realtimeMessage.withLock {
            $0 = granted != .none ? nil
                : "no real-time priority (\(refused ?? "not granted")): playing at normal priority, so dropouts are more likely under load"
        }
    }
    func noteJack(load: Double, period: Int, rate: Int) {
        dspLoadBits.store(load.bitPattern, ordering: .relaxed)
        jackPeriod.store(period, ordering: .relaxed)
        jackRate.store(rate, ordering: .relaxed)
    }
    func publishWaiting(_ state: LiveState, _ message: String) { publish(state, message) }
    func publishRunning() {
        // The latency figure comes back once the new streams have settled.
        latencyBits.store(Double.nan.bitPattern, ordering: .relaxed)
        publish(.running, nil)
    }
    var demoRiff: UnsafeMutableBufferPointer<Float>? { demo }

    /// Automatic latency raised the target to `ms` after a dropout (`autoLatency`).
    func noteLatencyRaised(toMs ms: Double) {
        raisedAfterDropouts.store(autoLatency.totalDropouts, ordering: .relaxed)
        raisedTargetBits.store(ms.bitPattern, ordering: .relaxed)
    }
}

public enum LiveEngineError: Error, CustomStringConvertible {
    case noServer(String)
    case noAnswer(String)
    case noJackServer(String)

    public var description: String {
        switch self {
        case .noJackServer(let server): "cannot reach \(server): is jackd (or PipeWire with its JACK library) running?"
        case .noServer(let server): "cannot reach \(server): is PulseAudio (or PipeWire's pulse server) running?"
        case .noAnswer(let server): "\(server) did not answer within \(Int(PulseConnection.queryTimeout)) s"
        }
    }
}

extension LiveInput {
    /// The source name; nil for the default source or the demo.
    var sourceName: String? {
        if case .source(let name) = self { return name }
        return nil
    }
}

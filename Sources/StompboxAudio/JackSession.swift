import CAudioShim
import CJack
import Foundation
import StompboxDSP
import Synchronization

/// The live loop as a JACK client (jackd, or PipeWire's JACK): a client `stompbox` with an input
/// port `in` and output ports `out_1` and `out_2`; the chain runs inside the graph's process
/// callback, so a signal that enters `in` in one cycle leaves the outputs in the same cycle,
/// delayed only by the pedals' own latency (the overdrive's oversampling filters).
///
/// Threads: the `AudioBackend` steps run on the engine's thread, which opens the client,
/// prepares the chain for the server's rate before the client is active (never on the audio
/// thread), activates it, connects the ports and then watches: stop, new settings, the server going away, xruns and latency. JACK's
/// process thread runs `process` only: no allocation, no lock, no logging; a period longer than
/// the chain's largest block is processed in blocks. A new buffer size needs nothing (the chain
/// is prepared for 1024 frames and splits longer periods), so the Looper and every pedal keep
/// their state; a new sample rate silences the outputs until the session has ended (the client
/// deactivated) and the next one has prepared the chain for it. The block path is the host's
/// (`LiveHost.process`), fed from `in`.
final class JackSession: AudioBackend {
    /// The client's name as asked (JACK appends a number when it is taken).
    static let clientName = "stompbox"

    private let host: LiveHost
    private let chain: Chain
    private let settings: LiveSettings
    private let timing: JackTiming
    private var client: OpaquePointer?
    private var inputPort: OpaquePointer?
    private var outputPorts: (OpaquePointer?, OpaquePointer?) = (nil, nil)
    /// `midi_in`: foot controllers and MIDI learn (its messages go to `engine.jackMIDI`).
    private var midiPort: OpaquePointer?
    private let midiInbox: MIDIInbox

    // Written by JACK's threads, read by `run`.
    private let serverGone = Atomic<Bool>(false)
    private let xruns = Atomic<Int>(0)
    private let period = Atomic<Int>(0)
    private let serverRate = Atomic<Int>(0)
    /// The chain is not prepared for the server's rate: the outputs are silent.
    private let rateMismatch = Atomic<Bool>(false)
    /// PipeWire's libjack: port latencies are set from the engine's thread, not the callback.
    private var onPipeWire = false
    /// Latency directions the callback asked for there (1: capture, 2: playback).
    private let latencyWanted = Atomic<Int>(0)
    /// The pedals' latency in frames, as last published to JACK (for the latency callback).
    private let chainLatency = Atomic<Int>(0)

    init(host: LiveHost, timing: JackTiming) {
        self.host = host
        chain = host.chain
        settings = host.settings
        self.timing = timing
        midiInbox = host.engine.jackMIDI
    }

    /// The server's name as libjack will pick it, for messages.
    static var serverDescription: String {
        ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"].map { "the JACK server \"\($0)\"" } ?? "the JACK server"
    }

    /// Whether a JACK server answers now (opens a client and closes it; about a millisecond).
    static func serverAnswers() -> Bool { serverRate() != nil }

    /// The running JACK server's sample rate, or nil when none answers.
    static func serverRate() -> Int? {
        stompbox_jack_silence()
        var status = jack_status_t(rawValue: 0)
        guard let c = stompbox_jack_open("stompbox-probe", &status) else { return nil }
        defer { jack_client_close(c) }
        return Int(jack_get_sample_rate(c))
    }

    /// The server's audio ports Stompbox can be wired to, other clients' included, its own left
    /// out: outputs (what can feed `in`) as sources, inputs as sinks, physical ones first. Throws
    /// when no JACK server answers.
    static func ports() throws -> (sources: [AudioDevice], sinks: [AudioDevice]) {
        stompbox_jack_silence()
        var status = jack_status_t(rawValue: 0)
        guard let c = stompbox_jack_open("stompbox-ports", &status) else { throw LiveEngineError.noJackServer(serverDescription) }
        defer { jack_client_close(c) }
        let rate = Int(jack_get_sample_rate(c))
        func list(_ flags: JackPortFlags) -> [AudioDevice] {
            guard let names = jack_get_ports(c, nil, JACK_DEFAULT_AUDIO_TYPE, UInt(flags.rawValue)) else { return [] }
            defer { jack_free(UnsafeMutableRawPointer(mutating: names)) }
            var physical: [AudioDevice] = [], others: [AudioDevice] = []
            var i = 0
            while let raw = names[i] {
                i += 1
                let name = String(cString: raw)
                guard !name.hasPrefix(clientName + ":"), let port = jack_port_by_name(c, raw) else { continue }
                let isPhysical = Int32(jack_port_flags(port)) & Int32(JackPortIsPhysical.rawValue) != 0
                let device = AudioDevice(name: name, description: isPhysical ? "\(name) (hardware)" : name,
                                         sampleRate: rate, channels: 1, isMonitor: false)
                if isPhysical { physical.append(device) } else { others.append(device) }
            }
            return physical + others
        }
        return (list(JackPortIsOutput), list(JackPortIsInput))
    }

    // MARK: The engine's thread

    /// Whether the user set PIPEWIRE_LATENCY before Stompbox did (read before the first request).
    private static let userSetLatency = getenv("PIPEWIRE_LATENCY") != nil

    /// On PipeWire's JACK a client runs at the graph's quantum: 1024 frames (jack.conf's
    /// `node.latency`) unless some node asks for less. Stompbox asks for its block size, as
    /// `pw-jack -p` does, through PIPEWIRE_LATENCY, which PipeWire's libjack reads when a client
    /// opens (jackd's libjack ignores it; jackd's period is the server's). A value the user set is
    /// kept. Called on the engine's thread before each opening.
    static func requestQuantum(_ settings: LiveSettings) {
        guard !userSetLatency else { return }
        let known = graphRate.load(ordering: .relaxed)
        setenv("PIPEWIRE_LATENCY", "\(settings.blockSize)/\(known > 0 ? known : settings.sampleRate)", 1)
    }

    /// Whether libjack is PipeWire's (`pw-jack`, or installed as the system's libjack).
    static let isPipeWire = String(cString: jack_get_version_string()).contains("PipeWire")
    /// The rate PipeWire's graph ran at when a client last saw it active (0: not yet). Before a
    /// client is active, PipeWire's jack_get_sample_rate answers the denominator of its
    /// `node.latency` (PIPEWIRE_LATENCY), not the graph's rate; the request above uses this rate
    /// so the two agree, and an opening after a rate change prepares for it.
    static let graphRate = Atomic<Int>(0)

    func open() -> BackendOutcome? {
        stompbox_jack_silence()
        Self.requestQuantum(settings)
        var status = jack_status_t(rawValue: 0)
        guard let c = stompbox_jack_open(Self.clientName, &status) else {
            return .failed(.noServer, "cannot reach \(Self.serverDescription); retrying twice a second")
        }
        client = c
        let audio = JACK_DEFAULT_AUDIO_TYPE
        inputPort = jack_port_register(c, "in", audio, UInt(JackPortIsInput.rawValue | JackPortIsTerminal.rawValue), 0)
        outputPorts = (jack_port_register(c, "out_1", audio, UInt(JackPortIsOutput.rawValue | JackPortIsTerminal.rawValue), 0),
                       jack_port_register(c, "out_2", audio, UInt(JackPortIsOutput.rawValue | JackPortIsTerminal.rawValue), 0))
        midiPort = jack_port_register(c, "midi_in", JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsInput.rawValue), 0)
        guard inputPort != nil, outputPorts.0 != nil, outputPorts.1 != nil, midiPort != nil else {
            return .failed(.noServer, "\(Self.serverDescription) refused Stompbox's ports")
        }

        // `LiveEngine.start` prepared the chain for the server's rate on its caller's thread; a
        // server (re)started at another rate since is prepared for here, before the client is
        // active (never on the process thread).
        let known = Self.graphRate.load(ordering: .relaxed)
        let rate = Self.isPipeWire && known > 0 ? known : Int(jack_get_sample_rate(c))
        chain.prepareForLive(rate: rate)
        serverRate.store(rate, ordering: .relaxed)
        period.store(Int(jack_get_buffer_size(c)), ordering: .relaxed)
        chainLatency.store(Int(chain.publishedLatencySamples.rounded()), ordering: .relaxed)
        timing.reset()

        let context = Unmanaged.passUnretained(self).toOpaque()
        jack_set_process_callback(c, { frames, context in
            Unmanaged<JackSession>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.process(frames) }
            return 0
        }, context)
        jack_set_thread_init_callback(c, { _ in stompbox_enable_flush_to_zero() }, context)
        jack_set_xrun_callback(c, { context in
            _ = Unmanaged<JackSession>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.xruns.add(1, ordering: .relaxed) }
            return 0
        }, context)
        jack_set_buffer_size_callback(c, { frames, context in
            Unmanaged<JackSession>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.period.store(Int(frames), ordering: .relaxed) }
            return 0
        }, context)
        jack_set_sample_rate_callback(c, { rate, context in
            Unmanaged<JackSession>.fromOpaque(context!)._withUnsafeGuaranteedRef { session in
                session.serverRate.store(Int(rate), ordering: .relaxed)
                if session.onPipeWire { JackSession.graphRate.store(Int(rate), ordering: .relaxed) }
                session.rateMismatch.store(Double(rate) != session.chain.sampleRate, ordering: .releasing)
            }
            return 0
        }, context)
        // PipeWire's libjack (0.3.65) runs the latency callback inside its own loop when the
        // quantum changes, and jack_port_set_latency_range called there never returns (it waits
        // on that loop): the client froze on a graph forced to a new rate. There the callback
        // only asks, and the engine's thread sets the latencies, outside any callback.
        onPipeWire = Self.isPipeWire
        latencyWanted.store(onPipeWire ? 3 : 0, ordering: .relaxed)
        jack_set_latency_callback(c, { mode, context in
            Unmanaged<JackSession>.fromOpaque(context!)._withUnsafeGuaranteedRef { session in
                if session.onPipeWire {
                    session.latencyWanted.bitwiseOr(mode == JackCaptureLatency ? 1 : 2, ordering: .relaxed)
                } else {
                    session.publishLatency(mode)
                }
            }
        }, context)
        jack_on_info_shutdown(c, { _, _, context in
            Unmanaged<JackSession>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.serverGone.store(true, ordering: .releasing) }
        }, context)
        return nil
    }

    func activate() -> BackendOutcome? {
        guard let c = client else { return .failed(.noServer, "cannot reach \(Self.serverDescription); retrying twice a second") }
        guard jack_activate(c) == 0 else {
            return .failed(.noServer, "\(Self.serverDescription) did not start Stompbox's client")
        }
        if onPipeWire {
            // Active, the client reads the graph's own rate (see `graphRate`).
            let active = Int(jack_get_sample_rate(c))
            if active > 0 {
                Self.graphRate.store(active, ordering: .relaxed)
                if Double(active) != chain.sampleRate {
                    serverRate.store(active, ordering: .relaxed)
                    rateMismatch.store(true, ordering: .releasing)
                }
            }
        }
        return nil
    }

    func run() -> BackendOutcome {
        guard let c = client else { return .failed(.noServer, "cannot reach \(Self.serverDescription); retrying twice a second") }
        var wiring = settings.connectPorts ? connect() : nil
        var seenXruns = 0
        var nextWiring = monotonicSeconds() + LiveEngine.retryInterval
        host.noteBackend(.jack)
        // JACK's own process thread plays the chain: its priority is the server's to give.
        host.engine.noteRealtime(jack_is_realtime(c) != 0 ? .fifo(Int(jack_client_real_time_priority(c))) : .none,
                                 refused: "the JACK server runs without real-time scheduling")
        if wiring == nil { host.publishRunning() }
        while true {
            if let outcome = host.interruption() { return outcome }
            if serverGone.load(ordering: .acquiring) {
                return .failed(.noServer, "\(Self.serverDescription) went away; waiting for it to come back")
            }
            if rateMismatch.load(ordering: .acquiring) {
                // Prepared off the process thread: the client stops, the chain is prepared, and
                // the next opening starts it again at the new rate.
                return .settingsChanged
            }
            let now = monotonicSeconds()
            if let missing = wiring, now >= nextWiring {
                nextWiring = now + LiveEngine.retryInterval
                wiring = connect()
                if wiring == nil { host.publishRunning() } else { host.publishWaiting(missing.state, missing.message) }
            }
            let x = xruns.load(ordering: .relaxed)
            while seenXruns < x { host.noteUnderrun(); seenXruns += 1 }
            let latency = Int(chain.publishedLatencySamples.rounded())
            if chainLatency.exchange(latency, ordering: .relaxed) != latency { jack_recompute_total_latencies(c) }
            let wanted = latencyWanted.exchange(0, ordering: .relaxed)
            if wanted & 1 != 0 { publishLatency(JackCaptureLatency) }
            if wanted & 2 != 0 { publishLatency(JackPlaybackLatency) }
            let rate = Double(max(1, serverRate.load(ordering: .relaxed)))
            let total = Double(capturedLatency() + playbackLatency() + latency)
            host.noteLatency(1000 * total / rate, targetMs: 1000 * total / rate, drift: 0, following: false)
            host.engine.noteJack(load: Double(jack_cpu_load(c)), period: period.load(ordering: .relaxed), rate: Int(rate))
            usleep(20_000)
        }
    }

    /// Connects the ports as the settings say: nil when done, else what is missing.
    private func connect() -> (state: LiveState, message: String)? {
        guard let c = client, let inputPort, let out1 = outputPorts.0, let out2 = outputPorts.1 else { return nil }
        func physical(_ flags: JackPortFlags) -> [String] {
            guard let list = jack_get_ports(c, nil, JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsPhysical.rawValue | flags.rawValue)) else { return [] }
            defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
            var names: [String] = []
            var i = 0
            while let name = list[i] { names.append(String(cString: name)); i += 1 }
            return names
        }
        func link(_ from: String, _ to: String) -> Bool {
            let r = jack_connect(c, from, to)
            return r == 0 || r == EEXIST
        }
        let inName = String(cString: jack_port_name(inputPort))
        switch settings.input {
        case .demo:
            break
        case .defaultSource:
            guard let first = physical(JackPortIsOutput).first else {
                return (.waitingForInput, "\(Self.serverDescription) has no capture port; connect stompbox:in yourself")
            }
            if !link(first, inName) { return (.waitingForInput, "cannot connect \(first) to \(inName)") }
        case .source(let name):
            if !link(name, inName) { return (.waitingForInput, "JACK port \(name) is not there (or cannot feed \(inName)); waiting for it") }
        }
        let targets = settings.output.map { $0.split(separator: ",").map(String.init) } ?? Array(physical(JackPortIsInput).prefix(2))
        guard !targets.isEmpty else {
            return (.waitingForOutput, "\(Self.serverDescription) has no playback port; connect stompbox:out_1 yourself")
        }
        for (port, target) in zip([out1, out2], targets) where !link(String(cString: jack_port_name(port)), target) {
            return (.waitingForOutput, "JACK port \(target) is not there (or cannot be fed); waiting for it")
        }
        return nil
    }

    /// Frames from the capture hardware to `in` (the most any connected path reports).
    private func capturedLatency() -> Int {
        guard let inputPort else { return 0 }
        var range = jack_latency_range_t()
        jack_port_get_latency_range(inputPort, JackCaptureLatency, &range)
        return Int(range.max)
    }

    /// Frames from `out_1` to the playback hardware.
    private func playbackLatency() -> Int {
        guard let out = outputPorts.0 else { return 0 }
        var range = jack_latency_range_t()
        jack_port_get_latency_range(out, JackPlaybackLatency, &range)
        return Int(range.max)
    }

    func deactivate() {
        guard let c = client else { return }
        jack_deactivate(c)
    }

    func close() {
        guard let c = client else { return }
        jack_client_close(c)
        client = nil
        inputPort = nil
        outputPorts = (nil, nil)
    }

    // MARK: JACK's threads

    /// The latency callback (a JACK thread; on PipeWire the engine's thread): the outputs carry
    /// what reaches `in` plus the pedals' own delay, and `in` what follows the outputs plus the same.
    private func publishLatency(_ mode: jack_latency_callback_mode_t) {
        guard let inputPort, let out1 = outputPorts.0, let out2 = outputPorts.1 else { return }
        let own = UInt32(max(0, chainLatency.load(ordering: .relaxed)))
        var range = jack_latency_range_t()
        if mode == JackCaptureLatency {
            jack_port_get_latency_range(inputPort, JackCaptureLatency, &range)
            range.min += own
            range.max += own
            jack_port_set_latency_range(out1, JackCaptureLatency, &range)
            jack_port_set_latency_range(out2, JackCaptureLatency, &range)
        } else {
            jack_port_get_latency_range(out1, JackPlaybackLatency, &range)
            range.min += own
            range.max += own
            jack_port_set_latency_range(inputPort, JackPlaybackLatency, &range)
        }
    }

    /// One period, on JACK's process thread: `in` (or the demo riff) through the chain to both
    /// outputs. Allocation- and lock-free.
    private func process(_ frames: jack_nframes_t) {
        let started = JackTiming.now()
        guard let inputPort, let p1 = outputPorts.0, let p2 = outputPorts.1,
              let out1 = stompbox_jack_buffer(p1, frames), let out2 = stompbox_jack_buffer(p2, frames) else { return }
        let n = Int(frames)
        if let midiPort, let events = jack_port_get_buffer(midiPort, frames) {
            var event = jack_midi_event_t()
            for i in 0..<jack_midi_get_event_count(events) where jack_midi_event_get(&event, events, i) == 0 {
                if let bytes = event.buffer { midiInbox.push(bytes, count: event.size) }
            }
        }
        if rateMismatch.load(ordering: .relaxed) {
            out1.update(repeating: 0, count: n)
            out2.update(repeating: 0, count: n)
            return
        }
        // `in` is not read while the demo riff plays. The board's stereo output: left on out_1,
        // right on out_2.
        let input: UnsafePointer<Float>? = host.playsDemo ? nil : UnsafePointer(stompbox_jack_buffer(inputPort, frames))
        host.process(input: input,
                     left: UnsafeMutableBufferPointer(start: out1, count: n), right: UnsafeMutableBufferPointer(start: out2, count: n))
        timing.note(nanoseconds: JackTiming.now() - started)
    }
}

/// How long the process callback takes, from its own clock: a histogram in 1 µs steps (up to
/// 20 ms), its count and total. Written by JACK's process thread only; read once the client is
/// closed (`LiveEngine.stop`), or while it runs for a status (a figure a period old at worst).
public final class JackTiming: @unchecked Sendable {
    static let buckets = 20_000
    private let histogram = UnsafeMutablePointer<UInt32>.allocate(capacity: JackTiming.buckets)
    private var count = 0
    private var total = 0

    init() { histogram.initialize(repeating: 0, count: JackTiming.buckets) }
    deinit { histogram.deallocate() }

    /// Before a session's client is active (nothing counts then).
    func reset() {
        histogram.update(repeating: 0, count: JackTiming.buckets)
        count = 0
        total = 0
    }

    static func now() -> Int {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return t.tv_sec * 1_000_000_000 + t.tv_nsec
    }

    func note(nanoseconds: Int) {
        histogram[min(JackTiming.buckets - 1, max(0, nanoseconds / 1000))] &+= 1
        count &+= 1
        total &+= nanoseconds
    }

    /// What has been counted so far (a copy; the process thread goes on counting).
    public struct Snapshot: Sendable {
        fileprivate var histogram: [UInt32]
        fileprivate var count: Int
        fileprivate var total: Int
    }

    public func snapshot() -> Snapshot {
        Snapshot(histogram: Array(UnsafeBufferPointer(start: histogram, count: JackTiming.buckets)), count: count, total: total)
    }

    /// Periods timed since `start` (or since the session began), the mean and the 99.9th
    /// percentile in microseconds.
    public func summary(since start: Snapshot? = nil) -> (periods: Int, meanMicroseconds: Double, p999Microseconds: Double) {
        let now = snapshot()
        let count = now.count - (start?.count ?? 0), total = now.total - (start?.total ?? 0)
        guard count > 0 else { return (0, 0, 0) }
        let wanted = Int((Double(count) * 0.999).rounded(.up))
        var seen = 0
        var p999 = 0
        for b in 0..<JackTiming.buckets {
            seen += Int(now.histogram[b] &- (start?.histogram[b] ?? 0))
            if seen >= wanted { p999 = b; break }
        }
        return (count, Double(total) / Double(count) / 1000, Double(p999) + 1)
    }
}

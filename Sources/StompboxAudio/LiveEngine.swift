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
    /// Playback buffer target in milliseconds: how much output is kept queued. Measured through a
    /// private PulseAudio server on the 2-core test VM (LatencyBench, 60 s each, machine quiet):
    /// 128/11 gave 7.1, 8.8 and 10.2 ms end to end with no dropouts in any of the three runs;
    /// 128/12 gave 9.8–11.9 ms with 0–1 dropouts. Which value within that ~3 ms range a given
    /// opening gets depends on where the server's render cycle is when the streams start.
    /// With other sessions compiling, any setting here drops out a few times a minute.
    /// 64/5 is the low-latency setting (about 4 ms, several dropouts a minute).
    public var latencyMs: Double = 11
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


/// The live PulseAudio loop: record → chain → playback on its own thread, with the streams
/// closed and reopened as the server and the chosen devices come and go.
/// The window and `stompbox run --headless` drive the same class.
///
/// Threads: the caller's (start/stop/apply/status), the audio thread (everything else; it owns
/// the chain, the streams and the buffers), and the device watcher's mainloop thread (which only
/// raises and lowers atomics and wakes the audio thread).
public final class LiveEngine: @unchecked Sendable {
    public let chain: Chain
    public var settings: LiveSettings { settingsBox.withLock { $0.settings } }

    private struct SettingsBox { var settings: LiveSettings; var generation: Int }
    private let settingsBox: Mutex<SettingsBox>
    /// Read once per block by the audio thread: a change means "reopen with the new settings".
    private let settingsGeneration = Atomic<Int>(0)
    private let stopRequested = Atomic<Bool>(false)

    // Status, written by the audio thread.
    private let stateValue = Atomic<Int>(LiveEngine.stateCode(.stopped))
    private let latencyBits = Atomic<UInt64>(Double.nan.bitPattern)
    /// The parts of the latency figure (ms, averaged like it): capture queue, playback queue.
    private let recordLatencyBits = Atomic<UInt64>(Double.nan.bitPattern)
    private let playbackLatencyBits = Atomic<UInt64>(Double.nan.bitPattern)
    private let underrunCount = Atomic<Int>(0)
    private let overrunCount = Atomic<Int>(0)
    private let messageBox = Mutex<String?>(nil)
    private let realtimeMessage = Mutex<String?>(nil)

    // Waking the audio thread while it waits for a server or a device.
    private let wakeCondition = NSCondition()
    private var wakeRequested = false

    private var thread: Thread?
    private let threadDone = DispatchSemaphore(value: 0)

    /// The bundled riff for `.demo`, loaded before the thread starts.
    private var demo: UnsafeMutableBufferPointer<Float>?

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

    /// Starts the audio thread; returns at once. It keeps retrying while the server or a
    /// device is missing, reporting that in `status`.
    public func start() {
        guard thread == nil else { return }
        stopRequested.store(false, ordering: .releasing)
        let t = Thread { [self] in
            run()
            threadDone.signal()
        }
        t.name = "Stompbox audio"
        t.stackSize = 1 << 20
        thread = t
        t.start()
    }

    /// Stops the audio thread and closes the streams; returns when it has stopped.
    public func stop() {
        guard thread != nil else { return }
        stopRequested.store(true, ordering: .releasing)
        wake()
        threadDone.wait()
        thread = nil
    }

    /// Reopens the streams with new settings (device picker).
    public func apply(_ settings: LiveSettings) {
        let changed: Bool = settingsBox.withLock { box in
            guard box.settings != settings else { return false }
            box.settings = settings
            box.generation += 1
            settingsGeneration.store(box.generation, ordering: .releasing)
            return true
        }
        if changed { wake() }
    }

    /// The current state; peaks are those since the previous call.
    public func status() -> LiveStatus {
        var s = LiveStatus()
        s.state = LiveEngine.state(code: stateValue.load(ordering: .acquiring))
        let latency = Double(bitPattern: latencyBits.load(ordering: .relaxed))
        s.latencyMs = s.state == .running && latency.isFinite ? latency : nil
        s.underruns = underrunCount.load(ordering: .relaxed)
        s.overruns = overrunCount.load(ordering: .relaxed)
        // The chain meters its own input and output; reading them here clears them.
        let peaks = chain.controls.meters.takePeaks()
        s.inputPeakDB = LiveEngine.decibels(peaks.input)
        s.outputPeakDB = LiveEngine.decibels(peaks.output)
        let messages = [messageBox.withLock { $0 }, realtimeMessage.withLock { $0 }].compactMap { $0 }
        s.message = messages.isEmpty ? nil : messages.joined(separator: "; ")
        return s
    }

    /// The last averaged parts of the latency figure in ms: (capture, playback); for the bench.
    public var latencyParts: (record: Double, playback: Double) {
        (Double(bitPattern: recordLatencyBits.load(ordering: .relaxed)), Double(bitPattern: playbackLatencyBits.load(ordering: .relaxed)))
    }

    /// Lists the server's sources and sinks.
    public static func devices() throws -> (sources: [AudioDevice], sinks: [AudioDevice]) {
        let server = PulseServer()
        guard server.connect() else { throw LiveEngineError.noServer(LiveEngine.serverDescription) }
        defer { server.disconnect() }
        return (server.sources().map(\.device), server.sinks().map(\.device))
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
        if state != .running { latencyBits.store(Double.nan.bitPattern, ordering: .relaxed) }
        stateValue.store(LiveEngine.stateCode(state), ordering: .releasing)
    }

    private func wake() {
        wakeCondition.lock()
        wakeRequested = true
        wakeCondition.signal()
        wakeCondition.unlock()
    }

    /// Sleeps (no CPU) until woken by a device event, a settings change or stop, or the timeout.
    private func waitForWake(_ seconds: TimeInterval) {
        wakeCondition.lock()
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !wakeRequested && !stopRequested.load(ordering: .acquiring) {
            if !wakeCondition.wait(until: deadline) { break }
        }
        wakeRequested = false
        wakeCondition.unlock()
    }

    // MARK: The audio thread

    private func run() {
        // Created before asking for SCHED_FIFO: the watcher's thread need not be real-time.
        let server = PulseServer(onEvent: { [weak self] in self?.wake() })
        stompbox_enable_flush_to_zero()
        // The simple API's own threads are created later from this one and inherit the policy.
        let rt = stompbox_request_realtime(LiveEngine.realtimePriority)
        realtimeMessage.withLock {
            $0 = rt == 0 ? nil : "no real-time priority (\(String(cString: strerror(rt)))): playing at normal priority, so dropouts are more likely under load"
        }

        var preparedFor: (rate: Int, block: Int)? = nil
        // True after the server or a device went missing: the next opening is on a device
        // that has just (re)appeared, whose timing is restarted (PulseServer.restartTiming).
        var deviceReappeared = false
        while !stopRequested.load(ordering: .acquiring) {
            let (settings, generation) = settingsBox.withLock { ($0.settings, $0.generation) }
            if !server.connected.load(ordering: .acquiring) && !server.connect() {
                deviceReappeared = true
                publish(.noServer, "cannot reach \(LiveEngine.serverDescription); retrying twice a second")
                waitForWake(LiveEngine.retryInterval)
                continue
            }
            var source: PulseDeviceInfo? = nil
            if settings.input != .demo {
                let name = settings.input.sourceName ?? "@DEFAULT_SOURCE@"
                guard let info = server.sourceInfo(name) else {
                    deviceReappeared = true
                    if server.connected.load(ordering: .acquiring) {
                        publish(.waitingForInput, "input \(settings.input.sourceName ?? "(default source)") is not there; waiting for it")
                        waitForWake(LiveEngine.retryInterval)
                    }
                    continue
                }
                guard (1...info.channels).contains(settings.inputChannel) else {
                    publish(.waitingForInput, "input \(info.name) has \(info.channels) channel(s); channel \(settings.inputChannel) does not exist")
                    waitForWake(LiveEngine.retryInterval)
                    continue
                }
                source = info
            }
            guard let sink = server.sinkInfo(settings.output ?? "@DEFAULT_SINK@") else {
                deviceReappeared = true
                if server.connected.load(ordering: .acquiring) {
                    publish(.waitingForOutput, "output \(settings.output ?? "(default sink)") is not there; waiting for it")
                    waitForWake(LiveEngine.retryInterval)
                }
                continue
            }
            server.watch(source: source?.index, sink: sink.index)

            if preparedFor == nil || preparedFor! != (settings.sampleRate, settings.blockSize) {
                chain.prepare(sampleRate: Double(settings.sampleRate), maximumBlockSize: settings.blockSize)
                preparedFor = (settings.sampleRate, settings.blockSize)
                // Between sessions, not in the block loop: the only allocations this thread makes.
                demo?.deallocate()
                demo = DemoRiff.load(sampleRate: settings.sampleRate, file: settings.demoFile)
            }
            let session = LiveSession(engine: self, server: server, settings: settings, generation: generation,
                                      source: source, sink: sink, restartTiming: deviceReappeared)
            deviceReappeared = false
            switch session.play() {
            case .stopped, .settingsChanged:
                break
            case .deviceGone:
                deviceReappeared = true
            case .failed(let state, let message):
                if server.connected.load(ordering: .acquiring) {
                    publish(state, message)
                    waitForWake(LiveEngine.retryInterval)
                }
            }
        }
        server.disconnect()
        publish(.stopped, nil)
    }

    // MARK: Used by LiveSession (audio thread)

    fileprivate var isStopRequested: Bool { stopRequested.load(ordering: .relaxed) }
    fileprivate var currentGeneration: Int { settingsGeneration.load(ordering: .relaxed) }
    fileprivate func noteUnderrun() { underrunCount.add(1, ordering: .relaxed) }
    fileprivate func noteOverrun() { overrunCount.add(1, ordering: .relaxed) }
    fileprivate func noteLatency(_ ms: Double, record: Double, playback: Double) {
        recordLatencyBits.store(record.bitPattern, ordering: .relaxed)
        playbackLatencyBits.store(playback.bitPattern, ordering: .relaxed)
        latencyBits.store(ms.bitPattern, ordering: .relaxed)
    }
    fileprivate func publishRunning() { publish(.running, nil) }
    fileprivate var demoRiff: UnsafeMutableBufferPointer<Float>? { demo }
}

public enum LiveEngineError: Error, CustomStringConvertible {
    case noServer(String)

    public var description: String {
        switch self {
        case .noServer(let server): "cannot reach \(server): is PulseAudio (or PipeWire's pulse server) running?"
        }
    }
}

extension LiveInput {
    /// The source name for the simple API; nil for the default source or the demo.
    var sourceName: String? {
        if case .source(let name) = self { return name }
        return nil
    }
}

/// One opening of the streams: warm-up, then the block loop until something changes.
private final class LiveSession {
    enum Outcome {
        case stopped, settingsChanged, deviceGone
        case failed(LiveState, String)
    }

    let engine: LiveEngine
    let server: PulseServer
    let settings: LiveSettings
    let generation: Int
    let source: PulseDeviceInfo?
    let sink: PulseDeviceInfo
    let block: Int
    let period: Double
    let restartTiming: Bool

    init(engine: LiveEngine, server: PulseServer, settings: LiveSettings, generation: Int,
         source: PulseDeviceInfo?, sink: PulseDeviceInfo, restartTiming: Bool) {
        self.restartTiming = restartTiming
        self.engine = engine
        self.server = server
        self.settings = settings
        self.generation = generation
        self.source = source
        self.sink = sink
        block = settings.blockSize
        period = Double(settings.blockSize) / Double(settings.sampleRate)
    }

    private func open(_ direction: pa_stream_direction_t, _ device: PulseDeviceInfo, _ attr: pa_buffer_attr,
                      _ streamName: String) -> (OpaquePointer?, Int32) {
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(settings.sampleRate), channels: UInt8(device.channels))
        var map = device.channelMap
        var attr = attr
        var error: Int32 = 0
        let s = pa_simple_new(nil, "Stompbox", direction, device.name, streamName, &spec, &map, &attr, &error)
        return (s, error)
    }

    private func errorText(_ code: Int32) -> String { String(cString: pa_strerror(code)) }

    func play() -> Outcome {
        let rate = settings.sampleRate
        let outChannels = sink.channels
        let inChannels = source?.channels ?? 1
        let frameOut = UInt32(4 * outChannels)
        let targetFrames = max(2 * block, Int((settings.latencyMs / 1000 * Double(rate)).rounded()))
        let none = UInt32.max

        // Playback: the loop keeps `targetFrames` queued (silence put in front, then one block
        // per block read); tlength leaves two blocks of room above that so a write never waits
        // (a waiting write would make captured data queue up instead); prebuf starts it as soon as
        // the silence is in; minreq one block.
        let playAttr = pa_buffer_attr(maxlength: none, tlength: UInt32(targetFrames + 2 * block) * frameOut,
                                      prebuf: UInt32(max(block, targetFrames - block)) * frameOut,
                                      minreq: UInt32(block) * frameOut, fragsize: none)
        var record: OpaquePointer? = nil
        if let source {
            let recordAttr = pa_buffer_attr(maxlength: none, tlength: none, prebuf: none, minreq: none,
                                            fragsize: UInt32(block * 4 * inChannels))
            let (s, error) = open(PA_STREAM_RECORD, source, recordAttr, "guitar in")
            guard let s else { return .failed(.waitingForInput, "cannot record from \(source.name): \(errorText(error))") }
            record = s
        }
        defer { if let record { pa_simple_free(record) } }
        let (playbackStream, playError) = open(PA_STREAM_PLAYBACK, sink, playAttr, "amp out")
        guard let playback = playbackStream else { return .failed(.waitingForOutput, "cannot play to \(sink.name): \(errorText(playError))") }
        defer { pa_simple_free(playback) }
        if restartTiming {
            // A device that has just come (back) may be an idle sink that rendered far ahead at
            // its largest latency and sleeps until that is used up (2 s for a null sink): no
            // sound for that long. Now that our streams have lowered its latency, restart its
            // clock (and that of a filter sink's master) so it runs at that latency from now.
            // Only here, on a device that has just appeared: other streams on it may hear a tick.
            var sinks = server.sinkChain(sink.name)
            if let monitored = source?.monitorOfSink {
                for name in server.sinkChain(monitored) where !sinks.contains(name) { sinks.append(name) }
            }
            server.restartTiming(sinks: sinks)
        }
        // The streams are open: the loop plays (the server may still hold the first block back).
        engine.publishRunning()

        // Every buffer the loop touches, allocated before it starts.
        let input = UnsafeMutableBufferPointer<Float>.allocate(capacity: block * inChannels)
        let mono = UnsafeMutableBufferPointer<Float>.allocate(capacity: block)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: block * outChannels)
        let silence = UnsafeMutableBufferPointer<Float>.allocate(capacity: targetFrames * outChannels)
        input.initialize(repeating: 0); mono.initialize(repeating: 0)
        output.initialize(repeating: 0); silence.initialize(repeating: 0)
        defer { input.deallocate(); mono.deallocate(); output.deallocate(); silence.deallocate() }

        let channel = settings.inputChannel - 1
        let inBytes = block * inChannels * 4
        let outBytes = block * outChannels * 4
        var error: Int32 = 0

        // Warm-up. An idle server renders ahead: the first read can block 1–2 s and then deliver
        // a backlog. `resynchronise` empties the capture queue, throws away whatever the playback
        // stream holds and puts exactly the target in front; an xrun later does the same, so a
        // dropout costs one short gap and never leaves the latency higher than it was.
        let prefillBytes = max(0, targetFrames - block) * outChannels * 4
        if let code = resynchronise(record, playback, input, inBytes, silence, prefillBytes, limit: 4) {
            return failure(code)
        }
        if let stop = interruption() { return stop }

        var riffPosition = 0
        var fastReads = 0
        let backlogBlocks = max(8, Int((0.04 / period).rounded(.up)) + targetFrames / block)
        var latencySum = 0.0
        var recordSum = 0.0
        var playSum = 0.0
        var latencyCount = 0
        var lastPublish = now()
        // The first second after the warm-up still carries the server's start-up backlog; the
        // latency control acts on it but does not count it as dropouts.
        let settledAt = now() + 1
        while true {
            if let stop = interruption() { return stop }

            // 1. Input.
            if let record {
                let t0 = now()
                if pa_simple_read(record, input.baseAddress, inBytes, &error) < 0 { return failure(error) }
                // Reads that never wait mean captured data is queueing up behind us. The server
                // delivers in bursts of its own period, so only a queue far beyond that (a stall
                // of the loop) counts: one block is dropped to bring the latency back.
                if now() - t0 < 0.1 * period { fastReads += 1 } else { fastReads = 0 }
                if fastReads >= backlogBlocks {
                    fastReads = 0
                    if now() > settledAt { engine.noteOverrun() }
                    if let code = resynchronise(record, playback, input, inBytes, silence, prefillBytes, limit: 0.5) {
                        return failure(code)
                    }
                    continue
                }
                for i in 0..<block { mono[i] = input[i * inChannels + channel] }
            } else if let riff = engine.demoRiff, riff.count > 0 {
                for i in 0..<block {
                    mono[i] = riff[riffPosition]
                    riffPosition += 1
                    if riffPosition == riff.count { riffPosition = 0 }
                }
            } else {
                for i in 0..<block { mono[i] = 0 }
            }

            // 2. The chain (which meters its input and output).
            engine.chain.process(mono)
            for i in 0..<block {
                let y = mono[i]
                for c in 0..<outChannels { output[i * outChannels + c] = y }
            }

            // 3. Output. The playback latency just before the write is what is left in the
            // buffer (plus the sink's own): at or near zero the sink has run dry.
            let playLatency = Double(pa_simple_get_latency(playback, &error)) / 1e6
            if playLatency < 0.25 * period {
                // The sink ran dry: the gap is already heard. Start again from the target
                // latency instead of keeping the extra delay the late data would carry.
                if now() > settledAt { engine.noteUnderrun() }
                fastReads = 0
                if let code = resynchronise(record, playback, input, inBytes, silence, prefillBytes, limit: 0.5) {
                    return failure(code)
                }
                continue
            }
            if pa_simple_write(playback, output.baseAddress, outBytes, &error) < 0 { return failure(error) }

            // 4. Measured latency: capture + playback + the block, averaged over ~0.5 s.
            let recordLatency = record.map { Double(pa_simple_get_latency($0, &error)) / 1e6 } ?? 0
            latencySum += recordLatency + playLatency + period
            recordSum += recordLatency
            playSum += playLatency
            latencyCount += 1
            let t = now()
            if t <= settledAt {
                latencySum = 0; recordSum = 0; playSum = 0
                latencyCount = 0
                lastPublish = t
            } else if t - lastPublish >= 0.5 {
                let n = Double(latencyCount)
                engine.noteLatency(1000 * latencySum / n, record: 1000 * recordSum / n, playback: 1000 * playSum / n)
                latencySum = 0; recordSum = 0; playSum = 0
                latencyCount = 0
                lastPublish = t
            }
        }
    }

    /// Empties the capture queue (reads until one has to wait for fresh data, at most `limit`
    /// seconds), flushes the playback stream and writes `prefillBytes` of silence in front.
    /// Returns the PulseAudio error code on failure. No allocation.
    private func resynchronise(_ record: OpaquePointer?, _ playback: OpaquePointer,
                               _ input: UnsafeMutableBufferPointer<Float>, _ inBytes: Int,
                               _ silence: UnsafeMutableBufferPointer<Float>, _ prefillBytes: Int,
                               limit: Double) -> Int32? {
        var error: Int32 = 0
        if let record {
            let deadline = now() + limit
            var reads = 0
            while now() < deadline {
                let t0 = now()
                if pa_simple_read(record, input.baseAddress, inBytes, &error) < 0 { return error }
                reads += 1
                if reads >= 2 && now() - t0 > 0.4 * period { break }
                if interruption() != nil { return nil }
            }
        }
        if pa_simple_flush(playback, &error) < 0 { return error }
        if prefillBytes > 0 && pa_simple_write(playback, silence.baseAddress, prefillBytes, &error) < 0 { return error }
        return nil
    }

    /// Why the loop must end now, if it must: checked once per block, atomics only.
    @inline(__always)
    private func interruption() -> Outcome? {
        if engine.isStopRequested { return .stopped }
        if engine.currentGeneration != generation { return .settingsChanged }
        if !server.connected.load(ordering: .acquiring) { return .deviceGone }
        if !server.inputPresent.load(ordering: .acquiring) || !server.outputPresent.load(ordering: .acquiring) {
            return .deviceGone
        }
        return nil
    }

    private func failure(_ error: Int32) -> Outcome {
        // A stream fails when the server goes away; the watcher notices that too.
        if let stop = interruption() { return stop }
        return .failed(.waitingForInput, "stream error: \(errorText(error))")
    }

    @inline(__always)
    private func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }
}

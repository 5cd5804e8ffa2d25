import CJack
import Foundation
import StompboxAudio
import Synchronization

/// A private JACK server on the dummy driver (jackd2: no sound card needed), for tests and the
/// benchmark. Its name goes into `JACK_DEFAULT_SERVER` of this process while it runs, so every
/// JACK client opened here (Stompbox's, the probes) joins it.
public final class PrivateJackServer {
    public static let jackd = ["/usr/bin/jackd", "/usr/local/bin/jackd"].first(where: FileManager.default.isExecutableFile)
    /// Why the JACK tests cannot run here, or nil.
    public static var unavailableReason: String? {
        jackd == nil ? "jackd is not installed (apt-get install jackd2)" : nil
    }

    public let name: String
    /// The rate the next `start` runs the server at.
    public var sampleRate: Int
    public private(set) var period: Int
    private var process: Process?
    private let log: String

    public init(period: Int = 128, sampleRate: Int = 48_000) {
        name = "stompbox-test-\(getpid())-\(Int.random(in: 0..<1_000_000))"
        self.period = period
        self.sampleRate = sampleRate
        log = FileManager.default.temporaryDirectory.appendingPathComponent("\(name).log").path
    }

    deinit { stop() }

    /// Starts jackd and waits (up to 5 s) until a client can join it. A machine that refuses
    /// real-time scheduling (a container without the capability) gets a server without it
    /// (`--no-realtime`), said in the log.
    public func start() throws {
        guard Self.jackd != nil else { throw JackRigError("jackd is not installed") }
        try TestTier.requireApart("a private JACK server")
        setenv("JACK_DEFAULT_SERVER", name, 1)
        setenv("JACK_NO_AUDIO_RESERVATION", "1", 1)
        if try launch(realtime: true) { return }
        let first = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        stop()
        if try launch(realtime: false) {
            print("PrivateJackServer: jackd runs without real-time scheduling here (it would not start with it: \(first.suffix(200)))")
            return
        }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        stop()
        throw JackRigError("jackd did not start within 5 s: \(text.suffix(400))")
    }

    /// Launches jackd; true once a client can join it (within 5 s, or until it exits).
    private func launch(realtime: Bool) throws -> Bool {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.jackd!)
        // -S: synchronous mode, the server waits for the whole graph each cycle (asynchronous
        // jackd2 lets a late client's output slip a period; the tests compare outputs sample for sample).
        p.arguments = ["-n", name, "-S"] + (realtime ? [] : ["--no-realtime"]) + ["-d", "dummy", "-r", "\(sampleRate)", "-p", "\(period)"]
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        p.standardOutput = FileHandle(forWritingAtPath: log)
        p.standardError = p.standardOutput
        try p.run()
        process = p
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline && p.isRunning {
            if LiveBackend.jackServerAnswers() { return true }
            usleep(50_000)
        }
        return false
    }

    /// Kills the server at once (SIGKILL: as a crash would), leaving the name for a restart.
    public func kill() {
        guard let p = process else { return }
        Foundation.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        process = nil
    }

    public func stop() {
        guard let p = process else { return }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        process = nil
    }

    /// `jack_bufsize FRAMES` on the running server.
    public func setPeriod(_ frames: Int) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/jack_bufsize")
        p.arguments = ["\(frames)"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw JackRigError("jack_bufsize \(frames) failed") }
        period = frames
    }
}

public struct JackRigError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// A test client: one output port that plays `signal` once and one input port that records,
/// both in step on the server's frame clock (a sample played at frame F and one recorded at
/// frame F have the same index), so a path between them shows its delay in samples exactly.
/// Player and recorder are separate clients, so JACK orders them around the path under test:
/// player → path → recorder, all in one cycle. Counts the server's xruns.
public final class JackProbe {
    public let signal: [Float]
    public private(set) var recording: [Float]
    private let play: OpaquePointer
    private let record: OpaquePointer
    private let outPort: OpaquePointer
    private let inPort: OpaquePointer
    private let signalBuffer: UnsafeMutableBufferPointer<Float>
    private let recordBuffer: UnsafeMutableBufferPointer<Float>
    /// The frame time the signal's first sample plays at (-1: not armed).
    private let startFrame = Atomic<Int>(-1)
    private let xrunCount = Atomic<Int>(0)

    public var playPort: String { String(cString: jack_port_name(outPort)) }
    public var recordPort: String { String(cString: jack_port_name(inPort)) }
    public var xruns: Int { xrunCount.load(ordering: .relaxed) }
    /// When the server reported each xrun (`PacedWriter.now()`), the first `xrunTimeCapacity`.
    public var xrunTimes: [UInt64] { (0..<min(xruns, Self.xrunTimeCapacity)).map { xrunTimeBuffer[$0] } }
    static let xrunTimeCapacity = 4096
    private let xrunTimeBuffer = UnsafeMutablePointer<UInt64>.allocate(capacity: JackProbe.xrunTimeCapacity)

    /// `recordFrames`: how much to record from the signal's start.
    public init(signal: [Float], recordFrames: Int) throws {
        self.signal = signal
        recording = []
        stompbox_jack_silence()
        var status = jack_status_t(rawValue: 0)
        guard let p = stompbox_jack_open("probe-play", &status), let r = stompbox_jack_open("probe-record", &status) else {
            throw JackRigError("the probe cannot join the JACK server")
        }
        play = p
        record = r
        outPort = jack_port_register(p, "out", JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput.rawValue), 0)
        inPort = jack_port_register(r, "in", JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsInput.rawValue), 0)
        signalBuffer = .allocate(capacity: signal.count)
        _ = signalBuffer.initialize(from: signal)
        recordBuffer = .allocate(capacity: recordFrames)
        recordBuffer.initialize(repeating: 0)
        let context = Unmanaged.passUnretained(self).toOpaque()
        jack_set_process_callback(p, { frames, context in
            Unmanaged<JackProbe>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.playCycle(frames) }
            return 0
        }, context)
        jack_set_process_callback(r, { frames, context in
            Unmanaged<JackProbe>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.recordCycle(frames) }
            return 0
        }, context)
        jack_set_xrun_callback(r, { context in
            Unmanaged<JackProbe>.fromOpaque(context!)._withUnsafeGuaranteedRef { probe in
                let index = probe.xrunCount.load(ordering: .relaxed)
                if index < JackProbe.xrunTimeCapacity { probe.xrunTimeBuffer[index] = PacedWriter.now() }
                probe.xrunCount.add(1, ordering: .releasing)
            }
            return 0
        }, context)
        guard jack_activate(p) == 0, jack_activate(r) == 0 else { throw JackRigError("the probe's clients did not start") }
    }

    deinit {
        close()
        signalBuffer.deallocate()
        recordBuffer.deallocate()
        xrunTimeBuffer.deallocate()
    }

    private var closed = false
    public func close() {
        guard !closed else { return }
        closed = true
        jack_deactivate(play)
        jack_deactivate(record)
        jack_client_close(play)
        jack_client_close(record)
    }

    /// Connects `from` to `to` (full port names).
    public func connect(_ from: String, _ to: String) throws {
        let r = jack_connect(play, from, to)
        guard r == 0 || r == EEXIST else { throw JackRigError("cannot connect \(from) to \(to)") }
    }

    /// Plays the signal from a few periods from now, waits until the recording is full and
    /// returns it (throws after `timeout` seconds).
    public func run(timeout: Double = 30) throws -> [Float] {
        let now = Int(jack_frame_time(play))
        startFrame.store(now + 4 * Int(jack_get_buffer_size(play)), ordering: .releasing)
        let duration = Double(recordBuffer.count) / Double(jack_get_sample_rate(play))
        let deadline = Date().addingTimeInterval(duration + timeout)
        while Date() < deadline {
            if Int(jack_frame_time(play)) > startFrame.load(ordering: .relaxed) + recordBuffer.count + 2 * Int(jack_get_buffer_size(play)) {
                recording = Array(recordBuffer)
                return recording
            }
            usleep(20_000)
        }
        throw JackRigError("the recording did not fill in \(Int(duration + timeout)) s (is the server running?)")
    }

    private func playCycle(_ frames: jack_nframes_t) {
        guard let out = stompbox_jack_buffer(outPort, frames) else { return }
        let n = Int(frames)
        let start = startFrame.load(ordering: .acquiring)
        let first = Int(jack_last_frame_time(play))
        for i in 0..<n {
            let k = first + i - start
            out[i] = start >= 0 && k >= 0 && k < signalBuffer.count ? signalBuffer[k] : 0
        }
    }

    private func recordCycle(_ frames: jack_nframes_t) {
        guard let input = stompbox_jack_buffer(inPort, frames) else { return }
        let n = Int(frames)
        let start = startFrame.load(ordering: .acquiring)
        guard start >= 0 else { return }
        let first = Int(jack_last_frame_time(record))
        for i in 0..<n {
            let k = first + i - start
            if k >= 0 && k < recordBuffer.count { recordBuffer[k] = input[i] }
        }
    }
}

/// Noise at -10 dBFS, `seconds` long at 48 kHz (seeded: every run plays the same).
public func jackTestNoise(seconds: Double) -> [Float] {
    var state: UInt64 = 0x5eed
    return (0..<Int(seconds * 48_000)).map { _ in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Float(Int64(bitPattern: state) >> 40) / Float(1 << 23) * 0.3
    }
}

/// A plain pass-through JACK client (`in` copied to `out`): the baseline a real-time path is
/// measured against.
public final class JackPassthrough {
    private let client: OpaquePointer
    private let inPort: OpaquePointer
    private let outPort: OpaquePointer
    public var input: String { String(cString: jack_port_name(inPort)) }
    public var output: String { String(cString: jack_port_name(outPort)) }

    public init() throws {
        stompbox_jack_silence()
        var status = jack_status_t(rawValue: 0)
        guard let c = stompbox_jack_open("passthrough", &status) else { throw JackRigError("the pass-through cannot join the JACK server") }
        client = c
        inPort = jack_port_register(c, "in", JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsInput.rawValue), 0)
        outPort = jack_port_register(c, "out", JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput.rawValue), 0)
        jack_set_process_callback(c, { frames, context in
            Unmanaged<JackPassthrough>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.cycle(frames) }
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
        guard jack_activate(c) == 0 else { throw JackRigError("the pass-through did not start") }
    }

    deinit {
        jack_deactivate(client)
        jack_client_close(client)
    }

    /// The server's xruns while `signal` plays through a pass-through client (the baseline),
    /// and when each was reported.
    public static func xruns(playing signal: [Float]) throws -> (count: Int, times: [UInt64]) {
        let pass = try JackPassthrough()
        let probe = try JackProbe(signal: signal, recordFrames: signal.count)
        defer { probe.close() }
        try probe.connect(probe.playPort, pass.input)
        try probe.connect(pass.output, probe.recordPort)
        _ = try probe.run()
        return (probe.xruns, probe.xrunTimes)
    }

    private func cycle(_ frames: jack_nframes_t) {
        guard let i = stompbox_jack_buffer(inPort, frames), let o = stompbox_jack_buffer(outPort, frames) else { return }
        o.update(from: i, count: Int(frames))
    }
}

/// Where `needle` (the signal) best lines up in `haystack` (the recording): the lag in samples
/// with the highest normalised correlation, among 0…`maximumLag`, and that correlation.
public func bestLag(_ needle: [Float], in haystack: [Float], maximumLag: Int) -> (lag: Int, correlation: Double) {
    var best = (lag: 0, correlation: -2.0)
    let energyA = needle.reduce(0.0) { $0 + Double($1) * Double($1) }
    for lag in 0...maximumLag {
        var dot = 0.0, energyB = 0.0
        let n = min(needle.count, haystack.count - lag)
        guard n > 0 else { break }
        for i in 0..<n {
            let b = Double(haystack[i + lag])
            dot += Double(needle[i]) * b
            energyB += b * b
        }
        let c = energyB > 0 ? dot / (energyA * energyB).squareRoot() : 0
        if c > best.correlation { best = (lag, c) }
    }
    return best
}

/// A test client with a MIDI output port, `midi-sender:out`: `send` queues a message, which goes
/// out at the start of the next cycle (as a hardware controller's would, through the graph).
public final class JackMIDISender {
    private let client: OpaquePointer
    private let port: OpaquePointer
    private let queue = Mutex<[[UInt8]]>([])
    private let sentCount = Atomic<Int>(0)

    public var portName: String { String(cString: jack_port_name(port)) }
    /// Messages written to the port so far.
    public var sent: Int { sentCount.load(ordering: .acquiring) }

    public init() throws {
        stompbox_jack_silence()
        var status = jack_status_t(rawValue: 0)
        guard let c = stompbox_jack_open("midi-sender", &status) else { throw JackRigError("the MIDI sender cannot join the JACK server") }
        client = c
        guard let p = jack_port_register(c, "out", JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsOutput.rawValue), 0) else {
            jack_client_close(c)
            throw JackRigError("the MIDI sender has no port")
        }
        port = p
        jack_set_process_callback(c, { frames, context in
            Unmanaged<JackMIDISender>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.cycle(frames) }
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
        guard jack_activate(c) == 0 else { throw JackRigError("the MIDI sender did not start") }
    }

    deinit { close() }

    private var closed = false
    public func close() {
        guard !closed else { return }
        closed = true
        jack_deactivate(client)
        jack_client_close(client)
    }

    public func connect(to destination: String) throws {
        let r = jack_connect(client, portName, destination)
        guard r == 0 || r == EEXIST else { throw JackRigError("cannot connect \(portName) to \(destination)") }
    }

    /// Queues one message; waits (up to 2 s) until it has gone out.
    public func send(_ bytes: [UInt8]) throws {
        let target = sent + 1
        queue.withLock { $0.append(bytes) }
        let deadline = Date().addingTimeInterval(2)
        while sent < target {
            guard Date() < deadline else { throw JackRigError("the MIDI message did not go out in 2 s") }
            usleep(2_000)
        }
    }

    private func cycle(_ frames: jack_nframes_t) {
        guard let buffer = jack_port_get_buffer(port, frames) else { return }
        jack_midi_clear_buffer(buffer)
        queue.withLockIfAvailable { messages in
            for (i, m) in messages.enumerated() {
                m.withUnsafeBufferPointer { _ = jack_midi_event_write(buffer, jack_nframes_t(i), $0.baseAddress, m.count) }
            }
            sentCount.add(messages.count, ordering: .releasing)
            messages.removeAll(keepingCapacity: true)
        }
    }
}

import Foundation

/// A child process started with posix_spawn and reaped by its own PID.
///
/// Not Foundation's `Process`: on Linux its single reaper thread blocks in `wait4` on one
/// long-lived child (the server) and then never notices the others exit, so
/// `waitUntilExit` on a short `pactl` hangs for ever.
public final class Subprocess: @unchecked Sendable {
    public let pid: pid_t
    private var status: Int32?

    /// stdin/stdout from files (or /dev/null); stderr to its own file, or to stdout's when
    /// `stderrToStdout` (a daemon's log), else to /dev/null.
    public init(_ path: String, _ arguments: [String], environment: [String: String],
                stdin: String? = nil, stdout: String? = nil, stderr: String? = nil, stderrToStdout: Bool = false) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if stderrToStdout {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, stderr ?? "/dev/null", stderr == nil ? O_WRONLY : O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        // Default dispositions and an empty mask: the test runner may ignore SIGINT/SIGTERM,
        // and ignored signals would stay ignored in the child.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw PulseTestError.failed("cannot start \(path): \(String(cString: strerror(rc)))") }
        pid = child
    }

    /// Waits for the child; returns its exit status.
    @discardableResult
    public func wait() -> Int32 {
        if let status { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        let code = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        status = code
        return code
    }

    public var isRunning: Bool {
        if status != nil { return false }
        var raw: Int32 = 0
        let r = waitpid(pid, &raw, WNOHANG)
        if r == pid { status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f); return false }
        return true
    }

    /// Sends `signal` to this child only, and waits for it.
    public func stop(_ signal: Int32 = SIGTERM) {
        guard isRunning else { return }
        kill(pid, signal)
        wait()
    }

    /// SIGTERM to this child only; SIGKILL if it has not exited after `timeout` seconds.
    /// Returns the exit status.
    @discardableResult
    public func terminate(timeout: Double) -> Int32 {
        if isRunning {
            kill(pid, SIGTERM)
            let deadline = Date().addingTimeInterval(timeout)
            while isRunning && Date() < deadline { usleep(5_000) }
            if isRunning { kill(pid, SIGKILL) }
        }
        return wait()
    }

    deinit { if status == nil { stop() } }
}

/// A private PulseAudio-protocol server for tests and the bench (recipe: shared/pulse-test.md):
/// PulseAudio itself, or PipeWire's `pipewire-pulse` (`AudioServerKind`).
///
/// Layout ("scope"): a stereo null sink `scope`; `guitar_in` and `amp_out` are mono remap sinks
/// on its left and right channels. Whatever is played into `guitar_in` is the guitar (the engine
/// records `guitar_in.monitor`), the engine plays into `amp_out`, and one recording of
/// `scope.monitor` holds dry (left) and processed (right) sample-aligned.
///
/// The server runs in its own temporary directory (HOME, XDG_RUNTIME_DIR and, on PipeWire, the
/// session bus, XDG config/state/data/cache and PipeWire's runtime directory are all in it), is
/// reached through `PULSE_SERVER` (set in this process by `init` and `start`), and every
/// process it starts is stopped by its PID, never by name. `start()` after `stop()` starts it
/// again on the same socket, so clients can reconnect. Daemon logs stay in `directory`
/// (`pa.log`; `dbus.log`, `pipewire.log`, `wireplumber.log`, `pipewire-pulse.log`); a failed
/// start throws with their last lines.
///
/// What differs on PipeWire (0.3.65 / WirePlumber 0.4.13, measured on this 2-core VM):
/// - Four processes instead of one: a session bus (WirePlumber wants one; a private
///   `dbus-daemon --session --nofork` on `directory/bus`), `pipewire`, `wireplumber`,
///   `pipewire-pulse`. `pipewire` must be listening (socket `xdg/pipewire-0`) before the other
///   two start. `PIPEWIRE_RUNTIME_DIR`, `PULSE_RUNTIME_PATH` and `DBUS_SESSION_BUS_ADDRESS` are
///   set so nothing meets a real session; `PIPEWIRE_REMOTE` and other `PIPEWIRE_*`/`WIREPLUMBER_*`
///   variables of the caller are dropped.
/// - `pactl info` answers 0.05–0.1 s after the first spawn; a whole `start()` (scope loaded
///   and linked) takes 0.12–0.24 s (PulseAudio: 0.06–0.10 s), a restart the same. It says
///   "Server Name: PulseAudio (on PipeWire 0.3.65)", "Server Version: 15.0.0", default sample
///   spec float32le 2ch 48000Hz, and "Default Sink: @DEFAULT_SINK@" until WirePlumber picks one.
///   Before anything is loaded there is a sink `auto_null` (pipewire-pulse's
///   `module-always-sink`); it goes away when `scope` is loaded.
/// - The same `load-module` lines work unchanged: `module-null-sink … rate=48000 channels=2
///   channel_map=front-left,front-right format=float32le` (a bare `module-null-sink` is
///   already float32le 2ch 48000 Hz on PipeWire, where PulseAudio's default would be 44.1 kHz;
///   `rate=44100` does give a 44.1 kHz sink, so keep the arguments). The sink is a
///   `support.null-audio-sink` node with `node.driver=true`: `scope` is a graph driver on a
///   CLOCK_MONOTONIC timer. `module-remap-sink … master=scope channels=1 channel_map=mono
///   master_channel_map=front-left remix=no` needs no other arguments; it is a pair of nodes,
///   the sink `guitar_in` and the stream `output.guitar_in` linked to `scope:playback_FL`.
///   Module indices are large (536870913…). WirePlumber makes the first sink loaded (`scope`)
///   the default sink and its monitor the default source, as PulseAudio does.
/// - A remap sink passes audio only once WirePlumber has linked its stream
///   (`output.guitar_in`) to `scope`; until then `pactl list short sink-inputs` shows its sink
///   as 4294967295. `plugInput`/`plugOutput` therefore wait for the link on PipeWire (a plug
///   takes ~30 ms there, the link being in place by the first check; 6 ms on PulseAudio).
///   After that the scope passes audio at once and
///   bit-exactly (a pacat of noise into `guitar_in` comes out of `scope.monitor`'s left
///   channel sample for sample; `amp_out` lands on the right).
/// - No start-up backlog: a parec of `scope.monitor` gets its first data after 0.04 s, where
///   PulseAudio's idle null sink makes it wait 2.0 s.
/// - As on PulseAudio, a record stream whose source is unloaded (`unplugInput` under a parec
///   of `guitar_in.monitor`) is not ended but moved to the default source, `scope.monitor`.
/// - `module-pipe-source` loads, but does not run on the writer's clock: see
///   `AudioServerKind.pipeSourceRunsOnWriterClock`.
/// - PipeWire raises its minimum quantum to 1024 frames (21 ms) and pipewire-pulse's to
///   1024/48000 when it detects a virtual machine (`vm.overrides` in
///   /usr/share/pipewire/pipewire.conf and pipewire-pulse.conf). This firecracker VM is not
///   detected (default.clock.min-quantum = 16 here), but a CI VM may be, and latencies measured
///   there would not be a desktop's.
public final class PrivatePulseServer: @unchecked Sendable {
    public let kind: AudioServerKind
    public let directory: URL
    public var socketPath: String { directory.appendingPathComponent("xdg/pulse/native").path }
    public var address: String { "unix:" + socketPath }
    /// The process that speaks the PulseAudio protocol: `pulseaudio`, or `pipewire-pulse`.
    public private(set) var process: Subprocess?
    /// Every process `start` started, in start order (stopped in reverse).
    public private(set) var daemons: [Daemon] = []
    /// `pactl info` once the server answered.
    public private(set) var serverInfo = ""
    /// Seconds from the first spawn to a server that answers `pactl info` and has its scope
    /// loaded (and, on PipeWire, linked).
    public private(set) var startSeconds = 0.0
    private var inputModule: Int?
    private var outputModule: Int?
    private var pipeSources: [String: PipeSource] = [:]

    public struct Daemon {
        public let name: String
        public let process: Subprocess
        public let log: URL
    }

    public static let rate = 48_000

    /// Nil when the `pulseaudio` binary is not installed (tests skip then, saying so).
    public static var binary: String? { which("pulseaudio") }
    /// PulseAudio and its client tools are installed.
    public static var isAvailable: Bool { isAvailable(.pulseaudio) }
    /// `kind`'s server and the client tools are installed.
    public static func isAvailable(_ kind: AudioServerKind) -> Bool { kind.isAvailable }
    /// Why `kind` cannot run here, for a test's skip message ("" when it can).
    public static func unavailableReason(_ kind: AudioServerKind) -> String { kind.unavailableReason ?? "" }

    static func which(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    public init(kind: AudioServerKind = .pulseaudio) throws {
        self.kind = kind
        let prefix = kind == .pulseaudio ? "stompbox-pa-" : "stompbox-pw-"
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(prefix + UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("xdg"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        setenv("PULSE_SERVER", address, 1)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private var runtimeDirectory: String { directory.appendingPathComponent("xdg").path }
    private var busPath: String { directory.appendingPathComponent("bus").path }

    /// The environment a program run against this server needs (its runtime folder, socket
    /// names and session bus): PulseAudio clients, and on PipeWire JACK clients under `pw-jack`.
    public var clientEnvironment: [String: String] { environment }

    /// The environment of the server and of the client tools run against it.
    private var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = directory.path
        env["XDG_RUNTIME_DIR"] = runtimeDirectory
        env["PULSE_SERVER"] = address
        if kind == .pipewire {
            for key in env.keys where key.hasPrefix("PIPEWIRE_") || key.hasPrefix("WIREPLUMBER_") || key.hasPrefix("PULSE_") {
                env[key] = nil
            }
            env["PULSE_SERVER"] = address
            env["PULSE_RUNTIME_PATH"] = runtimeDirectory + "/pulse"
            env["PIPEWIRE_RUNTIME_DIR"] = runtimeDirectory
            env["PIPEWIRE_REMOTE"] = "pipewire-0"
            env["PIPEWIRE_LOG_SYSTEMD"] = "false"   // logs to stderr (the log files), not the journal
            env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + busPath
            env["XDG_CONFIG_HOME"] = directory.appendingPathComponent(".config").path
            env["XDG_STATE_HOME"] = directory.appendingPathComponent(".local/state").path
            env["XDG_DATA_HOME"] = directory.appendingPathComponent(".local/share").path
            env["XDG_CACHE_HOME"] = directory.appendingPathComponent(".cache").path
        }
        return env
    }

    /// Starts the server (again, on the same socket) and waits until it answers and its scope
    /// topology is loaded (on PipeWire: and linked).
    public func start() throws {
        guard process == nil else { return }
        try TestTier.requireApart("a private \(kind) server")
        setenv("PULSE_SERVER", address, 1)
        let began = Date()
        do {
            switch kind {
            case .pulseaudio: try launchPulseAudio()
            case .pipewire: try launchPipeWire()
            }
            try waitUntilAnswering(timeout: 10)
            serverInfo = try pactl(["info"])
            try loadScope()
            try plugInput()
            try plugOutput()
        } catch {
            let logs = logTails()
            stop()
            throw PulseTestError.failed("\(kind) did not start: \(error)\n\(logs)")
        }
        startSeconds = Date().timeIntervalSince(began)
    }

    private func launchPulseAudio() throws {
        guard let binary = Self.binary else { throw PulseTestError.missing("pulseaudio") }
        let script = """
        load-module module-native-protocol-unix auth-anonymous=1 socket=\(socketPath)
        """
        let scriptURL = directory.appendingPathComponent("test.pa")
        try script.write(to: scriptURL, atomically: true, encoding: .utf8)
        let log = directory.appendingPathComponent("pa.log")
        let p = try Subprocess(binary, ["-n", "-F", scriptURL.path, "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit",
                                        "--log-target=file:\(log.path)", "--log-level=3"],
                               environment: environment)
        daemons.append(Daemon(name: "pulseaudio", process: p, log: log))
        process = p
    }

    private func launchPipeWire() throws {
        // Leftovers of a killed run would make a daemon think another one is listening.
        for stale in [busPath, runtimeDirectory + "/pipewire-0", runtimeDirectory + "/pipewire-0.lock", socketPath,
                      runtimeDirectory + "/pulse/pid"] {
            unlink(stale)
        }
        let env = environment
        func spawn(_ name: String, _ arguments: [String] = []) throws -> Subprocess {
            guard let path = Self.which(name) else { throw PulseTestError.missing(name) }
            let log = directory.appendingPathComponent("\(name.replacingOccurrences(of: "-daemon", with: "")).log")
            let p = try Subprocess(path, arguments, environment: env, stdout: log.path, stderrToStdout: true)
            daemons.append(Daemon(name: name, process: p, log: log))
            return p
        }
        _ = try spawn("dbus-daemon", ["--session", "--nofork", "--nopidfile", "--address=unix:path=\(busPath)"])
        try waitForSocket(busPath, timeout: 5, what: "dbus-daemon")
        _ = try spawn("pipewire")
        try waitForSocket(runtimeDirectory + "/pipewire-0", timeout: 5, what: "pipewire")
        _ = try spawn("wireplumber")
        process = try spawn("pipewire-pulse")
    }

    private func checkDaemons() throws {
        for d in daemons where !d.process.isRunning {
            throw PulseTestError.failed("\(d.name) exited with status \(d.process.wait())")
        }
    }

    private func waitForSocket(_ path: String, timeout: Double, what: String) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            var st = stat()
            if stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK { return }
            try checkDaemons()
            guard Date() < deadline else { throw PulseTestError.failed("\(what) made no socket \(path) in \(timeout) s") }
            usleep(10_000)
        }
    }

    private func waitUntilAnswering(timeout: Double) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if (try? pactl(["info"])) != nil { return }
            try checkDaemons()
            guard Date() < deadline else { _ = try pactl(["info"]); return }
            usleep(20_000)
        }
    }

    private func loadScope() throws {
        try pactl(["load-module", "module-null-sink", "sink_name=scope", "rate=\(Self.rate)", "channels=2",
                   "channel_map=front-left,front-right", "format=float32le"])
    }

    /// The last lines of every daemon log, for error messages.
    public func logTails(lines: Int = 15) -> String {
        var logs = daemons.map(\.log)
        if logs.isEmpty { logs = [directory.appendingPathComponent("pa.log")] }
        return logs.map { url -> String in
            let text = (try? String(contentsOf: url, encoding: .utf8)) ?? "(no log)"
            let tail = text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
            return "--- \(url.lastPathComponent) ---\n\(tail)"
        }.joined(separator: "\n")
    }

    /// Stops every process `start` started, by PID (SIGTERM, SIGKILL after 3 s), newest first,
    /// and waits for each.
    public func stop() {
        for d in daemons.reversed() { d.process.terminate(timeout: 3) }
        daemons = []
        process = nil
        inputModule = nil
        outputModule = nil
        pipeSources = [:]
    }

    @discardableResult
    public func pactl(_ arguments: [String]) throws -> String {
        let (status, out) = try runTool("pactl", arguments, environment: environment)
        guard status == 0 else { throw PulseTestError.failed("pactl \(arguments.joined(separator: " ")): \(out)") }
        return out
    }

    func runTool(_ name: String, _ arguments: [String], environment: [String: String]) throws -> (Int32, String) {
        guard let path = Self.which(name) else { throw PulseTestError.missing(name) }
        let out = directory.appendingPathComponent("tool-\(UUID().uuidString.prefix(8)).out").path
        let err = out + ".err"
        defer { unlink(out); unlink(err) }
        let status = try Subprocess(path, arguments, environment: environment, stdout: out, stderr: err).wait()
        let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        // stderr only matters when the tool failed (it says why there).
        return (status, status == 0 ? text : text + ((try? String(contentsOfFile: err, encoding: .utf8)) ?? ""))
    }

    private func loadModule(_ arguments: [String]) throws -> Int {
        let out = try pactl(["load-module"] + arguments)
        guard let index = Int(out.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw PulseTestError.failed("load-module \(arguments.joined(separator: " ")): \(out)")
        }
        return index
    }

    private func loadRemap(_ name: String, _ channel: String) throws -> Int {
        let index = try loadModule(["module-remap-sink", "sink_name=\(name)", "master=scope", "channels=1",
                                    "channel_map=mono", "master_channel_map=\(channel)", "remix=no"])
        if kind == .pipewire { try waitUntilLinked(module: index, name: name, timeout: 5) }
        return index
    }

    /// PipeWire: waits until WirePlumber has linked the remap sink's stream to `scope` (before
    /// that, audio played into the remap sink goes nowhere).
    private func waitUntilLinked(module: Int, name: String, timeout: Double) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let sinks = try pactl(["list", "short", "sinks"])
            var scope: String?
            for line in sinks.split(separator: "\n") {
                let fields = line.split(separator: "\t")
                if fields.count > 1 && fields[1] == "scope" { scope = String(fields[0]) }
            }
            let inputs = try pactl(["list", "sink-inputs"])
            if let scope, Self.sinkInput(ownedBy: module, in: inputs) == scope { return }
            try checkDaemons()
            guard Date() < deadline else {
                throw PulseTestError.failed("\(name) was not linked to scope after \(timeout) s:\n\(inputs)")
            }
            usleep(5_000)
        }
    }

    /// The sink index of the sink input whose "Owner Module" is `module`, from `pactl list sink-inputs`.
    static func sinkInput(ownedBy module: Int, in listing: String) -> String? {
        for block in listing.components(separatedBy: "\n\n") {
            let lines = block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            guard lines.contains("Owner Module: \(module)") else { continue }
            return lines.first { $0.hasPrefix("Sink: ") }.map { String($0.dropFirst(6)) }
        }
        return nil
    }

    /// "Plugs the interface in": the sink `guitar_in` (the engine records its monitor).
    public func plugInput() throws { inputModule = try loadRemap("guitar_in", "front-left") }
    /// "Unplugs the interface".
    public func unplugInput() throws {
        if let m = inputModule { try pactl(["unload-module", String(m)]) }
        inputModule = nil
    }
    public func plugOutput() throws { outputModule = try loadRemap("amp_out", "front-right") }
    public func unplugOutput() throws {
        if let m = outputModule { try pactl(["unload-module", String(m)]) }
        outputModule = nil
    }

    /// Plays mono float samples into `sink` (non-blocking; the returned process ends when done).
    public func play(_ samples: [Float], into sink: String = "guitar_in") throws -> Subprocess {
        guard let path = Self.which("pacat") else { throw PulseTestError.missing("pacat") }
        let file = directory.appendingPathComponent("play-\(UUID().uuidString.prefix(8)).raw")
        try samples.withUnsafeBufferPointer { Data(buffer: $0) }.write(to: file)
        return try Subprocess(path, ["--playback", "-d", sink, "--format=float32le", "--rate=\(Self.rate)", "--channels=1", "--raw",
                                     "--latency-msec=20"], environment: environment, stdin: file.path)
    }

    /// Records `scope.monitor` (left = dry input, right = engine output) until `stop` is called.
    public func startScopeRecording() throws -> ScopeRecording {
        try ScopeRecording(environment: environment, file: directory.appendingPathComponent("scope-\(UUID().uuidString.prefix(6)).raw"))
    }

    /// Records mono float from `source` (e.g. a pipe source) into a file until `finish`.
    public func startRecording(source: String, channels: Int = 1, rate: Int = PrivatePulseServer.rate) throws -> ScopeRecording {
        try ScopeRecording(environment: environment, file: directory.appendingPathComponent("rec-\(UUID().uuidString.prefix(6)).raw"),
                           device: source, channels: channels, rate: rate)
    }

    // MARK: A source on another clock

    /// Loads `module-pipe-source` as source `name` (mono float32le at `rate`); the module
    /// creates the FIFO `directory/NAME.fifo` (a stale one from a killed run is removed
    /// first; both servers delete it on unload). Feed it with a `PacedWriter`, started after
    /// the source's reader (nobody reads the FIFO while nobody records the source). On
    /// PulseAudio the source runs on the writer's clock; on PipeWire 0.3.65 it does not
    /// (`AudioServerKind.pipeSourceRunsOnWriterClock`).
    public func loadPipeSource(name: String, rate: Int = PrivatePulseServer.rate) throws -> PipeSource {
        let fifo = directory.appendingPathComponent("\(name).fifo").path
        if pipeSources[name] == nil { unlink(fifo) }
        let module = try loadModule(["module-pipe-source", "source_name=\(name)", "file=\(fifo)", "format=float32le",
                                     "rate=\(rate)", "channels=1"])
        let source = PipeSource(name: name, fifoPath: fifo, rate: rate, module: module)
        pipeSources[name] = source
        return source
    }

    /// Unloads a pipe source (its readers see it removed, as when a device is unplugged).
    public func unloadPipeSource(_ source: PipeSource) throws {
        guard pipeSources[source.name]?.module == source.module else { return }
        try pactl(["unload-module", String(source.module)])
        pipeSources[source.name] = nil
    }

    /// Loads a mono float32 `module-null-sink` named `name` at `rate` (without rewinds),
    /// returning its module (pass it to `unloadModule`). Its monitor is `name.monitor`.
    ///
    /// The clock of a PulseAudio null sink: it advances by each chunk it renders, converted
    /// with `pa_bytes_to_usec`, which truncates to whole microseconds. At 48 kHz a frame is
    /// 20.83 µs, so the sink runs fast of CLOCK_MONOTONIC by the truncated fraction; fed
    /// 128-frame blocks (2 666.67 µs, counted as 2 666) it renders 48 012 frames a second,
    /// +250 ppm (measured: +249 to +256 under the engine at 128 frames, +310 under a client
    /// writing 128-frame chunks with 10 ms latency; ±3 ppm under `pacat`'s large chunks). At
    /// 50 kHz (40, 25, 20 kHz) a frame is a whole number of microseconds and the sink keeps
    /// CLOCK_MONOTONIC time. But PulseAudio switches an idle sink to its alternate rate
    /// (48 kHz) when a 48 kHz stream connects, unless the sink or its monitor is already
    /// running: record its monitor at its own rate first (`startRecording(source:rate:)`),
    /// then connect the player. (The `scope` sink's drift does not matter for the scope runs:
    /// input and output are both on it.)
    public func loadNullSink(name: String, rate: Int) throws -> Int {
        try loadModule(["module-null-sink", "sink_name=\(name)", "rate=\(rate)", "channels=1", "channel_map=mono",
                        "format=float32le", "norewinds=1"])
    }

    public func unloadModule(_ module: Int) throws {
        try pactl(["unload-module", String(module)])
    }
}

/// A `module-pipe-source` loaded by `PrivatePulseServer.loadPipeSource`.
public struct PipeSource: Sendable, Hashable {
    /// The source's name (what a client records from).
    public let name: String
    /// The FIFO the module reads; open it for writing with `PacedWriter`.
    public let fifoPath: String
    public let rate: Int
    public let module: Int
}

/// A `parec` of the scope sink's monitor into a file.
public final class ScopeRecording {
    public var isRunning: Bool { process.isRunning }
    let process: Subprocess
    let file: URL

    let channels: Int

    init(environment: [String: String], file: URL, device: String = "scope.monitor", channels: Int = 2,
         rate: Int = PrivatePulseServer.rate) throws {
        guard let path = PrivatePulseServer.which("parec") else { throw PulseTestError.missing("parec") }
        self.file = file
        self.channels = channels
        process = try Subprocess(path, ["-d", device, "--format=float32le", "--rate=\(rate)",
                                        "--channels=\(channels)", "--raw", "--latency-msec=20"],
                                 environment: environment, stdout: file.path)
    }

    /// Frames written to the file so far (parec writes each fragment as it arrives).
    public var framesRecorded: Int {
        var st = stat()
        return stat(file.path, &st) == 0 ? Int(st.st_size) / (4 * channels) : 0
    }

    /// Ends a mono recording (`PrivatePulseServer.startRecording`) and returns its samples.
    public func finishMono() -> [Float] {
        process.stop(SIGTERM)
        let data = (try? Data(contentsOf: file)) ?? Data()
        try? FileManager.default.removeItem(at: file)
        var samples = [Float](repeating: 0, count: data.count / 4)
        _ = samples.withUnsafeMutableBytes { data.copyBytes(to: $0) }
        return samples
    }

    /// Ends the recording and returns (left, right).
    public func finish() -> (left: [Float], right: [Float]) {
        process.stop(SIGTERM)
        let data = (try? Data(contentsOf: file)) ?? Data()
        try? FileManager.default.removeItem(at: file)
        let frames = data.count / 8
        var left = [Float](repeating: 0, count: frames)
        var right = [Float](repeating: 0, count: frames)
        data.withUnsafeBytes { raw in
            let f = raw.bindMemory(to: Float.self)
            for i in 0..<frames { left[i] = f[2 * i]; right[i] = f[2 * i + 1] }
        }
        return (left, right)
    }
}

public enum PulseTestError: Error, CustomStringConvertible {
    case missing(String)
    case failed(String)
    public var description: String {
        switch self {
        case .missing(let tool): "\(tool) is not installed"
        case .failed(let what): what
        }
    }
}

/// Measurements on a scope recording.
public enum ScopeAnalysis {
    /// The delay (in samples) of `right` against `left` maximising their correlation over
    /// `window` samples starting at `start`, searched in 0..<maxLag.
    public static func delay(_ left: [Float], _ right: [Float], start: Int, window: Int, maxLag: Int) -> (lag: Int, correlation: Double)? {
        guard start >= 0, start + window + maxLag <= min(left.count, right.count) else { return nil }
        var best = (lag: 0, correlation: -2.0)
        for lag in 0..<maxLag {
            let c = correlation(left, start, right, start + lag, window)
            if c > best.correlation { best = (lag, c) }
        }
        return best
    }

    /// Normalised correlation of two windows.
    public static func correlation(_ a: [Float], _ aStart: Int, _ b: [Float], _ bStart: Int, _ n: Int) -> Double {
        var ab = 0.0, aa = 0.0, bb = 0.0
        for i in 0..<n {
            let x = Double(a[aStart + i]), y = Double(b[bStart + i])
            ab += x * y; aa += x * x; bb += y * y
        }
        guard aa > 0, bb > 0 else { return 0 }
        return ab / (aa * bb).squareRoot()
    }

    /// Dropouts in a pass-through recording of noise: windows (of `window` samples) where right
    /// no longer matches left delayed by the expected lag. Consecutive bad windows count once;
    /// after one, the lag is searched again (a dropout shifts it).
    /// `lags` lists each delay in turn; `meanLag` is their mean weighted by how long each lasted;
    /// `starts`, where each dropout's first bad window begins (samples into `left`).
    public static func dropouts(_ left: [Float], _ right: [Float], lag: Int, from: Int, window: Int = 480) -> (count: Int, lags: [Int], meanLag: Double, starts: [Int]) {
        var count = 0
        var starts: [Int] = []
        var lag = lag
        var lags = [lag]
        var weighted = 0.0
        var span = 0.0
        var bad = false
        var i = from
        while i + window + lag + 4800 < min(left.count, right.count) {
            let c = correlation(left, i, right, i + lag, window)
            if c >= 0.99 { weighted += Double(lag); span += 1 }
            if c < 0.99 {
                if !bad { count += 1; bad = true; starts.append(i) }
                if let found = delay(left, right, start: i, window: 2400, maxLag: 4800), found.correlation > 0.99 {
                    if found.lag != lag { lag = found.lag; lags.append(lag) }
                    bad = false
                }
            } else {
                bad = false
            }
            i += window
        }
        return (count, lags, span > 0 ? weighted / span : Double(lag), starts)
    }
}

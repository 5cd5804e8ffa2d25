import Foundation

/// A child process started with posix_spawn and reaped by its own PID.
///
/// Not Foundation's `Process`: on Linux its single reaper thread blocks in `wait4` on one
/// long-lived child (the server) and then never notices the others exit, so
/// `waitUntilExit` on a short `pactl` hangs for ever.
public final class Subprocess: @unchecked Sendable {
    public let pid: pid_t
    private var status: Int32?

    /// stdin/stdout from files (or /dev/null), stderr to /dev/null.
    public init(_ path: String, _ arguments: [String], environment: [String: String],
                stdin: String? = nil, stdout: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
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

    deinit { if status == nil { stop() } }
}

/// A private PulseAudio server for tests and the bench (recipe: shared/pulse-test.md).
///
/// Layout ("scope"): a stereo null sink `scope`; `guitar_in` and `amp_out` are mono remap sinks
/// on its left and right channels. Whatever is played into `guitar_in` is the guitar (the engine
/// records `guitar_in.monitor`), the engine plays into `amp_out`, and one recording of
/// `scope.monitor` holds dry (left) and processed (right) sample-aligned.
///
/// The server runs in its own temporary directory, is reached through `PULSE_SERVER` (set in
/// this process by `start`), and is stopped by its PID, never by name.
public final class PrivatePulseServer: @unchecked Sendable {
    public let directory: URL
    public var socketPath: String { directory.appendingPathComponent("xdg/pulse/native").path }
    public var address: String { "unix:" + socketPath }
    public private(set) var process: Subprocess?
    private var inputModule: Int?
    private var outputModule: Int?

    public static let rate = 48_000

    /// Nil when the `pulseaudio` binary is not installed (tests skip then, saying so).
    public static var binary: String? { which("pulseaudio") }
    public static var isAvailable: Bool { binary != nil && which("pactl") != nil && which("pacat") != nil }

    static func which(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    public init() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("stompbox-pa-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("xdg"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        setenv("PULSE_SERVER", address, 1)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = directory.path
        env["XDG_RUNTIME_DIR"] = directory.appendingPathComponent("xdg").path
        env["PULSE_SERVER"] = address
        return env
    }

    /// Starts the server (again, on the same socket) and waits until it answers.
    public func start() throws {
        guard let binary = Self.binary else { throw PulseTestError.missing("pulseaudio") }
        let script = """
        load-module module-native-protocol-unix auth-anonymous=1 socket=\(socketPath)
        load-module module-null-sink sink_name=scope rate=\(Self.rate) channels=2 channel_map=front-left,front-right format=float32le
        """
        let scriptURL = directory.appendingPathComponent("test.pa")
        try script.write(to: scriptURL, atomically: true, encoding: .utf8)
        process = try Subprocess(binary, ["-n", "-F", scriptURL.path, "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit",
                                          "--log-target=file:\(directory.appendingPathComponent("pa.log").path)", "--log-level=3"],
                                 environment: environment)
        for _ in 0..<100 {
            if (try? pactl(["info"])) != nil { break }
            usleep(50_000)
        }
        _ = try pactl(["info"])
        try plugInput()
        try plugOutput()
    }

    /// Stops the server by its PID and waits for it to exit.
    public func stop() {
        guard let p = process else { return }
        p.stop(SIGTERM)
        process = nil
        inputModule = nil
        outputModule = nil
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
        defer { unlink(out) }
        let status = try Subprocess(path, arguments, environment: environment, stdout: out).wait()
        return (status, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
    }

    private func loadRemap(_ name: String, _ channel: String) throws -> Int {
        let out = try pactl(["load-module", "module-remap-sink", "sink_name=\(name)", "master=scope", "channels=1",
                             "channel_map=mono", "master_channel_map=\(channel)", "remix=no"])
        guard let index = Int(out.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw PulseTestError.failed("load-module \(name): \(out)")
        }
        return index
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
}

/// A `parec` of the scope sink's monitor into a file.
public final class ScopeRecording {
    let process: Subprocess
    let file: URL

    init(environment: [String: String], file: URL) throws {
        guard let path = PrivatePulseServer.which("parec") else { throw PulseTestError.missing("parec") }
        self.file = file
        process = try Subprocess(path, ["-d", "scope.monitor", "--format=float32le", "--rate=\(PrivatePulseServer.rate)",
                                        "--channels=2", "--raw", "--latency-msec=20"],
                                 environment: environment, stdout: file.path)
    }

    /// Stereo frames written to the file so far (parec writes each fragment as it arrives).
    public var framesRecorded: Int {
        var st = stat()
        return stat(file.path, &st) == 0 ? Int(st.st_size) / 8 : 0
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
    /// `lags` lists each delay in turn; `meanLag` is their mean weighted by how long each lasted.
    public static func dropouts(_ left: [Float], _ right: [Float], lag: Int, from: Int, window: Int = 480) -> (count: Int, lags: [Int], meanLag: Double) {
        var count = 0
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
                if !bad { count += 1; bad = true }
                if let found = delay(left, right, start: i, window: 2400, maxLag: 4800), found.correlation > 0.99 {
                    if found.lag != lag { lag = found.lag; lags.append(lag) }
                    bad = false
                }
            } else {
                bad = false
            }
            i += window
        }
        return (count, lags, span > 0 ? weighted / span : Double(lag))
    }
}

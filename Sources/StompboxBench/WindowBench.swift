import Foundation
import StompboxTestSupport

/// The window's costs (issue 10): launch to the first drawn frame, the GUI thread's CPU while
/// audio runs and nobody touches anything, and the process's resident memory with the Looper's
/// tapes reserved (the classic board has the Looper). The release `stompbox-window` on a
/// private X server (Xvfb, 1920×1080) and a private PulseAudio, playing the demo riff into a
/// null sink; median of `runs` launches.
enum WindowBench {
    static let idleSeconds = 10.0
    static let cpuGoalPercent = 1.0
    static let memoryGoalMB = 120.0
    /// matchbox-window-manager (an EWMH one, small): `make bench` installs it.
    static let windowManager = "/usr/bin/matchbox-window-manager"

    struct Run {
        var firstFrameMs: Double
        var guiCPUPercent: Double
        var residentMB: Double
    }

    static func run(runs: Int) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let binary = root.appendingPathComponent(".build/release/stompbox-window").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            print("window: skipped (build it first: swift build -c release --product stompbox-window)")
            return
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb"), PrivatePulseServer.isAvailable(.pulseaudio) else {
            print("window: skipped (needs Xvfb and pulseaudio)")
            return
        }
        let server = try PrivatePulseServer(kind: .pulseaudio)
        try server.start()
        defer { server.stop() }
        var results: [Run] = []
        for _ in 0..<runs {
            if let r = try once(binary: binary, server: server) { results.append(r) }
        }
        guard !results.isEmpty else { print("window: no run reached a running engine and a first frame"); return }
        func median(_ x: [Double]) -> Double { let s = x.sorted(); return s[s.count / 2] }
        let frame = median(results.map(\.firstFrameMs)), cpu = median(results.map(\.guiCPUPercent)), rss = median(results.map(\.residentMB))
        let wm = FileManager.default.isExecutableFile(atPath: windowManager) ? "matchbox-window-manager" : "no window manager (install matchbox-window-manager)"
        print("window (median of \(results.count) launches, 1920×1080 Xvfb with \(wm), audio running, nothing touched for \(Int(idleSeconds)) s):")
        print("  launch to first frame: \(format(frame, 0)) ms (\(results.map { format($0.firstFrameMs, 0) }.joined(separator: ", ")))")
        print("  GUI thread: \(format(cpu, 2)) % of a core (goal ≤ \(format(cpuGoalPercent, 0)) %: \(cpu <= cpuGoalPercent ? "met" : "NOT met"))")
        print("  resident memory with the Looper's tapes reserved: \(format(rss, 1)) MB (goal ≤ \(format(memoryGoalMB, 0)) MB: \(rss <= memoryGoalMB ? "met" : "NOT met"))")
    }

    private static func once(binary: String, server: PrivatePulseServer) throws -> Run? {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("stompbox-bench-window-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        var n = 300 + Int.random(in: 0..<300)
        while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") || FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock") { n += 1 }
        let xvfb = try Subprocess("/usr/bin/Xvfb", [":\(n)", "-screen", "0", "1920x1080x24", "-nolisten", "tcp"], environment: [:])
        defer { xvfb.stop(SIGKILL); _ = xvfb.wait() }
        guard wait(10, { FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") }) else { print("window: Xvfb did not start"); return nil }
        // A desktop always has a window manager; without one GDK asks the X server whether one
        // has appeared on every frame it draws (a round trip), which no user's window pays.
        var manager: Subprocess?
        if FileManager.default.isExecutableFile(atPath: windowManager) {
            manager = try Subprocess(windowManager, ["-use_titlebar", "no"], environment: ["DISPLAY": ":\(n)"])
            Thread.sleep(forTimeInterval: 0.5)
        }
        defer { manager?.stop(SIGKILL); _ = manager?.wait() }

        // No STOMPBOX_STATE_FILE: the tests' state reports cost the GUI thread a few % themselves.
        let stderr = home.appendingPathComponent("stderr").path
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "DISPLAY": ":\(n)", "GDK_BACKEND": "x11", "NO_AT_BRIDGE": "1",
            "HOME": home.path, "XDG_CONFIG_HOME": home.appendingPathComponent("config").path,
            "XDG_DATA_HOME": home.appendingPathComponent("data").path,
            "STOMPBOX_INPUT": "demo", "STOMPBOX_OUTPUT": "amp_out",
            "PULSE_SERVER": server.address,
            "STOMPBOX_LAUNCHED_AT": String(Int(now.tv_sec) * 1_000_000_000 + now.tv_nsec),
        ]
        let window = try Subprocess(binary, [], environment: environment, stderr: stderr)
        defer { window.stop(SIGTERM); _ = window.terminate(timeout: 5) }
        // The first frame, from the window's own line; the audio, from the server: the window's
        // stream playing into amp_out.
        var firstFrame: Double?
        guard wait(30, {
            let text = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("stompbox: first frame ") }) {
                firstFrame = Double(line.split(separator: " ")[3])
            }
            let streams = (try? server.pactl(["list", "short", "sink-inputs"])) ?? ""
            return firstFrame != nil && !streams.isEmpty
        }), let firstFrame else {
            print("window: no first frame with audio playing within 30 s")
            return nil
        }
        // Settle (the first seconds draw the meters rising, load fonts…), then watch.
        Thread.sleep(forTimeInterval: 2)
        let before = runtimeNanoseconds(window.pid)
        let started = Date()
        Thread.sleep(forTimeInterval: idleSeconds)
        let after = runtimeNanoseconds(window.pid)
        let elapsed = Date().timeIntervalSince(started)
        guard let before, let after else { return nil }
        return Run(firstFrameMs: firstFrame, guiCPUPercent: Double(after - before) / 1e9 / elapsed * 100,
                   residentMB: residentKB(window.pid) / 1024)
    }

    /// The main (GUI) thread's time on a CPU (ns), from the scheduler's own accounting.
    private static func runtimeNanoseconds(_ pid: pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/schedstat", encoding: .utf8) else { return nil }
        return text.split(separator: " ").first.flatMap { Int($0) }
    }

    private static func residentKB(_ pid: pid_t) -> Double {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    private static func wait(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }
}

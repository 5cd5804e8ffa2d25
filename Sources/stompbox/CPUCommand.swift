import ArgumentParser
import CStompboxLauncher
import Foundation

/// `stompbox cpu`: which of the package's builds runs on this processor, and why (the launcher
/// in Sources/CStompboxLauncher picks it before `main`).
struct CPUCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cpu",
        abstract: "Says which build of Stompbox runs on this processor.",
        discussion: """
            The package holds Stompbox built for the x86-64 baseline, x86-64-v3 (AVX2, FMA) and \
            x86-64-v4 (AVX-512); the stompbox on PATH starts the best one this processor runs \
            (STOMPBOX_CPU=baseline|v3|v4 picks one, capped at what the processor runs). A build \
            from source (make run) is for the machine that built it ("native").
            """)

    static let levelDescriptions = [
        "baseline": "x86-64 baseline, SSE2",
        "v3": "x86-64-v3: AVX2, FMA",
        "v4": "x86-64-v4: AVX-512, 512-bit vectors",
        "native": "this machine's processor, built from source",
    ]

    func run() throws {
        let level = String(cString: stompbox_build_level())
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        print("build: \(level) (\(Self.levelDescriptions[level] ?? level)), \(me)")
        print("processor: \(String(cString: stompbox_cpu_level()))")
        let launcher = stompbox_launcher_path().map { String(cString: $0) }
        print("started by: \(launcher ?? "itself")")
        if let requested = stompbox_requested_level() {
            print("STOMPBOX_CPU: \(String(cString: requested))")
        }
        // The levels beside the launcher (or beside this baseline build, when none was there).
        let bin = URL(fileURLWithPath: launcher ?? me).deletingLastPathComponent()
        if level == "baseline" || launcher != nil {
            let installed = ["v3", "v4"].filter {
                FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("../lib/stompbox/\($0)/stompbox").standardizedFileURL.path)
            }
            print("builds installed: \((["baseline"] + installed).joined(separator: ", "))")
        }
    }
}

import Foundation
import StompboxTestSupport

/// The package's build (`make deb`: the baseline launcher in .build/deb/stage/usr/bin, which
/// starts the x86-64 level this processor runs) against this native release build, on the
/// same machine, side by side (issue 38's goal: within 10 %). Both are the `stompbox` program:
/// the chain's cost is a render of the riff with every pedal on less the same render with every
/// pedal off (start-up, reading and writing the files cancel out), CPU from exec to exit, runs
/// interleaved so that a busy spell of the host weighs on every build alike; medians.
enum PackageBench {
    static let pedals = ["gate", "overdrive", "amp", "cab", "eq", "flanger", "tremolo", "delay", "reverb"]

    static func run(riff: [Float], runs: Int, native: String? = nil) {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let native = native ?? URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("stompbox").path
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let packaged = root.appendingPathComponent(".build/deb/stage/usr/bin/stompbox").path
        guard FileManager.default.isExecutableFile(atPath: native) else {
            print("  package: \(native) is not built (swift build -c release --product stompbox) — no comparison")
            return
        }
        guard FileManager.default.isExecutableFile(atPath: packaged) else {
            print("  package: not built (make deb stages it in .build/deb/stage) — no comparison with the native build")
            return
        }
        let folder = TemporaryFolder("stompbox-package-bench")
        let input = folder.file("riff.wav"), output = folder.file("out.wav")
        writeWAV(riff, to: input)
        func arguments(on: Bool) -> [String] {
            ["render", input, output] + pedals.flatMap { ["--set", "\($0).enabled=\(on ? "on" : "off")"] }
        }
        // The launcher's choice, then the baseline it falls back to, as named by `stompbox cpu`.
        let chosen = level(packaged)
        var builds: [(name: String, program: String, environment: [String: String])] = [
            ("native", native, [:]), ("package (\(chosen))", packaged, [:]),
        ]
        if chosen != "baseline" { builds.append(("package forced to baseline", packaged, ["STOMPBOX_CPU": "baseline"])) }
        var on = Array(repeating: [Double](), count: builds.count), off = on
        for _ in 0..<runs {
            for (i, build) in builds.enumerated() {
                guard let a = runChild(build.program, arguments(on: true), environment: build.environment),
                      let b = runChild(build.program, arguments(on: false), environment: build.environment) else {
                    print("  package: a render failed — no comparison")
                    return
                }
                on[i].append(a.cpu)
                off[i].append(b.cpu)
            }
        }
        func median(_ x: [Double]) -> Double { let s = x.sorted(); return s[s.count / 2] }
        let frames = Double(riff.count)
        let chain = builds.indices.map { (median(on[$0]) - median(off[$0])) * 1e9 / frames }
        print("  package against native, \(String(format: "%.0f", frames / sampleRate)) s render, every pedal on less every pedal off (CPU from exec to exit, \(runs) interleaved runs, medians):")
        for (i, build) in builds.enumerated() {
            let ratio = chain[i] / chain[0]
            print("    \(build.name.padding(toLength: 28, withPad: " ", startingAt: 0)) \(format(chain[i])) ns/sample of chain (render \(format(median(on[i]), 3)) s, bare \(format(median(off[i]), 3)) s)\(i == 0 ? "" : String(format: ": %.2f× native", ratio))")
        }
        let ratio = chain[1] / chain[0]
        print("  package within 10 % of native: \(ratio <= 1.10 ? "met" : "NOT met") (\(String(format: "%+.1f", (ratio - 1) * 100)) %)")
    }

    /// The level `program` runs as on this processor (`stompbox cpu`'s first line).
    static func level(_ program: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["cpu"]
        let pipe = Pipe()
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return "?" }
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let first = text.split(separator: "\n").first.map(String.init) ?? ""
        return first.hasPrefix("build: ") ? String(first.dropFirst(7).prefix { $0 != " " }) : "?"
    }
}

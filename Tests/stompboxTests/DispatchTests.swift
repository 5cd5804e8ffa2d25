import Foundation
import StompboxAudio
import StompboxTestSupport
import Testing

/// The package's builds for each x86-64 level (issue 38): `make deb` stages the package in
/// .build/deb/stage, `usr/bin/stompbox` being the baseline build that executes
/// `usr/lib/stompbox/<level>/stompbox` for this processor. Each level this processor runs,
/// forced with STOMPBOX_CPU, renders the demo riff: pedals whose arithmetic is the same at every
/// level (no `mulAdd`) to the same bits as the baseline, the whole board within the rounding of
/// fused multiply-adds. Needs the package's release builds of three levels (minutes of build):
/// `make deb-check` runs it after `make deb`, and there it may not be skipped
/// (STOMPBOX_DISPATCH_REQUIRED=1); elsewhere it is skipped, saying why, when they were not built.
@Suite("The package's builds for each x86-64 level")
struct DispatchTests {
    static let stage = InstallTests.root.appendingPathComponent(".build/deb/stage/usr")
    static let levels = ["baseline", "v3", "v4"]
    static var staged: Bool {
        FileManager.default.isExecutableFile(atPath: stage.appendingPathComponent("bin/stompbox").path)
            && FileManager.default.isExecutableFile(atPath: stage.appendingPathComponent("lib/stompbox/v3/stompbox").path)
    }
    static var required: Bool { ProcessInfo.processInfo.environment["STOMPBOX_DISPATCH_REQUIRED"] == "1" }
    static let reason: Comment = "the package's levels are not built (make deb stages them in .build/deb/stage; make deb-check runs this suite)"

    /// The best level this processor runs, read from /proc/cpuinfo (the launcher reads cpuid):
    /// v3's features and the kernel's consent to AVX; v4 only where 512-bit vectors run at full
    /// clock (AVX-512 FP16 on Intel, AMD's AVX-512), as the native build decides.
    static var processorLevel: Int {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let flags = Set((info.split(separator: "\n").first { $0.hasPrefix("flags") } ?? "").split(separator: " ").map(String.init))
        let v3 = ["avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "movbe", "abm", "sse4_2", "popcnt", "cx16", "xsave"].allSatisfy(flags.contains)
        guard v3 else { return 0 }
        let v4 = ["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"].allSatisfy(flags.contains)
        return v4 && (flags.contains("avx512_fp16") || info.contains("AuthenticAMD")) ? 2 : 1
    }

    static func cpu(_ prefix: URL, environment: [String: String] = [:]) throws -> [String: String] {
        let result = try InstallTests.run([prefix.appendingPathComponent("bin/stompbox").path, "cpu"],
                                          in: FileManager.default.temporaryDirectory, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        var lines: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            lines[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        lines["stderr"] = result.stderr
        return lines
    }

    /// A prefix of the staged programs with only some levels: hard links (the same files), so
    /// /proc/self/exe names this prefix.
    static func prefix(with levels: [String], in folder: TemporaryFolder) throws -> URL {
        let prefix = folder.url.appendingPathComponent("usr")
        let files = ["bin/stompbox", "bin/stompbox-window"] + levels.flatMap { ["lib/stompbox/\($0)/stompbox", "lib/stompbox/\($0)/stompbox-window"] }
        for file in files {
            let target = prefix.appendingPathComponent(file)
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            do { try FileManager.default.linkItem(at: stage.appendingPathComponent(file), to: target) }
            catch { try FileManager.default.copyItem(at: stage.appendingPathComponent(file), to: target) }
        }
        return prefix
    }

    @Test("the launcher runs the best level this processor runs, falls back when its file is missing, and STOMPBOX_CPU picks a lower one",
          .enabled(if: staged || required, reason))
    func launcherPicksTheLevel() throws {
        try #require(Self.staged, "make deb did not stage the levels in \(Self.stage.path)")
        let expected = Self.levels[Self.processorLevel]
        let chosen = try Self.cpu(Self.stage)
        print("dispatch: this processor runs \(expected); the package's launcher started: \(chosen["build"] ?? "?")")
        #expect(chosen["processor"] == expected)
        #expect(chosen["build"]?.hasPrefix("\(expected) ") == true, "\(chosen)")
        #expect(chosen["started by"] == (expected == "baseline" ? "itself" : Self.stage.appendingPathComponent("bin/stompbox").path), "\(chosen)")
        #expect(chosen["build"]?.contains(expected == "baseline" ? "/bin/stompbox" : "/lib/stompbox/\(expected)/stompbox") == true, "\(chosen)")
        #expect(chosen["builds installed"] == "baseline, v3, v4")

        // Forced to the baseline: no exec.
        let forced = try Self.cpu(Self.stage, environment: ["STOMPBOX_CPU": "baseline"])
        #expect(forced["build"]?.hasPrefix("baseline ") == true && forced["started by"] == "itself", "\(forced)")
        // Asked for more than the processor runs: capped, and said.
        if Self.processorLevel < 2 {
            let capped = try Self.cpu(Self.stage, environment: ["STOMPBOX_CPU": "v4"])
            #expect(capped["build"]?.hasPrefix("\(expected) ") == true, "\(capped)")
            #expect(capped["stderr"]?.contains("runs \(expected) at most") == true, "\(capped)")
        }

        // The chosen level's file missing: the next level down, silently; none: the baseline itself.
        let folder = TemporaryFolder("stompbox-dispatch")
        let below = Self.levels[1..<max(1, Self.processorLevel)].map { $0 }
        let partial = try Self.prefix(with: below, in: folder)
        let fallback = try Self.cpu(partial)
        let next = below.last ?? "baseline"
        #expect(fallback["build"]?.hasPrefix("\(next) ") == true, "\(fallback)")
        #expect(fallback["builds installed"] == (["baseline"] + below).joined(separator: ", "))
        #expect(fallback["stderr"]?.isEmpty == true, "\(fallback)")
        let bare = TemporaryFolder("stompbox-dispatch")
        let none = try Self.cpu(try Self.prefix(with: [], in: bare))
        #expect(none["build"]?.hasPrefix("baseline ") == true && none["started by"] == "itself", "\(none)")
    }

    /// Renders the demo riff with the staged package forced to `level`; the samples, interleaved.
    static func render(level: String, pedals: [String], in folder: TemporaryFolder) throws -> AudioBuffer {
        let out = folder.file("\(level)-\(pedals.joined(separator: "-")).wav")
        let all = ["gate", "overdrive", "amp", "cab", "eq", "flanger", "tremolo", "delay", "reverb"]
        let settings = all.flatMap { ["--set", "\($0).enabled=\(pedals.contains($0) ? "on" : "off")"] }
        let riff = stage.appendingPathComponent("share/stompbox/data/demo-riff.flac").path
        let result = try InstallTests.run([stage.appendingPathComponent("bin/stompbox").path, "render", riff, out] + settings,
                                          in: folder.url, environment: ["STOMPBOX_CPU": level, "HOME": folder.url.path])
        try #require(result.status == 0, "\(level): \(result.stderr)")
        return try AudioFile.read(out)
    }

    @Test("each level renders the demo riff as the baseline does: the same bits without fused multiply-adds, within their rounding through the whole board",
          .enabled(if: staged || required, reason))
    func levelsRenderAlike() throws {
        try #require(Self.staged, "make deb did not stage the levels in \(Self.stage.path)")
        let folder = TemporaryFolder("stompbox-dispatch-render")
        // The gate, tremolo and delay have no `mulAdd`: the same operations in the same order at
        // every level (Swift contracts nothing by itself), so the same bits.
        let plain = ["gate", "tremolo", "delay"]
        // Every pedal the factory board has (the looper, with nothing to play, passes through).
        let board = ["gate", "overdrive", "amp", "cab", "eq", "flanger", "tremolo", "delay", "reverb"]
        let basePlain = try Self.render(level: "baseline", pedals: plain, in: folder)
        let baseBoard = try Self.render(level: "baseline", pedals: board, in: folder)
        #expect(Measure.rms(baseBoard.samples) > 0.01, "the board's render is silent")
        for level in Self.levels.dropFirst().prefix(Self.processorLevel) {
            let samePlain = try Self.render(level: level, pedals: plain, in: folder)
            #expect(samePlain == basePlain, "\(level): gate, tremolo and delay differ from the baseline's")
            let other = try Self.render(level: level, pedals: board, in: folder)
            try #require(other.samples.count == baseBoard.samples.count)
            var peak: Float = 0, error = 0.0, energy = 0.0
            for (a, b) in zip(other.samples, baseBoard.samples) {
                peak = max(peak, abs(a - b))
                error += Double(a - b) * Double(a - b)
                energy += Double(b) * Double(b)
            }
            let esr = error / energy
            print("dispatch: \(level) against the baseline, whole board: peak difference \(peak), error-to-signal ratio \(esr)")
            // Measured on an AMD EPYC (v3): peak 9.5e-7 (8 steps of the 24-bit file), ESR 1.5e-12.
            #expect(peak < 1e-5, "\(level): peak difference \(peak)")
            #expect(esr < 1e-8, "\(level): error-to-signal ratio \(esr)")
        }
        if Self.processorLevel < 2 { print("dispatch: v4 not run: this processor does not run it (needs AVX-512 at full clock)") }
    }
}

import Foundation
import StompboxAudio
import StompboxDSP
import StompboxTestSupport

/// End-to-end latency and dropouts of the live loop through a real (private) PulseAudio server.
///
/// Noise is played into `guitar_in`; the engine records its monitor and plays into `amp_out`;
/// one recording of the stereo `scope` sink holds both sample-aligned, so the latency is the lag
/// of best correlation (not the engine's own report, which is printed beside it) and a dropout
/// is a 10 ms window where the output stops matching the delayed input.
enum LatencyBench {
    struct Setting {
        var name: String
        var block: Int
        var latencyMs: Double
    }

    static let settings = [
        Setting(name: "default", block: LiveSettings().blockSize, latencyMs: LiveSettings().latencyMs),
        Setting(name: "low-latency", block: 64, latencyMs: 5),
    ]

    static func run() throws {
        try run(settings, seconds: 30)
    }

    static func run(_ settings: [Setting], seconds: Double) throws {
        guard PrivatePulseServer.isAvailable else {
            print("latency bench: skipped, pulseaudio/pulseaudio-utils are not installed")
            return
        }
        let server = try PrivatePulseServer()
        try server.start()
        defer { server.stop() }
        for setting in settings {
            let result = try measure(setting, seconds: seconds, server: server)
            print(result)
            fflush(stdout)
        }
    }

    static func measure(_ setting: Setting, seconds: Double, server: PrivatePulseServer) throws -> String {
        var live = LiveSettings()
        live.input = .source("guitar_in.monitor")
        live.output = "amp_out"
        live.blockSize = setting.block
        live.latencyMs = setting.latencyMs
        let engine = LiveEngine(chain: Chain(), settings: live)
        engine.start()
        defer { engine.stop() }
        let start = Date()
        while engine.status().state != .running && Date().timeIntervalSince(start) < 10 { usleep(10_000) }
        Thread.sleep(forTimeInterval: 2)   // past the server's start-up backlog
        let before = engine.status()

        let recording = try server.startScopeRecording()
        Thread.sleep(forTimeInterval: 0.3)
        let rate = PrivatePulseServer.rate
        let player = try server.play(Signal.noise(length: Int(seconds * Double(rate)), amplitude: 0.25, seed: 11))
        var reported: [Double] = []
        while player.isRunning {
            Thread.sleep(forTimeInterval: 1)
            if let l = engine.status().latencyMs {
                reported.append(l)
            }
        }
        Thread.sleep(forTimeInterval: 0.3)
        let after = engine.status()
        let (left, right) = recording.finish()

        guard let onset = left.firstIndex(where: { abs($0) > 0.01 }),
              let first = ScopeAnalysis.delay(left, right, start: onset + 4_800, window: 4_800, maxLag: 4_800),
              first.correlation > 0.9 else {
            return "\(setting.name) (block \(setting.block), target \(setting.latencyMs) ms): no signal came through (\(after.statusLine))"
        }
        let analysed = min(left.count - onset, Int(seconds * Double(rate))) - 9_600
        let drops = ScopeAnalysis.dropouts(Array(left[onset..<(onset + analysed)]), Array(right[onset..<min(right.count, onset + analysed + 9_600)]),
                                           lag: first.lag, from: 4_800)
        let lagsMs = drops.lags.map { String(format: "%.2f", Double($0) * 1000 / Double(rate)) }
        let meanReported = reported.isEmpty ? Double.nan : reported.reduce(0, +) / Double(reported.count)
        return String(format: "%@ (block %d, target %.1f ms): end-to-end %.2f ms measured on the scope at the start, %.2f ms on average (engine reports %.2f ms on average), "
                      + "dropouts in %.0f s: %d on the scope, engine counted %d underruns + %d overruns; latency over time: %@ ms",
                      setting.name, setting.block, setting.latencyMs, Double(first.lag) * 1000 / Double(rate),
                      drops.meanLag * 1000 / Double(rate), meanReported,
                      Double(analysed) / Double(rate), drops.count,
                      after.underruns - before.underruns, after.overruns - before.overruns, lagsMs.joined(separator: " → "))
    }
}

import Foundation
import StompboxAudio
import StompboxDSP
import StompboxTestSupport

/// The live loop through real private servers (PulseAudio, and PipeWire's pulse server):
/// a sweep over block sizes and margins measured on the scope (end to end, reported, dropouts
/// per minute, the margin automatic latency settled on), then an input on its own clock
/// (±300 ppm, PulseAudio's pipe source; PipeWire's runs on the graph's clock).
enum LatencyBench {
    struct Setting {
        var name: String
        var block: Int
        var latencyMs: Double
    }

    static let settings = [
        Setting(name: "64/4", block: 64, latencyMs: 4),
        Setting(name: "default", block: LiveSettings().blockSize, latencyMs: LiveSettings().latencyMs),
        Setting(name: "128/20", block: 128, latencyMs: 20),
        Setting(name: "256/8", block: 256, latencyMs: 8),
        Setting(name: "256/30", block: 256, latencyMs: 30),
        Setting(name: "512/40", block: 512, latencyMs: 40),
        Setting(name: "1024/8", block: 1024, latencyMs: 8),
    ]

    static func run() throws {
        try run(settings, seconds: 30)
    }

    static func run(_ settings: [Setting], seconds: Double, driftSeconds: Double = 60,
                    servers: [AudioServerKind] = AudioServerKind.allCases) throws {
        for kind in servers {
            guard kind.isAvailable else {
                print("latency bench on \(kind): skipped, \(kind.unavailableReason ?? "not installed")")
                continue
            }
            print("live loop on \(kind) (\(seconds) s of noise per setting, block/margin ms; a fresh server each):")
            for setting in settings {
                let server = try PrivatePulseServer(kind: kind)
                try server.start()
                defer { server.stop() }
                print("  " + String(describing: try LiveProbe.scope(server, block: setting.block, latencyMs: setting.latencyMs, seconds: seconds)))
                fflush(stdout)
            }
            guard kind.pipeSourceRunsOnWriterClock, driftSeconds > 0 else { continue }
            let server = try PrivatePulseServer(kind: kind)
            try server.start()
            defer { server.stop() }
            for ppm in [300.0, -300.0] {
                print("  " + String(describing: try LiveProbe.drift(server, ppm: ppm, seconds: driftSeconds, warmUp: 15)))
                fflush(stdout)
            }
        }
    }
}

import Foundation
import StompboxAudio
import StompboxDSP
import StompboxTestSupport

/// Issue 9's figures on jackd's dummy driver, at each period: the delay Stompbox adds (pedals
/// off: it should be 0; every pedal on: the chain's own), the process callback's cost per period
/// from its own clock (mean and 99.9th percentile, against the period's length), and xruns per
/// minute beside a plain pass-through client measured the same way just before.
/// Target: every pedal on, under 5 % of a 64-frame period on average and under 25 % at the
/// 99.9th percentile.
enum JackBench {
    static func run(periods: [Int], seconds: Double) throws {
        if let reason = PrivateJackServer.unavailableReason {
            print("JACK: skipped: \(reason)")
            return
        }
        print("JACK (jackd -S -d dummy at 48 kHz, synchronous; \(Int(seconds)) s per client; every pedal on, the Looper idle):")
        for period in periods {
            let server = PrivateJackServer(period: period)
            try server.start()
            defer { server.stop() }
            let periodMicroseconds = Double(period) / 48_000 * 1e6
            let signal = jackTestNoise(seconds: seconds)
            // The baseline: a pass-through client in the same place.
            let baselineXruns = try JackPassthrough.xruns(playing: signal).count

            let chain = Chain()
            for kind in PedalKind.builtIn { chain.parameters.set(kind.enabledParameter, 0) }
            var settings = LiveSettings()
            settings.backend = .jack
            settings.connectPorts = false
            let engine = LiveEngine(chain: chain, settings: settings)
            engine.start()
            defer { engine.stop() }
            let deadline = Date().addingTimeInterval(5)
            while engine.status().state != .running && Date() < deadline { usleep(10_000) }
            guard engine.status().state == .running else { throw JackRigError("Stompbox did not start on JACK: \(engine.status())") }

            // The delay with the pedals off.
            let short = Array(signal.prefix(24_000))
            let probe = try JackProbe(signal: short, recordFrames: 48_000)
            try probe.connect(probe.playPort, "stompbox:in")
            try probe.connect("stompbox:out_1", probe.recordPort)
            let off = bestLag(short, in: try probe.run(), maximumLag: 4 * period)
            probe.close()

            // Every pedal on, timed.
            for kind in PedalKind.builtIn { chain.parameters.set(kind.enabledParameter, 1) }
            Thread.sleep(forTimeInterval: 0.3)
            let before = engine.jackTiming.snapshot()
            let full = try JackProbe(signal: signal, recordFrames: signal.count)
            try full.connect(full.playPort, "stompbox:in")
            try full.connect("stompbox:out_1", full.recordPort)
            _ = try full.run()
            let xruns = full.xruns
            full.close()
            let timing = engine.jackTiming.summary(since: before)
            let perMinute = { (n: Int) in Double(n) * 60 / seconds }
            print(String(format: "  %4d frames (%.0f µs): added delay %d samples with the pedals off (every pedal on: the chain's own %.2f); callback %.1f µs mean (%.2f %% of the period; target < 5 %%), %.1f µs at the 99.9th percentile (%.1f %%; target < 25 %%) over %d periods; xruns %.1f/min (pass-through %.1f/min)",
                         period, periodMicroseconds, off.lag, chain.latencySamples,
                         timing.meanMicroseconds, 100 * timing.meanMicroseconds / periodMicroseconds,
                         timing.p999Microseconds, 100 * timing.p999Microseconds / periodMicroseconds, timing.periods,
                         perMinute(xruns), perMinute(baselineXruns)))
            engine.stop()
        }
    }
}

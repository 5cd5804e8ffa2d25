import CAudioShim
import Foundation

/// Watches for the moments this machine's host takes the CPU away: a SCHED_FIFO thread wakes
/// every millisecond (absolute deadlines on CLOCK_MONOTONIC) and notes every wake-up that came
/// `threshold` or more late. On a quiet VM its wake-ups come 0.1–0.4 ms late; on a busy host
/// (steal time) 5–40 ms, several times a minute, and then every real-time process on the
/// machine (the audio servers, the loop, a paced writer) stood still for as long. A live take
/// during which that happened measured the host, not the loop: the tests retake it, and say so
/// when no take was quiet.
///
/// The host takes each virtual CPU away on its own (steal time is per vCPU), so one thread is
/// pinned to each CPU the process may run on: a watcher on one CPU does not see the other stand
/// still, while the audio server's thread on that other CPU does. (`make test` pins the live
/// tests to CPUs of their own; the others are not theirs to watch.)
public final class HostStallMonitor: @unchecked Sendable {
    public let threshold: Double
    private let lock = NSLock()
    private var stalls: [(at: Double, ms: Double)] = []
    private var running = true
    private let done = DispatchSemaphore(value: 0)
    private let cpus: Int
    private let start = PacedWriter.now()

    /// Starts watching at once.
    /// 2 ms: a quiet VM's wake-ups come 0.1–0.4 ms late, while PipeWire's graph runs quanta of
    /// 2.7–5.3 ms at the small settings, so a 3 ms stall can already cost it a cycle.
    public init(threshold seconds: Double = 0.002) {
        threshold = seconds
        var allowed = [Int32](repeating: 0, count: 256)
        let n = Int(stompbox_allowed_cpus(&allowed, Int32(allowed.count)))
        let watched = n > 0 ? allowed[0..<n].map(Int.init) : Array(0..<max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        cpus = watched.count
        for cpu in watched {
            let t = Thread { [self] in watch(cpu: cpu) }
            t.name = "host stall monitor \(cpu)"
            t.start()
        }
    }

    /// Stops watching; what it saw: when (seconds from the start) and how late (ms).
    @discardableResult
    public func stop() -> [(at: Double, ms: Double)] {
        lock.lock()
        let wasRunning = running
        running = false
        lock.unlock()
        if wasRunning { for _ in 0..<cpus { done.wait() } }
        return seen
    }

    /// In time order; a stall every CPU saw at once counts once (the longest view of it).
    public var seen: [(at: Double, ms: Double)] {
        lock.lock()
        let all = stalls.sorted { $0.at < $1.at }
        lock.unlock()
        var merged: [(at: Double, ms: Double)] = []
        for s in all {
            if let last = merged.last, s.at <= last.at + last.ms / 1000 {
                merged[merged.count - 1].ms = max(last.ms, (s.at - last.at) * 1000 + s.ms)
            } else {
                merged.append(s)
            }
        }
        return merged
    }

    /// Whether a stall seen so far explains an event at `time` (`PacedWriter.now()`): the event
    /// came from 10 ms before the stall began to `after` seconds after it ended (a JACK server
    /// reports an xrun a period or more after the late cycle, from its notification thread).
    public func explains(_ time: UInt64, after: Double = 0.05) -> Bool {
        let t = Double(Int64(bitPattern: time &- start)) / 1e9
        return seen.contains { t >= $0.at - 0.01 && t <= $0.at + $0.ms / 1000 + after }
    }

    /// The share of the time from the start to now that `explains` covers: near 1, every xrun
    /// would be explained away, so a comparison that sets them aside says nothing.
    public func explainedShare(after: Double = 0.05) -> Double {
        let total = Double(PacedWriter.now() &- start) / 1e9
        guard total > 0 else { return 0 }
        var covered = 0.0, reach = -Double.infinity
        for stall in seen {
            let from = max(stall.at - 0.01, reach), to = stall.at + stall.ms / 1000 + after
            if to > from { covered += to - from }
            reach = max(reach, to)
        }
        return min(1, covered / total)
    }

    /// Up to `takes` takes of a timing measurement, each watched: the first that is clean, else
    /// the first the host let run (no stall), is returned to be judged. When the host stood the
    /// machine still during every take, nil, with what each take read and the stalls it saw (the
    /// caller reports that as a known issue: no verdict).
    public static func quietTake<T: CustomStringConvertible>(takes: Int = 3, _ take: () throws -> T,
                                                              clean: (T) -> Bool) rethrows -> (take: T?, disturbed: [String]) {
        var disturbed: [String] = []
        for _ in 0..<takes {
            let monitor = HostStallMonitor()
            let t = try take()
            let stalls = monitor.stop()
            if clean(t) || stalls.isEmpty { return (t, disturbed) }
            disturbed.append("\(t) (the host stalled the machine \(stalls.count)×, up to \(String(format: "%.1f", stalls.map(\.ms).max() ?? 0)) ms)")
            print(disturbed.last!)
        }
        return (nil, disturbed)
    }

    private func watch(cpu: Int) {
        _ = stompbox_pin_to_cpu(Int32(cpu))
        var param = sched_param()
        param.sched_priority = 10
        _ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param)
        let period: UInt64 = 1_000_000
        let limit = UInt64(threshold * 1e9)
        var due = PacedWriter.now() + period
        while true {
            var ts = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
            let now = PacedWriter.now()
            lock.lock()
            if now > due && now - due >= limit {
                stalls.append((Double(due - start) / 1e9, Double(now - due) / 1e6))
            }
            let go = running
            lock.unlock()
            guard go else { break }
            // Lateness never accumulates: the next deadline is the next millisecond after now.
            due = max(due + period, now + period / 2)
        }
        done.signal()
    }
}

import Foundation

/// Watches for the moments this machine's host takes the CPU away: a SCHED_FIFO thread wakes
/// every millisecond (absolute deadlines on CLOCK_MONOTONIC) and notes every wake-up that came
/// `threshold` or more late. On a quiet VM its wake-ups come 0.1–0.4 ms late; on a busy host
/// (steal time) 5–40 ms, several times a minute, and then every real-time process on the
/// machine (the audio servers, the loop, a paced writer) stood still for as long. A live take
/// during which that happened measured the host, not the loop: the tests retake it, and say so
/// when no take was quiet.
public final class HostStallMonitor: @unchecked Sendable {
    public let threshold: Double
    private let lock = NSLock()
    private var stalls: [(at: Double, ms: Double)] = []
    private var running = true
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)
    private let start = PacedWriter.now()

    /// Starts watching at once.
    public init(threshold seconds: Double = 0.004) {
        threshold = seconds
        let t = Thread { [self] in watch() }
        t.name = "host stall monitor"
        thread = t
        t.start()
    }

    /// Stops watching; what it saw: when (seconds from the start) and how late (ms).
    @discardableResult
    public func stop() -> [(at: Double, ms: Double)] {
        lock.lock()
        let wasRunning = running
        running = false
        lock.unlock()
        if wasRunning { done.wait() }
        return seen
    }

    public var seen: [(at: Double, ms: Double)] { lock.lock(); defer { lock.unlock() }; return stalls }

    private func watch() {
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

import ArgumentParser
import Foundation
import StompboxAudio

/// `stompbox realtime`: asks for real-time priority the way the live engine's audio thread does
/// (SCHED_FIFO, else RealtimeKit over the system D-Bus) and says what the thread got, as the
/// status line's `rt=` would; `--rtkit` asks RealtimeKit only. For a player whose status line
/// says `rt=none`: is rtkit installed and running, is the system bus there?
struct RealtimeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realtime",
        abstract: "Asks for real-time priority as the live audio thread does, and says what it got.")

    @Option(help: "The SCHED_FIFO priority to ask for.")
    var priority: Int32 = 10

    @Flag(help: "Ask RealtimeKit only (not SCHED_FIFO directly first).")
    var rtkit = false

    func run() throws {
        let granted: RealtimePriority
        var refused: String?
        if rtkit {
            switch RealtimeKit.makeThreadRealtime(priority: priority) {
            case .success(let p): granted = .rtkit(p)
            case .failure(let failure): granted = .none; refused = "RealtimeKit: \(failure.reason)"
            }
        } else {
            (granted, refused) = RealtimePriority.request(priority)
        }
        var policy: Int32 = 0
        var param = sched_param()
        pthread_getschedparam(pthread_self(), &policy, &param)
        // RealtimeKit adds SCHED_RESET_ON_FORK (0x40000000), so a child does not inherit it.
        let base = policy & ~0x4000_0000
        let now = base == SCHED_FIFO ? "fifo" : base == SCHED_RR ? "rr" : "other"
        print("rt=\(granted) policy=\(now) priority=\(param.sched_priority)")
        if let refused {
            FileHandle.standardError.write(Data("stompbox: no real-time priority: \(refused)\n".utf8))
            throw ExitCode(1)
        }
    }
}

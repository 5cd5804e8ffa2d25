import Foundation
import StompboxTestSupport
import StompboxTestTags
import Testing

/// Real-time priority from RealtimeKit, as a desktop user without an rtprio limit gets it: a
/// real `rtkit-daemon` (and the `polkitd` it asks) on a private system D-Bus, and
/// `stompbox realtime --rtkit` asking it as the live engine's audio thread does when SCHED_FIFO
/// is refused. Needs root (both daemons run as root) and the rtkit and polkitd packages.
@Suite("RealtimeKit", .serialized, .tags(.live),
       .enabled(if: RealtimeKitRig.missing == nil, Comment(rawValue: RealtimeKitRig.missing ?? "")))
struct RealtimeKitTests {
    @Test("rtkit makes the thread SCHED_FIFO at the priority asked for, lowered to its maximum")
    func rtkitGrantsPriority() throws {
        let rig = try RealtimeKitRig(rtkit: true)
        defer { rig.stop() }
        let asked = try runStompbox(["realtime", "--rtkit", "--priority", "10"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": rig.address])
        #expect(asked.status == 0 && asked.stdout.contains("rt=rtkit:10 policy=fifo priority=10"), "\(asked)")
        #expect(waitUntil(seconds: 3) { rig.log.contains("Successfully made thread") }, "rtkit says: \(rig.log)")
        // Above rtkit's maximum (20 by default): what it allows.
        let high = try runStompbox(["realtime", "--rtkit", "--priority", "50"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": rig.address])
        #expect(high.status == 0 && high.stdout.contains("rt=rtkit:20 policy=fifo priority=20"), "\(high)")
    }

    @Test("without rtkit on the bus, or without a bus, it plays on at normal priority and says why")
    func noRtkitSaysSo() throws {
        let rig = try RealtimeKitRig(rtkit: false)
        defer { rig.stop() }
        let absent = try runStompbox(["realtime", "--rtkit"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": rig.address])
        #expect(absent.status == 1 && absent.stdout.contains("rt=none policy=other"), "\(absent)")
        #expect(absent.stderr.contains("does not answer on the system bus"), "\(absent.stderr)")
        let noBus = try runStompbox(["realtime", "--rtkit"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bus"])
        #expect(noBus.status == 1 && noBus.stderr.contains("no system bus"), "\(noBus.stderr)")
    }
}

/// A private system bus (dbus-daemon), with polkitd and, if asked, rtkit-daemon on it.
final class RealtimeKitRig {
    static let daemons = ["/usr/bin/dbus-daemon", "/usr/lib/polkit-1/polkitd", "/usr/libexec/rtkit-daemon"]
    /// Why the rig cannot run here (nil: it can).
    static var missing: String? {
        if getuid() != 0 { return "needs root: polkitd and rtkit-daemon run as root on the private bus" }
        let absent = daemons.filter { !FileManager.default.isExecutableFile(atPath: $0) }
        return absent.isEmpty ? nil : "not installed: \(absent.joined(separator: ", ")) (make deps-test installs rtkit and polkitd)"
    }

    let folder = TemporaryFolder("stompbox-rtkit")
    let address: String
    private var processes: [Subprocess] = []

    init(rtkit: Bool) throws {
        try TestTier.requireApart("a private system D-Bus with rtkit-daemon")
        let socket = folder.file("system_bus_socket")
        let config = folder.file("bus.conf")
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/><allow own="*"/><allow send_type="method_call"/>
                <allow send_destination="*"/><allow receive_sender="*"/>
              </policy>
            </busconfig>
            """.write(toFile: config, atomically: true, encoding: .utf8)
        address = "unix:path=\(socket)"
        let env = ["DBUS_SYSTEM_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"]
        processes.append(try Subprocess("/usr/bin/dbus-daemon", ["--config-file=\(config)", "--nofork"], environment: env, stderr: folder.file("bus.log")))
        guard waitUntil(seconds: 5, { FileManager.default.fileExists(atPath: socket) }) else { stop(); throw HarnessFailure("the private bus did not start") }
        processes.append(try Subprocess("/usr/lib/polkit-1/polkitd", ["--no-debug"], environment: env, stderr: folder.file("polkit.log")))
        if rtkit {
            // In the foreground of this test: no privilege drop, chroot, canary or resource limits
            // (a limit on file size would stop its own log).
            processes.append(try Subprocess("/usr/libexec/rtkit-daemon",
                                            ["--no-canary", "--no-drop-privileges", "--no-chroot", "--no-limit-resources", "--stderr",
                                             "--scheduling-policy=FIFO"],
                                            environment: env, stderr: folder.file("rtkit.log")))
            guard waitUntil(seconds: 5, { self.log.contains("Running.") }) else { stop(); throw HarnessFailure("rtkit-daemon did not start: \(log)") }
        }
    }

    var log: String { (try? String(contentsOfFile: folder.file("rtkit.log"), encoding: .utf8)) ?? "" }

    func stop() {
        for process in processes.reversed() { _ = process.terminate(timeout: 3) }
        processes = []
    }
}

struct HarnessFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}


import Foundation
import StompboxTestSupport
import StompboxTestTags
import Testing

/// Foot control over MIDI against a real server: `stompbox run` on a private jackd (dummy
/// driver), a test client sending to `stompbox:midi_in` as a foot controller would.
@Suite(.serialized, .tags(.live), .enabled(if: PrivateJackServer.unavailableReason == nil, Comment(rawValue: PrivateJackServer.unavailableReason ?? "")))
struct LiveEngineMIDITests {
    /// `run` in the background, its status lines in a file.
    final class Run {
        let process = Process()
        let output: URL
        init(_ arguments: [String], environment: [String: String], folder: TemporaryFolder) throws {
            output = URL(fileURLWithPath: folder.file("status.txt"))
            FileManager.default.createFile(atPath: output.path, contents: nil)
            process.executableURL = try stompboxExecutable()
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = FileHandle.nullDevice
            try process.run()
        }
        var lines: [String] {
            String(decoding: (try? Data(contentsOf: output)) ?? Data(), as: UTF8.self).split(separator: "\n").map(String.init)
        }
        /// Waits (up to `seconds`) for a status line printed after `after` lines that satisfies `test`.
        func waitForLine(after: Int, seconds: Double = 4, _ test: (String) -> Bool) -> String? {
            let deadline = Date().addingTimeInterval(seconds)
            repeat {
                if let line = lines.dropFirst(after).first(where: test) { return line }
                Thread.sleep(forTimeInterval: 0.1)
            } while Date() < deadline
            return nil
        }
        func stop() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
    }

    @Test("Program Change 1 plays preset 2 and says preset=2; CC 80 switches the board's first pedal (0 off, 127 on); a note does nothing")
    func programChangeAndControllers() throws {
        let server = PrivateJackServer()
        try server.start()
        defer { server.stop() }
        let folder = TemporaryFolder("stompbox-midi")
        let run = try Run(["run", "--headless", "--backend", "jack", "--no-connect", "--input", "demo", "--seconds", "30"],
                          environment: ["XDG_CONFIG_HOME": folder.file("config"), "XDG_DATA_HOME": folder.file("data")], folder: folder)
        defer { run.stop() }
        let first = run.waitForLine(after: 0, seconds: 10) { $0.contains("state=running") && $0.contains("backend=jack") }
        try #require(first != nil, "no running status line: \(run.lines)")
        #expect(first!.contains(" preset=- "), "\(first!)")

        let sender = try JackMIDISender()
        defer { sender.close() }
        try sender.connect(to: "stompbox:midi_in")
        var seen = run.lines.count
        try sender.send([0xC0, 1])
        let played = run.waitForLine(after: seen) { $0.contains(" preset=2 ") }
        #expect(played != nil, "\(run.lines.suffix(3))")
        // The factory's preset 2 (Crunch 2x12) on its board (gate first): the gate, the overdrive
        // into the amp and cabinet, the delay and the reverb on.
        #expect(played?.contains("pedals_on=gate,overdrive,amp,cab,delay,reverb") == true, "\(played ?? "")")

        // CC 80 is the board's first pedal, now the gate.
        seen = run.lines.count
        try sender.send([0xB0, 80, 0])
        let off = run.waitForLine(after: seen) { $0.contains("pedals_on=overdrive,amp,cab,delay,reverb") }
        #expect(off != nil, "CC 80 = 0 should switch the gate off: \(run.lines.suffix(2))")
        seen = run.lines.count
        try sender.send([0xB0, 80, 127])
        #expect(run.waitForLine(after: seen) { $0.contains("pedals_on=gate,overdrive,") } != nil)

        // Program Change on another channel, and a note (not mapped): preset 1, nothing else.
        seen = run.lines.count
        try sender.send([0x90, 60, 100])
        try sender.send([0xC5, 0])
        let back = run.waitForLine(after: seen) { $0.contains(" preset=1 ") }
        #expect(back != nil, "\(run.lines.suffix(2))")
        print("run over JACK MIDI: \(played ?? "-")\n  then \(back ?? "-")")

        // SIGTERM still ends it at once with the MIDI reader running.
        let asked = Date()
        run.process.terminate()
        run.process.waitUntilExit()
        #expect(Date().timeIntervalSince(asked) < 1.5)
    }
}

import Foundation
import StompboxTestSupport
import StompboxTestTags
import Testing

/// The window as `make install` installs it (scripts/install, this build's programs under a
/// DESTDIR): started as `stompbox` from its installed place, it finds its data and artwork
/// there (nothing of the repository lies on its way) and opens on factory preset 1's board.
@Suite("The installed window", .serialized, .tags(.window))
struct InstalledWindowTests {
    static let root = Paths.repository
    static var generateManual: String? {
        (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(".build").path))?
            .map { root.appendingPathComponent(".build/\($0)/generate-manual").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test("installed under a DESTDIR, the window opens with its artwork and the factory board",
          .enabled(if: generateManual != nil, "generate-manual is not built (make check builds it: swift build --product generate-manual)"))
    func installedWindowOpens() throws {
        let folder = TemporaryFolder("stompbox-installed-window")
        let dest = folder.url.appendingPathComponent("dest")
        let env = ["BIN": Self.root.appendingPathComponent(".build/debug").path, "PREFIX": "/usr", "DESTDIR": dest.path,
                   "GEN": folder.file("generated"), "GENERATE_MANUAL": Self.generateManual!, "PATH": "/usr/bin:/bin"]
        let script = Self.root.appendingPathComponent("scripts/install").path
        for step in ["generate", "install"] {
            let result = try shell([script, step], environment: env)
            try #require(result.status == 0, "scripts/install \(step): \(result.output)")
        }
        let program = dest.appendingPathComponent("usr/bin/stompbox").path
        let session = try PedalboardSession(program: program)
        defer { session.stop() }
        let every = ["gate", "overdrive", "amp", "neural", "cab", "eq", "flanger", "tremolo", "delay", "reverb", "looper"]
        #expect(waitUntil(seconds: 10) { (session.state()?["layout"] as? [String: Any])?["board"] as? [String] == every },
                "board: \(String(describing: (session.state()?["layout"] as? [String: Any])?["board"]))")
        _ = try session.settledPoint(["more"])
        let shot = try session.shot("installed-window.png")
        // The artwork comes from the installed Resources/: the Overdrive's enclosure is yellow,
        // the Delay's blue (without its SVG a pedal is drawn plain grey).
        let od = try session.settledPoint(["overdrive", "origin"]), dl = try session.settledPoint(["delay", "origin"])
        let zoom = (session.state()?["layout"] as? [String: Any])?["zoom"] as? Double ?? 1
        let at = { (o: [Int]) in (o[0] + Int(17 * zoom), o[1] + Int(143 * zoom)) }
        let colours = try pixels(in: shot, at: [at(od), at(dl)])
        #expect(colours[0].r > 200 && colours[0].g > 140 && colours[0].b < 90, "overdrive is yellow: \(colours[0])")
        #expect(colours[1].b > 160 && colours[1].b > colours[1].r + 80, "delay is blue: \(colours[1])")
        #expect(session.selectedSlot == 0, "the window opens on factory preset 1")
    }
}

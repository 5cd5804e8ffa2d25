import Foundation
import StompboxTestSupport
import Testing

/// `make install`'s layout (scripts/install), with this build's programs: installed under a
/// DESTDIR, `stompbox` runs from a folder outside the repository with a bare PATH and finds
/// its data; the man page and completions come from its own help; no installed file names the
/// build tree or the DESTDIR; uninstall removes every file install put there.
@Suite("Installing")
struct InstallTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var generateManual: URL? {
        (try? FileManager.default.contentsOfDirectory(at: root.appendingPathComponent(".build"), includingPropertiesForKeys: nil))?
            .map { $0.appendingPathComponent("generate-manual") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Runs `command` with `environment` only (plus a bare PATH) in `folder`.
    @discardableResult
    static func run(_ command: [String], in folder: URL, environment: [String: String] = [:]) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["-i", "PATH=/usr/bin:/bin"] + environment.map { "\($0)=\($1)" }.sorted() + command
        process.currentDirectoryURL = folder
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile(), stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    @Test("installed under a DESTDIR it runs from anywhere, its man page and completions name its commands, and uninstall leaves nothing",
          .enabled(if: generateManual != nil, "generate-manual is not built (make check builds it: swift build --product generate-manual)"))
    func installRunUninstall() throws {
        let folder = TemporaryFolder("stompbox-install")
        let dest = folder.url.appendingPathComponent("dest"), elsewhere = folder.url.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let bin = try stompboxExecutable().deletingLastPathComponent()
        let script = Self.root.appendingPathComponent("scripts/install").path
        let env = ["BIN": bin.path, "PREFIX": "/usr", "DESTDIR": dest.path, "GEN": folder.file("generated"),
                   "GENERATE_MANUAL": Self.generateManual!.path]
        let generated = try Self.run([script, "generate"], in: elsewhere, environment: env)
        #expect(generated.status == 0, "\(generated.stderr)")
        let installed = try Self.run([script, "install"], in: elsewhere, environment: env)
        try #require(installed.status == 0, "\(installed.stderr)")
        let listed = try Self.run([script, "list"], in: elsewhere, environment: env).stdout.split(separator: "\n").map(String.init)
        let prefix = dest.appendingPathComponent("usr")
        for path in listed { #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent(path).path), "\(path) not installed") }
        for path in ["bin/stompbox", "bin/stompbox-window", "share/stompbox/data/factory-presets.json", "share/stompbox/Resources/pedal-delay.svg",
                     "share/applications/io.github.stompbox.Stompbox.desktop", "share/icons/hicolor/scalable/apps/io.github.stompbox.Stompbox.svg",
                     "share/metainfo/io.github.stompbox.Stompbox.metainfo.xml", "share/man/man1/stompbox.1",
                     "share/bash-completion/completions/stompbox", "share/zsh/vendor-completions/_stompbox",
                     "share/fish/vendor_completions.d/stompbox.fish"] {
            #expect(listed.contains(path), "\(path) is not in the install")
        }

        // The installed program, from a folder outside the repository, PATH bare, HOME of its own.
        let stompbox = prefix.appendingPathComponent("bin/stompbox").path
        let home = ["HOME": folder.file("home"), "XDG_CONFIG_HOME": folder.file("home/config"), "XDG_DATA_HOME": folder.file("home/data")]
        let version = try Self.run([stompbox, "--version"], in: elsewhere, environment: home)
        #expect(version.status == 0 && version.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3, "\(version)")
        let cabs = try Self.run([stompbox, "cabs"], in: elsewhere, environment: home)
        #expect(cabs.status == 0 && cabs.stdout.contains("british-4x12-closed"), "\(cabs)")
        #expect(try Self.run([stompbox, "plugins"], in: elsewhere, environment: home).status == 0)
        let riff = prefix.appendingPathComponent("share/stompbox/data/demo-riff.flac").path
        let rendered = try Self.run([stompbox, "render", riff, "out.wav", "--set", "amp.enabled=on", "--set", "cab.enabled=on"], in: elsewhere, environment: home)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let size = (try? FileManager.default.attributesOfItem(atPath: elsewhere.appendingPathComponent("out.wav").path)[.size] as? Int) ?? 0
        #expect(size > 100_000, "out.wav is \(size) bytes")

        // The man page and the completions come from the program's own help: every command it shows.
        let help = try Self.run([stompbox, "--help"], in: elsewhere, environment: home).stdout
        // Each subcommand's line: two spaces, its name, its abstract (continuation lines are indented further).
        let commands = help.components(separatedBy: "SUBCOMMANDS:").last!.split(separator: "\n")
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") && !$0.contains("See '") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(commands.count >= 10, "commands in --help: \(commands)")
        let man = try String(contentsOf: prefix.appendingPathComponent("share/man/man1/stompbox.1"), encoding: .utf8)
        let bash = try String(contentsOf: prefix.appendingPathComponent("share/bash-completion/completions/stompbox"), encoding: .utf8)
        let fish = try String(contentsOf: prefix.appendingPathComponent("share/fish/vendor_completions.d/stompbox.fish"), encoding: .utf8)
        for command in commands {
            #expect(man.contains(".It Em \(command)"), "the man page lacks \(command)")
            #expect(bash.contains(command) && fish.contains(command), "a completion lacks \(command)")
        }

        // No installed text file names the build tree or the DESTDIR (the programs find their
        // data from where they are).
        for path in listed where !path.hasPrefix("bin/") && !path.hasSuffix(".wav") && !path.hasSuffix(".flac") && !path.hasSuffix(".png") {
            let text = try String(contentsOf: prefix.appendingPathComponent(path), encoding: .utf8)
            #expect(!text.contains(Self.root.path) && !text.contains(dest.path), "\(path) names \(Self.root.path) or the DESTDIR")
        }

        let removed = try Self.run([script, "uninstall"], in: elsewhere, environment: env)
        #expect(removed.status == 0, "\(removed.stderr)")
        let left = FileManager.default.enumerator(atPath: dest.path)?.compactMap { $0 as? String }.filter { path in
            var directory: ObjCBool = false
            return FileManager.default.fileExists(atPath: dest.appendingPathComponent(path).path, isDirectory: &directory) && !directory.boolValue
        } ?? []
        #expect(left.isEmpty, "uninstall left \(left)")
    }

    @Test("the desktop entry and the AppStream metainfo pass their validators")
    func desktopFilesValidate() throws {
        let resources = Self.root.appendingPathComponent("Resources")
        let desktop = try Self.run(["desktop-file-validate", resources.appendingPathComponent("io.github.stompbox.Stompbox.desktop").path], in: resources)
        #expect(desktop.status == 0 && desktop.stdout.isEmpty, "\(desktop.stdout)\(desktop.stderr)")
        let metainfo = try Self.run(["appstreamcli", "validate", "--no-net", "--pedantic",
                                     resources.appendingPathComponent("io.github.stompbox.Stompbox.metainfo.xml").path], in: resources)
        #expect(metainfo.status == 0, "\(metainfo.stdout)\(metainfo.stderr)")
        // The release it names is this version.
        let xml = try String(contentsOf: resources.appendingPathComponent("io.github.stompbox.Stompbox.metainfo.xml"), encoding: .utf8)
        let version = try Self.run([try stompboxExecutable().path, "--version"], in: resources).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(xml.contains("<release version=\"\(version)\""), "the metainfo's release is not \(version)")
    }
}

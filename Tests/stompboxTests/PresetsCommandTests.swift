import Foundation
import Testing

@Suite struct PresetsCommandTests {
    static let factoryNames = ["Clean Combo", "Crunch 2x12", "Lead 4x12"]

    @Test func firstRunListsTheFactoryPresets() throws {
        let box = CoreCLISandbox()
        let r = try box.run("presets", "list")
        #expect(r.ok, "\(r.stderr)")
        #expect(r.stderr.isEmpty, "a first run says nothing: \(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("* 1  Clean Combo  (Noise Gate, Amp, Cabinet,"), "\(lines[0])")
        #expect(lines[1].hasPrefix("  2  Crunch 2x12  (Noise Gate, Overdrive, Amp, Cabinet,"), "\(lines[1])")
        #expect(lines[2].hasPrefix("  3  Lead 4x12  (Noise Gate, Overdrive, Amp, Cabinet,"), "\(lines[2])")
        #expect(!lines.joined().contains("Looper"), "the Looper is off in every factory preset")
        #expect(!CoreCLISandbox.exists(box.presetsFile), "listing writes nothing")
    }

    @Test func everyCommandRoundTrips() throws {
        let box = CoreCLISandbox()
        let show = try box.run("presets", "show", "2")
        #expect(show.ok)
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        #expect(shown["name"] as? String == "Crunch 2x12")
        #expect(shown["version"] as? Int == 2)
        #expect(shown["chain"] as? [String] == ["gate", "overdrive", "amp", "neural", "cab", "eq", "flanger", "tremolo", "delay", "reverb", "looper"])
        #expect((shown["parameters"] as? [String: Any])?["delay.time_ms"] as? Int == 120)
        #expect((shown["parameters"] as? [String: Any])?["amp.model"] as? String == "crunch")

        let mine = box.write("mine.json", #"{"format":"stompbox-preset","version":1,"name":"Mine","parameters":{"delay.enabled":true,"delay.time_ms":420,"tremolo.shape":"square"}}"#)
        #expect(try box.run("presets", "save", "3", "--from", mine.path).ok)
        #expect(try box.run("presets", "rename", "1", "Sparkle").ok)
        #expect(try box.run("presets", "select", "3").ok)
        let view = try #require(PresetsFileView(box.read(box.presetsFile)))
        #expect(view.names == ["Sparkle", "Crunch 2x12", "Mine"])
        #expect(view.selected == 2)
        #expect(try box.run("presets", "list").stdout.contains("* 3  Mine  (Delay)"))

        let out = box.file("out.json")
        #expect(try box.run("presets", "export", "3", out.path).ok)
        let exported = try #require(try JSONSerialization.jsonObject(with: box.read(out)!) as? [String: Any])
        #expect(exported["name"] as? String == "Mine")
        let params = try #require(exported["parameters"] as? [String: Any])
        #expect(params["delay.time_ms"] as? Int == 420)
        #expect(params["tremolo.shape"] as? String == "square")
        #expect(params.count > 30, "an exported preset holds every parameter")

        #expect(try box.run("presets", "import", "1", out.path).ok)
        #expect(PresetsFileView(box.read(box.presetsFile))?.names == ["Mine", "Crunch 2x12", "Mine"])
        #expect(try box.run("presets", "show", "1").stdout == box.run("presets", "show", "3").stdout)
        #expect(CoreCLISandbox.exists(box.config.appendingPathComponent("presets.json.bak")))
    }

    @Test func errorsAreOneLineAndChangeNothing() throws {
        let box = CoreCLISandbox()
        #expect(try box.run("presets", "rename", "2", "Keep me").ok)
        let before = box.read(box.presetsFile)
        let bad = box.write("bad.json", #"{"format":"stompbox-preset","version":1,"name":"x","parameters":{"delay.time_ms":5000}}"#)
        let unknown = box.write("unknown.json", #"{"format":"stompbox-preset","version":1,"name":"x","parameters":{"delay.speed":1}}"#)
        let exists = box.write("exists.json", "precious")
        let cases: [([String], String)] = [
            (["presets", "show", "4"], "there is no preset slot 4"),
            (["presets", "select", "0"], "there is no preset slot 0"),
            (["presets", "import", "1", bad.path], "delay.time_ms is out of range"),
            (["presets", "save", "1", "--from", unknown.path], "unknown parameter 'delay.speed'"),
            (["presets", "import", "1", box.file("missing.json").path], "no such file"),
            (["presets", "rename", "1", "  "], "a preset needs a name"),
            (["presets", "export", "1", exists.path], "exists already"),
        ]
        for (arguments, words) in cases {
            let r = try box.run(arguments)
            #expect(r.status != 0, "\(arguments)")
            #expect(r.stderr.contains(words), "\(arguments): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "one line: \(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
        #expect(box.read(box.presetsFile) == before)
        #expect(box.read(exists) == Data("precious".utf8))
        #expect(try box.run("presets", "export", "1", exists.path, "--force").ok)
        #expect(box.read(exists) != Data("precious".utf8))
    }

    @Test func aDamagedFileIsMovedAsideAndReported() throws {
        let box = CoreCLISandbox()
        #expect(try box.run("presets", "rename", "2", "Mine").ok)
        let full = try #require(box.read(box.presetsFile))
        let damaged = full.prefix(full.count / 2)
        try damaged.write(to: box.presetsFile)
        let r = try box.run("presets", "list")
        #expect(r.ok)
        #expect(r.stdout.contains("2  Crunch 2x12"), "factory presets loaded")
        #expect(r.stderr.contains("presets.json was damaged (unexpected end of file at byte \(damaged.count)"), "\(r.stderr)")
        let aside = box.names(box.config).filter { $0.hasPrefix("presets.json.corrupt-") }
        #expect(aside.count == 1)
        #expect(r.stderr.contains(box.config.appendingPathComponent(aside[0]).path))
        #expect(r.stderr.contains("the factory presets were loaded"))
        #expect(box.read(box.config.appendingPathComponent(aside[0])) == damaged, "nothing lost")

        try Data(#"{"format":"stompbox-presets","version":9,"selected":0,"slots":[]}"#.utf8).write(to: box.presetsFile)
        let newer = try box.run("presets", "rename", "1", "After")
        #expect(newer.ok)
        #expect(newer.stderr.contains("was written by a newer Stompbox (version 9"))
        #expect(box.names(box.config).filter { $0.hasPrefix("presets.json.corrupt-") }.count == 2, "never clobbered")
        #expect(PresetsFileView(box.read(box.presetsFile))?.names == ["After", "Crunch 2x12", "Lead 4x12"])
    }

    /// Kills `stompbox presets rename/save` at random moments, many times: the file is always
    /// the old or the new complete file. STOMPBOX_TEST_SAVE_PAUSE_MS stretches each step of the
    /// save so the kills land inside it, not only before or after.
    @Test func anInterruptedSaveNeverLeavesABadFile() throws {
        let box = CoreCLISandbox()
        let pause = ["STOMPBOX_TEST_SAVE_PAUSE_MS": "15"]
        #expect(try box.run("presets", "rename", "2", "Start").ok)
        let preset = box.write("p.json", #"{"format":"stompbox-preset","version":1,"name":"Saved","parameters":{"delay.enabled":true}}"#)

        // How long one undisturbed save takes here, to spread the kills over it.
        let t0 = Date()
        #expect(try box.run(["presets", "rename", "2", "Timing"], env: pause).ok)
        let duration = Date().timeIntervalSince(t0)

        // The kill window adapts to the machine's load: a run that finished before its kill
        // shrinks it, a kill grows it a little, so the kills keep landing while the save runs.
        var window = duration * 1.2
        var killed = 0, midWrite = 0, sawOld = 0, sawNew = 0, iterations = 0
        var generator = SystemRandomNumberGenerator()
        while (killed < 60 || midWrite < 10) && iterations < 400 {
            iterations += 1
            let old = try #require(box.read(box.presetsFile))
            let oldView = try #require(PresetsFileView(old))
            let name = "Name \(iterations)"
            let arguments = iterations % 3 == 0
                ? ["presets", "save", "2", "--from", preset.path]
                : ["presets", "rename", "2", name]
            let expectedName = iterations % 3 == 0 ? "Saved" : name
            let p = try box.process(arguments, env: pause)
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            usleep(UInt32(Double.random(in: 0...window, using: &generator) * 1_000_000))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            if p.terminationReason == .uncaughtSignal {
                killed += 1
                window = min(window * 1.05, duration * 3)
            } else {
                window *= 0.85
            }
            if box.names(box.config).contains(where: { $0.hasPrefix(".presets.json.tmp-") }) { midWrite += 1 }

            let now = box.read(box.presetsFile)
            if now == old {
                sawOld += 1
            } else {
                let view = try #require(PresetsFileView(now), "iteration \(iterations): a damaged presets.json")
                #expect(view.names[1] == expectedName)
                #expect(view.names[0] == oldView.names[0] && view.names[2] == oldView.names[2])
                sawNew += 1
            }
            if let bak = box.read(box.config.appendingPathComponent("presets.json.bak")) {
                #expect(PresetsFileView(bak) != nil, "iteration \(iterations): a damaged .bak")
            }
        }
        print("interrupted saves: \(iterations) runs, \(killed) killed, \(midWrite) mid-write, \(sawOld) old file, \(sawNew) new file")
        #expect(killed >= 50)
        #expect(midWrite >= 10, "the kills landed inside the save")
        #expect(sawOld > 0 && sawNew > 0)

        // The next run cleans up after the killed ones and finds a good file.
        let after = try box.run("presets", "rename", "3", "Clean")
        #expect(after.ok && after.stderr.isEmpty, "\(after.stderr)")
        #expect(!box.names(box.config).contains { $0.contains(".tmp-") }, "\(box.names(box.config))")
        #expect(!box.names(box.config).contains { $0.contains("corrupt") })
    }
}

extension PresetsCommandTests {
    @Test func aSlotWithTheLockedLooperOnSaysSo() throws {
        let box = CoreCLISandbox()
        let loop = box.write("loop.json", #"{"format":"stompbox-preset","version":1,"name":"Loop Jam","parameters":{"looper.enabled":true}}"#)
        let saved = try box.run("presets", "save", "1", "--from", loop.path)
        #expect(saved.ok, "a preset with the Looper on is kept whole while locked: \(saved.stderr)")
        let list = try box.run("presets", "list")
        #expect(list.stdout.contains("1  Loop Jam  (Looper (locked))"), "\(list.stdout)")
        #expect(try box.run("presets", "show", "1").stdout.contains(#""looper.enabled" : true"#))
    }
}

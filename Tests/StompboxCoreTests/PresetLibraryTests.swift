import Foundation
import Testing
import StompboxDSP
@testable import StompboxCore

@Suite struct PresetLibraryTests {
    func open(_ folder: TemporaryFolder) throws -> PresetLibrary {
        try PresetLibrary(directory: folder.url) { factoryBank }
    }

    /// Opens a library over `content` and checks the damaged-file contract: moved aside whole,
    /// a notice naming the problem and the new path, the factory presets loaded, nothing written.
    func expectMovedAside(_ content: Data, problem: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let folder = TemporaryFolder()
        folder.write("presets.json", content)
        let library = try open(folder)
        #expect(library.bank == factoryBank, sourceLocation: sourceLocation)
        let notices = library.takeNotices()
        #expect(notices.count == 1, sourceLocation: sourceLocation)
        guard let notice = notices.first else { return }
        #expect(library.takeNotices().isEmpty, "a notice is shown once", sourceLocation: sourceLocation)
        let message = notice.description
        #expect(message.contains(problem), "\(message)", sourceLocation: sourceLocation)
        #expect(message.hasPrefix("presets.json "), sourceLocation: sourceLocation)
        #expect(message.contains(notice.movedTo.path), sourceLocation: sourceLocation)
        #expect(message.hasSuffix("and the factory presets were loaded."), sourceLocation: sourceLocation)
        #expect(notice.movedTo.lastPathComponent.hasPrefix("presets.json.corrupt-"), sourceLocation: sourceLocation)
        #expect(notice.movedTo.deletingLastPathComponent().path == folder.url.path, sourceLocation: sourceLocation)
        #expect(try Data(contentsOf: notice.movedTo) == content, "nothing lost", sourceLocation: sourceLocation)
        #expect(!SafeFile.exists(folder.file("presets.json")), "nothing written until a change", sourceLocation: sourceLocation)
    }

    @Test func missingFileLoadsFactoryPresetsSilently() throws {
        let folder = TemporaryFolder()
        let library = try open(folder)
        #expect(library.bank == factoryBank)
        #expect(library.takeNotices().isEmpty)
        #expect(!SafeFile.exists(folder.file("presets.json")))
    }

    /// A new user (no presets.json) opens on preset 1 of the shipped file, the clean through the
    /// gate, amp and cabinet, on the default board; opening writes nothing.
    @Test func aNewUsersFirstSoundIsFactoryPreset1() throws {
        let home = TemporaryFolder()
        let directories = UserDirectories(config: home.url.appendingPathComponent("config"), data: home.url.appendingPathComponent("data"))
        let library = try PresetLibrary(directories: directories, dataFiles: { repositoryData })
        #expect(library.selected == 0)
        let first = library[library.selected]
        #expect(first == factoryBank[0])
        #expect(first.board == PedalKind.builtIn)
        #expect(first[.gateEnabled] == 1 && first[.ampEnabled] == 1 && first[.cabEnabled] == 1)
        // Played as the window plays the selected slot at start (FeatureGate: nothing unlocked).
        let live = ParameterStore()
        #expect(FeatureGate.locked.apply(first, to: live).isEmpty, "nothing in preset 1 is locked")
        #expect(first.matches(live, board: PedalKind.builtIn))
        #expect(!SafeFile.exists(directories.config.appendingPathComponent("stompbox/presets.json")), "nothing written until a change")
    }

    /// An existing user's presets (here the old version-1 factory slots, one renamed, slot 2
    /// selected) open as they are: the factory file is not even read, and the file is not
    /// rewritten, upgraded or backed up by opening, reloading or playing a slot.
    @Test func anExistingUsersPresetsAreNeverTouched() throws {
        let folder = TemporaryFolder()
        let slot = { (name: String, parameters: String) in
            #"{"format":"stompbox-preset","version":1,"name":"\#(name)","parameters":{\#(parameters)}}"#
        }
        let mine = #"{"format":"stompbox-presets","version":1,"selected":1,"slots":["#
            + slot("Clean Room", #""eq.enabled":true,"reverb.enabled":true,"reverb.mix":0.28"#) + ","
            + slot("My Crunch", #""overdrive.enabled":true,"overdrive.drive":0.45,"delay.enabled":true,"delay.time_ms":380"#) + ","
            + slot("Lead Swirl", #""overdrive.enabled":true,"flanger.enabled":true"#) + "]}"
        let bytes = Data(mine.utf8)
        folder.write("presets.json", bytes)
        var factoryAsked = 0
        let library = try PresetLibrary(directory: folder.url) {
            factoryAsked += 1
            return factoryBank
        }
        try library.reload()
        #expect(factoryAsked == 0, "the factory presets are read only for a missing or unusable file")
        #expect(library.takeNotices().isEmpty)
        #expect(library.selected == 1)
        #expect(library.slots.map(\.name) == ["Clean Room", "My Crunch", "Lead Swirl"])
        let played = library[library.selected]
        #expect(played.board == PedalKind.classic, "a version-1 slot keeps the classic board")
        #expect(played[.ampEnabled] == 0 && played[.cabEnabled] == 0 && played[.gateEnabled] == 0)
        #expect(played[.delayTime] == 380 && played[.overdriveDrive] == 0.45)
        FeatureGate.locked.apply(played, to: ParameterStore())
        #expect(folder.read("presets.json") == bytes, "the file is byte for byte what the user had")
        #expect(folder.names().filter { $0 != "presets.json.lock" } == ["presets.json"], "no backup, no moved-aside copy")
    }

    @Test func damagedJSONIsMovedAside() throws {
        try expectMovedAside(Data("this is not json {".utf8), problem: "was damaged (unexpected character 'h' at byte 1 (line 1, column 2))")
        try expectMovedAside(Data([0xFF, 0xFE, 0x00, 0x7B]), problem: "was damaged")
        try expectMovedAside(Data(), problem: "was empty")
        var flipped = PresetBankTests.sampleBank().jsonData()
        flipped[flipped.count / 2] = 0x00
        try expectMovedAside(flipped, problem: "was damaged")
    }

    @Test func truncatedAtEveryByteIsMovedAside() throws {
        let full = PresetBankTests.sampleBank().jsonData()
        // Every cut before the closing brace leaves invalid JSON (the newline after it is optional).
        let lastBrace = full.lastIndex(of: UInt8(ascii: "}"))!
        var tested = 0
        for cut in 0...lastBrace {
            let folder = TemporaryFolder()
            let content = full.prefix(cut)
            folder.write("presets.json", content)
            let library = try open(folder)
            let notices = library.takeNotices()
            #expect(library.bank == factoryBank)
            #expect(notices.count == 1, "cut at \(cut)")
            if let notice = notices.first {
                #expect(notice.description.contains(cut == 0 ? "was empty" : "at byte"), "cut at \(cut): \(notice)")
                #expect(try Data(contentsOf: notice.movedTo) == content)
            }
            #expect(!SafeFile.exists(folder.file("presets.json")))
            tested += 1
        }
        #expect(tested > 1000)
    }

    @Test func otherFormatNewerVersionAndBadValuesAreMovedAside() throws {
        try expectMovedAside(Data(#"{"format":"stompbox-preset","version":1,"name":"x"}"#.utf8),
                             problem: "is not a Stompbox presets file (its format is 'stompbox-preset'")
        try expectMovedAside(Data(#"{"format":"stompbox-presets","version":7,"selected":0,"slots":[]}"#.utf8),
                             problem: "was written by a newer Stompbox (version 7")
        let good = String(decoding: PresetBankTests.sampleBank().jsonData(), as: UTF8.self)
        try expectMovedAside(Data(good.replacingOccurrences(of: #""delay.time_ms" : 412.5"#, with: #""delay.time_ms" : 9000"#).utf8),
                             problem: "holds a value out of range in slot 1 (value 9000.0 for delay.time_ms is out of range")
        try expectMovedAside(Data(good.replacingOccurrences(of: #""eq.band6_db" : -11.25"#, with: #""eq.band6_db" : -12.5"#).utf8),
                             problem: "slot 2 (value -12.5 for eq.band6_db is out of range")
        try expectMovedAside(Data(good.replacingOccurrences(of: #""tremolo.shape" : "square""#, with: #""tremolo.shape" : "saw""#).utf8),
                             problem: "tremolo.shape")
        try expectMovedAside(Data(good.replacingOccurrences(of: #""delay.enabled" : true"#, with: #""delay.enabled" : 1"#).utf8),
                             problem: "delay.enabled")
        try expectMovedAside(Data(good.replacingOccurrences(of: #""delay.enabled" : true"#, with: #""delay.speed" : 1"#).utf8),
                             problem: "unknown parameter 'delay.speed'")
        guard case .object(var top) = try JSONValue.parse(Data(good.utf8)), case .array(let slots)? = top["slots"] else { return }
        top["slots"] = .array(Array(slots.prefix(2)))
        try expectMovedAside(JSONValue.object(top).serialized(), problem: "holds 2 preset slots instead of 3")
        top["slots"] = .array(slots + [slots[0]])
        try expectMovedAside(JSONValue.object(top).serialized(), problem: "holds 4 preset slots instead of 3")
    }

    @Test func movingAsideNeverClobbers() throws {
        let folder = TemporaryFolder()
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        var moved: [URL] = []
        for i in 0..<3 {
            folder.write("presets.json", Data("bad \(i)".utf8))
            moved.append(try SafeFile.moveAside(folder.file("presets.json"), tag: "corrupt", date: date))
        }
        #expect(Set(moved.map(\.path)).count == 3)
        #expect(moved[1].lastPathComponent == moved[0].lastPathComponent + "-2")
        for (i, url) in moved.enumerated() { #expect(try Data(contentsOf: url) == Data("bad \(i)".utf8)) }
    }

    @Test func changesAreSavedWithABackup() throws {
        let folder = TemporaryFolder()
        let library = try open(folder)
        try library.rename(1, to: "  My Crunch  ")
        #expect(library[1].name == "My Crunch")
        let first = folder.read("presets.json")!
        #expect(!SafeFile.exists(folder.file("presets.json.bak")), "no previous file, no backup")

        try library.select(2)
        #expect(folder.read("presets.json.bak") == first, "the .bak is the previous file")
        let reopened = try open(folder)
        #expect(reopened.selected == 2)
        #expect(reopened[1].name == "My Crunch")
        #expect(reopened.takeNotices().isEmpty)
        #expect(folder.names().filter { $0.contains("tmp") }.isEmpty, "no temporary file left")

        let store = ParameterStore()
        store.set(.delayTime, 777)
        store.set(.reverbEnabled, 1)
        try library.save(from: store, board: PedalKind.builtIn, into: 0)
        #expect(library[0].name == factoryBank[0].name, "saving keeps the slot's name")
        #expect(library[0][.delayTime] == 777)
        try library.save(from: store, board: PedalKind.builtIn, into: 0, name: "Big Room")
        #expect(try open(folder)[0].name == "Big Room")
        #expect(try open(folder)[0] == Preset(name: "Big Room", from: store))
    }

    @Test func recallSelectsAndReturnsThePreset() throws {
        let folder = TemporaryFolder()
        let library = try open(folder)
        let preset = try library.recall(2)
        #expect(preset == factoryBank[2])
        #expect(try open(folder).selected == 2)
    }

    @Test func exportAndImportRoundTrip() throws {
        let folder = TemporaryFolder()
        let library = try open(folder)
        let file = folder.file("lead.json")
        try library.export(2, to: file)
        #expect(try Preset(jsonData: Data(contentsOf: file)) == factoryBank[2])
        #expect(throws: PresetLibraryError.self) { try library.export(1, to: file) }
        #expect(try Preset(jsonData: Data(contentsOf: file)) == factoryBank[2], "an existing file is not overwritten")
        try library.export(1, to: file, overwrite: true)
        #expect(try Preset(jsonData: Data(contentsOf: file)) == factoryBank[1])

        try library.importPreset(from: file, into: 0)
        #expect(try open(folder)[0] == factoryBank[1])
    }

    @Test func badImportsAndNamesChangeNothing() throws {
        let folder = TemporaryFolder()
        let library = try open(folder)
        try library.rename(0, to: "Keep")
        let before = folder.read("presets.json")!
        folder.write("bad.json", Data(#"{"format":"stompbox-preset","version":1,"name":"x","parameters":{"delay.mix":1.5}}"#.utf8))
        do {
            try library.importPreset(from: folder.file("bad.json"), into: 0)
            Issue.record("imported a bad preset")
        } catch {
            #expect(error.description.contains("delay.mix"))
            #expect(error.description.contains("bad.json"))
        }
        #expect(throws: PresetLibraryError.self) { try library.importPreset(from: folder.file("missing.json"), into: 0) }
        #expect(throws: PresetLibraryError.badSlot(3)) { try library.rename(3, to: "x") }
        #expect(throws: PresetLibraryError.self) { try library.rename(0, to: "   ") }
        #expect(throws: PresetLibraryError.self) { try library.rename(0, to: String(repeating: "x", count: 41)) }
        #expect(throws: PresetLibraryError.self) { try library.rename(0, to: "a\u{7}b") }
        #expect(folder.read("presets.json") == before)
        #expect(library[0].name == "Keep")
    }

    @Test func twoOpenLibrariesDoNotLoseEachOthersChanges() throws {
        let folder = TemporaryFolder()
        let window = try open(folder)
        let script = try open(folder)
        try script.rename(0, to: "From Script")
        try window.rename(1, to: "From Window")
        let final = try open(folder)
        #expect(final[0].name == "From Script")
        #expect(final[1].name == "From Window")
    }

    @Test func aDamagedFileFoundWhileSavingIsMovedAsideToo() throws {
        let folder = TemporaryFolder()
        let library = try open(folder)
        try library.rename(0, to: "Mine")
        folder.write("presets.json", Data("{\"format\":".utf8))
        try library.rename(1, to: "After")
        let notices = library.takeNotices()
        #expect(notices.count == 1)
        #expect(try Data(contentsOf: notices[0].movedTo) == Data("{\"format\":".utf8))
        #expect(try open(folder)[1].name == "After")
        #expect(try open(folder)[0].name == factoryBank[0].name)
    }

    @Test func staleTemporaryFilesAreRemoved() throws {
        let folder = TemporaryFolder()
        folder.write(".presets.json.tmp-99999", Data("half a fi".utf8))
        let library = try open(folder)
        try library.select(1)
        #expect(!folder.names().contains(".presets.json.tmp-99999"))
    }

    @Test func missingFactoryPresetsIsAClearError() {
        let folder = TemporaryFolder()
        let empty = TemporaryFolder()
        do {
            _ = try PresetLibrary(directory: folder.url) { try FactoryPresets.load(from: DataFiles(dataDirectory: empty.url)) }
            Issue.record("opened without factory presets")
        } catch {
            #expect(error.description.contains("factory presets"))
            #expect(error.description.contains("factory-presets.json is missing"))
        }
    }
}

@Suite struct SafeFileTests {
    @Test func writingThroughASymbolicLinkKeepsTheLink() throws {
        let folder = TemporaryFolder()
        let real = folder.file("real.json")
        try Data("old".utf8).write(to: real)
        let link = folder.file("link.json")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        try SafeFile.write(Data("new".utf8), to: link, backup: true)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == real.path)
        #expect(folder.read("real.json") == Data("new".utf8))
        #expect(folder.read("real.json.bak") == Data("old".utf8))
    }

    @Test func createRefusesToReplaceAndSetsTheMode() throws {
        let folder = TemporaryFolder()
        let url = folder.file("secret")
        try SafeFile.create(Data("a".utf8), at: url, mode: 0o600)
        var st = stat()
        #expect(stat(url.path, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(throws: FileError.self) { try SafeFile.create(Data("b".utf8), at: url) }
        #expect(folder.read("secret") == Data("a".utf8))
    }

    @Test func hugeVersionNumbersDoNotTrap() {
        #expect(throws: PresetError.self) {
            try Preset(jsonData: Data(#"{"format":"stompbox-preset","version":1e300,"name":"x"}"#.utf8))
        }
    }
}

@Suite struct ImportNameTests {
    @Test func importedNamesAreMadeUsable() throws {
        let folder = TemporaryFolder()
        let library = try PresetLibrary(directory: folder.url) { factoryBank }
        let long = String(repeating: "Long ", count: 12)
        folder.write("Friend's Lead.json", Data(#"{"format":"stompbox-preset","version":1,"name":"   "}"#.utf8))
        #expect(try library.importPreset(from: folder.file("Friend's Lead.json"), into: 0).name == "Friend's Lead")
        folder.write("x.json", Data(#"{"format":"stompbox-preset","version":1,"name":"\#(long)"}"#.utf8))
        #expect(try library.importPreset(from: folder.file("x.json"), into: 1).name.count <= 40)
        #expect(PresetLibrary.usableName("a\u{0}b", fallback: "f") == "ab")
        #expect(PresetLibrary.usableName("", fallback: "") == "Imported")
    }
}

extension SafeFileTests {
    /// A save killed after making the .bak link leaves presets.json and presets.json.bak as one
    /// file; rename() between two links of one file does nothing, which once left a temporary name.
    @Test func backupOfAFileThatIsAlreadyItsBackupLeavesNoTemporary() throws {
        let folder = TemporaryFolder()
        let url = folder.file("presets.json")
        try Data("one".utf8).write(to: url)
        #expect(link(url.path, folder.file("presets.json.bak").path) == 0)
        try SafeFile.write(Data("two".utf8), to: url, backup: true)
        #expect(folder.names() == ["presets.json", "presets.json.bak"])
        #expect(folder.read("presets.json.bak") == Data("one".utf8))
        #expect(folder.read("presets.json") == Data("two".utf8))
    }
}

extension PresetLibraryTests {
    @Test func saveChangeRecallBringsTheSetupBack() throws {
        let folder = TemporaryFolder()
        let library = try open(folder)
        let live = ParameterStore()
        FeatureGate.locked.apply(try library.recall(1), to: live)
        live.set(.delayTime, 512)
        try library.save(from: live, board: PedalKind.builtIn, into: 1)
        #expect(library.matches(1, live, board: PedalKind.builtIn))
        live.set(.delayTime, 90)
        live.set(.reverbMix, 0.9)
        #expect(!library.matches(1, live, board: PedalKind.builtIn))
        FeatureGate.locked.apply(try library.recall(1), to: live)
        #expect(live.load(.delayTime) == 512)
        #expect(live.load(.reverbMix) == factoryBank[1][.reverbMix])
        #expect(library.matches(1, live, board: PedalKind.builtIn))
    }
}

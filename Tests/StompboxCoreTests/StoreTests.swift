import Foundation
import Testing
import StompboxDSP
@testable import StompboxCore

@Suite struct StoreTests {
    let catalogue = try! StoreCatalogue.load(from: repositoryData)

    func store(_ folder: TemporaryFolder, key: LicencePublicKey = LicenceTests.vendor.publicKey) -> Store {
        Store(catalogue: catalogue, publicKey: key, directory: folder.url)
    }

    @Test func catalogueSellsTheLooper() throws {
        let looper = try #require(catalogue.product("looper"))
        #expect(looper.name == "Looper")
        #expect(looper.price.contains("4.99"))
        #expect(!looper.description.isEmpty)
        #expect(looper.effect == .looper)
        #expect(throws: StoreError.self) { try StoreCatalogue(jsonData: Data(#"{"format":"x"}"#.utf8)) }
    }

    @Test func validKeyUnlocksAtOnceAndIsRemembered() throws {
        let folder = TemporaryFolder()
        let s = store(folder)
        #expect(!s.isUnlocked(.looper))
        #expect(s.isUnlocked(.delay), "the free pedals are never locked")
        let licence = try s.unlock(key: LicenceTests.key())
        #expect(licence.licensee == "Ada Lovelace")
        #expect(s.isUnlocked(.looper))
        #expect(s.isUnlocked("looper"))
        #expect(s.status.first?.licence?.licensee == "Ada Lovelace")
        var st = stat()
        #expect(stat(folder.file("licences.json").path, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o600)

        let next = store(folder)
        #expect(next.isUnlocked(.looper), "re-verified at start")
        #expect(next.notices.isEmpty)
        // Unlocking again with another key for the same product keeps one key.
        try next.unlock(key: LicenceTests.key("looper", "Grace Hopper"))
        #expect(store(folder).licence(for: "looper")?.licensee == "Grace Hopper")
        guard case .object(let top) = try JSONValue.parse(folder.read("licences.json")!), case .array(let keys)? = top["keys"] else {
            Issue.record("bad licence file"); return
        }
        #expect(keys.count == 1)
    }

    @Test func badKeysChangeNothing() throws {
        let folder = TemporaryFolder()
        let s = store(folder)
        let good = LicenceTests.key()
        var bytes = try Licence.decode(good)
        bytes[10] ^= 1
        let tampered = Licence.prefix + Base32.encode(bytes)
        let bad: [(String, String)] = [
            ("", "no licence key"),
            ("garbage", "not a Stompbox licence key"),
            (String(good.prefix(40)), "incomplete"),
            (tampered, "not valid"),
            (try Licence.issue(product: "looper", licensee: "X", signingKey: LicenceTests.otherVendor).key, "not valid"),
            (LicenceTests.key("chorus"), "for 'chorus', which this Stompbox does not sell"),
        ]
        for (key, words) in bad {
            do {
                try s.unlock(key: key)
                Issue.record("unlocked with \(key)")
            } catch {
                #expect(error.description.contains(words), "\(error)")
            }
            #expect(!s.isUnlocked(.looper))
            #expect(!SafeFile.exists(folder.file("licences.json")), "nothing written")
        }
        // With a licence stored, a bad key leaves the file byte for byte as it was.
        try s.unlock(key: good)
        let before = folder.read("licences.json")
        for (key, _) in bad { _ = try? s.unlock(key: key) }
        #expect(folder.read("licences.json") == before)
        #expect(s.isUnlocked(.looper))
    }

    @Test func editingTheLicenceFileUnlocksNothing() throws {
        let folder = TemporaryFolder()
        try store(folder).unlock(key: LicenceTests.key())
        var text = String(decoding: folder.read("licences.json")!, as: UTF8.self)
        // Swap the licensee's name for another inside the key: the signature no longer matches.
        let forged = try Licence.issue(product: "looper", licensee: "Ada Lovelacf", signingKey: LicenceTests.otherVendor).key
        let original = LicenceTests.key()
        var forgedBytes = try Licence.decode(forged)
        let originalBytes = try Licence.decode(original)
        forgedBytes.replaceSubrange(forgedBytes.count - 64..<forgedBytes.count, with: originalBytes.suffix(64))
        text = text.replacingOccurrences(of: original, with: Licence.prefix + Base32.encode(forgedBytes))
        folder.write("licences.json", Data(text.utf8))
        let s = store(folder)
        #expect(!s.isUnlocked(.looper))
        #expect(s.notices.count == 1)
        #expect(s.notices.first?.contains("does not verify") == true)

        folder.write("licences.json", Data(#"{"format":"stompbox-licences","version":1,"keys":["STOMPBOX-AAAA"]}"#.utf8))
        #expect(!store(folder).isUnlocked(.looper))
    }

    @Test func anotherPublicKeyDoesNotAcceptTheStoredKey() throws {
        let folder = TemporaryFolder()
        try store(folder).unlock(key: LicenceTests.key())
        let other = store(folder, key: LicenceTests.otherVendor.publicKey)
        #expect(!other.isUnlocked(.looper))
        #expect(other.notices.first?.contains("'looper'") == true)
        // Unlocking for the other build keeps nothing twice and loses nothing it cannot judge.
        try other.unlock(key: try Licence.issue(product: "looper", licensee: "B", signingKey: LicenceTests.otherVendor).key)
        #expect(other.isUnlocked(.looper))
    }

    @Test func aDamagedLicenceFileIsMovedAsideBeforeWriting() throws {
        let folder = TemporaryFolder()
        folder.write("licences.json", Data("{damaged".utf8))
        let s = store(folder)
        #expect(s.notices.first?.contains("is damaged") == true)
        try s.unlock(key: LicenceTests.key())
        #expect(s.isUnlocked(.looper))
        let aside = folder.names().filter { $0.hasPrefix("licences.json.corrupt-") }
        #expect(aside.count == 1)
        #expect(folder.read(aside[0]) == Data("{damaged".utf8))
    }

    @Test func openUsesThePublicKeyAskedFor() throws {
        let folder = TemporaryFolder()
        let keyFile = folder.file("pub.txt")
        try Data(LicenceTests.vendor.publicKey.fileText.utf8).write(to: keyFile)
        let dirs = UserDirectories(config: folder.file("c"), data: folder.file("d"))
        let shipped = try Store.open(environment: [:], directories: dirs, dataFiles: repositoryData)
        #expect(throws: StoreError.self) { try shipped.unlock(key: LicenceTests.key()) }
        let byOption = try Store.open(publicKeyFile: keyFile.path, environment: [:], directories: dirs, dataFiles: repositoryData)
        try byOption.unlock(key: LicenceTests.key())
        let byEnvironment = try Store.open(environment: [Store.publicKeyVariable: keyFile.path], directories: dirs, dataFiles: repositoryData)
        #expect(byEnvironment.isUnlocked(.looper))
        #expect(!(try Store.open(environment: [:], directories: dirs, dataFiles: repositoryData)).isUnlocked(.looper))
        #expect(throws: StoreError.self) {
            try Store.open(publicKeyFile: folder.file("none.txt").path, environment: [:], directories: dirs, dataFiles: repositoryData)
        }
    }

    @Test func gateRefusesToSwitchALockedLooperOn() throws {
        let gate = FeatureGate.locked
        let params = ParameterStore()
        do {
            try gate.set(.looperEnabled, 1, on: params)
            Issue.record("switched a locked Looper on")
        } catch {
            #expect(error.effect == .looper)
            #expect(error.description.contains("Looper is locked"))
            #expect(error.description.contains("stompbox store unlock KEY"))
            #expect(error.description.contains("More…"))
        }
        #expect(!params.isOn(.looperEnabled))
        try gate.set(.looperEnabled, 0, on: params)
        try gate.set(.looperLevel, 0.5, on: params)
        try gate.set(.delayEnabled, 1, on: params)
        #expect(params.isOn(.delayEnabled))

        let open = FeatureGate(unlocked: [.looper])
        try open.set(.looperEnabled, 1, on: params)
        #expect(params.isOn(.looperEnabled))
        #expect(gate.enforce(on: params) == [LockedError(effect: .looper)])
        #expect(!params.isOn(.looperEnabled))
    }

    @Test func aPresetWithTheLooperOnStillLoadsWhileLocked() {
        var preset = Preset(name: "Loop Jam")
        preset[.looperEnabled] = 1
        preset[.looperLevel] = 0.6
        preset[.delayEnabled] = 1
        preset[.delayTime] = 500
        let params = ParameterStore()
        let notices = FeatureGate.locked.apply(preset, to: params)
        #expect(notices.count == 1)
        #expect(notices.first?.description.contains("'Loop Jam' switches the Looper on, but the Looper is locked, so it stays off") == true)
        #expect(!params.isOn(.looperEnabled))
        #expect(params.load(.looperLevel) == 0.6)
        #expect(params.isOn(.delayEnabled))
        #expect(params.load(.delayTime) == 500)
        #expect(FeatureGate(unlocked: [.looper]).apply(preset, to: params).isEmpty)
        #expect(params.isOn(.looperEnabled))
    }
}

@Suite struct CurrentGateTests {
    @Test func aStoreThatCannotOpenLocksTheLooper() {
        let folder = TemporaryFolder()
        let (gate, notes) = Store.currentGate(environment: ["STOMPBOX_DATA_DIR": folder.url.path, "HOME": folder.url.path])
        #expect(gate == .locked)
        #expect(notes.first?.contains("the Looper stays locked") == true)
    }

    @Test func theStoresGateWhenItOpens() throws {
        let folder = TemporaryFolder()
        let keyFile = folder.file("pub.txt")
        try Data(LicenceTests.vendor.publicKey.fileText.utf8).write(to: keyFile)
        let env = ["HOME": folder.url.path, "XDG_DATA_HOME": folder.file("d").path]
        #expect(Store.currentGate(publicKeyFile: keyFile.path, environment: env).gate == .locked)
        try Store.open(publicKeyFile: keyFile.path, environment: env).unlock(key: LicenceTests.key())
        #expect(Store.currentGate(publicKeyFile: keyFile.path, environment: env).gate == FeatureGate(unlocked: [.looper]))
    }
}

@Suite struct MessagesTests {
    @Test func sentences() {
        #expect(Messages.sentence(LockedError(effect: .looper)).hasPrefix("The Looper is locked;"))
        #expect(Messages.sentence(LockedError(effect: .looper)).hasSuffix("Enter licence key…."))
        #expect(Messages.sentence("done.") == "Done.")
        #expect(Messages.sentence("") == "")
    }
}

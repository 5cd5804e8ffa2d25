import Foundation
import Testing
@testable import StompboxCore

@Suite struct DataFilesTests {
    @Test func findsTheRepositoryDataFromTheBuildFolder() throws {
        let found = try DataFiles.locate(environment: [:])
        #expect(found.dataDirectory.lastPathComponent == "data")
        #expect(SafeFile.exists(found.data("factory-presets.json")))
        #expect(SafeFile.exists(found.data("store-catalogue.json")))
        #expect(SafeFile.exists(found.data("store-public-key.txt")))
        #expect(found.resourcesDirectory.deletingLastPathComponent() == found.dataDirectory.deletingLastPathComponent())
    }

    @Test func environmentOverrides() throws {
        let real = try DataFiles.locate(environment: [:])
        let found = try DataFiles.locate(environment: ["STOMPBOX_DATA_DIR": real.dataDirectory.path, "STOMPBOX_RESOURCES_DIR": "/opt/r"])
        #expect(found.dataDirectory == real.dataDirectory)
        #expect(found.resourcesDirectory.path == "/opt/r")
        let empty = TemporaryFolder()
        #expect(throws: DataFilesError.badOverride(empty.url.path)) {
            try DataFiles.locate(environment: ["STOMPBOX_DATA_DIR": empty.url.path])
        }
    }

    @Test func installedLayoutIsACandidate() {
        let list = DataFiles.candidates(executable: URL(fileURLWithPath: "/opt/sb/bin/stompbox")).map(\.path)
        #expect(list.contains("/opt/sb/bin/data"))
        #expect(list.contains("/opt/sb/share/stompbox/data"))
        #expect(list.last == "/usr/share/stompbox/data")
        #expect(!DataFiles.candidates(executable: nil).isEmpty)
    }

    /// The package's builds for each x86-64 level live in <prefix>/lib/stompbox/<level>/.
    @Test func levelBuildsFindThePrefixData() {
        let list = DataFiles.candidates(executable: URL(fileURLWithPath: "/opt/sb/lib/stompbox/v3/stompbox")).map(\.path)
        #expect(list.contains("/opt/sb/share/stompbox/data"))
        let elsewhere = DataFiles.candidates(executable: URL(fileURLWithPath: "/opt/sb/lib/other/v3/stompbox")).map(\.path)
        #expect(!elsewhere.contains("/opt/sb/share/stompbox/data"))
    }

    @Test func userDirectoriesFollowXDG() {
        let d = UserDirectories(environment: ["HOME": "/home/ada"])
        #expect(d.config.path == "/home/ada/.config/stompbox")
        #expect(d.data.path == "/home/ada/.local/share/stompbox")
        let x = UserDirectories(environment: ["HOME": "/home/ada", "XDG_CONFIG_HOME": "/c", "XDG_DATA_HOME": "/d"])
        #expect(x.config.path == "/c/stompbox")
        #expect(x.data.path == "/d/stompbox")
        let relative = UserDirectories(environment: ["HOME": "/home/ada", "XDG_CONFIG_HOME": "rel"])
        #expect(relative.config.path == "/home/ada/.config/stompbox")
    }
}

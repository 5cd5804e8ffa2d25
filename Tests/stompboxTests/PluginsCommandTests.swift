import Foundation
import StompboxAudio
import StompboxTestSupport
import Testing

/// `stompbox plugins`, end to end.
@Suite struct PluginsCommandTests {
    static let fil4 = "http://gareus.org/oss/lv2/fil4#mono"
    static let fil4Installed = (try? LV2World.shared.plugin(uri: fil4)) != nil
    static let anyInstalled = !LV2World.shared.plugins().isEmpty

    @Test(.enabled(if: anyInstalled, "no LV2 plugin is installed (make deps-test)"))
    func jsonParsesAndListsEveryInstalledPlugin() throws {
        let result = try expectSuccess(["plugins", "--json"])
        let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        let entries = try #require(parsed as? [[String: Any]])
        let uris = entries.compactMap { $0["uri"] as? String }
        #expect(Set(uris) == Set(LV2World.shared.plugins().map(\.uri)))
        // The same data the library gives, decoded back.
        let decoded = try JSONDecoder().decode([LV2PluginInfo].self, from: Data(result.stdout.utf8))
        #expect(decoded == LV2World.shared.plugins())
        for entry in entries {
            #expect(entry["name"] is String && entry["canHost"] is Bool && entry["controls"] is [Any])
        }
    }

    @Test(.enabled(if: fil4Installed, "x42-plugins is not installed (make deps-test)"))
    func jsonHasThePortsOfAKnownPlugin() throws {
        let result = try expectSuccess(["plugins", "--json"])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        let fil4 = try #require(entries.first { $0["uri"] as? String == Self.fil4 })
        #expect(fil4["audioInputs"] as? Int == 1 && fil4["audioOutputs"] as? Int == 1)
        let controls = try #require(fil4["controls"] as? [[String: Any]])
        let gain = try #require(controls.first { $0["symbol"] as? String == "gain" })
        #expect(gain["minimum"] as? Double == -18 && gain["maximum"] as? Double == 18 && gain["default"] as? Double == 0)
        #expect(gain["unit"] as? String == "dB")
        let hpq = try #require(controls.first { $0["symbol"] as? String == "HPQ" })
        let points = try #require(hpq["scalePoints"] as? [[String: Any]])
        #expect(points.count == 3 && points.first?["label"] as? String == "-6dB @freq, no resonance")
        let enable = try #require(controls.first { $0["symbol"] as? String == "enable" })
        #expect(enable["isToggle"] as? Bool == true)
    }

    @Test(.enabled(if: fil4Installed, "x42-plugins is not installed (make deps-test)"))
    func textListsURIsNamesAndControls() throws {
        let result = try expectSuccess(["plugins"])
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let head = try #require(lines.firstIndex { $0.contains("<\(Self.fil4)>") })
        #expect(lines[head].hasPrefix("x42-eq"))
        #expect(lines[head + 1].contains("audio 1 in, 1 out"))
        let rest = lines[(head + 2)...].prefix { $0.hasPrefix("    ") }
        #expect(rest.first?.contains("SYMBOL") == true)
        let gain = try #require(rest.first { $0.split(separator: " ").first == "gain" })
        let cells = gain.split(separator: " ").map(String.init)
        #expect(cells.contains("-18") && cells.contains("18") && cells.contains("0") && cells.contains("dB"))
        let hp = try #require(rest.first { $0.split(separator: " ").first == "HPfreq" })
        #expect(hp.contains("Hz") && hp.contains("log"))
        let enable = try #require(rest.first { $0.split(separator: " ").first == "enable" })
        #expect(enable.contains("toggle"))
        let hpq = try #require(rest.first { $0.split(separator: " ").first == "HPQ" })
        #expect(hpq.contains("0.7=-3dB @freq, flat"))
    }

    @Test func noPluginsSaysSoAndSucceeds() throws {
        let empty = TemporaryFolder("lv2-empty")
        let result = try expectSuccess(["plugins"], environment: ["LV2_PATH": empty.path])
        #expect(result.stdout.hasPrefix("No LV2 plugins are installed"))
        let json = try expectSuccess(["plugins", "--json"], environment: ["LV2_PATH": empty.path])
        #expect((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [Any])?.isEmpty == true)
    }

    @Test func aBrokenPathEntryDoesNotStopTheListing() throws {
        let folder = TemporaryFolder("lv2-broken")
        try FileManager.default.createDirectory(atPath: folder.file("bad.lv2"), withIntermediateDirectories: true)
        folder.write("@prefix lv2: <http://lv2plug.in/ns/lv2core#> . <urn:x> a lv2:Plugin ; lv2:binary <nothing.so> ; ((( broken", to: "bad.lv2/manifest.ttl")
        let path = "/no/such/folder:\(folder.path):/usr/lib/lv2"
        let result = try expectSuccess(["plugins", "--json"], environment: ["LV2_PATH": path])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        if Self.fil4Installed { #expect(entries.contains { $0["uri"] as? String == Self.fil4 }) }
        let verbose = try runStompbox(["plugins", "--verbose"], environment: ["LV2_PATH": path])
        #expect(verbose.status == 0)
        #expect(verbose.stderr.contains("lilv: "), "lilv's complaint shows with --verbose: \(verbose.stderr)")
    }

    @Test func aMissingPluginIsOneLineNamingIt() throws {
        try expectFailure(["plugins", "--uri", "urn:stompbox:no-such-plugin"], mentioning: ["urn:stompbox:no-such-plugin", "is installed"])
        try expectFailure(["plugins", "--uri", "no uri"], mentioning: ["'no uri'", "not an LV2 plugin URI"])
    }

    @Test(.enabled(if: anyInstalled, "no LV2 plugin is installed (make deps-test)"))
    func somethingThatIsNotAPluginIsOneLineNamingIt() throws {
        let uri = "http://lv2plug.in/ns/ext/port-props#logarithmic"
        try expectFailure(["plugins", "--uri", uri], mentioning: [uri, "not a plugin"])
    }
}

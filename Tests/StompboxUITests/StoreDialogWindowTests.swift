import Foundation
import StompboxTestSupport
import StompboxTestTags
import Testing

/// The "More…" store under Xvfb: the Looper is locked (padlock, footswitch and strip open the
/// store dialog) until a key of the test key pair is entered in the dialog.
@Suite("Store dialog in the window", .serialized, .tags(.window))
struct StoreDialogWindowTests {
    init() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Paths.stompbox), "build first: swift build --build-tests")
    }

    @Test("the Looper is locked until a valid key is entered; wrong keys are refused in words and change nothing")
    func lockedUntilKeyEntered() throws {
        let keys = try TestKeyPair()
        defer { keys.remove() }
        let otherKeys = try TestKeyPair()
        defer { otherKeys.remove() }
        // The factory presets' board of eleven, on two rows: the Looper is on screen.
        let session = try PedalboardSession(arguments: ["--public-key", keys.publicKey])
        defer { session.stop() }
        #expect(session.looperLocked == true)
        #expect(session.store["public_key"] as? String == keys.publicKey, "--public-key is used")

        // The padlock sits on the footswitch: brass where the silver footswitch is otherwise.
        let footswitch = try session.point("looper", "footswitch")
        let lockedShot = try session.shot("store-looper-locked.png")
        let brass = try pixels(in: lockedShot, at: [(footswitch.x - 9, footswitch.y + 4)])[0]
        #expect(brass.r > 170 && brass.g > 100 && brass.b < 90, "padlock on the looper footswitch: \(brass)")

        // The strip's Looper entry opens the store instead of switching it on.
        try session.click("strip", "looper")
        #expect(waitUntil(seconds: 5) { !session.windows(named: "Stompbox Store").isEmpty })
        Thread.sleep(forTimeInterval: 0.3)
        #expect(session.parameter("looper.enabled") == 0)
        _ = try? session.shot("store-dialog.png")
        try session.keys(to: "Stompbox Store", "Escape")
        #expect(waitUntil(seconds: 5) { session.windows(named: "Stompbox Store").isEmpty && session.openDialogs.isEmpty })

        // The footswitch opens it too; Return there means "Enter licence key…".
        try session.xdotool("mousemove", "\(footswitch.x)", "\(footswitch.y)", "click", "1")
        #expect(waitUntil(seconds: 5) { !session.windows(named: "Stompbox Store").isEmpty })
        #expect(session.parameter("looper.enabled") == 0)
        #expect(session.looperState == "stopped")
        try session.keys(to: "Stompbox Store", "Return")
        #expect(waitUntil(seconds: 5) { !session.windows(named: "Enter Licence Key").isEmpty })

        // Refused, each with a message, nothing unlocked, nothing written.
        let licenceFile = session.home.appendingPathComponent("data/stompbox/licences.json").path
        let wrong = [
            try otherKeys.issue(licensee: "Someone Else"),            // signed by another key pair
            "STOMPBOX-NOT-A-KEY",                                      // garbage
            String(try keys.issue(licensee: "Cut Short").dropLast(6)), // truncated
            try keys.issue(product: "fuzz", licensee: "Other Product"), // a product the store does not sell
        ]
        var messages: [String] = []
        for (i, key) in wrong.enumerated() {
            try session.keys(to: "Enter Licence Key", "ctrl+a", "BackSpace")
            try session.type(to: "Enter Licence Key", key)
            try session.keys(to: "Enter Licence Key", "Return")
            #expect(waitUntil(seconds: 5) { (session.store["last_refusal"] as? String).map { !messages.contains($0) } ?? false },
                    "wrong key \(i) gets a message")
            let message = session.store["last_refusal"] as? String ?? ""
            messages.append(message)
            #expect(message.count > 20 && message.hasSuffix("."), "a sentence: \(message)")
            #expect(session.looperLocked == true)
            #expect(session.openDialogs == ["Stompbox Store", "Enter Licence Key"], "the key dialog stays open: \(session.openDialogs)")
            #expect(!FileManager.default.fileExists(atPath: licenceFile), "a refused key writes nothing")
        }
        #expect(messages.last?.contains("fuzz") == true, "the other product is named: \(messages)")
        _ = try? session.shot("store-key-refused.png")

        // The right key unlocks at once.
        let good = try keys.issue(licensee: "Test Player")
        try session.keys(to: "Enter Licence Key", "ctrl+a", "BackSpace")
        try session.type(to: "Enter Licence Key", good)
        try session.keys(to: "Enter Licence Key", "Return")
        #expect(waitUntil(seconds: 5) { session.looperLocked == false })
        let looper = (session.store["products"] as? [String: Any])?["looper"] as? [String: Any]
        #expect(looper?["licensee"] as? String == "Test Player")
        #expect(waitUntil(seconds: 5) { session.openDialogs == ["Stompbox Store"] })
        #expect(FileManager.default.fileExists(atPath: licenceFile), "the key is remembered")
        _ = try? session.shot("store-unlocked.png")
        try session.keys(to: "Stompbox Store", "Escape")
        #expect(waitUntil(seconds: 5) { session.openDialogs.isEmpty })

        // The padlock is gone and the footswitch works the Looper (the thank-you notice under
        // the strip has moved the board down: read the footswitch's place again).
        #expect(session.notice.contains("Test Player"), "notice: \(session.notice)")
        let moved = try session.settledPoint(["looper", "footswitch"])
        let unlockedShot = try session.shot("store-looper-unlocked.png")
        let metal = try pixels(in: unlockedShot, at: [(moved[0] - 9, moved[1] + 4)])[0]
        #expect(!(metal.r > 170 && metal.b < 90), "no padlock after unlocking: \(metal)")
        try session.click("looper", "footswitch")
        #expect(waitUntil(seconds: 3) { session.parameter("looper.enabled") == 1 })
        #expect(session.windows(named: "Stompbox Store").isEmpty, "no store dialog once unlocked")
        #expect(waitUntil(seconds: 5) { session.looperState == "recording" })
    }

    @Test("a stored key is verified again at start: the window opens unlocked with it, locked under another public key")
    func storedKeyReverified() throws {
        let environment = try unlockedLooperEnvironment()
        let unlocked = try PedalboardSession(environment: environment)
        #expect(unlocked.looperLocked == false)
        let looper = try unlocked.point("strip", "looper")
        try unlocked.xdotool("mousemove", "\(looper.x)", "\(looper.y)", "click", "1")
        #expect(waitUntil(seconds: 3) { unlocked.parameter("looper.enabled") == 1 })
        unlocked.stop()

        let other = try TestKeyPair()
        defer { other.remove() }
        var env = environment
        env["STOMPBOX_STORE_PUBLIC_KEY"] = other.publicKey
        let locked = try PedalboardSession(environment: env)
        defer { locked.stop() }
        #expect(locked.looperLocked == true)
        #expect(waitUntil(seconds: 3) { locked.notice.contains("does not verify") }, "notice: \(locked.notice)")
    }

    @Test("a preset that switches the locked Looper on loads with it off and says so")
    func presetWithLockedLooper() throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("stompbox-ui-config-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: config) }
        // Slot 2 of a presets file with the Looper on, written by the CLI.
        let env = ["XDG_CONFIG_HOME": config.path]
        let preset = config.appendingPathComponent("looper-on.json")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data(#"{"format":"stompbox-preset","version":1,"name":"Loop Jam","parameters":{"looper.enabled":true,"delay.enabled":true}}"#.utf8)
            .write(to: preset)
        let imported = try shell([Paths.stompbox, "presets", "import", "2", preset.path], environment: env)
        #expect(imported.status == 0, "\(imported.output)")
        let session = try PedalboardSession(environment: env)
        defer { session.stop() }
        try session.click("presets", "slot2")
        #expect(waitUntil(seconds: 3) { session.selectedSlot == 1 && session.parameter("delay.enabled") == 1 })
        #expect(session.parameter("looper.enabled") == 0)
        #expect(waitUntil(seconds: 3) { session.notice.contains("Looper is locked") }, "notice: \(session.notice)")
        #expect(session.presetModified == false, "played as the gate allows, it is not 'modified'")
        _ = try? session.shot("preset-locked-looper-notice.png")
    }

    @Test("the store, rename and save dialogs leave no signal closure behind when the window closes")
    func dialogsReleaseTheirClosures() throws {
        let session = try PedalboardSession()
        defer { session.stop() }
        try session.click("more")
        try session.keys(to: "Stompbox Store", "Return")            // Enter licence key…
        try session.keys(to: "Enter Licence Key", "Escape")
        try session.keys(to: "Stompbox Store", "Escape")
        #expect(waitUntil(seconds: 5) { session.openDialogs.isEmpty })
        try session.click("presets", "rename")
        try session.keys(to: "Rename Preset", "Escape")
        try session.dragKnob("delay", "delay.time_ms", pixels: 30)
        #expect(waitUntil(seconds: 3) { session.presetModified == true })
        try session.click("presets", "save")
        try session.keys(to: "Save Preset", "Escape")
        #expect(waitUntil(seconds: 5) { session.openDialogs.isEmpty })
        #expect(session.savedPresets() == nil, "nothing was saved: every dialog was cancelled")
        try session.keys(to: "Stompbox", "ctrl+q")
        #expect(waitUntil(seconds: 10) { !session.process.isRunning })
        #expect(session.process.wait() == 0)
        let final = session.state()
        #expect(final?["closed"] as? Bool == true)
        #expect(final?["signal_closures_alive"] as? Int == 0, "closures alive: \(String(describing: final?["signal_closures_alive"]))")
    }
}

import Foundation
import StompboxAudio
import StompboxTestSupport
import StompboxTestTags
import Testing

/// The cabinet in the window: its menu names the bundled cabinets, and "Load impulse response
/// file…" opens a file chooser, as a player would use it.
@Suite("The cabinet in the window", .serialized, .tags(.window))
struct CabinetWindowTests {
    static let presets: String = {
        let slot = { (name: String) in
            #"{"format":"stompbox-preset","version":2,"name":"\#(name)","chain":["overdrive","cab","delay","looper"],"parameters":{"cab.enabled":true}}"#
        }
        return #"{"format":"stompbox-presets","version":1,"selected":0,"slots":[\#(slot("Cab")),\#(slot("Cab 2")),\#(slot("Cab 3"))]}"#
    }()

    @Test("load one's own impulse response with the file chooser; the menu shows it, a saved preset keeps it")
    func loadAFile() throws {
        let folder = TemporaryFolder()
        let ir = folder.file("my-4x12.wav")
        try AudioFile.write(AudioBuffer(samples: Signal.noise(length: 3_000, amplitude: 0.2, seed: 8), sampleRate: 44_100, channels: 1), to: ir)
        let session = try PedalboardSession(presets: Self.presets)
        defer { session.stop() }
        func cab() -> [String: Any] { (session.state()?["layout"] as? [String: Any])?["cab"] as? [String: Any] ?? [:] }
        #expect(waitUntil(seconds: 10) { cab()["load_file"] != nil }, "the cabinet has no Load button: \(cab())")
        #expect(session.parameter("cab.ir") == 0)

        try session.click("cab", "load_file")
        #expect(waitUntil(seconds: 5) { !session.windows(named: "Load an impulse response").isEmpty }, "no file chooser")
        Thread.sleep(forTimeInterval: 0.5)
        try session.keys(to: "Load an impulse response", "ctrl+l")
        Thread.sleep(forTimeInterval: 0.3)
        try session.type(to: "Load an impulse response", ir)
        Thread.sleep(forTimeInterval: 0.3)
        try session.keys(to: "Load an impulse response", "Return")
        // A Return while the location bar offers a completion takes the completion (the chooser
        // stays open with the path typed); a second one loads.
        if !waitUntil(seconds: 3, { session.windows(named: "Load an impulse response").isEmpty }),
           !session.windows(named: "Load an impulse response").isEmpty {
            try session.keys(to: "Load an impulse response", "Return")
        }
        #expect(waitUntil(seconds: 5) { session.parameter("cab.ir") == 3 }, "cab.ir is \(String(describing: session.parameter("cab.ir")))")
        #expect(waitUntil(seconds: 5) { cab()["file"] as? String == ir }, "the pedal shows \(String(describing: cab()["file"]))")
        #expect(waitUntil(seconds: 3) { session.presetModified == true })
        _ = try session.shot("cabinet-file.png")

        try session.click("presets", "save")
        try session.confirmSave()
        #expect(waitUntil(seconds: 5) {
            let first = (session.savedPresets()?["slots"] as? [[String: Any]])?.first
            return ((first?["states"] as? [String: Any])?["cab"] as? [String: Any])?["file"] as? String == ir
        }, "presets.json: \(String(describing: session.savedPresets()))")
    }
}

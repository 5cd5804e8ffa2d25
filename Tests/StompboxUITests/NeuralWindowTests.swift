import Foundation
import StompboxTestSupport
import StompboxTestTags
import Testing

/// The Amp Model pedal in the window, as a player uses it: "Load model…" opens a chooser in the
/// models folder, the pedal shows the model's own name, the models loaded before come back in its
/// menu, and a preset whose model file is gone still loads with the pedal saying so.
@Suite("The Amp Model in the window", .serialized, .tags(.window))
struct NeuralWindowTests {
    static func presets(states: String = "{}") -> String {
        let slot = { (name: String) in
            #"{"format":"stompbox-preset","version":2,"name":"\#(name)","chain":["amp","neural","cab","looper"],"parameters":{"neural.enabled":true},"states":\#(states)}"#
        }
        return #"{"format":"stompbox-presets","version":1,"selected":0,"slots":[\#(slot("Model")),\#(slot("Model 2")),\#(slot("Model 3"))]}"#
    }

    /// Picks `name` in the open chooser titled "Load a model" by typing it into its location bar.
    func choose(_ name: String, in session: PedalboardSession) throws {
        let title = "Load a model"
        #expect(waitUntil(seconds: 5) { !session.windows(named: title).isEmpty }, "no file chooser")
        Thread.sleep(forTimeInterval: 0.5)
        try session.keys(to: title, "ctrl+l")
        Thread.sleep(forTimeInterval: 0.3)
        try session.type(to: title, name)
        Thread.sleep(forTimeInterval: 0.3)
        try session.keys(to: title, "Return")
        // A Return while the location bar offers a completion takes the completion; a second one loads.
        if !waitUntil(seconds: 3, { session.windows(named: title).isEmpty }), !session.windows(named: title).isEmpty {
            try session.keys(to: title, "Return")
        }
    }

    @Test("Load model… starts in the models folder; the pedal shows the model's name; the menu offers the last models")
    func loadAndPickAgain() throws {
        let data = TemporaryFolder()
        let models = data.url.appendingPathComponent("stompbox/models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        let plexi = models.appendingPathComponent("plexi.nam").path
        let bass = models.appendingPathComponent("bass.nam").path
        try Data(TestModels.linear([0.5], metadata: ["name": "Test Plexi"]).utf8).write(to: URL(fileURLWithPath: plexi))
        try Data(TestModels.linear([0.25], metadata: ["name": "Bass Amp"]).utf8).write(to: URL(fileURLWithPath: bass))
        let session = try PedalboardSession(environment: ["XDG_DATA_HOME": data.path], presets: Self.presets())
        defer { session.stop() }
        func neural() -> [String: Any] { (session.state()?["layout"] as? [String: Any])?["neural"] as? [String: Any] ?? [:] }
        #expect(waitUntil(seconds: 10) { neural()["load_file"] != nil }, "the Amp Model has no Load button: \(neural())")
        #expect(session.parameter("neural.file") == 0)

        // Only the name: the chooser opened in the models folder, or this finds nothing.
        try session.click("neural", "load_file")
        try choose("plexi.nam", in: session)
        #expect(waitUntil(seconds: 5) { session.parameter("neural.file") == 1 }, "neural.file is \(String(describing: session.parameter("neural.file")))")
        #expect(waitUntil(seconds: 5) { neural()["file"] as? String == plexi }, "the pedal shows \(String(describing: neural()["file"]))")
        #expect(neural()["file_label"] as? String == "Test Plexi")
        #expect(neural()["file_problem"] is NSNull)

        try session.click("neural", "load_file")
        try choose("bass.nam", in: session)
        #expect(waitUntil(seconds: 5) { neural()["file_label"] as? String == "Bass Amp" }, "the pedal shows \(neural())")
        _ = try session.shot("neural-model.png")

        // The menu: No model, Bass Amp (playing), then the models loaded before: Test Plexi.
        try session.openingPopup { try session.click("neural", "controls", "neural.file") }
        for _ in 0..<3 { try session.xdotool("key", "Down") }
        try session.xdotool("key", "Return")
        #expect(waitUntil(seconds: 5) { neural()["file_label"] as? String == "Test Plexi" }, "the pedal shows \(neural())")
        #expect(neural()["file"] as? String == plexi)
        let recent = try JSONDecoder().decode([String].self, from: Data(contentsOf: session.home.appendingPathComponent("config/stompbox/recent-models.json")))
        #expect(recent == [plexi, bass])
    }

    @Test("a preset whose model file is gone still loads: the pedal names the model missing and passes the signal through")
    func missingModel() throws {
        let gone = "/nonexistent/stompbox/gone-amp.nam"
        let session = try PedalboardSession(presets: Self.presets(states: #"{"neural":{"file":"\#(gone)"}}"#))
        defer { session.stop() }
        func neural() -> [String: Any] { (session.state()?["layout"] as? [String: Any])?["neural"] as? [String: Any] ?? [:] }
        #expect(waitUntil(seconds: 10) { neural()["file_label"] as? String == "gone-amp (missing)" }, "the pedal shows \(neural())")
        #expect((neural()["file_problem"] as? String)?.contains("passes the signal through") == true, "\(neural())")
        #expect(session.parameter("neural.enabled") == 1)
        // The preset loaded whole: selected, its board in its order, nothing changed from it.
        let presets = session.state()?["presets"] as? [String: Any] ?? [:]
        #expect(presets["selected"] as? Int == 0 && (presets["names"] as? [String])?.first == "Model", "\(presets)")
        #expect(presets["modified"] as? Bool == false, "\(presets)")
        #expect((session.state()?["layout"] as? [String: Any])?["board"] as? [String] == ["amp", "neural", "cab", "looper"],
                "\(String(describing: (session.state()?["layout"] as? [String: Any])?["board"]))")
        _ = try session.shot("neural-missing.png")
    }
}

import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

/// The model file's envelope: versions, metadata, and one message naming the file for every
/// kind of bad file; the Linear architecture against a direct FIR.
@Suite struct NeuralModelFileTests {
    func nam(version: String = "0.5.4", architecture: String = "Linear", config: String = #"{"receptive_field": 3, "bias": true}"#,
             weights: String = "[0.5, -0.25, 0.125, 0.01]", extra: String = "") -> Data {
        Data(#"{"version": "\#(version)", "architecture": "\#(architecture)", "config": \#(config), "weights": \#(weights)\#(extra)}"#.utf8)
    }

    func problem(_ data: Data) -> String? {
        do { _ = try NeuralModels.parse(data, file: "amp.nam"); return nil } catch let error as NeuralModelError {
            #expect(error.file == "amp.nam")
            return error.problem
        } catch { return "\(error)" }
    }

    @Test func linearIsAnFIRWithItsNewestTapFirst() throws {
        let model = try NeuralModels.parse(nam(), file: "amp.nam")
        #expect(model.info.architecture == "Linear")
        #expect(model.info.sampleRate == nil && model.info.rate == 48_000)
        let network = model.network
        network.prepare(maximumBlockSize: 4)
        network.reset()
        let x: [Float] = [1, 0, 0, 0, 2, -1, 0.5, 0, 0, 0]
        // In blocks of 3 and 4 and 3: the history crosses block edges.
        let y = TestModels.play(network, x, blocks: [3, 4, 3])
        let taps: [Float] = [0.5, -0.25, 0.125]
        for n in x.indices {
            var expected: Float = 0.01
            for k in taps.indices where n - k >= 0 { expected += taps[k] * x[n - k] }
            #expect(abs(y[n] - expected) < 1e-6, "sample \(n)")
        }
    }

    @Test func metadataAndRateAreRead() throws {
        let model = try NeuralModels.parse(nam(extra: #", "sample_rate": 44100, "metadata": {"name": "Plexi", "gear_make": "Marshall", "gear_type": "amp", "tone_type": "crunch", "loudness": -21.5, "input_level_dbu": 12.2}"#), file: "plexi.nam")
        #expect(model.info.sampleRate == 44_100)
        #expect(model.info.name == "Plexi" && model.info.gearMake == "Marshall" && model.info.toneType == "crunch")
        #expect(model.info.loudness == -21.5 && model.info.inputLevelDBu == 12.2)
    }

    @Test func badFilesSayWhatIsWrong() {
        #expect(problem(Data("RIFF....WAVEfmt ".utf8))?.contains("not a model file") == true)
        #expect(problem(Data(#"{"hello": 1}"#.utf8))?.contains("not a model file") == true)
        #expect(problem(nam(weights: "[0.5, -0.25]"))?.contains("fewer than its architecture needs") == true)
        #expect(problem(nam(weights: "[0.5, -0.25, 0.1, 0.1, 0.1]"))?.contains("needs 4") == true)
        #expect(problem(nam(architecture: "Transformer"))?.contains("\"Transformer\"") == true)
        #expect(problem(nam(version: "0.8.0"))?.contains("newer") == true)
        #expect(problem(nam(version: "1.0.0"))?.contains("newer") == true)
        #expect(problem(nam(version: "0.4.0"))?.contains("older") == true)
        #expect(problem(nam(version: "banana"))?.contains("version") == true)
        #expect(problem(nam(weights: #"[0.5, "x", 0.1, 0.1]"#))?.contains("not a finite number") == true)
        #expect(problem(nam(version: "0.7.0")) == nil)
    }

    @Test func aMissingFileIsNamed() {
        #expect(throws: NeuralModelError(file: "gone.nam", problem: "no such file")) {
            try NeuralModels.load(file: "/nonexistent/gone.nam")
        }
    }
}

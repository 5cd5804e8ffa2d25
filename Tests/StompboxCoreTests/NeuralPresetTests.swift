import Foundation
import Testing
import StompboxDSP
import StompboxTestSupport
@testable import StompboxCore

/// The Amp Model's model file in presets (and so in sessions, which keep their board as a
/// preset): the path goes into `states` and comes back; a preset whose model has gone still
/// loads, the pedal bypassed and said.
@Suite struct NeuralPresetTests {
    let folder = StompboxTestSupport.TemporaryFolder("stompbox-neural-preset")

    @Test func theModelFileIsSavedAndPlaysAgain() throws {
        let model = TestModels.write("half.nam", in: folder, taps: [0.5])
        let chain = Chain(controls: EngineControls(), board: [.neural])
        chain.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        chain.parameters.set(.neuralEnabled, 1)
        chain.parameters.set(.neuralNormalize, 0)
        try #require(chain.effect(.neural) as? NeuralAmp).load(file: model)
        let saved = Preset(name: "Half", from: chain.parameters, board: chain.board, states: chain.pedalStates)
        let text = String(decoding: saved.jsonData(), as: UTF8.self)
        #expect(saved[.neuralFile] == 1 && text.contains("half.nam"), "\(text)")

        let back = try Preset(jsonData: Data(text.utf8))
        let other = Chain(controls: EngineControls(), board: back.board)
        other.parameters.restore(back.values)
        other.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        #expect(try other.restore(states: back.states).isEmpty)
        let amp = try #require(other.effect(.neural) as? NeuralAmp)
        #expect(amp.file == model && amp.status.missing == nil)
        let y = Render.through(other, [Float](repeating: 0.2, count: 9_600))
        #expect(abs(y.last! - 0.1) < 1e-5, "the model plays: \(y.last!)")
    }

    @Test func aMissingModelLeavesThePresetLoadingAndThePedalBypassed() throws {
        let gone = folder.file("gone.nam")
        let text = #"{"format":"stompbox-preset","version":2,"name":"Gone","chain":["amp","neural"],"parameters":{"neural.enabled":true,"neural.file":"file"},"states":{"neural":{"file":"\#(gone)"}}}"#
        let preset = try Preset(jsonData: Data(text.utf8))
        let chain = Chain(controls: EngineControls(), board: preset.board)
        chain.parameters.restore(preset.values)
        chain.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        let problems = try chain.restore(states: preset.states)
        #expect(problems == ["the Amp Model cannot load gone.nam (no such file); it is bypassed and passes its input through"])
        let x = Signal.sine(frequency: 220, seconds: 0.2, amplitude: 0.3)
        let y = Render.through(chain, x)
        #expect(zip(y, x).map { abs($0 - $1) }.max()! < 1e-6, "the pedal passes its input through")
        // Saved again, the preset still names the file (it may come back).
        let again = Preset(name: "Gone", from: chain.parameters, board: chain.board, states: chain.pedalStates)
        #expect(again.states["neural"].flatMap(StompboxDSP.FileState.file(in:)) == gone)
    }
}

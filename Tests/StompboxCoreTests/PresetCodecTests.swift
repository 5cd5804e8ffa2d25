import Foundation
import Testing
import StompboxDSP
@testable import StompboxCore

@Suite struct PresetCodecTests {
    func decode(_ text: String) throws(PresetError) -> Preset {
        try Preset(jsonData: Data(text.utf8))
    }

    @Test func roundTripsEveryParameter() throws {
        var p = Preset(name: "Crunch")
        p[.delayEnabled] = 1
        p[.delayTime] = 420
        p[.tremoloShape] = 2
        p[.flangerFeedback] = -0.5
        p[.eqBand3] = -4.5
        let back = try Preset(jsonData: p.jsonData())
        #expect(back == p)
        let text = String(decoding: p.jsonData(), as: UTF8.self)
        #expect(text.contains("\"delay.enabled\" : true"))
        #expect(text.contains("\"tremolo.shape\" : \"square\""))
    }

    @Test func version2StoresTheBoardAndRoundTrips() throws {
        var p = Preset(name: "Reordered")
        try p.setBoard([.delay, .overdrive, .looper])
        p[.delayEnabled] = 1
        let text = String(decoding: p.jsonData(), as: UTF8.self)
        #expect(text.contains("\"version\" : 2"))
        #expect(text.contains("\"chain\""))
        let back = try Preset(jsonData: p.jsonData())
        #expect(back == p)
        #expect(back.board == [.delay, .overdrive, .looper])
        #expect(try decode(#"{"format":"stompbox-preset","version":2,"name":"x","chain":[]}"#).board == [])
    }

    /// Sync menus take note values as musicians write them, as well as their words; a wrong
    /// one names what is accepted.
    @Test func syncValuesAsMusiciansWriteThem() throws {
        for (text, index) in [("1/4", 1), ("1/8", 2), ("1/8.", 3), ("1/16", 4), ("1/8t", 5), ("free", 0), ("dotted-eighth", 3)] {
            let p = try decode(#"{"format":"stompbox-preset","version":1,"name":"x","parameters":{"delay.sync":"\#(text)","tremolo.sync":"\#(text)"}}"#)
            #expect(p[.delaySync] == Float(index) && p[.tremoloSync] == Float(index), "\(text)")
        }
        let message: String
        do { _ = try decode(#"{"format":"stompbox-preset","version":1,"name":"x","parameters":{"delay.sync":"1/5"}}"#); message = "no error" } catch { message = error.description }
        #expect(message.contains("1/5") && message.contains("1/8t"), "\(message)")
    }

    @Test func version1LoadsWithTheClassicOrder() throws {
        let p = try decode(#"{"format":"stompbox-preset","version":1,"name":"x","parameters":{"delay.enabled":true}}"#)
        #expect(p.board == PedalKind.classic)
        #expect(p.board.map(\.id) == ["overdrive", "eq", "flanger", "tremolo", "delay", "reverb", "looper"])
        #expect(p[.delayEnabled] == 1)
    }

    @Test func aBadChainNamesTheProblem() {
        func message(_ chain: String) -> String {
            do { _ = try decode(#"{"format":"stompbox-preset","version":2,"name":"x","chain":\#(chain)}"#); return "no error" } catch { return error.description }
        }
        #expect(message(#"["overdrive","fuzz"]"#).contains("unknown pedal 'fuzz'"))
        #expect(message(#"["delay","delay"]"#).contains("'delay' is on the board twice"))
        #expect(message(#""delay""#).contains("chain"))
        #expect(message(#"[1]"#).contains("chain"))
    }

    @Test func aPresetMatchesOnlyItsOwnBoard() throws {
        let store = ParameterStore()
        var p = Preset(name: "x", from: store, board: [.overdrive, .delay])
        #expect(p.matches(store, board: [.overdrive, .delay]))
        #expect(!p.matches(store, board: [.delay, .overdrive]))
        try p.setBoard([.delay, .overdrive])
        #expect(p.matches(store, board: [.delay, .overdrive]))
        #expect(throws: PresetError.pedal(.duplicate("eq"))) { try p.setBoard([.eq, .eq]) }
    }

    @Test func missingIdsTakeDefaults() throws {
        let p = try decode(#"{"format":"stompbox-preset","version":1,"name":"x","parameters":{"delay.time_ms":500}}"#)
        #expect(p[.delayTime] == 500)
        #expect(p[.reverbMix] == Parameter.reverbMix.spec.defaultValue)
    }

    @Test func errorsNameTheProblem() {
        func message(_ text: String) -> String {
            do { _ = try decode(text); return "no error" } catch { return error.description }
        }
        #expect(message(#"{"format":"stompbox-preset","version":1,"name":"x","parameters":{"delay.speed":1}}"#).contains("delay.speed"))
        #expect(message(#"{"format":"stompbox-preset","version":1,"name":"x","parameters":{"delay.time_ms":5000}}"#).contains("out of range"))
        #expect(message(#"{"format":"stompbox-preset","version":1,"name":"x","parameters":{"delay.enabled":1}}"#).contains("delay.enabled"))
        #expect(message(#"{"format":"stompbox-preset","version":1,"name":"x","parameters":{"delay.time_ms":"fast"}}"#).contains("delay.time_ms"))
        #expect(message(#"{"format":"stompbox-preset","version":4,"name":"x"}"#).contains("newer"))
        #expect(message(#"{"format":"something-else","version":1,"name":"x"}"#).contains("something-else"))
        #expect(message(#"{"format":"stompbox-preset","version":1,"#).contains("not valid JSON"))
        #expect(message("").contains("not valid JSON"))
    }

    /// A built-in pedal's own state (the cabinet's file) goes into `states` and comes back; a
    /// preset without one writes no `states`; bad ones name themselves.
    @Test func builtInPedalStatesRoundTrip() throws {
        let store = ParameterStore()
        store.set(.cabImpulse, Float(Cabinet.bundled.count))
        let state = FileState.json(file: "/home/player/irs/my 4x12.wav")
        let preset = Preset(name: "Mine", from: store, board: [.overdrive, .cab], states: ["cab": state, "fil": "{}"])
        #expect(preset.states == ["cab": state], "only built-in pedals' states are kept here")
        let text = String(decoding: preset.jsonData(), as: UTF8.self)
        #expect(text.contains(#""states""#) && text.contains("my 4x12.wav"))
        let back = try Preset(jsonData: preset.jsonData())
        #expect(back.states.keys.sorted() == ["cab"] && back.states["cab"].flatMap(FileState.file(in:)) == "/home/player/irs/my 4x12.wav")
        #expect(back.matches(store, board: [.overdrive, .cab], states: ["cab": state]))
        #expect(!back.matches(store, board: [.overdrive, .cab], states: [:]), "another file (or none) is a change")
        let plain = Preset(name: "Plain", from: store, board: [.cab])
        #expect(!String(decoding: plain.jsonData(), as: UTF8.self).contains("states"))

        let unknown = #"{"format":"stompbox-preset","version":2,"name":"X","states":{"fuzz":{"file":"/x.wav"}}}"#
        #expect(throws: PresetError.pedal(.unknownPedal("fuzz"))) { try Preset(jsonData: Data(unknown.utf8)) }
        let notObject = #"{"format":"stompbox-preset","version":2,"name":"X","states":{"cab":"/x.wav"}}"#
        #expect(throws: PresetError.wrongType(field: "states.cab", expected: "an object")) { try Preset(jsonData: Data(notObject.utf8)) }
    }
}

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
        #expect(message(#"{"format":"stompbox-preset","version":2,"name":"x"}"#).contains("newer"))
        #expect(message(#"{"format":"something-else","version":1,"name":"x"}"#).contains("something-else"))
        #expect(message(#"{"format":"stompbox-preset","version":1,"#).contains("not valid JSON"))
        #expect(message("").contains("not valid JSON"))
    }
}

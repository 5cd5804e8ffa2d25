import Foundation
import Testing
import StompboxDSP
@testable import StompboxCore

@Suite struct PresetBankTests {
    static func sampleBank() -> PresetBank {
        var a = Preset(name: "Alpha")
        a[.delayEnabled] = 1
        a[.delayTime] = 412.5
        a[.flangerFeedback] = -0.35
        var b = Preset(name: "Bravo")
        b[.tremoloShape] = 2
        b[.eqBand6] = -11.25
        var c = Preset(name: "Charlie ✓")
        c[.looperEnabled] = 1
        c[.inputGain] = -24
        return PresetBank(slots: [a, b, c], selected: 2)
    }

    func bankError(_ text: String) -> PresetBankError? {
        do { _ = try PresetBank(jsonData: Data(text.utf8)); return nil } catch { return error }
    }

    @Test func roundTrips() throws {
        let bank = Self.sampleBank()
        let data = bank.jsonData()
        let back = try PresetBank(jsonData: data)
        #expect(back == bank)
        #expect(back.jsonData() == data, "writing what was read gives the same bytes")
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""format" : "stompbox-presets""#))
        #expect(text.contains(#""selected" : 2"#))
        #expect(text.contains(#""delay.time_ms" : 412.5"#))
    }

    @Test func randomPresetsRoundTripExactly() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            var slots: [Preset] = []
            for s in 0..<3 {
                var p = Preset(name: "Random \(s)")
                for parameter in Parameter.allCases {
                    let spec = parameter.spec
                    p[parameter] = spec.clamp(Float.random(in: spec.minimum...spec.maximum, using: &generator))
                }
                slots.append(p)
            }
            let bank = PresetBank(slots: slots, selected: Int.random(in: 0..<3, using: &generator))
            #expect(try PresetBank(jsonData: bank.jsonData()) == bank)
        }
    }

    @Test func factoryPresetsAreThreeGuitarSounds() throws {
        #expect(factoryBank.slots.map(\.name) == ["Clean Room", "Crunch Echo", "Lead Swirl"])
        #expect(factoryBank.selected == 0)
        for p in factoryBank.slots {
            #expect(p[.looperEnabled] == 0, "\(p.name): the Looper is off")
            for parameter in Parameter.allCases { #expect(parameter.spec.contains(p[parameter])) }
        }
        let (clean, crunch, lead) = (factoryBank[0], factoryBank[1], factoryBank[2])
        #expect(clean[.reverbEnabled] == 1 && clean[.overdriveEnabled] == 0)
        #expect(crunch[.overdriveEnabled] == 1 && crunch[.delayEnabled] == 1)
        #expect(abs(crunch[.delayTime] - 380) < 1)
        #expect(lead[.overdriveEnabled] == 1 && lead[.flangerEnabled] == 1 && lead[.delayEnabled] == 1)
        #expect(lead[.overdriveDrive] > crunch[.overdriveDrive])
    }

    @Test func errorsNameTheProblem() throws {
        let good = String(decoding: Self.sampleBank().jsonData(), as: UTF8.self)
        #expect(bankError(#"{"format":"stompbox-preset","version":1}"#)?.description.contains("'stompbox-preset'") == true)
        #expect(bankError(#"{"format":"stompbox-presets","version":2,"selected":0,"slots":[]}"#) == .newerVersion(2))
        #expect(bankError(#"{"format":"stompbox-presets","version":1e300,"selected":0,"slots":[]}"#)?.description.contains("newer") == true)
        #expect(bankError(#"[1,2]"#) == .notAnObject)
        #expect(bankError("") == .notJSON(JSONSyntaxError(problem: "the file is empty", offset: 0, line: 1, column: 1)))
        #expect(bankError("")?.description == "was empty")

        let outOfRange = good.replacingOccurrences(of: #""delay.time_ms" : 412.5"#, with: #""delay.time_ms" : 2412.5"#)
        let e = bankError(outOfRange)
        #expect(e?.description.contains("delay.time_ms") == true)
        #expect(e?.description.contains("slot 1") == true)
        #expect(e?.description.contains("out of range") == true)

        let json = try JSONValue.parse(Data(good.utf8))
        guard case .object(var top) = json, case .array(let slots)? = top["slots"] else { Issue.record("bad sample"); return }
        for count in [0, 1, 2, 4, 7] {
            top["slots"] = .array(Array(repeating: slots[0], count: count))
            #expect(bankError(String(decoding: JSONValue.object(top).serialized(), as: UTF8.self)) == .slotCount(count))
        }
        top["slots"] = .array(slots)
        for bad in [-1.0, 3, 0.5] {
            top["selected"] = .number(bad)
            #expect(bankError(String(decoding: JSONValue.object(top).serialized(), as: UTF8.self)) == .selectedOutOfRange(bad))
        }
    }
}

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

    /// The shipped file as written, not as read: every slot says version 2 and carries its board.
    @Test func factoryPresetsFileIsVersion2WithTheDefaultBoard() throws {
        let url = repositoryData.data(FactoryPresets.fileName)
        let json = try JSONValue.parse(Data(contentsOf: url))
        guard case .object(let top) = json, case .array(let slots)? = top["slots"] else {
            Issue.record("\(url.path) holds no slots")
            return
        }
        #expect(top["format"] == .string(PresetBank.format) && top["version"] == .number(1), "the bank wrapper stays version 1")
        #expect(slots.count == 3)
        for (i, slot) in slots.enumerated() {
            guard case .object(let fields) = slot else { Issue.record("slot \(i + 1) is not an object"); continue }
            #expect(fields["version"] == .number(2), "slot \(i + 1): \(String(describing: fields["version"]))")
            #expect(fields["chain"] == .array(PedalKind.builtIn.map { .string($0.id) }),
                    "slot \(i + 1) lists the default board order: \(String(describing: fields["chain"]))")
            guard case .object(let parameters)? = fields["parameters"] else { Issue.record("slot \(i + 1) has no parameters"); continue }
            for id in ["gate.enabled", "amp.enabled", "cab.enabled"] {
                #expect(parameters[id] == .bool(true), "slot \(i + 1): \(id)")
            }
            #expect(parameters["looper.enabled"] == .bool(false), "slot \(i + 1): the Looper is on the board but off")
        }
    }

    @Test func factoryPresetsAreACleanACrunchAndALeadThroughTheRig() throws {
        #expect(factoryBank.slots.map(\.name) == ["Clean Combo", "Crunch 2x12", "Lead 4x12"])
        #expect(factoryBank.selected == 0, "a new user starts on preset 1")
        for p in factoryBank.slots {
            #expect(p.board == PedalKind.builtIn, "\(p.name): the default board, in its order")
            for kind in [PedalKind.gate, .amp, .cab, .delay, .reverb] {
                #expect(p[kind.enabledParameter] == 1, "\(p.name): the \(kind.name) is on")
            }
            #expect(p[.looperEnabled] == 0, "\(p.name): the Looper is off")
            #expect(p[.flangerEnabled] == 0 && p[.tremoloEnabled] == 0, "\(p.name): no modulation")
            #expect(p.states.isEmpty, "\(p.name): a bundled cabinet, no file of the user's")
            for parameter in Parameter.allCases { #expect(parameter.spec.contains(p[parameter])) }
        }
        let (clean, crunch, lead) = (factoryBank[0], factoryBank[1], factoryBank[2])
        let model = Parameter.ampModel, ir = Parameter.cabImpulse
        #expect(clean[model] == 0 && clean[.overdriveEnabled] == 0, "the clean is the amp's clean model, no pedal drive")
        #expect(crunch[model] == 1 && crunch[.overdriveEnabled] == 1, "the crunch: an overdrive into the crunch model")
        #expect(lead[model] == 2 && lead[.overdriveEnabled] == 1, "the lead: an overdrive boost into the lead model")
        #expect([clean[ir], crunch[ir], lead[ir]] == [0, 1, 2], "open 1x12, closed 2x12, closed 4x12")
        #expect(clean[.delayTime] > crunch[.delayTime] && lead[.delayTime] > crunch[.delayTime], "the crunch's delay is a short slap")
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

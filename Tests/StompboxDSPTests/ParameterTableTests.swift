import Testing
@testable import StompboxDSP

@Suite struct ParameterTableTests {
    @Test(arguments: Parameter.allCases)
    func defaultLiesInsideTheRange(_ p: Parameter) {
        let s = p.spec
        #expect(s.minimum < s.maximum, "\(s.id)")
        #expect(s.contains(s.defaultValue), "\(s.id)")
    }

    @Test func idsAreUniqueAndDotted() {
        let ids = Parameter.table.map(\.id)
        #expect(Set(ids).count == ids.count)
        for id in ids { #expect(id.split(separator: ".").count == 2, "\(id)") }
    }

    @Test("every prefix of the table's ids (master, tempo, metronome, each built-in pedal) is a reserved pedal id, so no plugin pedal's parameters can collide with the table's")
    func everyTablePrefixIsReserved() {
        for spec in Parameter.table {
            let prefix = String(spec.id.prefix { $0 != "." })
            #expect(PedalKind.isReserved(prefix), "\(spec.id): '\(prefix)' is missing from PedalKind.reservedIDs")
        }
        for kind in PedalKind.builtIn { #expect(PedalKind.isReserved(kind.id), "\(kind.id)") }
        #expect(PedalKind.isReserved("tuner"))
        #expect(!PedalKind.isReserved("fil"))
    }

    @Test func everyEffectHasAnEnabledSwitchDefaultingOff() {
        for kind in PedalKind.builtIn {
            let s = kind.enabledParameter.spec
            #expect(s.id == "\(kind.id).enabled")
            #expect(s.isToggle && s.defaultValue == 0)
        }
    }

    @Test func tableMatchesTheSpecification() throws {
        func check(_ id: String, _ lo: Float, _ hi: Float, _ def: Float) throws {
            let s = try Parameter.named(id).spec
            #expect(s.minimum == lo && s.maximum == hi && s.defaultValue == def, "\(id)")
        }
        try check("master.input_db", -24, 24, 0)
        try check("master.output_db", -24, 12, 0)
        try check("overdrive.drive", 0, 1, 0.5)
        try check("overdrive.tone", 0, 1, 0.5)
        try check("overdrive.level_db", -24, 6, -6)
        for n in 1...6 { try check("eq.band\(n)_db", -12, 12, 0) }
        try check("flanger.rate_hz", 0.05, 5, 0.3)
        try check("flanger.depth", 0, 1, 0.7)
        try check("flanger.delay_ms", 0.5, 10, 2)
        try check("flanger.feedback", -0.95, 0.95, 0.5)
        try check("flanger.mix", 0, 1, 0.5)
        try check("tremolo.rate_hz", 0.5, 15, 5)
        try check("tremolo.depth", 0, 1, 1)
        try check("delay.time_ms", 20, 2000, 350)
        try check("delay.feedback", 0, 0.95, 0.4)
        try check("delay.mix", 0, 1, 0.35)
        try check("reverb.size", 0, 1, 0.5)
        try check("reverb.damping", 0, 1, 0.5)
        try check("reverb.mix", 0, 1, 0.3)
        try check("looper.level", 0, 1, 1)
        #expect(Parameter.tremoloShape.spec.choices == ["sine", "triangle", "square"])
        #expect(Parameter.tremoloShape.spec.format(Parameter.tremoloShape.spec.defaultValue) == "triangle")
    }

    @Test func clampsAndParses() throws {
        let t = Parameter.delayTime.spec
        #expect(t.clamp(5000) == 2000)
        #expect(t.clamp(-1) == 20)
        #expect(t.clamp(.nan) == 350)
        #expect(try t.parse("420") == 420)
        #expect(throws: ParameterError.self) { try t.parse("4000") }
        #expect(throws: ParameterError.self) { try t.parse("fast") }
        #expect(try Parameter.delayEnabled.spec.parse("on") == 1)
        #expect(try Parameter.tremoloShape.spec.parse("square") == 2)
        #expect(t.format(420) == "420 ms")
        #expect(Parameter.overdriveLevel.spec.format(-6) == "-6.0 dB")
        #expect(Parameter.eqBand6.spec.name == "EQ 10 kHz")
        #expect(Parameter.eqBand3.spec.name == "EQ 630 Hz")
        #expect(Parameter.eqBand4.spec.name == "EQ 1.6 kHz")
    }

    @Test(arguments: Parameter.allCases.filter { !$0.spec.isDiscrete })
    func normalisedTravelRoundTrips(_ p: Parameter) {
        let s = p.spec
        for t in stride(from: Float(0), through: 1, by: 0.125) {
            let v = s.value(normalized: t)
            #expect(abs(s.normalized(v) - t) < 1e-4, "\(s.id) at \(t)")
        }
    }
}

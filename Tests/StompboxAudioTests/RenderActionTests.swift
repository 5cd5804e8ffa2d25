import StompboxDSP
import Testing
@testable import StompboxAudio

@Suite struct RenderActionTests {
    @Test func assignmentsReadNumbersSwitchesAndChoices() throws {
        #expect(try ParameterAssignment(parsing: "delay.time_ms=500") == ParameterAssignment(.delayTime, 500))
        #expect(try ParameterAssignment(parsing: "reverb.enabled=on") == ParameterAssignment(.reverbEnabled, 1))
        #expect(try ParameterAssignment(parsing: "reverb.enabled=off") == ParameterAssignment(.reverbEnabled, 0))
        #expect(try ParameterAssignment(parsing: "tremolo.shape=square") == ParameterAssignment(.tremoloShape, 2))
        #expect(try ParameterAssignment(parsing: "master.output_db=-6") == ParameterAssignment(.outputGain, -6))
    }

    @Test func assignmentErrorsNameTheProblem() {
        #expect(throws: RenderActionError.notAnAssignment("delay.time_ms")) {
            try ParameterAssignment(parsing: "delay.time_ms")
        }
        #expect(throws: RenderActionError.parameter(.unknownID("delay.speed"))) {
            try ParameterAssignment(parsing: "delay.speed=3")
        }
        #expect(throws: RenderActionError.parameter(.outOfRange(id: "delay.time_ms", value: 5000, minimum: 20, maximum: 2000))) {
            try ParameterAssignment(parsing: "delay.time_ms=5000")
        }
        #expect(throws: RenderActionError.parameter(.badValue(id: "delay.time_ms", value: "", expected: "a number"))) {
            try ParameterAssignment(parsing: "delay.time_ms=")
        }
        #expect(throws: RenderActionError.parameter(.badValue(id: "reverb.enabled", value: "maybe", expected: "on or off"))) {
            try ParameterAssignment(parsing: "reverb.enabled=maybe")
        }
    }

    @Test func actionsAtTimes() throws {
        #expect(try RenderAction(parsing: "2.5:looper.tap") == RenderAction(time: 2.5, .looper(.tap)))
        #expect(try RenderAction(parsing: "0:looper.hold") == RenderAction(time: 0, .looper(.hold)))
        #expect(try RenderAction(parsing: "7:looper.undo") == RenderAction(time: 7, .looper(.undo)))
        #expect(try RenderAction(parsing: "4:delay.time_ms=500") == RenderAction(time: 4, .set(ParameterAssignment(.delayTime, 500))))
        #expect(try RenderAction(parsing: "6:reverb.enabled=on") == RenderAction(time: 6, .set(ParameterAssignment(.reverbEnabled, 1))))
        // looper.level is a parameter, looper.enabled too: both are assignments.
        #expect(try RenderAction(parsing: "1:looper.level=0.5") == RenderAction(time: 1, .set(ParameterAssignment(.looperLevel, 0.5))))
    }

    @Test(arguments: [
        ("2.5looper.tap", RenderActionError.notAnAction("2.5looper.tap")),
        ("soon:looper.tap", .badTime("soon:looper.tap")),
        ("inf:looper.tap", .badTime("inf:looper.tap")),
        ("-1:looper.tap", .negativeTime("-1:looper.tap")),
        ("1:looper.jump", .unknownAction("looper.jump")),
        ("1:delay", .unknownAction("delay")),
        ("1:delay.time=3", .parameter(.unknownID("delay.time"))),
    ])
    func malformedActionsAreRefused(text: String, expected: RenderActionError) {
        #expect(throws: expected) { try RenderAction(parsing: text) }
    }

    @Test func everyErrorIsOneLine() {
        let errors: [RenderActionError] = [
            .notAnAssignment("x"), .notAnAction("x"), .badTime("x"), .negativeTime("x"),
            .unknownAction("x"), .parameter(.unknownID("x")),
        ]
        for e in errors { #expect(!e.description.contains("\n") && !e.description.isEmpty) }
    }

    @Test func sampleIndexRoundsToTheNearestSample() {
        #expect(RenderAction(time: 2.5, .looper(.tap)).sampleIndex(sampleRate: 48_000) == 120_000)
        #expect(RenderAction(time: 1.0 / 3, .looper(.tap)).sampleIndex(sampleRate: 44_100) == 14_700)
    }
}

@Suite struct RenderPlanTests {
    @Test func looperGesturesWhileTheLooperIsOffAreFound() {
        let tapEarly = RenderAction(time: 1, .looper(.tap))
        let on = RenderAction(time: 2, .set(ParameterAssignment(.looperEnabled, 1)))
        let tapLate = RenderAction(time: 3, .looper(.tap))
        let off = RenderAction(time: 4, .set(ParameterAssignment(.looperEnabled, 0)))
        let hold = RenderAction(time: 5, .looper(.hold))
        // Given out of order: the plan goes by time.
        let plan = RenderPlan(actions: [hold, tapLate, off, on, tapEarly])
        #expect(plan.looperActionsWhileOff == [tapEarly, hold])

        var onFromTheStart = RenderPlan(actions: [tapEarly, tapLate])
        onFromTheStart[.looperEnabled] = 1
        #expect(onFromTheStart.looperActionsWhileOff.isEmpty)
    }

    @Test func parameterWritesListStartingValuesThenAssignmentsInTimeOrder() {
        var plan = RenderPlan(actions: [
            RenderAction(time: 3, .set(ParameterAssignment(.delayTime, 500))),
            RenderAction(time: 1, .looper(.tap)),
            RenderAction(time: 2, .set(ParameterAssignment(.looperEnabled, 1))),
        ])
        plan[.reverbEnabled] = 1
        let writes = plan.parameterWrites
        #expect(writes.count == Parameter.allCases.count + 2)
        #expect(writes[Parameter.reverbEnabled.rawValue] == ParameterAssignment(.reverbEnabled, 1))
        #expect(Array(writes.suffix(2)) == [ParameterAssignment(.looperEnabled, 1), ParameterAssignment(.delayTime, 500)])
    }
}

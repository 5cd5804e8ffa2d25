import Foundation
import StompboxDSP
import StompboxTestSupport
import Testing
@testable import StompboxAudio

/// The render command's scripted Looper with tracks: `--at T:looper.track=N` selects, the
/// gestures act on the selected track, and the tracks can be read back from the chain after.
@Suite struct LoopTrackRenderTests {
    @Test func trackGesturesParse() throws {
        #expect(try RenderAction(parsing: "2:looper.record_next") == RenderAction(time: 2, .looper(.recordNext)))
        #expect(try RenderAction(parsing: "3:looper.redo") == RenderAction(time: 3, .looper(.redo)))
        #expect(try RenderAction(parsing: "3:looper.clear") == RenderAction(time: 3, .looper(.clear)))
        #expect(try RenderAction(parsing: "1:looper.track=2") == RenderAction(time: 1, .set(ParameterAssignment(.looperTrack, 1))))
    }

    @Test func aScriptedSecondTrackIsAWholeCycleInStepWithTheFirst() throws {
        let folder = TemporaryFolder()
        try OfflineRendererTests.writeInput(folder.file("in.wav"), [Signal.noise(length: 2 * 48_000, amplitude: 0.2, seed: 8)])
        let plan = RenderPlan(actions: try ["0:looper.enabled=on", "0.1:looper.tap", "0.6:looper.tap", "0.65:looper.track=2",
                                            "0.7:looper.tap", "1.3:looper.tap"].map { try RenderAction(parsing: $0) })
        let chain = Chain(board: plan.board)
        try OfflineRenderer(plan: plan).render(input: folder.file("in.wav"), output: folder.file("out.wav"), chain: chain)
        let looper = try #require(chain.effect(.looper) as? Looper)
        let cycle = looper.cycleLength
        #expect(abs(cycle - 24_000) < 1_100, "the first loop: about 0.5 s (taps fall on block starts), \(cycle)")
        let first = try #require(looper.trackAudio(0)), second = try #require(looper.trackAudio(1))
        #expect(second.length == cycle, "tapped 0.6 s into its recording, closed on the next boundary")
        #expect(second.start - first.start == 2 * cycle, "armed at 0.7 s, started on the boundary after it")
    }
}

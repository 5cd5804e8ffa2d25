import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP
import StompboxSession
import StompboxTestSupport
import Testing

@Suite struct SessionReampTests {
    /// A plan with the tremolo on, alone on the board.
    static func tremolo() -> OfflineRenderer {
        var plan = RenderPlan(board: [.tremolo])
        plan[.tremoloEnabled] = 1
        plan.channels = 2
        return OfflineRenderer(plan: plan)
    }

    /// Re-amped into a float WAV track, the render keeps its float samples (not rounded to 24 bits),
    /// starts where the DI starts and carries its author, board and actions.
    @Test func aFloatReampKeepsTheRendersFloatSamples() throws {
        let folder = TemporaryFolder("stompbox-reamp")
        let session = try twoTrackSession(in: folder)
        let board: JSONValue = .object(["format": .string("stompbox-preset")])
        let wet = try session.reamp("di-1", with: Self.tremolo(), board: board, actions: ["0.1:tremolo.rate_hz=3"],
                                    author: "ben", format: .floatWAV)
        #expect(wet.kind == .wet && wet.author == "ben" && wet.file.hasSuffix(".wav"))
        #expect(wet.frames == riff().frames && wet.channels == 2)
        #expect(wet.board == board && wet.actions == ["0.1:tremolo.rate_hz=3"])
        let samples = try session.audio(of: wet.id).samples
        #expect(Measure.rms(samples) > 0.01)
        #expect(samples.contains { ($0 * 8_388_608).rounded() != $0 * 8_388_608 })
    }

    /// Only a dry track is played through a board again.
    @Test func aWetTrackIsNotReamped() throws {
        let folder = TemporaryFolder("stompbox-reamp")
        let session = try twoTrackSession(in: folder)
        let error = #expect(throws: SessionError.self) {
            try session.reamp("wet-2", with: Self.tremolo(), board: .object([:]), actions: [], author: "ben")
        }
        #expect(error?.description.contains("only a di or import track") == true)
        #expect(session.manifest.tracks.count == 2)
    }
}

import Foundation
import StompboxAudio
import Testing

/// The audio call allocates nothing: the benchmark's allocation count (malloc-interposer, in its
/// own process so the preload touches nothing else) over a render with every pedal on and the
/// looper recording, playing, overdubbing and undoing.
@Suite struct AllocationTests {
    @Test func chainProcessAllocatesNothingPerBlock() throws {
        let result = try runStompbox(["--allocations-only", "--seconds", "20"], executable: "StompboxBench")
        #expect(result.status == 0, "StompboxBench failed: \(result.stderr)")
        let line = try #require(result.stdout.split(separator: "\n").first { $0.contains("heap allocations in chain.process") },
                                "no allocation count in: \(result.stdout)")
        #expect(line.contains("chain.process: 0 in 7500 blocks"), "\(line)")
    }
}

/// `LV2Pedal.process` allocates nothing either, for the hosted plugins the tests use (counted
/// the same way; controls jump between blocks and the pedal is reset halfway).
@Suite struct LV2AllocationTests {
    static let uris = [
        "http://gareus.org/oss/lv2/fil4#mono",
        "http://guitarix.sourceforge.net/plugins/gxts9#ts9sim",
        "http://calf.sourceforge.net/plugins/Phaser",
    ].filter { (try? LV2World.shared.plugin(uri: $0))?.canHost == true }

    @Test(.enabled(if: !uris.isEmpty, "none of the LV2 test plugins is installed (make deps-test)"))
    func lv2PedalProcessAllocatesNothing() throws {
        let result = try runStompbox(["--lv2-allocations"] + Self.uris, executable: "StompboxBench")
        #expect(result.status == 0, "StompboxBench: \(result.stdout) \(result.stderr)")
        for uri in Self.uris {
            let line = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("lv2 \(uri):") }, "\(result.stdout)")
            #expect(line.contains("heap allocations in process: 0 in"), "\(line)")
        }
    }
}

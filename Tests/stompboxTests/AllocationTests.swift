import Foundation
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

import Foundation
import Testing
@testable import StompboxAudio

/// Queued output taken back and written over: the seam is a crossfade, not a jump.
struct OutputSpliceTests {
    /// A 440 Hz tone: its own largest step from one sample to the next is 2π·440/48000 ≈ 0.058.
    static func tone(_ n: Int) -> Float { Float(sin(2 * Double.pi * 440 * Double(n) / 48_000)) }

    /// Writes `blocks` blocks of the tone through `splice` (the tone continuing from sample
    /// `from`), taking back `rewind` frames before the first; returns what reached the queue,
    /// as the listener hears it: the output before the seam, then the blocks.
    static func play(_ splice: OutputSplice, block: Int, blocks: Int, from: Int, rewind: Int, heardBefore: [Float]) -> [Float] {
        var heard = Array(heardBefore.dropLast(rewind))
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: block)
        defer { buffer.deallocate() }
        for b in 0..<blocks {
            for i in 0..<block { buffer[i] = tone(from + b * block + i) }
            if b == 0 { splice.rewind(rewind) }
            splice.apply(buffer)
            heard.append(contentsOf: buffer)
        }
        return heard
    }

    static func largestStep(_ x: [Float]) -> Float {
        zip(x, x.dropFirst()).map { abs($1 - $0) }.max() ?? 0
    }

    @Test func blocksPassUntouchedWithoutATakeBack() {
        let splice = OutputSplice()
        splice.reset(sampleRate: 48_000)
        let heard = Self.play(splice, block: 128, blocks: 40, from: 0, rewind: 0, heardBefore: [])
        #expect(heard == (0..<(128 * 40)).map(Self.tone), "bit for bit")
    }

    @Test(arguments: [64, 128, 512, 1024])
    func aTakeBackIsACrossfadeNotAJump(block: Int) {
        let splice = OutputSplice()
        splice.reset(sampleRate: 48_000)
        let before = Self.play(splice, block: block, blocks: 20, from: 0, rewind: 0, heardBefore: [])
        // 300 frames taken back (6.25 ms): the tone jumps 2.9 rad at the seam when cut.
        let heard = Self.play(splice, block: block, blocks: 12, from: before.count, rewind: 300, heardBefore: before)
        let seam = before.count - 300
        let cut = Array(before.prefix(seam)) + (0..<(12 * block)).map { Self.tone(before.count + $0) }
        let natural = Float(2 * Double.pi * 440 / 48_000)
        #expect(Self.largestStep(cut) > 0.3, "a plain cut jumps")
        #expect(Self.largestStep(heard) < natural * 1.25, "spliced: largest step \(Self.largestStep(heard))")
        // Once the 10 ms fade (or the 300 frames, if shorter) is over, the new output is untouched.
        let fade = min(480, 300)
        #expect(Array(heard[(seam + fade)...]) == Array(cut[(seam + fade)...]))
        #expect(!splice.fading)
    }

    @Test func aTakeBackBeyondWhatIsKeptIsACut() {
        let splice = OutputSplice()
        splice.reset(sampleRate: 48_000)
        let before = Self.play(splice, block: 256, blocks: 4, from: 0, rewind: 0, heardBefore: [])
        let heard = Self.play(splice, block: 256, blocks: 2, from: before.count, rewind: 2_000, heardBefore: before)
        #expect(Array(heard.suffix(512)) == (0..<512).map { Self.tone(before.count + $0) })
        #expect(!splice.fading)
    }

    @Test func silenceEndsAFade() {
        let splice = OutputSplice()
        splice.reset(sampleRate: 48_000)
        _ = Self.play(splice, block: 64, blocks: 20, from: 0, rewind: 0, heardBefore: [])
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 64)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: 0.5)
        splice.rewind(400)
        splice.apply(buffer)
        #expect(splice.fading)
        splice.silence(100)
        #expect(!splice.fading)
        buffer.initialize(repeating: 0.5)
        splice.apply(buffer)
        #expect(buffer.allSatisfy { $0 == 0.5 })
    }
}

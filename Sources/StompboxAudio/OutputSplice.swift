import Foundation

/// Output queued for playback can be taken back (the live loop writes its next block over the
/// last frames it wrote, to bring latency down). Written over as it is, the sound jumps from
/// one moment of the guitar to a later one: a click. This keeps what was last written and lets
/// the new output fade in over the old, as a tape splice or a looper's seam does, so the jump
/// is a short crossfade instead.
///
/// Without a take-back the blocks pass through untouched (bit for bit). Buffers are allocated
/// once (with the live loop's other buffers); nothing after that allocates, so it is safe on
/// the audio thread.
final class OutputSplice {
    /// The most output kept (frames): a take-back longer than this is a plain cut.
    static let capacity = 1 << 15
    static let longestFade = 4096

    /// Crossfade length (frames): 10 ms, and never longer than what was taken back.
    private(set) var fadeFrames = 480
    private let ring: UnsafeMutableBufferPointer<Float>
    private let old: UnsafeMutableBufferPointer<Float>
    /// Where the next written frame goes in `ring`, and how many frames it holds.
    private var position = 0
    private var stored = 0
    /// The crossfade in progress: `old[fadeDone..<fadeLength]` still to be faded out.
    private var fadeLength = 0
    private var fadeDone = 0

    init() {
        ring = .allocate(capacity: Self.capacity)
        old = .allocate(capacity: Self.longestFade)
        ring.initialize(repeating: 0)
        old.initialize(repeating: 0)
    }

    /// A new stream: nothing written yet.
    func reset(sampleRate: Double) {
        fadeFrames = max(16, min(Self.longestFade, Int(sampleRate / 100)))
        position = 0
        stored = 0
        fadeLength = 0
        fadeDone = 0
    }

    deinit {
        ring.deallocate()
        old.deallocate()
    }

    /// True while a crossfade is still running into the next block.
    var fading: Bool { fadeDone < fadeLength }

    /// The last `frames` written are being written over: what they were is kept to fade out
    /// under the new output. A take-back beyond what is kept is a cut.
    func rewind(_ frames: Int) {
        guard frames > 0 else { return }
        let back = min(frames, stored)
        position = (position - back + Self.capacity) % Self.capacity
        stored -= back
        guard back == frames else {
            fadeLength = 0
            fadeDone = 0
            return
        }
        // Fade out what played on from the seam: the frames just taken back, from their start.
        fadeLength = min(fadeFrames, frames)
        fadeDone = 0
        for i in 0..<fadeLength { old[i] = ring[(position + i) % Self.capacity] }
    }

    /// The block about to be written: crossfaded with the old output while a splice is in
    /// progress, then kept.
    func apply(_ block: UnsafeMutableBufferPointer<Float>) {
        var i = 0
        while fadeDone < fadeLength && i < block.count {
            // Raised cosine: the two gains sum to one, right for a signal that goes on.
            let w = Float(0.5 - 0.5 * cos(Double.pi * (Double(fadeDone) + 0.5) / Double(fadeLength)))
            block[i] = w * block[i] + (1 - w) * old[fadeDone]
            fadeDone += 1
            i += 1
        }
        keep(block.baseAddress!, block.count)
    }

    /// Silence was written: kept as such; a crossfade in progress ends (the old output is
    /// cut off by the gap anyway).
    func silence(_ frames: Int) {
        fadeLength = 0
        fadeDone = 0
        var left = min(frames, Self.capacity)
        while left > 0 {
            ring[position] = 0
            position = (position + 1) % Self.capacity
            left -= 1
        }
        stored = min(Self.capacity, stored + frames)
    }

    private func keep(_ samples: UnsafeMutablePointer<Float>, _ n: Int) {
        for i in 0..<n {
            ring[position] = samples[i]
            position = (position + 1) % Self.capacity
        }
        stored = min(Self.capacity, stored + n)
    }
}

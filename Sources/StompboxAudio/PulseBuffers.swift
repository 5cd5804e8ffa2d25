import CSamplerate
import Foundation

/// Buffers the live loop touches, allocated once by the engine (off the audio thread) for the
/// largest block and kept across sessions and block-size changes.
final class PulseBuffers {
    static let maximumBlock = LiveEngine.maximumBlock
    static let maximumChannels = 32
    /// Captured guitar samples not yet processed: a linear FIFO, compacted as it is read.
    let fifo: UnsafeMutableBufferPointer<Float>
    /// The block being assembled and processed (the output's left side, on a stereo output).
    let mono: UnsafeMutableBufferPointer<Float>
    /// A stereo output's right side.
    let right: UnsafeMutableBufferPointer<Float>
    /// Interleaved output when the server cannot lend us its own buffer.
    let output: UnsafeMutableBufferPointer<Float>
    /// The resampler's output before it is copied into `mono`.
    let resampled: UnsafeMutableBufferPointer<Float>
    /// The last input samples that went through unresampled, to prime the resampler with.
    let history: UnsafeMutableBufferPointer<Float>
    /// libsamplerate's variable-ratio converter (SRC_SINC_FASTEST: 97 dB SNR, 80 % bandwidth,
    /// about 20 samples of look-ahead).
    let resampler: OpaquePointer
    /// The output last written, to crossfade over when the loop writes over it (each side).
    let splice = OutputSplice()
    let spliceRight = OutputSplice()

    init() {
        fifo = .allocate(capacity: 1 << 16)
        mono = .allocate(capacity: Self.maximumBlock)
        right = .allocate(capacity: Self.maximumBlock)
        output = .allocate(capacity: Self.maximumBlock * Self.maximumChannels)
        resampled = .allocate(capacity: 2 * Self.maximumBlock)
        history = .allocate(capacity: PulseSession.primingLength)
        for b in [fifo, mono, right, output, resampled, history] { b.initialize(repeating: 0) }
        var error: Int32 = 0
        resampler = src_new(Int32(SRC_SINC_FASTEST), 1, &error)!
    }

    deinit {
        for b in [fifo, mono, right, output, resampled, history] { b.deallocate() }
        src_delete(resampler)
    }
}

import CSamplerate
import StompboxDSP

/// libsamplerate's medium sinc converter (97 dB SNR, 90 % bandwidth), for a Looper's recording
/// when the server's rate changes. Off the audio thread, while the client is inactive: about
/// 0.2 s for a 10 s loop and 2.3 s for a full 120 s one (the best converter took 4.7 s for that).
public let libsamplerateLoopResampler: LoopResampler = { loop, ratio in
    guard !loop.isEmpty, ratio > 0, ratio != 1 else { return loop }
    return convertRate(loop, ratio: ratio, quality: SRC_SINC_MEDIUM_QUALITY)
}

/// `samples` (one channel, whole) converted by `ratio` (new rate / old rate) with libsamplerate.
/// Off the audio thread.
func convertRate(_ samples: [Float], ratio: Double, quality: Int) -> [Float] {
    var output = [Float](repeating: 0, count: Int((Double(samples.count) * ratio).rounded(.up)) + 16)
    let generated: Int = samples.withUnsafeBufferPointer { input in
        output.withUnsafeMutableBufferPointer { out in
            var data = SRC_DATA(data_in: input.baseAddress, data_out: out.baseAddress,
                                input_frames: input.count, output_frames: out.count,
                                input_frames_used: 0, output_frames_gen: 0, end_of_input: 1, src_ratio: ratio)
            return src_simple(&data, Int32(quality), 1) == 0 ? data.output_frames_gen : 0
        }
    }
    return Array(output.prefix(generated))
}

extension Chain {
    /// Prepares the chain for a live server at `rate` when it is not already prepared for it
    /// (a Looper's recording is resampled and kept). Not on the audio thread, and not while it runs.
    func prepareForLive(rate: Int) {
        if sampleRate != Double(rate) || maximumBlockSize < LiveEngine.maximumBlock {
            prepare(sampleRate: Double(rate), maximumBlockSize: LiveEngine.maximumBlock,
                    keepingLoops: libsamplerateLoopResampler)
        }
    }
}

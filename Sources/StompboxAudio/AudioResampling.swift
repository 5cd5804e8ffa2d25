import CSamplerate

extension AudioBuffer {
    /// The buffer at `rate` (libsamplerate's medium sinc converter, each channel on its own),
    /// exactly `frames(at:)` frames long: the converter's output is trimmed or padded with silence
    /// to that, so the length stays within one frame of the exact ratio. Off the audio thread.
    public func resampled(to rate: Int) -> AudioBuffer {
        precondition(rate > 0)
        guard rate != sampleRate else { return self }
        let length = frames(at: rate)
        let ratio = Double(rate) / Double(sampleRate)
        var out = [Float](repeating: 0, count: length * channels)
        for c in 0..<channels {
            let converted = convertRate(channel(c), ratio: ratio, quality: SRC_SINC_MEDIUM_QUALITY)
            for i in 0..<min(length, converted.count) { out[i * channels + c] = converted[i] }
        }
        return AudioBuffer(samples: out, sampleRate: rate, channels: channels)
    }

    /// How many frames this buffer's duration is at `rate`, rounded to the nearest frame.
    public func frames(at rate: Int) -> Int {
        Int((Double(frames) * Double(rate) / Double(sampleRate)).rounded())
    }
}

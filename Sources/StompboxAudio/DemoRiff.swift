import Foundation

/// The "demo" input: a short guitar riff made by the project (a Karplus–Strong plucked-string
/// model), kept as `data/demo-riff.flac` and looped through the chain in real time.
///
/// `stompbox run --write-demo-riff FILE` regenerates the file; the engine reads it with
/// `AudioFile` and falls back to generating the riff in memory if the file is not found.
enum DemoRiff {
    static let fileName = "demo-riff.flac"
    static let sampleRate = 48_000

    /// One bar-and-a-half riff in E minor at 120 bpm: (MIDI notes plucked together, start beat, beats held).
    private static let score: [([Int], Double, Double)] = [
        ([40, 47], 0.0, 1.0), ([40], 1.0, 0.5), ([43], 1.5, 0.5), ([45, 52], 2.0, 1.0),
        ([40], 3.0, 0.5), ([47], 3.5, 0.5), ([50], 4.0, 0.5), ([47], 4.5, 0.5),
        ([45], 5.0, 0.5), ([43], 5.5, 0.5), ([40, 47, 52], 6.0, 2.0),
    ]
    private static let beats = 8.0
    private static let bpm = 120.0

    /// Synthesises the riff (deterministic: the same samples on every machine).
    static func generate(sampleRate: Int = DemoRiff.sampleRate) -> [Float] {
        let fs = Double(sampleRate)
        let secondsPerBeat = 60 / bpm
        let length = Int(beats * secondsPerBeat * fs)
        var out = [Float](repeating: 0, count: length)
        var rng: UInt64 = 0x5DEE_CE66_D1CE_F00D
        func noise() -> Float {
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17
            return Float(rng >> 40) / Float(1 << 24) * 2 - 1
        }
        for (notes, beat, held) in score {
            let start = Int(beat * secondsPerBeat * fs)
            let sounding = Int(held * secondsPerBeat * fs)
            for note in notes {
                let frequency = 440 * pow(2, Double(note - 69) / 12)
                let period = max(2, Int((fs / frequency).rounded()))
                // A pick excitation: noise, smoothed a little so the attack is not harsh.
                var line = [Float](repeating: 0, count: period)
                var previous: Float = 0
                for i in 0..<period { previous = 0.6 * previous + 0.4 * noise(); line[i] = previous }
                var index = 0
                let gain: Float = 0.45 / Float(notes.count).squareRoot()
                for i in 0..<min(sounding, length - start) {
                    let next = line[(index + 1) % period]
                    // Loss filter: the string's high partials die first.
                    line[index] = 0.4985 * (line[index] + next)
                    // Let go (a short fade) at the end of the held time: no click at the next pluck.
                    let release = Float(min(1, Double(sounding - i) / (0.01 * fs)))
                    out[start + i] += gain * line[index] * release
                    index = (index + 1) % period
                }
            }
        }
        // Fade the very end so the loop wraps without a click.
        let tail = Int(0.02 * fs)
        for i in 0..<tail { out[length - 1 - i] *= Float(i) / Float(tail) }
        return out
    }

    /// Writes the riff as a mono file (format from the extension; the bundled one is FLAC).
    static func write(to path: String) throws {
        try AudioFile.write(AudioBuffer(samples: generate(), sampleRate: sampleRate, channels: 1), to: path)
    }

    /// The riff at `sampleRate`, mono, in a buffer the caller owns (and deallocates): read from
    /// `file` (the bundled `data/demo-riff.flac`, found by the caller), or synthesised when there
    /// is no such file.
    static func load(sampleRate: Int = DemoRiff.sampleRate, file: String?) -> UnsafeMutableBufferPointer<Float> {
        var samples = (generate(), DemoRiff.sampleRate)
        if let file, let audio = try? AudioFile.read(file), audio.frames > 0 {
            samples = (audio.channel(0), audio.sampleRate)
        }
        let resampled = resample(samples.0, from: samples.1, to: sampleRate)
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, resampled.count))
        buffer.initialize(repeating: 0)
        _ = buffer.initialize(from: resampled)
        return buffer
    }

    /// Linear interpolation: good enough for a demo loop at an unusual rate.
    static func resample(_ x: [Float], from: Int, to: Int) -> [Float] {
        guard from != to, from > 0, to > 0, x.count > 1 else { return x }
        let count = Int(Double(x.count) * Double(to) / Double(from))
        let step = Double(from) / Double(to)
        return (0..<count).map { i in
            let position = Double(i) * step
            let j = min(Int(position), x.count - 2)
            let f = Float(position - Double(j))
            return x[j] + f * (x[j + 1] - x[j])
        }
    }
}


/// For `stompbox run --write-demo-riff FILE` (the way data/demo-riff.flac is made).
public enum DemoRiffFile {
    /// The bundled file's name in `data/`.
    public static let fileName = DemoRiff.fileName
    public static func write(to path: String) throws { try DemoRiff.write(to: path) }
}

import CSndfile
import Foundation

/// The "demo" input: a short guitar riff made by the project (a Karplus–Strong plucked-string
/// model), kept as `data/demo-riff.flac` and looped through the chain in real time.
///
/// `stompbox run --write-demo-riff FILE` regenerates the file; the engine reads it with a small
/// private libsndfile reader (kept apart from the renderer's AudioFile on purpose, see the
/// branch report) and falls back to generating the riff in memory if the file is not found.
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

    /// Writes the riff as 16-bit mono FLAC.
    static func write(to path: String) throws {
        let samples = generate()
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = 1
        info.format = Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16)
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw DemoRiffError.cannotWrite(path, String(cString: sf_strerror(nil)))
        }
        defer { sf_close(file) }
        let written = samples.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, sf_count_t($0.count)) }
        guard written == samples.count else { throw DemoRiffError.cannotWrite(path, String(cString: sf_strerror(file))) }
    }

    /// Where the bundled file is looked for: `$STOMPBOX_DATA`, `data/` next to (or above) the
    /// executable, the working directory's `data/`, then the installed share directory.
    static func candidatePaths() -> [String] {
        var dirs: [String] = []
        if let env = ProcessInfo.processInfo.environment["STOMPBOX_DATA"] { dirs.append(env) }
        var dir = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            dirs.append(dir.appendingPathComponent("data").path)
            dir.deleteLastPathComponent()
        }
        dirs.append(FileManager.default.currentDirectoryPath + "/data")
        dirs.append("/usr/local/share/stompbox")
        dirs.append("/usr/share/stompbox")
        return dirs.map { $0 + "/" + fileName }
    }

    /// The riff at `sampleRate`, mono, in a buffer the caller owns (and deallocates).
    static func load(sampleRate: Int = DemoRiff.sampleRate) -> UnsafeMutableBufferPointer<Float> {
        let samples = candidatePaths().lazy.compactMap { readMono(path: $0) }.first ?? (generate(), DemoRiff.sampleRate)
        let resampled = resample(samples.0, from: samples.1, to: sampleRate)
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, resampled.count))
        buffer.initialize(repeating: 0)
        _ = buffer.initialize(from: resampled)
        return buffer
    }

    /// Minimal private libsndfile reader: first channel as Float, and the file's rate.
    static func readMono(path: String) -> ([Float], Int)? {
        var info = SF_INFO()
        guard FileManager.default.fileExists(atPath: path), let file = sf_open(path, Int32(SFM_READ), &info) else { return nil }
        defer { sf_close(file) }
        let channels = Int(info.channels)
        let frames = Int(info.frames)
        guard channels > 0, frames > 0, frames < 60 * 192_000 else { return nil }
        var interleaved = [Float](repeating: 0, count: frames * channels)
        let read = interleaved.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, sf_count_t(frames)) }
        guard read > 0 else { return nil }
        return ((0..<Int(read)).map { interleaved[$0 * channels] }, Int(info.samplerate))
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

enum DemoRiffError: Error, CustomStringConvertible {
    case cannotWrite(String, String)
    var description: String {
        switch self {
        case .cannotWrite(let path, let why): "cannot write \(path): \(why)"
        }
    }
}

/// For `stompbox run --write-demo-riff FILE` (the way data/demo-riff.flac is made).
public enum DemoRiffFile {
    public static func write(to path: String) throws { try DemoRiff.write(to: path) }
}

import Foundation
import StompboxAudio

/// Debian's reference LV2 host, `lv2file`, and the input it is handed: what the LV2 tests
/// compare Stompbox's hosting with.
public enum LV2File {
    public static let path = "/usr/bin/lv2file"
    public static let sox = "/usr/bin/sox"
    /// lv2file, and sox to hand it a 32-bit float copy of the input.
    public static let isInstalled = FileManager.default.isExecutableFile(atPath: path) && FileManager.default.isExecutableFile(atPath: sox)

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The riff (0.3 peak, so neither host clips) written by `AudioFile` as a 24-bit WAV of
    /// `channels` identical channels, `seconds` long in whole blocks (lv2file runs its last
    /// block whole, stale samples and all). Returns the 24-bit file, its 32-bit float copy and
    /// the samples as read back.
    public static func writeInput(in folder: TemporaryFolder, channels: Int, seconds: Double = 3, rate: Int = 48_000,
                                  block: Int) throws -> (wav: String, float: String, samples: [Float]) {
        let frames = Int(seconds * Double(rate)) / block * block
        let riff = Signal.guitarRiff(seconds: Double(frames) / Double(rate))
        let peak = max(Measure.peak(riff), 1e-9)
        let mono = riff.prefix(frames).map { $0 * 0.3 / peak }
        let interleaved = mono.flatMap { Array(repeating: $0, count: channels) }
        let path = folder.file("in-\(channels).wav")
        try AudioFile.write(AudioBuffer(samples: interleaved, sampleRate: rate, channels: channels), to: path)
        // lv2file writes its output in its input's format; as 32-bit float (the same 24-bit
        // values, exactly) its output is the plugin's own floats, not rounded to 24 bits.
        let float = folder.file("in-\(channels)-float.wav")
        let status = try runProcess(sox, [path, "-e", "floating-point", "-b", "32", float])
        guard status.code == 0 else { throw Failure(description: "sox could not convert \(path): \(status.stderr)") }
        return (path, float, try AudioFile.read(path).channel(0))
    }

    /// lv2file's first output channel for `input` with `controls` (by port symbol), in blocks of `block`.
    public static func run(uri: String, controls: [String: Float], block: Int, input: String, output: String) throws -> [Float] {
        var arguments = ["-b", "\(block)", "-i", input, "-o", output]
        for (symbol, value) in controls.sorted(by: { $0.key < $1.key }) { arguments += ["-p", "\(symbol):\(value)"] }
        let status = try runProcess(path, arguments + [uri])
        guard status.code == 0 else { throw Failure(description: "lv2file failed: \(status.stderr)") }
        return try AudioFile.read(output).channel(0)
    }

    private static func runProcess(_ executable: String, _ arguments: [String]) throws -> (code: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, message)
    }
}

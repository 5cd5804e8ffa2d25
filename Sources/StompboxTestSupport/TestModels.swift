import Foundation
import StompboxDSP

/// Model files for the Amp Model pedal's tests: NAM "Linear" captures (an FIR, newest tap first),
/// which exercise the whole path from file to sound with outputs known exactly: an identity
/// (`[1]`), a gain, a delay.
public enum TestModels {
    /// A NAM 0.5.4 Linear file's text: `taps` (newest first), no bias unless given, its rate
    /// (none: the file says nothing, 48 kHz) and metadata (`loudness`, `input_level_dbu`, `name`…).
    public static func linear(_ taps: [Float], bias: Float? = nil, sampleRate: Double? = nil,
                              metadata: [String: Any] = [:]) -> String {
        var object: [String: Any] = [
            "version": "0.5.4",
            "architecture": "Linear",
            "config": ["receptive_field": taps.count, "bias": bias != nil],
            "weights": (taps + (bias.map { [$0] } ?? [])).map { Double($0) },
        ]
        if let sampleRate { object["sample_rate"] = sampleRate }
        if !metadata.isEmpty { object["metadata"] = metadata }
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// Writes `linear(…)` into `folder` as `name` and returns its path.
    @discardableResult
    public static func write(_ name: String, in folder: TemporaryFolder, taps: [Float], bias: Float? = nil,
                             sampleRate: Double? = nil, metadata: [String: Any] = [:]) -> String {
        folder.write(linear(taps, bias: bias, sampleRate: sampleRate, metadata: metadata), to: name)
    }

    /// A delay of `samples` at unity gain.
    public static func delay(_ samples: Int, gain: Float = 1) -> [Float] {
        [Float](repeating: 0, count: samples) + [gain]
    }

    /// `input` through `network` in blocks whose sizes take `blocks` in turn (the last one cut
    /// short), as the audio thread would call it; the output starts as NaN, so a sample the
    /// network did not write shows. The caller prepares, resets or prewarms it first.
    public static func play(_ network: any NeuralNetwork, _ input: [Float], blocks: [Int]) -> [Float] {
        var output = [Float](repeating: .nan, count: input.count)
        input.withUnsafeBufferPointer { x in
            output.withUnsafeMutableBufferPointer { y in
                var start = 0, turn = 0
                while start < x.count {
                    let count = min(blocks[turn % blocks.count], x.count - start)
                    network.process(x.baseAddress! + start, y.baseAddress! + start, count: count)
                    start += count
                    turn += 1
                }
            }
        }
        return output
    }
}

import Foundation
import StompboxAudio
import StompboxTestSupport
import Testing

/// The factory presets as a new user hears them: each slot taken from a first run's
/// `stompbox presets export` (no presets.json), the bundled demo riff rendered through it with
/// `stompbox render`, and again with the amp, then the cabinet, switched off.
@Suite struct FactoryPresetSoundTests {
    static let demoRiff = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../data/demo-riff.flac").standardized.path
    /// The riff's own length (4 s at 48 kHz); the render adds a second of tail.
    static let riffFrames = 4 * 48_000

    struct Heard {
        let left: [Float], right: [Float]
        /// Both sides, tail included.
        var both: [Float] { left + right }
        /// Both sides over the riff (not the tail).
        var riff: [Float] { Array(left.prefix(FactoryPresetSoundTests.riffFrames) + right.prefix(FactoryPresetSoundTests.riffFrames)) }
        /// The two sides averaged, over the riff.
        var mono: [Float] { zip(left, right).prefix(FactoryPresetSoundTests.riffFrames).map { ($0 + $1) / 2 } }
        /// The level over the riff.
        var rmsDecibels: Float { Measure.decibels(Measure.rms(riff)) }

        /// Energy above 6 kHz against 200 Hz…2 kHz, in dB: a fizzy, direct distortion sits high.
        var highBand: Double {
            let power = Spectrum.power(mono[...])
            let hz = 48_000 / Double(2 * (power.count - 1))
            var high = 0.0, middle = 0.0
            for (k, p) in power.enumerated() {
                let f = Double(k) * hz
                if f > 6_000 { high += p } else if f >= 200 && f <= 2_000 { middle += p }
            }
            return 10 * log10(high / middle)
        }
    }

    /// Slot `slot` (1…3) of a first run's presets, as a preset file, and its parsed JSON.
    static func exported(_ slot: Int, in box: CoreCLISandbox) throws -> (path: String, json: [String: Any]) {
        let file = box.file("slot\(slot).json")
        let r = try box.run("presets", "export", "\(slot)", file.path)
        #expect(r.ok, "\(r.stderr)")
        #expect(!CoreCLISandbox.exists(box.presetsFile), "a first run's export writes no presets.json")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        return (file.path, json)
    }

    static func render(_ preset: String, _ settings: [String] = [], in box: CoreCLISandbox, as name: String) throws -> Heard {
        let out = box.file(name).path
        let r = try box.run(["render", demoRiff, out, "--preset", preset, "--tail", "1"] + settings.flatMap { ["--set", $0] })
        #expect(r.ok, "\(r.stderr)")
        let buffer = try AudioFile.read(out)
        #expect(buffer.channels == 2 && buffer.sampleRate == 48_000 && buffer.frames == riffFrames + 48_000)
        return Heard(left: buffer.channel(0), right: buffer.channel(1))
    }

    @Test(arguments: [1, 2, 3])
    func eachRendersTheRiffThroughGateAmpAndCabinet(slot: Int) throws {
        let box = CoreCLISandbox()
        let (preset, json) = try Self.exported(slot, in: box)
        let parameters = try #require(json["parameters"] as? [String: Any])
        for id in ["gate.enabled", "amp.enabled", "cab.enabled"] {
            #expect(parameters[id] as? Bool == true, "slot \(slot): \(id)")
        }
        let chain = json["chain"] as? [String] ?? []
        #expect(["gate", "amp", "cab"].allSatisfy(chain.contains), "slot \(slot): \(chain)")

        let heard = try Self.render(preset, in: box, as: "out.wav")
        let samples = heard.both
        let peak = Measure.peak(samples), level = heard.rmsDecibels, high = heard.highBand
        print("factory slot \(slot) (\(json["name"] as? String ?? "?")): "
              + String(format: "peak %.3f, RMS %.1f dBFS, >6 kHz vs 200 Hz-2 kHz %.1f dB", Double(peak), Double(level), high))
        #expect(Measure.allFinite(samples))
        #expect(peak <= 1)
        // The safety limiter's ceiling is 0.98: a preset that reaches it is one the limiter plays.
        #expect(peak < 0.98, "slot \(slot): peak \(peak): the limiter would be working")
        #expect(level > -30 && level < -12, "slot \(slot): RMS \(level) dBFS")
        #expect(high < -20, "slot \(slot): the cabinet keeps the top down: \(high) dB")
        #expect(heard.left != heard.right, "slot \(slot): the delay and reverb play in stereo")

        // The amp is in the path: without it the riff sounds otherwise, not just a little.
        let noAmp = try Self.render(preset, ["amp.enabled=off"], in: box, as: "no-amp.wav")
        let difference = zip(heard.riff, noAmp.riff).map { $0 - $1 }
        let changed = Measure.decibels(Measure.rms(difference)) - level
        #expect(changed > -6, "slot \(slot): the amp off changes the output by only \(changed) dB of it")
        // So is the cabinet: without it the top end comes up.
        let noCab = try Self.render(preset, ["cab.enabled=off"], in: box, as: "no-cab.wav")
        #expect(noCab.highBand > high + 10, "slot \(slot): cabinet off \(noCab.highBand) dB, on \(high) dB")
    }

    /// The three are voiced to one loudness, so stepping through them is not a jump in volume.
    @Test func theThreeAreAboutEquallyLoud() throws {
        let box = CoreCLISandbox()
        var levels: [Float] = []
        for slot in 1...3 {
            let (preset, _) = try Self.exported(slot, in: box)
            levels.append(try Self.render(preset, in: box, as: "out\(slot).wav").rmsDecibels)
        }
        let spread = (levels.max() ?? 0) - (levels.min() ?? 0)
        #expect(spread < 3, "RMS of the three: \(levels) dBFS")
    }
}

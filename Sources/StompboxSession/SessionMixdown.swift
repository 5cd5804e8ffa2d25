import Foundation
import StompboxAudio

/// A session's tracks summed to stereo, with each track's gain, pan and mute applied.
public struct SessionMixdown {
    /// Stereo, at the session's rate, as long as the session (its last track's end).
    public var mix: AudioBuffer
    /// Each track on its own (gain and pan applied, mute not: a stem is the part itself), as
    /// long as the mix, in track order; the unmuted ones sum to the mix. Empty unless asked for.
    public var stems: [(track: SessionTrack, audio: AudioBuffer)]
    /// The mix's largest absolute sample, and the frame where it first occurs. Above 1.0 the
    /// mix clips when written as PCM; nothing here limits it.
    public var peak: Float
    public var peakFrame: Int

    public var clips: Bool { peak > 1 }
}

extension Session {
    /// Sums the tracks into a stereo mix (and each track into a stem when `stems` is true), in
    /// memory (`SessionMix` block by block; `writeMixdown` for files of any length). The same
    /// session always gives the same samples.
    public func mixdown(stems wantStems: Bool = false) throws(SessionError) -> SessionMixdown {
        let length = manifest.frames
        func whole(_ mixer: SessionMix) -> [Float] {
            var samples = [Float](repeating: 0, count: 2 * length)
            samples.withUnsafeMutableBufferPointer { out in
                var at = 0
                while at < length {
                    let n = min(Self.mixBlock, length - at)
                    mixer.render(into: out.baseAddress! + 2 * at, from: at, count: n)
                    at += n
                }
            }
            return samples
        }
        let mix = whole(try SessionMix(self))
        var stems: [(track: SessionTrack, audio: AudioBuffer)] = []
        if wantStems {
            for track in manifest.tracks {
                stems.append((track, AudioBuffer(samples: whole(try SessionMix(self, includeMuted: true, only: track.id)),
                                                 sampleRate: manifest.sampleRate, channels: 2)))
            }
        }
        var peak: Float = 0, peakFrame = 0
        for (i, s) in mix.enumerated() where abs(s) > peak {
            peak = abs(s)
            peakFrame = i / 2
        }
        return SessionMixdown(mix: AudioBuffer(samples: mix, sampleRate: manifest.sampleRate, channels: 2),
                              stems: stems, peak: peak, peakFrame: peakFrame)
    }

    static let mixBlock = 65_536

    /// What `writeMixdown` wrote.
    public struct WrittenMixdown: Sendable {
        public var frames: Int
        public var stems: Int
        /// As `SessionMixdown`'s.
        public var peak: Float
        public var peakFrame: Int
        public var clips: Bool { peak > 1 }
    }

    /// Writes the mix to `path` (its extension picks the format; 24-bit) and, with `stemsFolder`,
    /// each track's stem there as `TRACK-ID.EXT`, a block at a time: a session of hours is never
    /// whole in memory. Each file appears complete or not at all. The samples are `mixdown`'s.
    public func writeMixdown(to path: String, stemsFolder: String? = nil) throws(SessionError) -> WrittenMixdown {
        let length = manifest.frames
        var peak: Float = 0, peakFrame = 0
        func write(_ mixer: SessionMix, to file: String, measure: Bool) throws(SessionError) {
            do {
                let out = try AtomicAudioFileWriter(path: file, sampleRate: manifest.sampleRate, channels: 2)
                var block = [Float](repeating: 0, count: 2 * Self.mixBlock)
                var at = 0
                while at < length {
                    let n = min(Self.mixBlock, length - at)
                    try block.withUnsafeMutableBufferPointer { (p) throws(AudioFileError) in
                        mixer.render(into: p.baseAddress!, from: at, count: n)
                        if measure {
                            for i in 0..<(2 * n) where abs(p[i]) > peak {
                                peak = abs(p[i])
                                peakFrame = at + i / 2
                            }
                        }
                        try out.write(p.baseAddress!, frames: n)
                    }
                    at += n
                }
                try out.commit()
            } catch {
                throw SessionError(path: self.path, .audio(error))
            }
        }
        var stems = 0
        if let stemsFolder {
            // The format's own extension (a mix written as .wave gives .wav stems).
            let ext = (try? AudioFileFormat(path: path))?.rawValue ?? URL(fileURLWithPath: path).pathExtension.lowercased()
            for track in manifest.tracks {
                let file = URL(fileURLWithPath: stemsFolder).appendingPathComponent("\(track.id).\(ext)").path
                try write(try SessionMix(self, includeMuted: true, only: track.id), to: file, measure: false)
                stems += 1
            }
        }
        try write(try SessionMix(self), to: path, measure: true)
        return WrittenMixdown(frames: length, stems: stems, peak: peak, peakFrame: peakFrame)
    }

    /// The pan law: constant power. θ = (pan + 1)·π/4 runs from 0 (left) to π/2 (right).
    /// A mono track goes to the left by cos θ and the right by sin θ: −3 dB on each side in the
    /// middle, so it sounds as loud wherever it is placed. A stereo track is balanced by the same
    /// law scaled to unity in the middle (√2·cos θ and √2·sin θ, neither above 1): centred it
    /// plays as recorded, and panned hard one way its other side falls silent.
    public static func panGains(pan: Double, channels: Int) -> (left: Float, right: Float) {
        let theta = (min(max(pan, -1), 1) + 1) * Double.pi / 4
        if channels == 1 { return (Float(cos(theta)), Float(sin(theta))) }
        return (Float(min(1, 2.0.squareRoot() * cos(theta))), Float(min(1, 2.0.squareRoot() * sin(theta))))
    }
}

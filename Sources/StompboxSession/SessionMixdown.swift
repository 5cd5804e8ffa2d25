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
    /// Sums the tracks into a stereo mix (and each track into a stem when `stems` is true).
    /// The same session always gives the same samples.
    public func mixdown(stems wantStems: Bool = false) throws(SessionError) -> SessionMixdown {
        let length = manifest.frames
        var mix = [Float](repeating: 0, count: length * 2)
        var stems: [(track: SessionTrack, audio: AudioBuffer)] = []
        for track in manifest.tracks {
            guard wantStems || !track.mute else { continue }
            let audio = try audio(of: track.id)
            let (left, right) = Self.panGains(pan: track.pan, channels: track.channels)
            let gain = Float(pow(10, track.gainDB / 20))
            var stem = wantStems ? [Float](repeating: 0, count: length * 2) : []
            // Channels beyond two alternate between the sides and are averaged on each, as the
            // renderer spreads a stereo output over more channels.
            let channels = audio.channels
            let leftCount = Float((channels + 1) / 2), rightCount = Float(max(1, channels / 2))
            audio.samples.withUnsafeBufferPointer { samples in
                for i in 0..<audio.frames {
                    var l: Float = 0, r: Float = 0
                    let frame = i * channels
                    if channels == 1 {
                        l = samples[frame]
                        r = l
                    } else {
                        for c in 0..<channels {
                            if c & 1 == 0 { l += samples[frame + c] } else { r += samples[frame + c] }
                        }
                        l /= leftCount
                        r /= rightCount
                    }
                    let at = (track.start + i) * 2
                    let outL = l * gain * left, outR = r * gain * right
                    if wantStems {
                        stem[at] = outL
                        stem[at + 1] = outR
                    }
                    if !track.mute {
                        mix[at] += outL
                        mix[at + 1] += outR
                    }
                }
            }
            if wantStems { stems.append((track, AudioBuffer(samples: stem, sampleRate: manifest.sampleRate, channels: 2))) }
        }
        var peak: Float = 0, peakFrame = 0
        for (i, s) in mix.enumerated() where abs(s) > peak {
            peak = abs(s)
            peakFrame = i / 2
        }
        return SessionMixdown(mix: AudioBuffer(samples: mix, sampleRate: manifest.sampleRate, channels: 2),
                              stems: stems, peak: peak, peakFrame: peakFrame)
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

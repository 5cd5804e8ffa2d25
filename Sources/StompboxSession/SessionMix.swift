import Foundation
import StompboxAudio

/// A session's tracks summed to stereo a block at a time: each track decoded as the mix reaches
/// it (from its stored bytes, in place), its gain and pan applied, in track order. The same
/// samples however the blocks fall, so a take's backing, a mixdown file and a stem can be made
/// for a session of hours without holding it (`Session.mixdown` is made from it too).
public final class SessionMix: BackingSource {
    private struct Part {
        var track: SessionTrack
        var reader: AudioDataReader
        var left: Float
        var right: Float
        var gain: Float
    }
    private var parts: [Part]
    public let frames: Int
    private var scratch: [Float]

    /// The unmuted tracks of `session` (with `includeMuted`, every track; `only` keeps one),
    /// as long as the session. Each track's audio is checked to be what the manifest says.
    public init(_ session: Session, includeMuted: Bool = false, only: String? = nil) throws(SessionError) {
        frames = session.manifest.frames
        var parts: [Part] = []
        for track in session.manifest.tracks where (includeMuted || !track.mute) && (only == nil || only == track.id) {
            func wrong(_ detail: String) -> SessionError {
                SessionError(path: session.path, .wrongAudio(track: track.id, file: track.file, detail: detail))
            }
            guard let bytes = session.storedAudio(of: track.id) else {
                throw SessionError(path: session.path, .missingAudio(track: track.id, file: track.file))
            }
            let reader: AudioDataReader
            do { reader = try AudioDataReader(bytes, name: track.file) } catch { throw wrong("cannot be decoded (\(error.description))") }
            guard reader.frames == track.frames, reader.channels == track.channels else {
                throw wrong("holds \(reader.frames) frames of \(reader.channels) channels, the manifest says \(track.frames) of \(track.channels)")
            }
            let (left, right) = Session.panGains(pan: track.pan, channels: track.channels)
            parts.append(Part(track: track, reader: reader, left: left, right: right, gain: Float(pow(10, track.gainDB / 20))))
        }
        self.parts = parts
        scratch = []
    }

    /// Frames `from ..< from + count` of the mix, interleaved stereo, into `into`. Frames a
    /// track's file cannot give (it ends early) are silence.
    public func render(into: UnsafeMutablePointer<Float>, from: Int, count: Int) {
        into.update(repeating: 0, count: 2 * count)
        for i in parts.indices {
            let track = parts[i].track
            let start = max(from, track.start), end = min(from + count, track.start + track.frames)
            guard start < end else { continue }
            let reader = parts[i].reader
            let channels = track.channels
            if scratch.count < (end - start) * channels { scratch = [Float](repeating: 0, count: (end - start) * channels) }
            let (gain, panLeft, panRight) = (parts[i].gain, parts[i].left, parts[i].right)
            let leftCount = Float((channels + 1) / 2), rightCount = Float(max(1, channels / 2))
            scratch.withUnsafeMutableBufferPointer { buffer in
                let samples = buffer.baseAddress!
                var got = 0
                if reader.seek(to: start - track.start) {
                    while got < end - start {
                        let n = reader.read(into: samples + got * channels, frames: end - start - got)
                        if n == 0 { break }
                        got += n
                    }
                }
                if got < end - start { (samples + got * channels).update(repeating: 0, count: (end - start - got) * channels) }
                // Channels beyond two alternate between the sides and are averaged on each, as
                // the renderer spreads a stereo output over more channels.
                for k in 0..<(end - start) {
                    var l: Float = 0, r: Float = 0
                    let frame = k * channels
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
                    let at = 2 * (start - from + k)
                    into[at] += l * gain * panLeft
                    into[at + 1] += r * gain * panRight
                }
            }
        }
    }
}

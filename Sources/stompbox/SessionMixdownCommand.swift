import ArgumentParser
import Foundation
import StompboxAudio
import StompboxSession

/// `stompbox session mixdown S OUT [--stems DIR]`
struct SessionMixdownCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mixdown", abstract: "Writes the sum of a session's tracks as a stereo file.",
        discussion: """
            Each track's gain, pan and mute are applied (pan: constant power, -3 dB per side in the \
            middle for a mono track; a stereo track is balanced, unchanged in the middle). OUT's \
            extension picks the format (.wav, .aiff, .flac; 24-bit). With --stems, each track is also \
            written on its own into DIR as TRACK-ID.EXT, as long as the mix (gain and pan applied, \
            mute not). Nothing is limited: a mix that goes above full scale is written clipped, and \
            a warning gives its peak; the exit status is still 0.
            """)

    @Argument(help: "The session file.")
    var session: String

    @Argument(help: "The mix to write (.wav, .aiff or .flac).")
    var output: String

    @Option(name: .long, help: ArgumentHelp("A folder for one stem per track (made if missing).", valueName: "dir"))
    var stems: String?

    func run() throws {
        let s = SessionCLI.open(session)
        let format: AudioFileFormat
        do { format = try AudioFileFormat(path: output) } catch { fail(error.description) }
        let mixdown: SessionMixdown
        do { mixdown = try s.mixdown(stems: stems != nil) } catch { fail(error.description) }
        guard mixdown.mix.frames > 0 else { fail("session '\(session)' has no audio to mix down") }
        if let stems {
            do { try FileManager.default.createDirectory(atPath: stems, withIntermediateDirectories: true) } catch {
                fail("cannot make the stems folder '\(stems)': \(error.localizedDescription)")
            }
            for stem in mixdown.stems {
                let path = URL(fileURLWithPath: stems).appendingPathComponent("\(stem.track.id).\(format.rawValue)").path
                do { try AudioFile.write(stem.audio, to: path) } catch { fail(error.description) }
            }
        }
        do { try AudioFile.write(mixdown.mix, to: output) } catch { fail(error.description) }
        let rate = Double(s.manifest.sampleRate)
        print("wrote \(output): 2 channels, \(s.manifest.sampleRate) Hz, " + String(format: "%.3f s", Double(mixdown.mix.frames) / rate)
              + (stems.map { ", \(mixdown.stems.count) stem\(mixdown.stems.count == 1 ? "" : "s") in \($0)" } ?? ""))
        // Reported, not limited: the numbers tell how much to take off.
        if mixdown.clips {
            warn(String(format: "the mix clips: its peak is %+.2f dBFS (%.3f × full scale) at %.3f s; it was written clipped at full scale. Lower the tracks' gain by at least %.2f dB",
                        20 * log10(Double(mixdown.peak)), Double(mixdown.peak), Double(mixdown.peakFrame) / rate, 20 * log10(Double(mixdown.peak))))
        }
    }
}

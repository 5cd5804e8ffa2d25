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
        // An extension no format has is refused before anything is mixed.
        do { _ = try AudioFileFormat(path: output) } catch { fail(error.description) }
        guard s.manifest.frames > 0 else { fail("session '\(session)' has no audio to mix down") }
        if let stems {
            do { try FileManager.default.createDirectory(atPath: stems, withIntermediateDirectories: true) } catch {
                fail("cannot make the stems folder '\(stems)': \(error.localizedDescription)")
            }
        }
        let mixdown: Session.WrittenMixdown
        do { mixdown = try s.writeMixdown(to: output, stemsFolder: stems) } catch { fail(error.description) }
        let rate = Double(s.manifest.sampleRate)
        print("wrote \(output): 2 channels, \(s.manifest.sampleRate) Hz, " + String(format: "%.3f s", Double(mixdown.frames) / rate)
              + (stems.map { ", \(mixdown.stems) stem\(mixdown.stems == 1 ? "" : "s") in \($0)" } ?? ""))
        // Reported, not limited: the numbers tell how much to take off.
        if mixdown.clips {
            warn(String(format: "the mix clips: its peak is %+.2f dBFS (%.3f × full scale) at %.3f s; it was written clipped at full scale. Lower the tracks' gain by at least %.2f dB",
                        20 * log10(Double(mixdown.peak)), Double(mixdown.peak), Double(mixdown.peakFrame) / rate, 20 * log10(Double(mixdown.peak))))
        }
    }
}

import ArgumentParser
import Foundation
import StompboxCore
import StompboxSession

/// `stompbox session info S [--json]`
struct SessionInfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "Prints a session's rate, tempo, cycle and tracks.",
        discussion: "With --json: sample_rate, tempo_bpm, cycle_frames and tracks (id, author, kind, file, start, frames, channels, gain_db, pan, mute, sha256), start and frames in frames at sample_rate.")

    @Argument(help: "The session file.")
    var session: String

    @Flag(name: .long, help: "Print JSON for scripts.")
    var json = false

    func run() throws {
        let manifest = SessionCLI.open(session).manifest
        if json {
            FileHandle.standardOutput.write(Self.summary(manifest).serialized())
            return
        }
        let seconds = { (frames: Int) in String(format: "%.3f s", Double(frames) / Double(manifest.sampleRate)) }
        print("\(session): \(manifest.sampleRate) Hz, \(SessionCLI.formatted(manifest.tempoBPM)) BPM, cycle \(manifest.cycleFrames) frames, "
              + "\(manifest.tracks.count) track\(manifest.tracks.count == 1 ? "" : "s"), \(seconds(manifest.frames))")
        for t in manifest.tracks {
            print("  \(t.id)  \(t.kind.rawValue) by \(t.author)  start \(t.start)  \(t.frames) frames (\(seconds(t.frames)))  "
                  + "\(t.channels) ch  gain \(SessionCLI.formatted(t.gainDB)) dB  pan \(SessionCLI.formatted(t.pan))"
                  + (t.mute ? "  muted" : "") + "  \(t.file)  sha256 \(t.sha256)")
        }
    }

    /// What `--json` prints: the manifest's fields people and scripts ask about.
    static func summary(_ m: SessionManifest) -> JSONValue {
        .object([
            "sample_rate": .number(Double(m.sampleRate)),
            "tempo_bpm": .number(m.tempoBPM),
            "cycle_frames": .number(Double(m.cycleFrames)),
            "tracks": .array(m.tracks.map { t in
                .object([
                    "id": .string(t.id), "author": .string(t.author), "kind": .string(t.kind.rawValue),
                    "file": .string(t.file), "start": .number(Double(t.start)), "frames": .number(Double(t.frames)),
                    "channels": .number(Double(t.channels)), "gain_db": .number(t.gainDB), "pan": .number(t.pan),
                    "mute": .bool(t.mute), "sha256": .string(t.sha256),
                ])
            }),
        ])
    }
}

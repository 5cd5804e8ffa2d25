import ArgumentParser
import Foundation
import StompboxCore

/// `stompbox artwork DIR`: writes the pedals' SVGs and the icon, generated from the pedals'
/// faces (`PedalArtwork`). The project's own are in Resources/ (`make artwork`).
struct ArtworkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "artwork",
        abstract: "Writes the pedals' artwork (SVG) from their faces.",
        shouldDisplay: false)

    @Argument(help: "The folder to write pedal-<id>.svg and the icon into (Resources/ for the project's own).")
    var folder: String

    func run() throws {
        for (name, svg) in PedalArtwork.files() {
            let path = URL(fileURLWithPath: folder).appendingPathComponent(name)
            do { try Data(svg.utf8).write(to: path, options: .atomic) } catch {
                throw ValidationError("cannot write \(path.path): \(error.localizedDescription)")
            }
            print(path.path)
        }
    }
}

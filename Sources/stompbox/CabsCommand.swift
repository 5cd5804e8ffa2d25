import ArgumentParser
import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP

/// `stompbox cabs [--json]`: the bundled speaker cabinets.
struct CabsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cabs",
        abstract: "Lists the bundled speaker cabinets (the Cabinet pedal's cab.ir).",
        discussion: """
            Each cabinet is listed with its id (the value of cab.ir for --set and --at), its name, \
            its impulse response's length and sample rate, and a description. They are impulse \
            responses the project made itself; data/cabinets/README.md says how.
            """)

    @Flag(help: "Print JSON: a list of cabinets with the same fields as the text.")
    var json = false

    struct Listed: Encodable {
        let id: String
        let name: String
        let description: String
        let file: String
        let frames: Int
        let sampleRate: Int
        let milliseconds: Double
        let isDefault: Bool
    }

    func run() throws {
        let listed: [Listed]
        do {
            let folder = try DataFiles.locate().data("cabinets")
            let catalogue = try CabinetCatalogue.load(folder: folder)
            listed = try catalogue.entries.map { entry in
                let buffer = try AudioFile.read(catalogue.url(of: entry).path)
                return Listed(id: entry.id, name: entry.name, description: entry.description, file: catalogue.url(of: entry).path,
                              frames: buffer.frames, sampleRate: buffer.sampleRate,
                              milliseconds: (Double(buffer.frames) / Double(buffer.sampleRate) * 10_000).rounded() / 10,
                              isDefault: entry.id == Cabinet.bundled[Int(Parameter.cabImpulse.spec.defaultValue)])
            }
        } catch {
            fail("\(error)")
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(listed), as: UTF8.self))
            return
        }
        for (n, cab) in listed.enumerated() {
            if n > 0 { print("") }
            print("\(cab.id)\(cab.isDefault ? " (default)" : "")  \(cab.name)")
            print("  \(cab.frames) samples at \(cab.sampleRate) Hz (\(String(format: "%.1f", cab.milliseconds)) ms)  \(cab.file)")
            print("  \(cab.description)")
        }
    }
}

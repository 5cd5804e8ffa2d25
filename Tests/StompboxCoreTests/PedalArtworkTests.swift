import Foundation
import StompboxDSP
import Testing
@testable import StompboxCore

/// The artwork in Resources/ is what the pedals' faces make: a face moved in Swift and not
/// regenerated (or an SVG edited by hand) fails here, so the window's controls and the printed
/// enclosure under them cannot drift apart.
@Suite("Pedal artwork")
struct PedalArtworkTests {
    @Test("every SVG in Resources/ is the one its face generates (regenerate: make artwork)")
    func committedArtworkIsGenerated() throws {
        let resources = try DataFiles.locate(environment: [:]).resourcesDirectory
        let files = PedalArtwork.files()
        #expect(files.count == PedalKind.builtIn.count + 1)
        for (name, svg) in files {
            let committed = try String(contentsOf: resources.appendingPathComponent(name), encoding: .utf8)
            #expect(committed == svg, "Resources/\(name) differs from what its face generates: run `make artwork`")
        }
    }

    @Test("the artwork prints the LED bezel, the footswitch and the panels where the face has them", arguments: PedalKind.builtIn)
    func artworkFollowsTheFace(_ kind: PedalKind) throws {
        let svg = try #require(PedalArtwork.svg(for: kind))
        let face = kind.face
        let art = try #require(face.artwork)
        let cx = PedalArtwork.n(Double(face.width) / 2)
        #expect(svg.contains("width=\"\(face.width)\" height=\"\(PedalFace.height)\""))
        #expect(svg.contains("<circle cx=\"\(cx)\" cy=\"\(face.ledY)\" r=\"8.5\""), "LED bezel of \(kind.id)")
        #expect(svg.contains("<circle cx=\"\(cx)\" cy=\"\(face.switchY)\" r=\"21\""), "footswitch of \(kind.id)")
        #expect(svg.contains("y=\"\(art.nameY)\"") && svg.contains(">\(art.name)</text>"))
        for panel in [art.screen, art.shade, art.plate, art.bar].compactMap({ $0 }) {
            #expect(svg.contains(PedalArtwork.rect(panel)), "\(kind.id): \(panel) not printed")
        }
    }
}

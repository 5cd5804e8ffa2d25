import Testing
@testable import StompboxDSP

/// Every built-in pedal's face, from its one description: no control overlaps another, the
/// enclosure's edge, the LED, the printed name or a printed panel it does not stand on. (The
/// window tests check the same on the widgets the window really places, at four screen sizes.)
@Suite("Pedal faces")
struct PedalFaceTests {
    @Test("no control overlaps another, the edge, the LED, the name or the looper's bar", arguments: PedalKind.builtIn)
    func controlsKeepApart(_ kind: PedalKind) throws {
        let face = kind.face
        let art = try #require(face.artwork, "\(kind.id) has no artwork")
        let frames = kind.faceFrames
        // Every control the pedal has is on its face, or in a panel of its own.
        let shown = Set(frames.map(\.name))
        for parameter in kind.controls where !face.hidden.contains(String(parameter.id.dropFirst(kind.id.count + 1))) {
            #expect(shown.contains(parameter.id), "\(parameter.id) is not on the \(kind.name)'s face")
        }
        // The enclosure: 4 px of bevel either side, and the bottom's shadow.
        let enclosure = PedalFace.Rect(4, 0, face.width - 8, PedalFace.height - 8)
        let led = PedalFace.Rect(face.width / 2 - 9, face.ledY - 9, 18, 18)
        let name = PedalFace.Rect(8, art.nameY - 18, face.width - 16, 22)
        for (i, a) in frames.enumerated() {
            #expect(enclosure.contains(a.rect), "\(a.name) \(a.rect) leaves the \(kind.name)'s enclosure \(enclosure)")
            #expect(!a.rect.intersects(led), "\(a.name) \(a.rect) covers the \(kind.name)'s LED")
            if a.kind != .footswitch { #expect(!a.rect.intersects(name), "\(a.name) \(a.rect) covers the \(kind.name)'s printed name") }
            if let bar = art.bar { #expect(!a.rect.intersects(bar), "\(a.name) \(a.rect) covers the \(kind.name)'s bar \(bar)") }
            if let screen = art.screen { #expect(!a.rect.intersects(screen), "\(a.name) \(a.rect) covers the \(kind.name)'s screen") }
            // At least 2 px apart, so each rounded to whole pixels at a zoom they still do not touch.
            let margin = PedalFace.Rect(a.rect.x - 1, a.rect.y - 1, a.rect.width + 2, a.rect.height + 2)
            for b in frames[(i + 1)...] {
                #expect(!margin.intersects(PedalFace.Rect(b.rect.x - 1, b.rect.y - 1, b.rect.width + 2, b.rect.height + 2)),
                        "on the \(kind.name), \(a.name) \(a.rect) is not 2 px clear of \(b.name) \(b.rect)")
            }
        }
    }

    @Test("the banner the looper shows while locked covers no control")
    func looperBanner() {
        // Drawn across the middle of the face, 26 px tall around y = 110 (`drawLockedOverlay`).
        let banner = PedalFace.Rect(12, 97, PedalKind.looper.face.width - 24, 26)
        for frame in PedalKind.looper.faceFrames { #expect(!frame.rect.intersects(banner), "\(frame.name) \(frame.rect) under the banner") }
    }

    @Test("a plugin pedal's generic face keeps its controls apart too")
    func genericFaces() {
        for count in [1, 3, 6, 7, 12, 20] {
            // A plugin pedal's kind, as LV2 pedals are made (its face the generic one).
            let kind = PedalKind(id: "generic", name: "Generic",
                                 controls: (0..<count).map { PedalControl("c\($0)", "Control \($0)", .none, 0...1, default: 0) },
                                 plugin: PluginSource(uri: "urn:example:generic"), make: { _ in fatalError("not played") })
            let knobs = kind.faceFrames.filter { $0.kind == .knob }
            #expect(knobs.count == min(count, PedalFace.maximumGenericControls))
            let frames = kind.faceFrames
            for (i, a) in frames.enumerated() {
                #expect(a.rect.x >= 0 && a.rect.x + a.rect.width <= kind.face.width, "\(count) controls: \(a.name) \(a.rect)")
                for b in frames[(i + 1)...] { #expect(!a.rect.intersects(b.rect), "\(count) controls: \(a.name) \(a.rect) overlaps \(b.name) \(b.rect)") }
            }
        }
    }
}

import Foundation
import Testing
@testable import StompboxCore

@Suite("Where the window opens")
struct WindowGeometryTests {
    let laptop = [(x: 0, y: 0, width: 1366, height: 768)]
    let twoScreens = [(x: 0, y: 0, width: 1920, height: 1080), (x: 1920, y: 0, width: 1280, height: 1024)]

    @Test func firstStartFitsOrMaximises() {
        // Natural size fits: no placement, GTK opens it at its natural size.
        #expect(WindowGeometry.placement(saved: nil, natural: (1200, 480), workAreas: laptop) == nil)
        // Too wide for the work area: maximised, at the area's size.
        #expect(WindowGeometry.placement(saved: nil, natural: (1975, 483), workAreas: laptop)
                == WindowGeometry(x: 0, y: 0, width: 1366, height: 768, maximized: true))
    }

    @Test func aSavedPlaceIsKeptOnTheScreenItWasOn() {
        let saved = WindowGeometry(x: 2000, y: 100, width: 1100, height: 600)
        #expect(WindowGeometry.placement(saved: saved, natural: (1975, 483), workAreas: twoScreens) == saved)
        // Larger than the screen it is on now: cut to it, kept on it.
        let big = WindowGeometry(x: 1950, y: 50, width: 1600, height: 1100)
        #expect(WindowGeometry.placement(saved: big, natural: (1975, 483), workAreas: twoScreens)
                == WindowGeometry(x: 1920, y: 0, width: 1280, height: 1024))
    }

    @Test func aPlaceOnAScreenThatIsGoneFallsBackToThePrimary() {
        // Saved on the second monitor, which is unplugged now.
        let saved = WindowGeometry(x: 2000, y: 100, width: 1100, height: 600)
        #expect(WindowGeometry.placement(saved: saved, natural: (1975, 483), workAreas: laptop)
                == WindowGeometry(x: 0, y: 0, width: 1366, height: 768, maximized: true))
        #expect(WindowGeometry.placement(saved: saved, natural: (1000, 483), workAreas: laptop) == nil)
    }

    @Test func aCorruptFileIsNamedAndKept() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("geometry-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("window.json")
        #expect(WindowGeometry.load(from: file).geometry == nil && WindowGeometry.load(from: file).problem == nil)
        try Data("{\"x\": 1, \"width\": \"wide\"}".utf8).write(to: file)
        let (geometry, problem) = WindowGeometry.load(from: file)
        #expect(geometry == nil)
        #expect(problem?.contains(file.path) == true && problem?.contains("not a window geometry") == true, "\(String(describing: problem))")
        // Moved aside, whole, where the message says.
        let kept = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasPrefix("window.json.unreadable-") })
        #expect(problem?.contains(kept) == true)
        #expect(try String(contentsOf: folder.appendingPathComponent(kept), encoding: .utf8) == "{\"x\": 1, \"width\": \"wide\"}")
        let g = WindowGeometry(x: 10, y: 20, width: 1300, height: 700, maximized: false)
        try g.save(to: file)
        #expect(WindowGeometry.load(from: file).geometry == g)
    }
}

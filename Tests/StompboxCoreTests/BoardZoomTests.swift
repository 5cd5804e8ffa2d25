import Testing
@testable import StompboxCore

@Suite("How large the pedals are drawn")
struct BoardZoomTests {
    /// The eight built-in pedals' widths (the EQ is wider) and their height, at zoom 1.
    let widths = [184, 184, 256, 184, 184, 184, 184, 184]
    func fit(_ width: Int, _ height: Int) -> Double {
        BoardZoom.fit(view: (width, height), pedalWidths: widths, pedalHeight: 340, spacing: 10, border: 12)
    }
    /// What the board needs, across, at `zoom` (as the window lays it out: each pedal rounded).
    func needed(_ zoom: Double) -> Int {
        widths.map { Int(BoardZoom.pixels($0, zoom)) }.reduce(0, +) + 7 * 10 + 2 * 12
    }

    @Test func theirOwnSizeWhereTheyJustFit() {
        let width = needed(1), height = 340 + 2 * 12
        #expect(fit(width, height) == 1)
        // A pixel less room across: the next step down (they still fit, without scrolling).
        #expect(fit(width - 1, height) == 0.95)
        #expect(needed(0.95) <= width - 1)
    }

    @Test func largerInALargeWindowAsFarAsBothWaysAllow() {
        // A maximised 2560×1440 window: the board's view about 2300×1300; across decides.
        let zoom = fit(2303, 1308)
        #expect(zoom == 1.4)
        #expect(needed(zoom) <= 2303 && needed(zoom + BoardZoom.step) > 2303)
        // A wide, low window: the height decides.
        #expect(fit(3000, 500) == 1.4)
        #expect(Int(BoardZoom.pixels(340, 1.4)) + 24 <= 500 && Int(BoardZoom.pixels(340, 1.45)) + 24 > 500)
        // Never beyond twice.
        #expect(fit(10_000, 5_000) == BoardZoom.maximum)
    }

    @Test func neverBelowTheReadableMinimumWhichStillGrabsWithAFinger() {
        // A 1280×720 laptop: too narrow for the board even at the minimum, so it scrolls there.
        #expect(fit(1023, 628) == BoardZoom.minimum)
        #expect(needed(BoardZoom.minimum) > 1023)
        // A knob's control (60 px at zoom 1) stays above 44 logical px, a fingertip.
        #expect(BoardZoom.pixels(60, BoardZoom.minimum) >= 44)
        #expect(fit(300, 200) == BoardZoom.minimum)
        // Nothing to show, or nothing shown yet.
        #expect(BoardZoom.fit(view: (800, 600), pedalWidths: [], pedalHeight: 340, spacing: 10, border: 12) == 1)
    }

    @Test func zoomsAreWholeStepsSoASmallResizeKeepsThem() {
        var seen = Set<Double>()
        for width in stride(from: 900, through: 4000, by: 7) {
            let zoom = fit(width, 2000)
            #expect(abs(zoom / BoardZoom.step - (zoom / BoardZoom.step).rounded()) < 1e-9, "\(zoom) at \(width)")
            seen.insert(zoom)
        }
        #expect(seen.count == Int(((BoardZoom.maximum - BoardZoom.minimum) / BoardZoom.step).rounded()) + 1)
    }

    @Test func theWindowOpensLargerOnlyOnALargeScreen() {
        let natural = (width: 1911, height: 471)
        // Laptops and 1920×1080 (and 2560×1440: 1.2 times would fill it): the natural size.
        for area in [(1366, 740), (1920, 1050), (2560, 1410)] {
            #expect(BoardZoom.openingSize(natural: natural, area: area) == natural, "\(area)")
        }
        // A 4K screen at 100 %: 1.8 times, within 90 % of its width and 85 % of its height.
        let big = BoardZoom.openingSize(natural: natural, area: (3840, 2130))
        #expect(big.width > natural.width * 17 / 10 && big.width <= 3840 * 9 / 10 && big.height <= 2130 * 85 / 100)
        #expect(abs(Double(big.width) / Double(big.height) - 1911.0 / 471) < 0.02)
    }
}

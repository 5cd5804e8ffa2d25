import Testing
import StompboxDSP
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

@Suite("How the board wraps onto two rows")
struct BoardArrangementTests {
    /// The built-in pedals' widths at zoom 1, in the order of a new board (eleven: 184, 184,
    /// 264, 224, 224, 264, 184, 184, 184, 184, 184).
    let widths = PedalKind.builtIn.map(\.face.width)
    func arrange(_ width: Int, _ height: Int, _ widths: [Int]? = nil) -> BoardZoom.Arrangement {
        BoardZoom.arrange(view: (width, height), pedalWidths: widths ?? self.widths, pedalHeight: 340, spacing: 10, border: 12)
    }

    @Test func aLaptopWrapsTheBoardRatherThanScrollIt() {
        // 1366×768: the board's view about 1120×650. One row would need zoom 0.5; two rows fit.
        let board = arrange(1120, 650)
        #expect(board.rows.count == 2 && board.rows[0].lowerBound == 0 && board.rows[1].upperBound == widths.count
                && board.rows[0].upperBound == board.rows[1].lowerBound, "\(board)")
        #expect(board.fits && board.zoom >= BoardZoom.minimum, "\(board)")
        // Each row in chain order, the first as long or longer, the wider row as narrow as any split makes it.
        let first = widths[board.rows[0]].reduce(0, +), second = widths[board.rows[1]].reduce(0, +)
        for split in 1..<widths.count {
            #expect(max(first, second) <= max(widths[..<split].reduce(0, +), widths[split...].reduce(0, +)))
        }
    }

    @Test func aTallWindowGrowsThePedalsOntoTwoRows() {
        // 1920×1080: the view about 1650×960. One row fits only below the minimum; two rows at 1.35.
        let board = arrange(1650, 960)
        #expect(board.rows.count == 2 && board.zoom >= 1.3, "\(board)")
        // A short board that one row already shows at the largest zoom stays on one row.
        let three = arrange(1650, 960, [184, 184, 184])
        #expect(three.rows == [0..<3] && three.zoom == BoardZoom.maximum, "\(three)")
        // Six pedals in a tall window: one row only at 1.2, two rows at 1.4.
        let six = arrange(1400, 1000, [184, 184, 184, 184, 184, 184])
        let oneRow = BoardZoom.fit(view: (1400, 1000), pedalWidths: Array(repeating: 184, count: 6), pedalHeight: 340, spacing: 10, border: 12)
        #expect(six.rows == [0..<3, 3..<6] && six.zoom > oneRow, "\(six), one row at \(oneRow)")
    }

    @Test func aWideLowWindowKeepsOneRow() {
        // Too low for two rows at the minimum: one row, scrolling sideways if it must.
        let board = arrange(1700, 420)
        #expect(board.rows == [0..<widths.count] && board.zoom == BoardZoom.minimum && !board.fits, "\(board)")
        let wide = arrange(4000, 420)
        #expect(wide.rows == [0..<widths.count] && wide.fits, "\(wide)")
        // One pedal: one row.
        #expect(arrange(800, 2000, [184]).rows == [0..<1])
    }

    @Test func whatFitsFitsAsTheWindowLaysItOut() {
        for (width, height) in [(1120, 650), (1650, 960), (1000, 900), (3400, 1900)] {
            let board = arrange(width, height)
            guard board.fits else { continue }
            let across = board.rows.map { row in widths[row].map { Int(BoardZoom.pixels($0, board.zoom)) }.reduce(0, +) + 10 * (row.count - 1) + 24 }.max()!
            let down = board.rows.count * Int(BoardZoom.pixels(340, board.zoom)) + 10 * (board.rows.count - 1) + 24
            #expect(across <= width && down <= height, "\(board) in \(width)×\(height)")
        }
    }
}

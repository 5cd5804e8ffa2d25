/// How large the pedals are drawn: the board fits its pedals to the room the window gives them.
///
/// At zoom 1 a pedal is its artwork's size (340 logical pixels tall, knobs of 34-48 px in
/// controls of 60 px). The board scales its pedals up while they still fit the view whole (on a
/// large screen, a maximised window), down to `minimum` so a board slightly too wide still fits,
/// and below that it scrolls sideways at `minimum`: labels there are about 8 px, and a knob's
/// control 51 px, above the 44 px a fingertip needs. Zooms are steps of `step`, so a window
/// resized by a few pixels keeps its pedals (rebuilding them costs a frame or two).
public enum BoardZoom {
    public static let minimum = 0.85
    public static let maximum = 2.0
    public static let step = 0.05

    /// The zoom for a view of `view` logical pixels showing pedals `pedalWidths` wide and
    /// `pedalHeight` tall at zoom 1, `spacing` apart inside a `border` that do not scale.
    public static func fit(view: (width: Int, height: Int), pedalWidths: [Int], pedalHeight: Int,
                           spacing: Int, border: Int) -> Double {
        largest(view: view, rows: [pedalWidths], pedalHeight: pedalHeight, spacing: spacing, border: border).zoom
    }

    /// How a board is laid out: its zoom, and the pedals (by their place in the chain) each row holds.
    public struct Arrangement: Equatable, Sendable {
        public let zoom: Double
        /// Consecutive ranges of the board, in chain order: one row, or two like a two-tier board.
        public let rows: [Range<Int>]
        /// Whether the arrangement fits the view whole at `zoom` (if not, the view scrolls).
        public let fits: Bool

        public init(zoom: Double, rows: [Range<Int>], fits: Bool) {
            (self.zoom, self.rows, self.fits) = (zoom, rows, fits)
        }
    }

    /// The arrangement for a view: one row, or two rows where one row would have to scroll or
    /// two rows let the pedals grow larger (they use the height of a tall window), each at the
    /// largest zoom that fits the view (one row when both are as large). Rows are `spacing` apart,
    /// like the pedals. Where neither fits at `minimum`, one row scrolls sideways at `minimum`.
    public static func arrange(view: (width: Int, height: Int), pedalWidths: [Int], pedalHeight: Int,
                               spacing: Int, border: Int) -> Arrangement {
        let n = pedalWidths.count
        let one = largest(view: view, rows: [pedalWidths], pedalHeight: pedalHeight, spacing: spacing, border: border)
        guard n >= 2 else { return Arrangement(zoom: one.zoom, rows: [0..<n], fits: one.fits) }
        // Two rows, split where the wider row is narrowest (the first row the longer on a tie).
        func wider(_ split: Int) -> Int { max(pedalWidths[..<split].reduce(0, +), pedalWidths[split...].reduce(0, +)) }
        let split = (1..<n).reversed().min { wider($0) < wider($1) }!
        let rows = [Array(pedalWidths[..<split]), Array(pedalWidths[split...])]
        let two = largest(view: view, rows: rows, pedalHeight: pedalHeight, spacing: spacing, border: border)
        let wrap = two.fits && (!one.fits || two.zoom > one.zoom)
        return wrap ? Arrangement(zoom: two.zoom, rows: [0..<split, split..<n], fits: true)
                    : Arrangement(zoom: one.zoom, rows: [0..<n], fits: one.fits)
    }

    /// The largest step at which `rows` of pedals, each sized to whole pixels as the window sizes
    /// them, fit the view both ways; `minimum` (not fitting) when none does.
    static func largest(view: (width: Int, height: Int), rows: [[Int]], pedalHeight: Int,
                        spacing: Int, border: Int) -> (zoom: Double, fits: Bool) {
        guard rows.contains(where: { !$0.isEmpty }), pedalHeight > 0 else { return (1, true) }
        func fitsAt(_ zoom: Double) -> Bool {
            let across = rows.map { row in row.reduce(2 * border + spacing * max(0, row.count - 1)) { $0 + Int(pixels($1, zoom)) } }.max()!
            let down = rows.count * Int(pixels(pedalHeight, zoom)) + spacing * (rows.count - 1) + 2 * border
            return across <= view.width && down <= view.height
        }
        var steps = Int((maximum / step).rounded())
        let lowest = Int((minimum / step).rounded())
        while steps > lowest && !fitsAt(Double(steps) * step) { steps -= 1 }
        let zoom = (Double(steps) * step * 100).rounded() / 100
        return (zoom, fitsAt(zoom))
    }

    /// `value` logical pixels at `zoom`, to whole pixels.
    public static func pixels(_ value: Int, _ zoom: Double) -> Int32 {
        Int32((Double(value) * zoom).rounded())
    }

    /// The size to open a window whose natural size (at zoom 1) is `natural` on a work area of
    /// `area`: the natural size where it is more than about two thirds of the area's width, and
    /// up to twice it on a larger screen (so the pedals are not lost in the middle of a 4K
    /// screen), keeping the natural proportions, within 90 % of the area's width and 85 % of its
    /// height.
    public static func openingSize(natural: (width: Int, height: Int), area: (width: Int, height: Int)) -> (width: Int, height: Int) {
        guard natural.width > 0, natural.height > 0 else { return natural }
        let grow = min(maximum, 0.9 * Double(area.width) / Double(natural.width), 0.85 * Double(area.height) / Double(natural.height))
        guard grow >= 1.35 else { return natural }
        return (Int(Double(natural.width) * grow), Int(Double(natural.height) * grow))
    }
}

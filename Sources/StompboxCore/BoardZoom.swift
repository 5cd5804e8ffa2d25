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
        guard !pedalWidths.isEmpty, pedalHeight > 0 else { return 1 }
        let fixed = 2 * border + spacing * (pedalWidths.count - 1)
        // The largest step at which the pedals, each sized to whole pixels as the window sizes
        // them, fit the view both ways.
        var steps = Int((maximum / step).rounded())
        let lowest = Int((minimum / step).rounded())
        while steps > lowest {
            let zoom = Double(steps) * step
            let across = pedalWidths.reduce(fixed) { $0 + Int(pixels($1, zoom)) }
            if across <= view.width && Int(pixels(pedalHeight, zoom)) + 2 * border <= view.height { break }
            steps -= 1
        }
        return (Double(steps) * step * 100).rounded() / 100
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

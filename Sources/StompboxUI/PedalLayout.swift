import StompboxDSP

/// Where things sit on each pedal, in the pedal's own coordinates (logical pixels). The SVGs in
/// Resources/ (scripts/make-pedal-svgs.py) print the LED bezel, the name and the footswitch at
/// these same positions.
struct PedalLayout {
    struct KnobPlace {
        let parameter: Parameter
        let x: Int
        let y: Int
        let diameter: Int
        let width: Int
    }

    static let height = 340
    let width: Int
    let ledY: Int
    let switchY: Int
    let knobs: [KnobPlace]

    var ledX: Int { width / 2 }

    static func of(_ kind: EffectKind) -> PedalLayout {
        let c = kind.controls
        switch kind {
        case .eq:
            return PedalLayout(width: 264, ledY: 208, switchY: 290, knobs: [])
        case .flanger:
            // Five knobs: three on top, two below.
            return PedalLayout(width: 184, ledY: 156, switchY: 272, knobs: [
                KnobPlace(parameter: c[0], x: 4, y: 14, diameter: 40, width: 60),
                KnobPlace(parameter: c[1], x: 62, y: 14, diameter: 40, width: 60),
                KnobPlace(parameter: c[2], x: 120, y: 14, diameter: 40, width: 60),
                KnobPlace(parameter: c[3], x: 32, y: 76, diameter: 40, width: 60),
                KnobPlace(parameter: c[4], x: 92, y: 76, diameter: 40, width: 60),
            ])
        case .tremolo:
            // Rate and depth knobs either side of the three-way shape switch.
            return PedalLayout(width: 184, ledY: 156, switchY: 272, knobs: [
                KnobPlace(parameter: c[0], x: 4, y: 22, diameter: 46, width: 64),
                KnobPlace(parameter: c[1], x: 116, y: 22, diameter: 46, width: 64),
            ])
        case .looper:
            return PedalLayout(width: 184, ledY: 156, switchY: 272, knobs: [
                KnobPlace(parameter: c[0], x: 10, y: 16, diameter: 44, width: 64),
            ])
        case .overdrive, .delay, .reverb:
            // The classic three: two big knobs in the corners, the middle one smaller and lower.
            return PedalLayout(width: 184, ledY: 156, switchY: 272, knobs: [
                KnobPlace(parameter: c[0], x: 6, y: 14, diameter: 48, width: 64),
                KnobPlace(parameter: c[2], x: 114, y: 14, diameter: 48, width: 64),
                KnobPlace(parameter: c[1], x: 60, y: 66, diameter: 38, width: 64),
            ])
        }
    }
}

/// The colours printed on each pedal (must agree with the SVGs).
struct PedalInk {
    let red: Double, green: Double, blue: Double

    static func text(_ kind: EffectKind) -> PedalInk {
        switch kind {
        case .overdrive: PedalInk(red: 0.16, green: 0.11, blue: 0.02)
        case .eq: PedalInk(red: 0.11, green: 0.14, blue: 0.16)
        default: PedalInk(red: 0.95, green: 0.95, blue: 0.95)
        }
    }
}

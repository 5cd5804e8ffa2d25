import StompboxCore
import StompboxDSP

/// Where a pedal's controls sit on its face, in the pedal's own coordinates (logical pixels):
/// the places its `PedalFace` gives, then rows of knobs for any control it does not place.
struct PedalLayout {
    struct Place {
        let parameter: Parameter
        let x: Int
        let y: Int
        let diameter: Int
        let width: Int
        var menu = false
        var labels: [String]? = nil
    }

    static let height = PedalFace.height
    let width: Int
    let ledY: Int
    let switchY: Int
    let places: [Place]

    var ledX: Int { width / 2 }

    static func of(_ kind: PedalKind) -> PedalLayout {
        let face = kind.face
        var places: [Place] = []
        if face.panel != .equalizer {
            var unplaced: [Parameter] = []
            for parameter in kind.controls {
                let key = String(parameter.id.dropFirst(kind.id.count + 1))
                if face.hidden.contains(key) { continue }
                if let p = face.places.first(where: { $0.control == key }) {
                    places.append(Place(parameter: parameter, x: p.x, y: p.y, diameter: p.diameter, width: p.width, menu: p.menu, labels: p.labels))
                } else {
                    unplaced.append(parameter)
                }
            }
            // Rows of knobs above the LED, as many a row as the face is wide (a plugin pedal's face
            // is widened for its controls, up to `PedalFace.maximumGenericControls`).
            let columns = max(1, (face.width - 4) / 60)
            for (i, parameter) in unplaced.prefix(PedalFace.maximumGenericControls).enumerated() {
                places.append(Place(parameter: parameter, x: 2 + (i % columns) * 60, y: 10 + (i / columns) * 68, diameter: 38, width: 60))
            }
        }
        return PedalLayout(width: face.width, ledY: face.ledY, switchY: face.switchY, places: places)
    }
}

/// The colour printed on a pedal (must agree with its SVG).
struct PedalInk {
    let red: Double, green: Double, blue: Double

    init(_ kind: PedalKind) {
        (red, green, blue) = kind.face.ink
    }

    init(red: Double, green: Double, blue: Double) {
        (self.red, self.green, self.blue) = (red, green, blue)
    }
}

/// `value` logical pixels of a pedal's own coordinates at `zoom` (see `BoardZoom`).
func zoomed(_ value: Int, _ zoom: Double) -> Int32 { BoardZoom.pixels(value, zoom) }

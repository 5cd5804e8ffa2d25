import StompboxCore
import StompboxDSP

/// Where a pedal's controls sit on its face, in the pedal's own coordinates (logical pixels):
/// the rectangles `PedalKind.faceFrames` gives, with what the face says of each control.
struct PedalLayout {
    struct Place {
        let parameter: Parameter
        let kind: FaceFrame.Kind
        let x: Int
        let y: Int
        let diameter: Int
        let width: Int
        let height: Int
        var labels: [String]? = nil
        var caption: String? = nil
    }

    static let height = PedalFace.height
    let width: Int
    let ledY: Int
    let switchY: Int
    let places: [Place]
    /// Every control's rectangle, by name (also the footswitch, the × and any file button).
    let frames: [FaceFrame]

    var ledX: Int { width / 2 }

    func frame(_ name: String) -> PedalFace.Rect? { frames.first { $0.name == name }?.rect }

    static func of(_ kind: PedalKind) -> PedalLayout {
        let face = kind.face
        let frames = kind.faceFrames
        var places: [Place] = []
        for frame in frames where frame.kind != .fader {
            guard let parameter = kind.controls.first(where: { $0.id == frame.name }) else { continue }
            let key = String(frame.name.dropFirst(kind.id.count + 1))
            let place = face.places.first { $0.control == key }
            places.append(Place(parameter: parameter, kind: frame.kind, x: frame.rect.x, y: frame.rect.y,
                                diameter: place?.diameter ?? 38, width: frame.rect.width, height: frame.rect.height,
                                labels: place?.labels, caption: place?.caption))
        }
        return PedalLayout(width: face.width, ledY: face.ledY, switchY: face.switchY, places: places, frames: frames)
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

/// What a pedal looks like: its artwork and where its controls sit, in the pedal's own
/// coordinates (logical pixels, the pedal `height` tall). This is the one description of a
/// face: the window places its controls from it, and the artwork in Resources/ (the enclosure,
/// its colours, printed name, LED bezel, footswitch and printed panels) is generated from it
/// (`PedalArtwork`, `stompbox artwork`), which a test checks byte for byte. Controls without a
/// place are laid out in rows of knobs.
public struct PedalFace: Sendable {
    public struct Place: Sendable {
        /// The control's own name (`PedalControl.key`).
        public let control: String
        public let x: Int
        public let y: Int
        /// A knob's diameter (other controls ignore it).
        public let diameter: Int
        public let width: Int
        /// A choice shown as a labelled mini-menu even with few choices (long names).
        public let menu: Bool
        /// What a choice's menu shows for each choice (its names when nil).
        public let labels: [String]?
        /// A menu's printed name, before the choice it shows ("SYNC" in "SYNC ♪ 1/8").
        public let caption: String?

        public init(_ control: String, x: Int, y: Int, diameter: Int = 44, width: Int = 64, menu: Bool = false,
                    labels: [String]? = nil, caption: String? = nil) {
            self.control = control
            self.x = x
            self.y = y
            self.diameter = diameter
            self.width = width
            self.menu = menu
            self.labels = labels
            self.caption = caption
        }
    }

    /// A panel that takes over all of a pedal's controls.
    public enum Panel: Sendable {
        /// Knobs, switches and menus from each parameter's scale.
        case controls
        /// Faders under a drawn response curve.
        case equalizer
        /// The looper's bar, footswitch gestures and undo button (its knobs as `controls`).
        case looper
    }

    /// A rectangle printed on the enclosure (x, y, width, height).
    public struct Rect: Sendable, Equatable {
        public let x: Int, y: Int, width: Int, height: Int
        public init(_ x: Int, _ y: Int, _ width: Int, _ height: Int) { (self.x, self.y, self.width, self.height) = (x, y, width, height) }
        public func intersects(_ other: Rect) -> Bool {
            x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
        }
        public func contains(_ other: Rect) -> Bool {
            other.x >= x && other.y >= y && other.x + other.width <= x + width && other.y + other.height <= y + height
        }
    }

    /// How the enclosure is printed: colours (`#rrggbb`), the printed name and line under it,
    /// and the panels printed on it (a glass screen, a piped panel, the looper's display bar).
    public struct Artwork: Sendable {
        public let body: String, dark: String, text: String, accent: String
        public let name: String
        public let subtitle: String
        /// The printed name's baseline.
        public let nameY: Int
        /// A glass screen (the EQ's curve shows in it) and a shaded panel (its faders stand on it).
        public let screen: Rect?
        public let shade: Rect?
        /// A panel piped in the accent colour (the amp's face plate).
        public let plate: Rect?
        /// The looper's display bar (its progress draws inside it).
        public let bar: Rect?

        public init(body: String, dark: String, text: String, accent: String, name: String, subtitle: String, nameY: Int = 200,
                    screen: Rect? = nil, shade: Rect? = nil, plate: Rect? = nil, bar: Rect? = nil) {
            (self.body, self.dark, self.text, self.accent, self.name, self.subtitle, self.nameY) = (body, dark, text, accent, name, subtitle, nameY)
            (self.screen, self.shade, self.plate, self.bar) = (screen, shade, plate, bar)
        }
    }

    public static let height = 340
    public let width: Int
    public let ledY: Int
    public let switchY: Int
    public let places: [Place]
    public let panel: Panel
    /// Controls the face does not show (the command line, presets, MIDI and a panel of their
    /// own reach them), by `PedalControl.key`.
    public let hidden: Set<String>
    /// The colour printed on the enclosure (red, green, blue in 0…1), for the knob labels.
    public let ink: (red: Double, green: Double, blue: Double)
    /// The printed enclosure (nil: a plugin pedal, drawn plain by the window).
    public let artwork: Artwork?

    public init(width: Int = 184, ledY: Int = 156, switchY: Int = 272, places: [Place] = [], panel: Panel = .controls,
                hidden: Set<String> = [], ink: (red: Double, green: Double, blue: Double) = (0.95, 0.95, 0.95), artwork: Artwork? = nil) {
        self.hidden = hidden
        self.width = width
        self.ledY = ledY
        self.switchY = switchY
        self.places = places
        self.panel = panel
        self.ink = ink
        self.artwork = artwork
    }

    /// A plugin pedal's face: two rows of controls above the LED, three a row, wider for more than six
    /// (up to `maximumGenericControls`; more are reached through the command line and presets).
    public static func generic(controls: Int) -> PedalFace {
        let columns = max(3, (min(controls, maximumGenericControls) + 1) / 2)
        return PedalFace(width: 4 + columns * 60, panel: .controls)
    }

    /// How many controls a plugin pedal's face shows (in port order).
    public static let maximumGenericControls = 12

    /// The classic three: two big knobs in the upper corners, the middle one smaller and lower
    /// between them; a toggle, if any, under the left knob.
    public static func classicThree(_ left: String, _ middle: String, _ right: String, switch toggle: String? = nil,
                                    ink: (red: Double, green: Double, blue: Double) = (0.95, 0.95, 0.95), artwork: Artwork? = nil) -> PedalFace {
        PedalFace(places: [
            Place(left, x: 6, y: 14, diameter: 48, width: 56),
            Place(right, x: 122, y: 14, diameter: 48, width: 56),
            Place(middle, x: 64, y: 66, diameter: 38, width: 56),
        ] + (toggle.map { [Place($0, x: 6, y: 92, width: 52)] } ?? []), ink: ink, artwork: artwork)
    }

    // MARK: Control sizes

    /// A knob's control: its dial, with its name and value printed under it.
    public static func knobHeight(diameter: Int) -> Int { diameter + 26 }
    /// A toggle: its lever and LED, its name under them.
    public static let toggleHeight = 44
    /// A selector switch: one button a choice, `switchPitch` apart.
    public static let switchButtonHeight = 26, switchPitch = 30
    /// A labelled mini-menu, and the button under a menu that loads a file.
    public static let menuHeight = 26, fileButtonHeight = 24, fileButtonGap = 6
    /// The footswitch (square), the × that takes the pedal off the board, the looper's Undo.
    public static let footswitchSize = 56, removeSize = 22
    public static let undo = Rect(106, 12, 64, 28)
}

/// A control's rectangle on its pedal's face, in the pedal's own coordinates.
public struct FaceFrame: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case knob, toggle, selector, menu, fileButton, footswitch, remove, undo, fader }
    /// The control's parameter id, or what it is ("footswitch", "remove", "undo", "load_file").
    public let name: String
    public let kind: Kind
    public let rect: PedalFace.Rect
}

extension PedalKind {
    /// Every control this pedal's face shows, where it sits and how large it is: the window
    /// places its widgets at these rectangles, and the face tests check that none overlaps
    /// another, the pedal's edge, its LED or its printed panels.
    public var faceFrames: [FaceFrame] {
        let face = self.face
        var frames: [FaceFrame] = []
        if face.panel == .equalizer {
            for (i, band) in controls.enumerated() {
                frames.append(FaceFrame(name: band.id, kind: .fader, rect: .init(15 + i * 40, 88, 38, 92)))
            }
        } else {
            var unplaced: [Parameter] = []
            for parameter in controls {
                let key = String(parameter.id.dropFirst(id.count + 1))
                if face.hidden.contains(key) { continue }
                guard let p = face.places.first(where: { $0.control == key }) else { unplaced.append(parameter); continue }
                switch parameter.spec.scale {
                case .choice(let names) where names.count <= 4 && !p.menu:
                    frames.append(FaceFrame(name: parameter.id, kind: .selector, rect: .init(p.x, p.y, p.width,
                        names.count * PedalFace.switchPitch - (PedalFace.switchPitch - PedalFace.switchButtonHeight))))
                case .choice:
                    frames.append(FaceFrame(name: parameter.id, kind: .menu, rect: .init(p.x, p.y, p.width, PedalFace.menuHeight)))
                    if parameter.spec.choices?.last == Cabinet.fileChoice {
                        frames.append(FaceFrame(name: "load_file", kind: .fileButton,
                                                rect: .init(p.x, p.y + PedalFace.menuHeight + PedalFace.fileButtonGap, p.width, PedalFace.fileButtonHeight)))
                    }
                case .toggle:
                    frames.append(FaceFrame(name: parameter.id, kind: .toggle, rect: .init(p.x, p.y, p.width, PedalFace.toggleHeight)))
                case .linear, .logarithmic:
                    frames.append(FaceFrame(name: parameter.id, kind: .knob, rect: .init(p.x, p.y, p.width, PedalFace.knobHeight(diameter: p.diameter))))
                }
            }
            // Rows of knobs above the LED, as many a row as the face is wide (a plugin pedal's face
            // is widened for its controls, up to `PedalFace.maximumGenericControls`).
            let columns = max(1, (face.width - 4) / 60)
            for (i, parameter) in unplaced.prefix(PedalFace.maximumGenericControls).enumerated() {
                frames.append(FaceFrame(name: parameter.id, kind: .knob,
                                        rect: .init(2 + (i % columns) * 60, 10 + (i / columns) * 68, 60, PedalFace.knobHeight(diameter: 38))))
            }
        }
        if face.panel == .looper { frames.append(FaceFrame(name: "undo", kind: .undo, rect: PedalFace.undo)) }
        let size = PedalFace.footswitchSize
        frames.append(FaceFrame(name: "footswitch", kind: .footswitch, rect: .init(face.width / 2 - size / 2, face.switchY - size / 2, size, size)))
        frames.append(FaceFrame(name: "remove", kind: .remove, rect: .init(face.width - 26, PedalFace.height - 30, PedalFace.removeSize, PedalFace.removeSize)))
        return frames
    }
}

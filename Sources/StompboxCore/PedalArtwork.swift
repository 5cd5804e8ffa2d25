import Foundation
import StompboxDSP

/// The pedals' artwork (`Resources/pedal-<id>.svg`) and the application icon, generated from
/// each pedal's face (`PedalFace`, with its `Artwork`): the enclosure in the pedal's colours
/// with its bevel, screws and jacks, the printed name, the LED bezel at the face's LED, the
/// footswitch at its footswitch, and the panels the face prints (the EQ's screen, the amp's
/// plate, the looper's bar). The window draws the controls, the LED's light and the looper's
/// progress over it. `stompbox artwork DIR` writes the files; a test checks the committed ones
/// are what the faces make, so the artwork and the window's layout cannot drift apart.
public enum PedalArtwork {
    /// Every built-in pedal's file name and SVG, and the icon's.
    public static func files() -> [(name: String, svg: String)] {
        PedalKind.builtIn.compactMap { kind in svg(for: kind).map { ("pedal-\(kind.id).svg", $0) } }
            + [("io.github.stompbox.Stompbox.svg", icon)]
    }

    /// A number as SVG takes it: whole numbers without a point, others to two places.
    static func n(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.2f", value)
    }

    static func hexagon(_ cx: Double, _ cy: Double, _ r: Double) -> String {
        (0..<6).map { k in
            let a = Double.pi / 3 * Double(k) + Double.pi / 6
            return String(format: "%.2f,%.2f", cx + r * cos(a), cy + r * sin(a))
        }.joined(separator: " ")
    }

    static func screw(_ x: Int, _ y: Int) -> String {
        """
          <g transform="translate(\(x) \(y))">
            <circle r="5.2" fill="url(#screw)" stroke="#3b3e42" stroke-width="0.8"/>
            <path d="M -3.4 -1.1 L 3.4 1.1" stroke="#3b3e42" stroke-width="1.3" stroke-linecap="round"/>
          </g>
        """
    }

    static func rect(_ r: PedalFace.Rect) -> String { "x=\"\(r.x)\" y=\"\(r.y)\" width=\"\(r.width)\" height=\"\(r.height)\"" }

    /// The pedal's SVG (nil for a pedal without artwork: a plugin pedal).
    public static func svg(for kind: PedalKind) -> String? {
        let face = kind.face
        guard let art = face.artwork else { return nil }
        let w = face.width, h = PedalFace.height
        let cx = n(Double(w) / 2)
        let jackY = 120
        let switchY = face.switchY, ledY = face.ledY, nameY = art.nameY
        var panels = ""
        if let screen = art.screen {
            panels += """
              <rect \(rect(screen)) rx="6" fill="#0d1a14" stroke="#6d7479" stroke-width="2"/>
              <rect \(rect(screen)) rx="6" fill="url(#glass)"/>

            """
        }
        if let shade = art.shade {
            panels += "  <rect \(rect(shade)) rx=\"6\" fill=\"\(art.dark)\" opacity=\"0.25\"/>\n"
        }
        if let plate = art.plate {
            // Piping in the accent colour around the control panel, as on an amp's face plate.
            panels += """
              <rect \(rect(plate)) rx="8" fill="\(art.dark)" opacity="0.55"/>
              <rect \(rect(plate)) rx="8" fill="none" stroke="\(art.accent)" stroke-width="1.5" opacity="0.85"/>

            """
        }
        if let bar = art.bar {
            panels += "  <rect \(rect(bar)) rx=\"4\" fill=\"#1b0707\" stroke=\"\(art.accent)\" stroke-width=\"1\" opacity=\"0.9\"/>\n"
        }
        return """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(w)" height="\(h)" viewBox="0 0 \(w) \(h)">
          <!-- \(art.name): stomp box enclosure for Stompbox, generated from its face (PedalArtwork.swift; stompbox artwork Resources) -->
          <defs>
            <linearGradient id="body" x1="0" y1="0" x2="0.35" y2="1">
              <stop offset="0" stop-color="\(art.accent)" stop-opacity="0.55"/>
              <stop offset="0.08" stop-color="\(art.body)"/>
              <stop offset="0.75" stop-color="\(art.body)"/>
              <stop offset="1" stop-color="\(art.dark)"/>
            </linearGradient>
            <linearGradient id="bevel" x1="0" y1="0" x2="0" y2="1">
              <stop offset="0" stop-color="#ffffff" stop-opacity="0.65"/>
              <stop offset="0.5" stop-color="#ffffff" stop-opacity="0.05"/>
              <stop offset="1" stop-color="#000000" stop-opacity="0.45"/>
            </linearGradient>
            <linearGradient id="sheen" x1="0" y1="0" x2="1" y2="0">
              <stop offset="0" stop-color="#ffffff" stop-opacity="0"/>
              <stop offset="0.45" stop-color="#ffffff" stop-opacity="0.10"/>
              <stop offset="0.55" stop-color="#ffffff" stop-opacity="0.02"/>
              <stop offset="1" stop-color="#ffffff" stop-opacity="0"/>
            </linearGradient>
            <radialGradient id="screw" cx="0.35" cy="0.3" r="0.8">
              <stop offset="0" stop-color="#ffffff"/>
              <stop offset="0.5" stop-color="#b9bec4"/>
              <stop offset="1" stop-color="#5d6369"/>
            </radialGradient>
            <radialGradient id="chrome" cx="0.4" cy="0.3" r="0.75">
              <stop offset="0" stop-color="#ffffff"/>
              <stop offset="0.35" stop-color="#d7dbe0"/>
              <stop offset="0.7" stop-color="#8c939a"/>
              <stop offset="1" stop-color="#4a5056"/>
            </radialGradient>
            <linearGradient id="nut" x1="0" y1="0" x2="0" y2="1">
              <stop offset="0" stop-color="#eef1f4"/>
              <stop offset="0.5" stop-color="#9aa1a8"/>
              <stop offset="1" stop-color="#50565c"/>
            </linearGradient>
            <linearGradient id="glass" x1="0" y1="0" x2="0" y2="1">
              <stop offset="0" stop-color="#ffffff" stop-opacity="0.10"/>
              <stop offset="0.4" stop-color="#ffffff" stop-opacity="0"/>
            </linearGradient>
            <linearGradient id="jack" x1="0" y1="0" x2="0" y2="1">
              <stop offset="0" stop-color="#c8cdd2"/>
              <stop offset="1" stop-color="#5a6066"/>
            </linearGradient>
          </defs>
          <!-- jacks on the sides -->
          <rect x="0" y="\(jackY - 9)" width="6" height="18" rx="2" fill="url(#jack)"/>
          <rect x="\(w - 6)" y="\(jackY - 9)" width="6" height="18" rx="2" fill="url(#jack)"/>
          <!-- enclosure -->
          <rect x="4" y="2" width="\(w - 8)" height="\(h - 6)" rx="14" fill="#000000" opacity="0.45"/>
          <rect x="4" y="0" width="\(w - 8)" height="\(h - 8)" rx="14" fill="url(#body)"/>
          <rect x="4" y="0" width="\(w - 8)" height="\(h - 8)" rx="14" fill="url(#sheen)"/>
          <rect x="5.5" y="1.5" width="\(w - 11)" height="\(h - 11)" rx="12.5" fill="none" stroke="url(#bevel)" stroke-width="3"/>
          <path d="M 12 \(switchY - 46) H \(w - 12)" stroke="\(art.dark)" stroke-width="1.5" opacity="0.6"/>
          <path d="M 12 \(switchY - 45) H \(w - 12)" stroke="#ffffff" stroke-width="1" opacity="0.25"/>
        \(panels)  <!-- LED bezel (the light is drawn by the window) -->
          <circle cx="\(cx)" cy="\(ledY)" r="8.5" fill="url(#chrome)"/>
          <circle cx="\(cx)" cy="\(ledY)" r="5.6" fill="#2a0606"/>
          <!-- printed name -->
          <text x="\(cx)" y="\(nameY)" text-anchor="middle" font-family="DejaVu Sans" font-weight="bold"
                font-size="\(art.name.count < 9 ? 21 : 19)" letter-spacing="1.5" fill="\(art.text)">\(art.name)</text>
          <text x="\(cx)" y="\(nameY + 15)" text-anchor="middle" font-family="DejaVu Sans" font-size="8"
                letter-spacing="2.5" fill="\(art.text)" opacity="0.75">\(art.subtitle)</text>
          <!-- footswitch: hex nut and domed cap -->
          <circle cx="\(cx)" cy="\(switchY + 3)" r="31" fill="#000000" opacity="0.35"/>
          <polygon points="\(hexagon(Double(w) / 2, Double(switchY), 29))"
                   fill="url(#nut)" stroke="#3f4449" stroke-width="1"/>
          <circle cx="\(cx)" cy="\(switchY)" r="21" fill="url(#chrome)" stroke="#4a5056" stroke-width="1.2"/>
          <circle cx="\(cx)" cy="\(switchY)" r="15" fill="none" stroke="#ffffff" stroke-width="1" opacity="0.5"/>
          <ellipse cx="\(n(Double(w) / 2 - 5))" cy="\(switchY - 7)" rx="8" ry="4" fill="#ffffff" opacity="0.55"/>
          <!-- brand and screws -->
          <text x="\(cx)" y="\(h - 14)" text-anchor="middle" font-family="DejaVu Sans" font-size="7.5"
                font-weight="bold" letter-spacing="3" fill="\(art.text)" opacity="0.55">STOMPBOX</text>
        \(screw(16, 14))
        \(screw(w - 16, 14))
        \(screw(16, h - 22))
        \(screw(w - 16, h - 22))
        </svg>

        """
    }

    /// The application icon: a yellow stomp box with two knobs, a red LED and a footswitch.
    public static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128">
          <!-- Stompbox application icon: a yellow stomp box with two knobs, a red LED and a footswitch -->
          <defs>
            <linearGradient id="b" x1="0" y1="0" x2="0.3" y2="1">
              <stop offset="0" stop-color="#ffd35a"/><stop offset="1" stop-color="#c98c08"/>
            </linearGradient>
            <radialGradient id="c" cx="0.4" cy="0.3" r="0.8">
              <stop offset="0" stop-color="#ffffff"/><stop offset="0.6" stop-color="#9aa1a8"/><stop offset="1" stop-color="#4a5056"/>
            </radialGradient>
            <radialGradient id="k" cx="0.4" cy="0.3" r="0.8">
              <stop offset="0" stop-color="#5a5f66"/><stop offset="1" stop-color="#111315"/>
            </radialGradient>
            <radialGradient id="l" cx="0.5" cy="0.5" r="0.5">
              <stop offset="0" stop-color="#ffd0c8"/><stop offset="0.4" stop-color="#ff2a1a"/><stop offset="1" stop-color="#ff2a1a" stop-opacity="0"/>
            </radialGradient>
          </defs>
          <rect x="22" y="8" width="84" height="114" rx="12" fill="#000" opacity="0.35"/>
          <rect x="22" y="4" width="84" height="114" rx="12" fill="url(#b)" stroke="#8a5e02" stroke-width="2"/>
          <circle cx="44" cy="30" r="13" fill="url(#k)"/><path d="M44 30 L36 22" stroke="#fff" stroke-width="3" stroke-linecap="round"/>
          <circle cx="84" cy="30" r="13" fill="url(#k)"/><path d="M84 30 L92 22" stroke="#fff" stroke-width="3" stroke-linecap="round"/>
          <circle cx="64" cy="58" r="9" fill="url(#l)"/><circle cx="64" cy="58" r="4" fill="#ff3b2a"/>
          <circle cx="64" cy="94" r="17" fill="url(#c)" stroke="#4a5056" stroke-width="1.5"/>
        </svg>

        """
}

#!/usr/bin/env python3
"""Writes Resources/pedal-<effect>.svg: one stomp box per effect, each in its own colour.

The SVGs hold what does not move: the enclosure with its bevel, screws, jacks, the printed
name, the LED bezel and the footswitch. Knobs, sliders and the LED light are drawn by the
window on top (they rotate, move and light up). Positions here must match PedalLayout in
Sources/StompboxUI/PedalLayout.swift. Rerun after changing a colour:
    python3 scripts/make-pedal-svgs.py
"""
import math
import os

HEIGHT = 340
PEDALS = {
    # effect: (width, body colour, darker shade, text colour, accent, LED y, name y, switch y, subtitle)
    "gate":      (184, "#d04a7c", "#8a1f4b", "#fff0f6", "#ffb3d0", 156, 200, 272, "HUM SILENCER"),
    "overdrive": (184, "#f0b51c", "#b9800a", "#2a1d05", "#fff3c4", 156, 200, 272, "TUBE DRIVE"),
    "amp":       (264, "#1e1b18", "#070605", "#e8c773", "#c9a14a", 186, 226, 290, "TUBE PREAMP"),
    "cab":       (224, "#3a2f26", "#1c1510", "#efe1c4", "#c8a86a", 156, 200, 272, "IMPULSE RESPONSE"),
    "eq":        (264, "#d9dcdf", "#9da3a8", "#1d2328", "#ffffff", 208, 238, 290, "6-BAND GRAPHIC"),
    "flanger":   (184, "#7b3fa8", "#4b1f6d", "#f3e8ff", "#c9a6ee", 156, 200, 272, "JET FLANGER"),
    "tremolo":   (184, "#1f8f6a", "#0f5a41", "#eafff6", "#8fe3c4", 156, 200, 272, "OPTO TREMOLO"),
    "delay":     (184, "#2d6fd2", "#173f82", "#eef4ff", "#9cc1ff", 156, 200, 272, "ANALOG ECHO"),
    "reverb":    (184, "#25292e", "#0d0f11", "#e9edf1", "#6c7a88", 156, 200, 272, "HALL REVERB"),
    "looper":    (184, "#c5302f", "#7d1616", "#fff0ee", "#ff9d93", 156, 200, 272, "PHRASE LOOP"),
}
NAMES = {"gate": "NOISE GATE", "overdrive": "OVERDRIVE", "amp": "AMP", "cab": "CABINET", "eq": "EQUALIZER", "flanger": "FLANGER", "tremolo": "TREMOLO",
         "delay": "DELAY", "reverb": "REVERB", "looper": "LOOPER"}


def hexagon(cx, cy, r):
    return " ".join(f"{cx + r*math.cos(math.pi/3*k + math.pi/6):.2f},{cy + r*math.sin(math.pi/3*k + math.pi/6):.2f}" for k in range(6))


def screw(x, y):
    return f'''  <g transform="translate({x} {y})">
    <circle r="5.2" fill="url(#screw)" stroke="#3b3e42" stroke-width="0.8"/>
    <path d="M -3.4 -1.1 L 3.4 1.1" stroke="#3b3e42" stroke-width="1.3" stroke-linecap="round"/>
  </g>'''


def pedal(effect, width, body, dark, text, accent, led_y, name_y, switch_y, subtitle):
    w, h = width, HEIGHT
    cx = w / 2
    jack_y = 120
    eq_screen = ""
    if effect == "eq":
        eq_screen = f'''  <rect x="12" y="12" width="{w-24}" height="74" rx="6" fill="#0d1a14" stroke="#6d7479" stroke-width="2"/>
  <rect x="12" y="12" width="{w-24}" height="74" rx="6" fill="url(#glass)"/>
  <rect x="10" y="86" width="{w-20}" height="112" rx="6" fill="{dark}" opacity="0.25"/>'''
    amp_panel = ""
    if effect == "amp":
        # Gold piping around the control panel, as on an amp's face plate.
        amp_panel = f'''  <rect x="10" y="6" width="{w-20}" height="168" rx="8" fill="{dark}" opacity="0.55"/>
  <rect x="10" y="6" width="{w-20}" height="168" rx="8" fill="none" stroke="{accent}" stroke-width="1.5" opacity="0.85"/>'''
    looper_bar = ""
    if effect == "looper":
        looper_bar = f'''  <rect x="18" y="96" width="{w-36}" height="16" rx="4" fill="#1b0707" stroke="{accent}" stroke-width="1" opacity="0.9"/>'''
    return f'''<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">
  <!-- {NAMES[effect]}: stomp box enclosure for Stompbox (hand-written, see scripts/make-pedal-svgs.py) -->
  <defs>
    <linearGradient id="body" x1="0" y1="0" x2="0.35" y2="1">
      <stop offset="0" stop-color="{accent}" stop-opacity="0.55"/>
      <stop offset="0.08" stop-color="{body}"/>
      <stop offset="0.75" stop-color="{body}"/>
      <stop offset="1" stop-color="{dark}"/>
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
  <rect x="0" y="{jack_y-9}" width="6" height="18" rx="2" fill="url(#jack)"/>
  <rect x="{w-6}" y="{jack_y-9}" width="6" height="18" rx="2" fill="url(#jack)"/>
  <!-- enclosure -->
  <rect x="4" y="2" width="{w-8}" height="{h-6}" rx="14" fill="#000000" opacity="0.45"/>
  <rect x="4" y="0" width="{w-8}" height="{h-8}" rx="14" fill="url(#body)"/>
  <rect x="4" y="0" width="{w-8}" height="{h-8}" rx="14" fill="url(#sheen)"/>
  <rect x="5.5" y="1.5" width="{w-11}" height="{h-11}" rx="12.5" fill="none" stroke="url(#bevel)" stroke-width="3"/>
  <path d="M 12 {switch_y-46} H {w-12}" stroke="{dark}" stroke-width="1.5" opacity="0.6"/>
  <path d="M 12 {switch_y-45} H {w-12}" stroke="#ffffff" stroke-width="1" opacity="0.25"/>
{eq_screen}{amp_panel}
{looper_bar}
  <!-- LED bezel (the light is drawn by the window) -->
  <circle cx="{cx}" cy="{led_y}" r="8.5" fill="url(#chrome)"/>
  <circle cx="{cx}" cy="{led_y}" r="5.6" fill="#2a0606"/>
  <!-- printed name -->
  <text x="{cx}" y="{name_y}" text-anchor="middle" font-family="DejaVu Sans" font-weight="bold"
        font-size="{21 if len(NAMES[effect]) < 9 else 19}" letter-spacing="1.5" fill="{text}">{NAMES[effect]}</text>
  <text x="{cx}" y="{name_y+15}" text-anchor="middle" font-family="DejaVu Sans" font-size="8"
        letter-spacing="2.5" fill="{text}" opacity="0.75">{subtitle}</text>
  <!-- footswitch: hex nut and domed cap -->
  <circle cx="{cx}" cy="{switch_y+3}" r="31" fill="#000000" opacity="0.35"/>
  <polygon points="{hexagon(cx, switch_y, 29)}"
           fill="url(#nut)" stroke="#3f4449" stroke-width="1"/>
  <circle cx="{cx}" cy="{switch_y}" r="21" fill="url(#chrome)" stroke="#4a5056" stroke-width="1.2"/>
  <circle cx="{cx}" cy="{switch_y}" r="15" fill="none" stroke="#ffffff" stroke-width="1" opacity="0.5"/>
  <ellipse cx="{cx-5}" cy="{switch_y-7}" rx="8" ry="4" fill="#ffffff" opacity="0.55"/>
  <!-- brand and screws -->
  <text x="{cx}" y="{h-14}" text-anchor="middle" font-family="DejaVu Sans" font-size="7.5"
        font-weight="bold" letter-spacing="3" fill="{text}" opacity="0.55">STOMPBOX</text>
{screw(16, 14)}
{screw(w-16, 14)}
{screw(16, h-22)}
{screw(w-16, h-22)}
</svg>
'''


def icon():
    return '''<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128">
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
'''


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Resources")
    os.makedirs(root, exist_ok=True)
    for effect, spec in PEDALS.items():
        with open(os.path.join(root, f"pedal-{effect}.svg"), "w") as f:
            f.write(pedal(effect, *spec))
    with open(os.path.join(root, "io.github.stompbox.Stompbox.svg"), "w") as f:
        f.write(icon())


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes data/cabinets/<id>.wav and data/cabinets/cabinets.json: Stompbox's own guitar-cabinet IRs.

The impulse responses are synthesised here, from a physical-ish model of a close-miked guitar
speaker in its cabinet; no measured or third-party IR goes into them. Rerun after changing a
parameter (the output is deterministic: every pseudo-random detail comes from a fixed seed):
    python3 scripts/make-cabinet-irs.py            # writes the files and prints a summary
    python3 scripts/make-cabinet-irs.py --check    # also renders pink noise and a saw through them

Method, for each cabinet:
 1. The target magnitude |H(f)| is built on a fine grid (FFT_SIZE = 65 536 points at 48 kHz,
    0.73 Hz apart) as the product of these parts, each an analogue (s = j*2*pi*f) response:
    - Cone resonance: the speaker's moving mass on its suspension is a 2nd-order high-pass,
      s^2 / (s^2 + s*w0/Q + w0^2). In a closed box the air spring stiffens the suspension
      (Thiele-Small sealed box): fc = fs*sqrt(1 + alpha), Qtc = Qts*sqrt(1 + alpha), where alpha
      is the ratio of the speaker's compliance to the box's. An open back leaves fc = fs, Q = Qts.
      Guitar speakers are lightly damped (Q ~ 1), so the high-pass has a resonant peak.
    - Open back (1x12 only): the rear wave, inverted, wraps around the cabinet and reaches the
      microphone late by D/c (D = extra path) and weaker; only long wavelengths diffract around,
      so its level falls as a 2nd-order low-pass above f_diffraction:
      |1 - g_back(f) * exp(-j*w*D/c)|. Below ~100 Hz the two cancel: the open-back's thin bass.
    - Box resonance: the enclosure's lowest panel/air mode, a resonant peaking section
      (analogue RBJ peaking filter: gain, f0, Q).
    - Voicing: broad peaking sections for what the cone and dust cap do in the mids (presence
      bump, mid-forward hump or mid scoop).
    - Cone break-up: above ~1.5 kHz the paper cone stops moving as a piston and breaks into
      modes: a few named narrow peaks/notches per cabinet, plus N_BREAKUP more drawn from the
      cabinet's seed (log-uniform frequency in 1.5-5 kHz, narrow Q, mostly peaks), plus a fine
      +/-0.6 dB seeded ripple (a spline through random knots on a log-frequency axis, 1-8 kHz).
    - High-frequency roll-off: the cone's mass and break-up losses; an n-th order Butterworth
      low-pass magnitude, 1/sqrt(1 + (f/fc)^(2n)), n = 7..8 (42-48 dB/octave).
    - Close microphone: a cardioid (half pressure, half pressure-gradient) at distance r from a
      point source has |1 + 1/(2jkr)|, k = w/c: the proximity bass boost. A 12" cone is no point
      source, so the effective distance is sqrt(d^2 + a^2) (d: grille to capsule, a: effective
      radiating radius). A dynamic cardioid of the kind used on guitar cabinets is built bass-shy
      to offset that boost: its capsule is modelled as a damped 2nd-order high-pass (f_mic, Q_mic).
    - Floor/baffle and neighbouring-cone reflections: attenuated delayed copies (0.5-2 ms),
      |1 + sum(g_i * exp(-j*w*t_i))|, the comb of a close mic on a cabinet standing on a floor.
 2. The magnitude is floored at -100 dB (below its maximum) and made minimum-phase with the real
    cepstrum (homomorphic method): c = IFFT(log|H|), fold c onto n >= 0 (c[0], 2*c[1..N/2-1],
    c[N/2]), H_min = exp(FFT(c_folded)), h = IFFT(H_min). All the energy is then at the start:
    the IR begins at sample 0 with no pre-delay (the convolver adds no latency, and neither may
    the IR).
 3. h is cut to LENGTH samples and the last FADE samples are faded out by a half-Hann window
    (the tail is already > 60 dB down there, so this changes nothing audible and ends at 0).
 4. Normalisation: the IR is scaled so that its gain for pink noise band-limited to 80 Hz-5 kHz
    is 0 dB: sum(|H(f_i)|^2 / f_i) / sum(1 / f_i) = 1 over the FFT bins in 80-5000 Hz (pink
    noise has power density ~ 1/f). A guitar through the cabinet keeps about its level.
 5. Written as mono 48 kHz 32-bit float WAV (scipy.io.wavfile), listed in cabinets.json in the
    order of CABINETS (the first is the default cabinet).
"""
import json
import os
import sys

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.io import wavfile

RATE = 48_000
FFT_SIZE = 65_536
LENGTH = 4_096            # 85.3 ms
FADE = 1_024              # 21 ms half-Hann fade-out at the end
FLOOR_DB = -100.0
SPEED_OF_SOUND = 343.0
PINK_BAND = (80.0, 5000.0)
N_BREAKUP = 4
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "cabinets")
REPORT_FREQS = [100, 300, 600, 1000, 2000, 3000, 5000, 8000, 12000]

CABINETS = [
    {
        "id": "american-1x12-open",
        "name": "American 1x12 Open Back",
        "description": "Open-back 1x12 combo: bright and airy, loose thin bass from the open back, "
                       "a sparkling presence bump around 2.5 kHz. Suits clean and edge-of-break-up tones.",
        "seed": 1201,
        # Free-air speaker: fs, Qts; open back so no box stiffening.
        "fs": 95.0, "qts": 1.1, "alpha": 0.0,
        # Rear wave: extra path D (m), its level at low frequency, and where diffraction stops it.
        "open_back": {"path": 0.42, "gain": 0.85, "f_diffraction": 180.0},
        "box": {"f": 160.0, "gain_db": 0.5, "q": 2.0},          # weak panel resonance of a pine cab
        "voicing": [
            {"f": 550.0, "gain_db": -1.5, "q": 0.8},             # slight mid scoop
            {"f": 2500.0, "gain_db": 5.0, "q": 1.3},              # presence bump
        ],
        "breakup": [
            {"f": 1750.0, "gain_db": 2.0, "q": 6.0},
            {"f": 3300.0, "gain_db": -4.0, "q": 8.0},
        ],
        "lowpass": {"fc": 5400.0, "order": 8},
        "mic": {"distance": 0.025, "cone_radius": 0.13, "f_capsule": 120.0, "q_capsule": 0.6},
        # (delay ms, gain): floor reflection of a combo standing on the floor.
        "reflections": [(1.15, 0.22)],
    },
    {
        "id": "british-2x12-closed",
        "name": "British 2x12 Closed Back",
        "description": "Closed-back 2x12: tight, focused bass with a box thump around 110 Hz and a "
                       "forward, vocal midrange near 1.2 kHz. An all-rounder for crunch and rhythm.",
        "seed": 2202,
        "fs": 75.0, "qts": 0.9, "alpha": 1.0,                      # fc = 106 Hz, Qtc = 1.27
        "open_back": None,
        "box": {"f": 115.0, "gain_db": 2.5, "q": 2.5},
        "voicing": [
            {"f": 300.0, "gain_db": -1.5, "q": 1.0},              # less low-mid mud
            {"f": 1250.0, "gain_db": 4.5, "q": 1.0},              # mid-forward hump
            {"f": 2800.0, "gain_db": 2.0, "q": 2.0},
        ],
        "breakup": [
            {"f": 2100.0, "gain_db": 3.0, "q": 7.0},
            {"f": 3900.0, "gain_db": -4.0, "q": 8.0},
        ],
        "lowpass": {"fc": 5000.0, "order": 7},
        "mic": {"distance": 0.02, "cone_radius": 0.13, "f_capsule": 120.0, "q_capsule": 0.6},
        # Floor reflection, and a faint arrival from the other cone 0.3 m away.
        "reflections": [(0.8, 0.16), (0.85, 0.05)],
    },
    {
        "id": "british-4x12-closed",
        "name": "British 4x12 Closed Back",
        "description": "Closed-back 4x12: big, chesty low end resonating near 90 Hz, scooped "
                       "low mids around 500 Hz and aggressive cone break-up at 2-4 kHz. Made for high gain.",
        "seed": 4404,
        "fs": 75.0, "qts": 0.85, "alpha": 0.4,                     # fc = 89 Hz, Qtc = 1.0
        "open_back": None,
        "box": {"f": 90.0, "gain_db": 4.0, "q": 2.0},
        "voicing": [
            {"f": 500.0, "gain_db": -5.0, "q": 0.9},              # mid scoop
            {"f": 1300.0, "gain_db": 1.5, "q": 1.2},
        ],
        "breakup": [
            {"f": 2300.0, "gain_db": 5.0, "q": 5.0},
            {"f": 3000.0, "gain_db": -3.0, "q": 7.0},
            {"f": 3700.0, "gain_db": 5.5, "q": 6.0},
        ],
        "lowpass": {"fc": 4700.0, "order": 8},
        "mic": {"distance": 0.03, "cone_radius": 0.13, "f_capsule": 120.0, "q_capsule": 0.6},
        # A 4x12's lower cones sit higher off the floor (longer floor path); neighbour cones 0.33 m away.
        "reflections": [(1.6, 0.2), (0.95, 0.06)],
    },
]


# --- analogue building blocks, all evaluated at s = j*2*pi*f -------------------------------------

def highpass2(f, f0, q):
    s = 1j * f / f0
    return np.abs(s * s / (s * s + s / q + 1.0))


def peaking(f, f0, gain_db, q):
    """Analogue RBJ peaking section: (s^2 + s*A/Q + 1) / (s^2 + s/(A*Q) + 1), A = 10^(dB/40)."""
    a = 10.0 ** (gain_db / 40.0)
    s = 1j * f / f0
    return np.abs((s * s + s * a / q + 1.0) / (s * s + s / (a * q) + 1.0))


def butterworth_lowpass(f, fc, order):
    return 1.0 / np.sqrt(1.0 + (f / fc) ** (2 * order))


def open_back(f, path, gain, f_diffraction):
    g = gain / np.abs(1.0 + 1j * f / (f_diffraction * np.sqrt(2)) - (f / f_diffraction) ** 2)
    return np.abs(1.0 - g * np.exp(-2j * np.pi * f * path / SPEED_OF_SOUND))


def close_mic(f, distance, cone_radius, f_capsule, q_capsule):
    k = 2 * np.pi * np.maximum(f, 1e-3) / SPEED_OF_SOUND
    r = np.hypot(distance, cone_radius)
    return np.abs(1.0 + 1.0 / (2j * k * r)) * highpass2(f, f_capsule, q_capsule)


def reflections(f, taps):
    h = np.ones_like(f, dtype=complex)
    for delay_ms, gain in taps:
        h += gain * np.exp(-2j * np.pi * f * delay_ms * 1e-3)
    return np.abs(h)


def breakup(f, cab, rng):
    """Named break-up modes, seeded extra ones (mostly peaks), and a fine seeded ripple."""
    mag = np.ones_like(f)
    modes = list(cab["breakup"])
    for _ in range(N_BREAKUP):
        modes.append({"f": float(np.exp(rng.uniform(np.log(1500.0), np.log(5000.0)))),
                      "gain_db": float(rng.uniform(1.0, 3.5) * (1 if rng.random() < 0.7 else -1)),
                      "q": float(rng.uniform(5.0, 12.0))})
    for m in modes:
        mag *= peaking(f, m["f"], m["gain_db"], m["q"])
    knots = np.linspace(np.log(1000.0), np.log(8000.0), 40)
    ripple_db = rng.uniform(-0.6, 0.6, knots.size)
    ripple_db[0] = ripple_db[-1] = 0.0
    lf = np.log(np.clip(f, 1000.0, 8000.0))
    mag *= 10.0 ** (CubicSpline(knots, ripple_db, bc_type="clamped")(lf) / 20.0)
    return mag, modes


def target_magnitude(cab, f):
    rng = np.random.default_rng(cab["seed"])
    fc = cab["fs"] * np.sqrt(1.0 + cab["alpha"])
    qtc = cab["qts"] * np.sqrt(1.0 + cab["alpha"])
    mag = highpass2(f, fc, qtc)
    if cab["open_back"]:
        mag *= open_back(f, **cab["open_back"])
    mag *= peaking(f, cab["box"]["f"], cab["box"]["gain_db"], cab["box"]["q"])
    for v in cab["voicing"]:
        mag *= peaking(f, v["f"], v["gain_db"], v["q"])
    b, _ = breakup(f, cab, rng)
    mag *= b
    mag *= butterworth_lowpass(f, cab["lowpass"]["fc"], cab["lowpass"]["order"])
    mag *= close_mic(f, **cab["mic"])
    mag *= reflections(f, cab["reflections"])
    return mag


def minimum_phase(mag_full):
    """Real-cepstrum minimum-phase impulse response for a magnitude given on all FFT_SIZE bins."""
    n = mag_full.size
    mag_full = np.maximum(mag_full, mag_full.max() * 10.0 ** (FLOOR_DB / 20.0))
    cep = np.fft.ifft(np.log(mag_full)).real
    fold = np.zeros(n)
    fold[0] = 1.0
    fold[1:n // 2] = 2.0
    fold[n // 2] = 1.0
    return np.fft.ifft(np.exp(np.fft.fft(cep * fold))).real


def pink_gain(h):
    """Power gain of h for pink noise band-limited to PINK_BAND (power density ~ 1/f)."""
    spec = np.fft.rfft(h, FFT_SIZE)
    f = np.fft.rfftfreq(FFT_SIZE, 1.0 / RATE)
    band = (f >= PINK_BAND[0]) & (f <= PINK_BAND[1])
    w = 1.0 / f[band]
    return float(np.sum(np.abs(spec[band]) ** 2 * w) / np.sum(w))


def response_db(h, freqs):
    n = np.arange(h.size)
    return [20 * np.log10(abs(np.sum(h * np.exp(-2j * np.pi * fr * n / RATE)))) for fr in freqs]


def make_ir(cab):
    f = np.fft.fftfreq(FFT_SIZE, 1.0 / RATE)
    mag = target_magnitude(cab, np.abs(f))
    h = minimum_phase(mag)[:LENGTH].copy()
    h[-FADE:] *= 0.5 * (1.0 + np.cos(np.pi * np.arange(1, FADE + 1) / FADE))
    h /= np.sqrt(pink_gain(h))
    return h


def check(h, name):
    """Renders band-limited pink noise and a 110 Hz saw through h; prints the figures."""
    from scipy.signal import butter, fftconvolve, sosfilt
    rng = np.random.default_rng(7)
    n = RATE * 8
    spec = np.fft.rfft(rng.standard_normal(n))
    fr = np.fft.rfftfreq(n, 1.0 / RATE)
    spec[1:] /= np.sqrt(fr[1:])
    spec[0] = 0.0
    pink = np.fft.irfft(spec, n)
    sos = butter(8, PINK_BAND, btype="bandpass", fs=RATE, output="sos")
    pink = sosfilt(sos, pink)[RATE:]
    wet = fftconvolve(pink, h)[LENGTH:pink.size]
    dry = pink[LENGTH:]
    gain_db = 10 * np.log10(np.mean(wet ** 2) / np.mean(dry ** 2))

    t = np.arange(RATE * 2) / RATE
    saw = np.zeros_like(t)
    for k in range(1, int((RATE / 2) // 110) + 1):
        saw += (-1) ** (k + 1) * np.sin(2 * np.pi * 110 * k * t) / k
    saw *= 2 / np.pi * 0.5

    def centroid(x):
        seg = x[RATE // 2: RATE // 2 + RATE]
        mag = np.abs(np.fft.rfft(seg * np.hanning(seg.size)))
        frq = np.fft.rfftfreq(seg.size, 1.0 / RATE)
        return float(np.sum(frq * mag) / np.sum(mag))

    wet_saw = fftconvolve(saw, h)[:saw.size]
    print(f"  simulated pink-noise gain {gain_db:+.2f} dB; saw centroid dry {centroid(saw):.0f} Hz"
          f" -> wet {centroid(wet_saw):.0f} Hz; saw RMS gain "
          f"{10 * np.log10(np.mean(wet_saw[RATE // 2:] ** 2) / np.mean(saw[RATE // 2:] ** 2)):+.2f} dB")


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    entries = []
    for cab in CABINETS:
        h = make_ir(cab)
        assert np.all(np.isfinite(h)), cab["id"]
        peak = int(np.argmax(np.abs(h)))
        assert np.max(np.abs(h)) < 1.0, cab["id"]
        assert peak < RATE * 0.002, (cab["id"], peak)
        path = os.path.join(OUT_DIR, cab["id"] + ".wav")
        wavfile.write(path, RATE, h.astype(np.float32))
        entries.append({"id": cab["id"], "name": cab["name"], "file": cab["id"] + ".wav",
                        "description": cab["description"]})
        resp = response_db(h, REPORT_FREQS)
        ref = resp[REPORT_FREQS.index(1000)]
        tail_db = 20 * np.log10(np.max(np.abs(h[-FADE:])) / np.max(np.abs(h)))
        print(f"{cab['id']}: {h.size} samples, peak {np.max(np.abs(h)):.3f} at sample {peak} "
              f"({peak / RATE * 1000:.2f} ms), pink gain {10 * np.log10(pink_gain(h)):+.2f} dB, "
              f"fade-region peak {tail_db:.0f} dB")
        print("  " + ", ".join(f"{fr} Hz {db:+.1f}" for fr, db in zip(REPORT_FREQS, resp)) + " dB")
        print("  re 1 kHz: " + ", ".join(f"{fr} Hz {db - ref:+.1f}" for fr, db in zip(REPORT_FREQS, resp)) + " dB")
        if "--check" in sys.argv:
            check(h, cab["id"])
    catalogue = {"format": "stompbox-cabinets", "version": 1, "cabinets": entries}
    with open(os.path.join(OUT_DIR, "cabinets.json"), "w", encoding="utf-8") as out:
        json.dump(catalogue, out, indent=2)
        out.write("\n")


if __name__ == "__main__":
    main()

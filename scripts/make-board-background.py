#!/usr/bin/python3
"""Writes the board's background images (Resources/stompbox.css paints them):
- board-weave.png, the tolex weave as a 7×7 tile (background-repeat): 2 px bands at ±45°, one
  every 7 px along x+y, which is one every 4.95 px across them;
- board-vignette.png, the stage light: an elliptical radial gradient from #2c2824 at the centre
  to #141210 at 85 % of the way to the corners, stretched over the board (background-size).
They were CSS gradients (two repeating-linear-gradients and a radial-gradient), which GTK
rasterises over the whole board on every repaint of anything on it: with the meters at 30 frames
a second, about a quarter of a core."""
import math
import struct
import zlib
from pathlib import Path

SIZE = 7
light = (255, 255, 255, 0.018)   # on top (45°)
dark = (0, 0, 0, 0.25)           # beneath (-45°)


def over(top, bottom):
    at, ab = top[3], bottom[3]
    a = at + ab * (1 - at)
    if a == 0:
        return (0, 0, 0, 0)
    rgb = [(top[i] * at + bottom[i] * ab * (1 - at)) / a for i in range(3)]
    return (*rgb, a)


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width, height, colour_type, rows):
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0))
    return data + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b"")


rows = []
for y in range(SIZE):
    row = bytearray([0])  # filter: none
    for x in range(SIZE):
        t = light if (x + y) % SIZE < 3 else (0, 0, 0, 0)
        b = dark if (x - y) % SIZE < 3 else (0, 0, 0, 0)
        r, g, bl, a = over(t, b)
        row += bytes([round(r), round(g), round(bl), round(a * 255)])
    rows.append(bytes(row))


folder = Path(__file__).resolve().parent.parent / "Resources"
(folder / "board-weave.png").write_bytes(png(SIZE, SIZE, 6, rows))

W, H = 96, 48
centre, edge = (0x2C, 0x28, 0x24), (0x14, 0x12, 0x10)
rows = []
for y in range(H):
    row = bytearray([0])
    for x in range(W):
        # CSS's default ellipse reaches the farthest corner: corners are at 1.
        t = math.hypot((x + 0.5 - W / 2) / (W / 2), (y + 0.5 - H / 2) / (H / 2)) / math.sqrt(2)
        t = min(t / 0.85, 1.0)
        row += bytes(round(centre[i] + (edge[i] - centre[i]) * t) for i in range(3))
    rows.append(bytes(row))
(folder / "board-vignette.png").write_bytes(png(W, H, 2, rows))
print(f"wrote {folder}/board-weave.png and board-vignette.png")

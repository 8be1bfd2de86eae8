"""A small PNG reader for the tests: how much of a picture is drawn (no imaging library).

Reads 8-bit, non-interlaced greyscale, RGB and RGBA PNGs, as Chromium's screenshots and
vl-convert's images are.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type -> bytes per pixel at 8 bits


def size(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def rows(data: bytes):
    """(width, height, bytes per pixel, pixels as a height x width*bpp uint8 array) of a PNG."""
    import numpy as np

    width, height = size(data)
    depth, colour, interlace = data[24], data[25], data[28]
    assert depth == 8 and colour in _CHANNELS and interlace == 0, (depth, colour, interlace)
    step = _CHANNELS[colour]
    chunks, at = [], 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"IDAT":
            chunks.append(data[at + 8:at + 8 + length])
        at += 12 + length
    stride = width * step
    raw = np.frombuffer(zlib.decompress(b"".join(chunks)), dtype=np.uint8)
    raw = raw.reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    previous = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:]
        if kind == 0:
            row = line.copy()
        elif kind == 1:  # Sub: a running sum along the row, channel by channel
            row = (np.cumsum(line.reshape(width, step), axis=0, dtype=np.uint64)
                   & 0xFF).astype(np.uint8).reshape(stride)
        elif kind == 2:  # Up
            row = line + previous
        else:  # Average, Paeth: each byte depends on the one before it
            row = bytearray(line.tobytes())
            up = previous.tobytes()
            for i in range(stride):
                a = row[i - step] if i >= step else 0
                b = up[i]
                if kind == 3:
                    row[i] = (row[i] + (a + b) // 2) & 0xFF
                    continue
                c = up[i - step] if i >= step else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
            row = np.frombuffer(bytes(row), dtype=np.uint8)
        out[y] = row
        previous = out[y]
    return width, height, step, out


def drawn(path: str | Path, threshold: int = 240) -> tuple[int, int]:
    """(pixels darker than ``threshold`` in some colour channel, all pixels) of a PNG: 0 for a
    blank white page. A transparent pixel counts as blank."""
    width, height, step, pixels = rows(Path(path).read_bytes())
    pixels = pixels.reshape(height, width, step)
    colours = pixels[..., :1] if step in (1, 2) else pixels[..., :3]
    dark = colours.min(axis=2) < threshold
    if step in (2, 4):
        dark &= pixels[..., -1] > 0
    return int(dark.sum()), width * height

#!/usr/bin/python3
"""Checks a headless-Chromium screenshot of the quality report's HTML page.

Usage: check_report_png.py SCREENSHOT.png DOM.html

The charts are drawn in fixed colours (curation/report/src/report_html.cpp);
each chart must show up as enough pixels of its colours in the screenshot,
and Chromium's parsed DOM must still hold every chart element. Standard
library only (PIL is not a dependency): PNG decoding is zlib + the five
scanline filters, for the 8-bit RGB/RGBA non-interlaced images Chromium writes.
"""
import re
import struct
import sys
import zlib
from collections import Counter

# fill colour -> (what it is, minimum pixels in a 1200 px wide screenshot)
EXACT_COLOURS = {
    (0x4E, 0x79, 0xA7): ("growth chart: accepted", 5000),
    (0xE1, 0x57, 0x59): ("growth chart: label issue", 500),
    (0x2A, 0x9D, 0x8F): ("source accuracy bars", 3000),
    (0xE6, 0xE8, 0xEB): ("confusion heat map: diagonal cells", 5000),
}
# The heat map's off-diagonal cells blend white into purple #7b3294: count the
# clearly purple pixels (red and blue well above green).
MIN_PURPLE_PIXELS = 2000


def add_bytes(a, b):
    """Bytewise (a + b) mod 256 of two equal-length rows, as two big integers:
    the 'Up' filter of most of Chromium's rows, without a Python loop per byte."""
    low7 = int.from_bytes(b"\x7f" * len(a), "big")
    x, y = int.from_bytes(a, "big"), int.from_bytes(b, "big")
    total = ((x & low7) + (y & low7)) ^ ((x ^ y) & ~low7)
    return bytearray(total.to_bytes(len(a), "big"))


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG file")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace != 0:
        sys.exit(f"{path}: unsupported PNG (bit depth {depth}, colour type {colour_type}, "
                 f"interlace {interlace}); expected 8-bit RGB/RGBA, not interlaced")
    channels = 3 if colour_type == 2 else 4
    stride = width * channels
    raw = zlib.decompress(idat)
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 2:
            line = add_bytes(line, previous)
        for i in range(stride if kind in (1, 3, 4) else 0):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else up_left
                line[i] = (line[i] + predictor) & 0xFF
        if kind > 4:
            sys.exit(f"{path}: bad filter type {kind} on row {y}")
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def main():
    png_path, dom_path = sys.argv[1], sys.argv[2]
    width, height, channels, rows = read_png(png_path)
    counts = Counter()
    for row in rows:
        counts.update(zip(row[0::channels], row[1::channels], row[2::channels]))
    purple = sum(n for (r, g, b), n in counts.items() if r - g > 60 and b - g > 60)
    failures = []
    print(f"screenshot {width}x{height}")
    for colour, (what, minimum) in EXACT_COLOURS.items():
        found = counts.get(colour, 0)
        print(f"  {what} #{bytes(colour).hex()}: {found} pixels (need {minimum})")
        if found < minimum:
            failures.append(f"{what}: {found} pixels of #{bytes(colour).hex()}, need {minimum}")
    print(f"  confusion heat map: purple cells: {purple} pixels (need {MIN_PURPLE_PIXELS})")
    if purple < MIN_PURPLE_PIXELS:
        failures.append(f"confusion heat map: {purple} purple pixels, need {MIN_PURPLE_PIXELS}")

    # The DOM after parsing: every chart and its elements survive, and the
    # source name with <script> in it stayed text.
    dom = open(dom_path, encoding="utf-8").read()
    for chart, element, minimum in (("chart-growth", "growth-segment", 6),
                                    ("chart-sources", "source-bar", 4),
                                    ("chart-confusion", "confusion-cell", 100)):
        if f'id="{chart}"' not in dom:
            failures.append(f"the DOM has no #{chart}")
        found = len(re.findall(f'class="{element}"', dom))
        print(f"  DOM: {found} .{element}")
        if found < minimum:
            failures.append(f"the DOM has {found} .{element} elements, need {minimum}")
    if re.search(r"<script", dom, re.IGNORECASE):
        failures.append("the DOM holds a <script> element: a name was not escaped")

    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

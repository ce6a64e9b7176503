#!/usr/bin/python3
"""Writes N web-sized JPEGs (256 to 500 px on the longer side, quality 85) made
from Debian's openclipart-png (composited on white, Lanczos resize) into a
folder: the typical files of the decoding cost figures (docs/benchmarks.md, "Image decoding")."""
import argparse, os, random

from PIL import Image

from clip_art import distinct_clip_art, longer_side_to, on_white

Image.MAX_IMAGE_PIXELS = None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.folder, exist_ok=True)
    n = 0
    for f in distinct_clip_art(rng, 4_000_000):
        if n == a.count:
            break
        im = on_white(f, 100)
        if im is None:
            continue
        im = longer_side_to(im, rng.randint(256, 500))
        im.save(os.path.join(a.folder, f"{n:04d}.jpg"), quality=85)
        n += 1
    print(n)


if __name__ == "__main__":
    main()

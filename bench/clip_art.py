"""Debian's openclipart-png as a pool of real images for the benchmarks."""
import glob, hashlib, os


def distinct_clip_art(rng, max_bytes):
    """Regular (not linked) PNG files under max_bytes, shuffled by rng, each
    byte content once: a generator, so a caller takes as many as it needs."""
    files = sorted(f for f in glob.glob("/usr/share/openclipart/png/**/*.png", recursive=True)
                   if not os.path.islink(f) and os.path.getsize(f) < max_bytes)
    rng.shuffle(files)
    seen = set()
    for f in files:
        h = hashlib.sha1(open(f, "rb").read()).hexdigest()
        if h not in seen:
            seen.add(h)
            yield f


def on_white(path, min_side, max_pixels=16_000_000):
    """The image of `path` composited on white as RGB, or None when it cannot
    be read, has more than max_pixels or a side under min_side."""
    from PIL import Image
    try:
        with Image.open(path) as probe:
            w, h = probe.size
        if w * h > max_pixels or min(w, h) < min_side:
            return None
        im = Image.open(path)
        im.load()
    except Exception:
        return None
    rgba = im.convert("RGBA")
    bg = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    bg.alpha_composite(rgba)
    return bg.convert("RGB")


def longer_side_to(im, longer):
    """`im` resized (Lanczos) so that its longer side is `longer` pixels, the
    aspect ratio kept: the typical web image the throughput figures use."""
    from PIL import Image
    scale = longer / max(im.size)
    size = (max(1, round(im.width * scale)), max(1, round(im.height * scale)))
    return im.resize(size, Image.LANCZOS)

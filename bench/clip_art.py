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

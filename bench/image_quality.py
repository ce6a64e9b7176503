#!/usr/bin/python3
"""Image-quality issues on real colour images, through the `winnow` CLI with
its defaults (docs/benchmarks.md, "Image-quality issues").

Pool: N colour clip-art images from Debian's openclipart-png (regular files,
distinct bytes, at most 16 Mpx, both sides >= 32 px; "colour": at least 2% of
the pixels of a 256 px thumbnail have a channel spread of 48 or more, so the
set is a colour set and desaturating changes the image). Each image is
composited on white and written as PNG (or JPEG quality 90 with --format
jpeg), shuffled with the seed.

Planted, each on its own disjoint random subset (--per-issue images), with a
random strength per image:
  blur        Gaussian blur, sigma = u * longer side / 128, u in [1.5, 4]
  darken      every channel x f, f in [0.10, 0.35]
  brighten    fade to white: 255 - (255 - v) * f, f in [0.10, 0.35]
  flatten     contrast around the mean colour x f, f in [0.02, 0.10]
  desaturate  chroma around the luma x f, f in [0, 0.04]
  stretch     the longer side (either side of a square) x k, k in [2.2, 4]
Two datasets, each `winnow init --db D` (defaults) + one `winnow ingest` +
`winnow export`: A holds every image untouched, B the same images with the
planted subsets replaced. Per issue:
  recall           planted images flagged with the issue in B
  precision        flagged planted images / (those + the same images,
                   untouched, flagged in A): the planted cases against the
                   same images untouched
  untouched_rate   share of all N untouched images (A) flagged with the issue
  dataset_precision  share of B's images flagged with the issue that were
                   planted with it (natural base rate and side effects of
                   other plants included); flagged_by_plant says what was
                   planted on B's flagged images
and a sweep of recall/precision over thresholds from the exported scores.
Prints JSON.
"""
import argparse, json, os, random, subprocess, tempfile

from PIL import Image, ImageFilter

from clip_art import distinct_clip_art, on_white

Image.MAX_IMAGE_PIXELS = None

PLANTS = {"blur": "blurry", "darken": "dark", "brighten": "bright", "flatten": "low_information",
          "desaturate": "grayscale", "stretch": "odd_aspect_ratio"}


def is_colour(im):
    t = im.copy()
    t.thumbnail((256, 256))
    px = t.getdata()
    n = sum(1 for p in px if max(p) - min(p) >= 48)
    return n >= 0.02 * len(px)


def lut(f):
    return [max(0, min(255, round(f(v)))) for v in range(256)] * 3


def plant(im, kind, rng):
    if kind == "blur":
        return im.filter(ImageFilter.GaussianBlur(rng.uniform(1.5, 4) * max(im.size) / 128))
    if kind == "darken":
        f = rng.uniform(0.10, 0.35)
        return im.point(lut(lambda v: v * f))
    if kind == "brighten":
        f = rng.uniform(0.10, 0.35)
        return im.point(lut(lambda v: 255 - (255 - v) * f))
    if kind == "flatten":
        f = rng.uniform(0.02, 0.10)
        means = [sum(i * c for i, c in enumerate(h)) / max(1, sum(h))
                 for h in (im.histogram()[k * 256:(k + 1) * 256] for k in range(3))]
        bands = [b.point([max(0, min(255, round(m + (v - m) * f))) for v in range(256)])
                 for b, m in zip(im.split(), means)]
        return Image.merge("RGB", bands)
    if kind == "desaturate":
        f = rng.uniform(0.0, 0.04)
        grey = im.convert("L").convert("RGB")
        return Image.blend(grey, im, f)
    if kind == "stretch":
        k = rng.uniform(2.2, 4.0)
        w, h = im.size
        if w > h or (w == h and rng.random() < 0.5):
            return im.resize((round(w * k), h), Image.BILINEAR)
        return im.resize((w, round(h * k)), Image.BILINEAR)
    raise ValueError(kind)


def save(im, path, fmt):
    if fmt == "jpeg":
        im.save(path, "JPEG", quality=90)
    else:
        im.save(path, "PNG", compress_level=1)


def run(winnow, db, manifest):
    subprocess.run([winnow, "init", "--db", db], check=True, capture_output=True)
    subprocess.run([winnow, "ingest", "--db", db, manifest], check=True, capture_output=True)
    out = subprocess.run([winnow, "export", "--db", db], check=True, capture_output=True,
                         text=True).stdout
    rows = {}
    for line in out.splitlines():
        r = json.loads(line)
        rows[r["key"]] = r
    return rows


def flagged(row, issue):
    q = row.get("image_quality")
    return q is not None and issue in q["issues"]


def score(row, issue):
    q = row.get("image_quality")
    return None if q is None else q["scores"][issue]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--images", type=int, default=1500)
    ap.add_argument("--per-issue", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format", choices=["png", "jpeg"], default="png")
    ap.add_argument("--work", default=None, help="folder to keep (default: a temporary one)")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    work = a.work or tempfile.mkdtemp(prefix="winnow-quality-")
    for d in ("untouched", "planted"):
        os.makedirs(os.path.join(work, d), exist_ok=True)
    pool = []
    ext = "jpg" if a.format == "jpeg" else "png"
    for f in distinct_clip_art(rng, 4_000_000):
        if len(pool) == a.images:
            break
        im = on_white(f, 32)
        if im is None or not is_colour(im):
            continue
        path = os.path.join(work, "untouched", f"{len(pool):05d}.{ext}")
        save(im, path, a.format)
        pool.append((path, im.size))
    n = len(pool)
    order = list(range(n))
    rng.shuffle(order)
    subsets, at = {}, 0
    for kind in PLANTS:
        subsets[kind] = order[at:at + a.per_issue]
        at += a.per_issue
    planted_kind = {i: kind for kind, idx in subsets.items() for i in idx}
    manifests = {}
    for name in ("untouched", "planted"):
        lines = []
        for i, (path, _) in enumerate(pool):
            p = path
            if name == "planted" and i in planted_kind:
                p = os.path.join(work, "planted", f"{i:05d}.{ext}")
                save(plant(Image.open(path).convert("RGB"), planted_kind[i], rng), p, a.format)
            lines.append(json.dumps({"key": f"i{i}", "path": p}))
        manifests[name] = os.path.join(work, f"{name}.jsonl")
        with open(manifests[name], "w") as out:
            out.write("\n".join(lines) + "\n")
    A = run(a.winnow, os.path.join(work, "untouched.db"), manifests["untouched"])
    B = run(a.winnow, os.path.join(work, "planted.db"), manifests["planted"])

    result = {"seed": a.seed, "format": a.format, "images": n, "per_issue": a.per_issue,
              "issues": {}}
    for kind, issue in PLANTS.items():
        keys = [f"i{i}" for i in subsets[kind]]
        tp = sum(flagged(B[k], issue) for k in keys)
        fp_pair = sum(flagged(A[k], issue) for k in keys)
        flagged_b = [k for k, r in B.items() if flagged(r, issue)]
        untouched = sum(flagged(r, issue) for r in A.values())
        # Sweep: flagged when the score is below t (grayscale also needs a colour set: it is one).
        sweep = []
        for t in sorted({0.05, 0.1, 0.125, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6}):
            rec = sum((score(B[k], issue) or 1) < t for k in keys)
            fp = sum((score(A[k], issue) or 1) < t for k in keys)
            sweep.append({"threshold": t, "recall": rec / len(keys),
                          "precision": rec / (rec + fp) if rec + fp else None,
                          "untouched_rate": sum((score(r, issue) or 1) < t for r in A.values()) / n})
        by_plant = {}  # B's images flagged with the issue, by what was planted on them
        for k in flagged_b:
            plant_name = planted_kind.get(int(k[1:]), "untouched")
            by_plant[plant_name] = by_plant.get(plant_name, 0) + 1
        result["issues"][issue] = {
            "planted": kind, "recall": tp / len(keys), "flagged_by_plant": by_plant,
            "precision": tp / (tp + fp_pair) if tp + fp_pair else None,
            "untouched_rate": untouched / n,
            "dataset_precision": (sum(k in set(keys) for k in flagged_b) / len(flagged_b))
            if flagged_b else None,
            "sweep": sweep}
    for issue in ("odd_size",):
        result["issues"][issue] = {"untouched_rate": sum(flagged(r, issue) for r in A.values()) / n}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Near duplicates among real colour image files, through the `winnow` CLI
with its defaults (docs/benchmarks.md, "Image files").

Originals: N distinct clip-art PNGs from Debian's openclipart-png (symbolic
links and byte-identical files skipped, and any whose 32x32 colour thumbnail,
blurred as winnow's verifier blurs it, correlates >= 0.9 with an original
already chosen: the set has many
near-identical drawings, which would make "untouched" images duplicates of
each other), copied into a folder tree. Planted copies of random originals,
strengths drawn per copy: JPEG re-encoding (quality 60-95), resize to 70-80%,
crop of 3-5% per side, brightness x U[0.9, 1.1], and pairs of these; plus
byte-identical copies and re-saved PNGs (same pixels, other bytes). Arrival
order: originals shuffled, each copy at a random place after its original.
`winnow init --db D` (defaults), one `winnow ingest`, then `winnow export`.

Prints JSON: recall per kind of copy, and the share of untouched originals
flagged near duplicate (of another original: the set has its own
near-identical drawings).
"""
import argparse, io, json, os, random, subprocess, sys, tempfile, time

import numpy as np
from PIL import Image, ImageEnhance, ImageFilter

from clip_art import distinct_clip_art

Image.MAX_IMAGE_PIXELS = None


def rgb_of(im):
    """The image composited on white, RGB (as winnow decodes it)."""
    im = im.convert("RGBA")
    bg = Image.new("RGBA", im.size, (255, 255, 255, 255))
    bg.alpha_composite(im)
    return bg.convert("RGB")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--originals", type=int, default=2000)
    ap.add_argument("--copies", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default=None, help="folder to keep (default: a temporary one)")
    ap.add_argument("--init-arg", action="append", default=[],
                    help="an extra `winnow init` argument (measuring other settings than the defaults)")
    ap.add_argument("--twin", type=float, default=0.9,
                    help="skip an original whose colour thumbnail correlates this much with one chosen")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    work = a.work or tempfile.mkdtemp(prefix="winnow-imgbench-")
    os.makedirs(work, exist_ok=True)
    originals, thumbs = [], []
    twins = 0
    for f in distinct_clip_art(rng, 2_000_000):
        if len(originals) == a.originals:
            break
        try:
            with Image.open(f) as im:
                if im.width * im.height > 64_000_000:
                    continue
                t = np.asarray(rgb_of(im).resize((32, 32), Image.BOX).filter(
                    ImageFilter.GaussianBlur(0.7)), dtype=np.float64).ravel()
        except Exception:
            continue
        t = t - t.mean()
        norm = np.linalg.norm(t)
        if norm == 0:
            continue
        t /= norm
        if thumbs and float(np.max(np.array(thumbs) @ t)) >= a.twin:
            twins += 1
            continue
        thumbs.append(t)
        originals.append(f)
    records = []  # (key, path, kind, original index or None)
    os.makedirs(os.path.join(work, "originals"), exist_ok=True)
    os.makedirs(os.path.join(work, "copies"), exist_ok=True)
    for i, f in enumerate(originals):
        dst = os.path.join(work, "originals", f"{i:05d}.png")
        with open(dst, "wb") as out:
            out.write(open(f, "rb").read())
        records.append((f"o{i}", dst, "original", None))

    def rgb(path):
        return rgb_of(Image.open(path))

    def perturb(im, kind):
        if kind == "reencode":
            b = io.BytesIO()
            im.save(b, "JPEG", quality=rng.randint(60, 95))
            return Image.open(b).convert("RGB")
        if kind == "resize75":
            f = rng.uniform(0.7, 0.8)
            return im.resize((max(1, round(im.width * f)), max(1, round(im.height * f))),
                             Image.BILINEAR)
        if kind == "crop4":
            f = rng.uniform(0.03, 0.05)
            dx, dy = round(im.width * f), round(im.height * f)
            return im.crop((dx, dy, im.width - dx, im.height - dy))
        if kind == "brightness":
            return ImageEnhance.Brightness(im).enhance(rng.uniform(0.9, 1.1))
        raise ValueError(kind)

    kinds = ["reencode", "resize75", "crop4", "brightness", "pair", "bytes", "resaved"]
    for c in range(a.copies):
        i = rng.randrange(len(originals))
        kind = kinds[c % len(kinds)]
        src = records[i][1]
        if kind == "bytes":
            dst = os.path.join(work, "copies", f"{c:05d}.png")
            with open(dst, "wb") as out:
                out.write(open(src, "rb").read())
        elif kind == "resaved":
            dst = os.path.join(work, "copies", f"{c:05d}.png")
            Image.open(src).save(dst, optimize=True)  # same pixels, other bytes
        else:
            im = rgb(src)
            if kind == "pair":
                first, second = rng.sample(["reencode", "resize75", "crop4", "brightness"], 2)
                kind = f"pair:{first}+{second}"
                im = perturb(perturb(im, first), second)
            else:
                im = perturb(im, kind)
            dst = os.path.join(work, "copies", f"{c:05d}.jpg")
            im.save(dst, "JPEG", quality=92)
        records.append((f"c{c}", dst, kind, i))
    # Arrival order: originals shuffled; each copy somewhere after its original.
    order = [r for r in records if r[3] is None]
    rng.shuffle(order)
    for r in records:
        if r[3] is None:
            continue
        pos = next(n for n, o in enumerate(order) if o[0] == f"o{r[3]}")
        order.insert(rng.randint(pos + 1, len(order)), r)
    manifest = os.path.join(work, "manifest.jsonl")
    with open(manifest, "w") as out:
        for key, path, _, _ in order:
            out.write(json.dumps({"key": key, "path": path}) + "\n")
    db = os.path.join(work, "data.db")
    for f in (db, db + ".index"):
        if os.path.exists(f):
            os.remove(f)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    subprocess.run([a.winnow, "init", "--db", db, *a.init_arg], check=True, env=env, stdout=subprocess.DEVNULL)
    t0 = time.time()
    summary = json.loads(subprocess.run([a.winnow, "ingest", "--db", db, manifest], check=True,
                                        env=env, capture_output=True, text=True).stdout)
    seconds = time.time() - t0
    rows = [json.loads(l) for l in subprocess.run([a.winnow, "export", "--db", db], check=True,
                                                  capture_output=True, text=True).stdout.split("\n") if l]
    by_key = {r["key"]: r for r in rows}
    id_to_key = {r["id"]: r["key"] for r in rows}
    caught, total = {}, {}
    for key, _, kind, orig in records:
        if orig is None:
            continue
        group = "pair" if kind.startswith("pair") else kind
        r = by_key[key]
        hit = r["status"] in ("duplicate_near", "duplicate_exact")
        total[group] = total.get(group, 0) + 1
        caught[group] = caught.get(group, 0) + hit
    originals_flagged = sum(1 for key, _, kind, _ in records
                            if kind == "original" and by_key[key]["status"] == "duplicate_near")
    rejected = sum(1 for r in rows if r["status"] == "rejected")
    near_total = sum(v for k, v in total.items() if k not in ("bytes", "resaved"))
    near_caught = sum(v for k, v in caught.items() if k not in ("bytes", "resaved"))
    print(json.dumps({
        "seed": a.seed, "originals": len(originals), "copies": a.copies,
        "twins_skipped": twins,
        "recall": {k: round(caught[k] / total[k], 4) for k in sorted(total)},
        "near_copy_recall": round(near_caught / near_total, 4),
        "exact_caught": {k: f"{caught[k]}/{total[k]}" for k in ("bytes", "resaved")},
        "untouched_flagged_near": round(originals_flagged / len(originals), 4),
        "rejected": rejected,
        "ingest_seconds": round(seconds, 2), "counts": summary["counts"],
    }))


if __name__ == "__main__":
    main()

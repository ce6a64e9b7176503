#!/usr/bin/python3
"""winnow on image files: a folder tree of real colour pictures, curated with
`winnow import-folder` and the defaults of `winnow init` (docs/demo-images.md).

The pictures are clip art from Debian's openclipart-png (distinct PNG files,
no symbolic links, at most --max-bytes each), written in the ImageFolder
layout: images/<category>/<random name>.png, the package's category folder
(animals, food, ...) as the class. Arrival in two waves, as a data set grows:

* wave 1: most originals, and the quality plants: pictures (seen nowhere
  else in the set) blurred, darkened, brightened, flattened to low contrast,
  desaturated to grey, or stretched to an odd aspect ratio;
* wave 2: the rest of the originals and planted copies of wave-1 originals,
  in the same class folders under new random names: JPEG re-encodings
  (quality 70-95), resizes to 75%, crops of 4% per side, brightness x0.9 or
  x1.1, byte-identical copies and PNGs re-saved with the same pixels.

`winnow init --db D` (defaults), `winnow import-folder --db D images/` after
each wave (the second ingests only the new files), then `winnow export`.
It prints what was caught: per planted kind of copy the share flagged as a
duplicate (and of the right original), the share of untouched originals
flagged as near duplicates, and, when this winnow's export has image-quality
issues, each planted problem's recall and how often untouched pictures get
the same issue. The planted truth is in truth.json, the results in
results.json, both in the work folder (default build/demo/images).

Python 3 with numpy-free PIL only. Example (from the repository root):
    scripts/demo --images
    /usr/bin/python3 examples/demo/image_scenario.py --winnow build/bin/winnow
"""

import argparse
import collections
import hashlib
import io
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

from PIL import Image, ImageEnhance, ImageFilter

from winnow_cli import run_winnow  # examples/demo/winnow_cli.py

CLIP_ART = Path("/usr/share/openclipart/png")
COPY_KINDS = ["reencode", "resize75", "crop4", "brightness", "bytes", "resaved"]
QUALITY_KINDS = ["blurred", "darkened", "brightened", "flattened", "desaturated", "stretched"]
# The image-quality issue a planted problem should get, by words its name may
# contain (the issue names are those of the winnow that runs, so matched loosely).
EXPECTED_ISSUE = {
    "blurred": ("blur",),
    "darkened": ("dark",),
    "brightened": ("bright", "light"),
    "flattened": ("low_information", "low-information", "information", "flat"),
    "desaturated": ("gray", "grey"),
    "stretched": ("aspect",),
}


# --- the pictures ----------------------------------------------------------------------


def pick_originals(count, max_bytes, rng):
    """`count` distinct clip-art PNG files (no links, no byte-identical pairs),
    shuffled: a list of (category, path)."""
    if not CLIP_ART.is_dir():
        sys.exit(f"image_scenario: no clip art at {CLIP_ART} "
                 "(scripts/install-deps installs Debian's openclipart-png)")
    files = sorted(p for p in CLIP_ART.rglob("*.png")
                   if not p.is_symlink() and p.is_file() and p.stat().st_size <= max_bytes)
    rng.shuffle(files)
    seen, picked = set(), []
    for path in files:
        digest = hashlib.sha1(path.read_bytes()).hexdigest()
        if digest in seen:
            continue
        seen.add(digest)
        picked.append((path.relative_to(CLIP_ART).parts[0], path))
        if len(picked) == count:
            break
    if len(picked) < count:
        sys.exit(f"image_scenario: only {len(picked)} distinct clip-art files, {count} asked")
    return picked


def on_white(path):
    """The picture as RGB, transparency composited on white (as winnow does)."""
    image = Image.open(path).convert("RGBA")
    page = Image.new("RGBA", image.size, (255, 255, 255, 255))
    page.alpha_composite(image)
    return page.convert("RGB")


def copy_of(source, kind, rng):
    """A planted copy of `source`: (file bytes, extension)."""
    if kind == "bytes":
        return source.read_bytes(), "png"
    if kind == "resaved":  # the same pixels, other bytes
        out = io.BytesIO()
        Image.open(source).save(out, "PNG", optimize=True, compress_level=9)
        return out.getvalue(), "png"
    image = on_white(source)
    quality = 92
    if kind == "reencode":
        quality = rng.randint(70, 95)
    elif kind == "resize75":
        image = image.resize((max(1, round(image.width * 0.75)), max(1, round(image.height * 0.75))),
                             Image.BILINEAR)
    elif kind == "crop4":
        dx, dy = round(image.width * 0.04), round(image.height * 0.04)
        image = image.crop((dx, dy, image.width - dx, image.height - dy))
    elif kind == "brightness":
        image = ImageEnhance.Brightness(image).enhance(rng.choice([0.9, 1.1]))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=quality)
    return out.getvalue(), "jpg"


def quality_problem(source, kind):
    """`source` with a planted quality problem, as PNG bytes."""
    image = on_white(source)
    if kind == "blurred":
        image = image.filter(ImageFilter.GaussianBlur(max(2.0, 0.04 * min(image.size))))
    elif kind == "darkened":
        image = ImageEnhance.Brightness(image).enhance(0.25)
    elif kind == "brightened":
        image = ImageEnhance.Brightness(image).enhance(1.7)
    elif kind == "flattened":
        image = ImageEnhance.Contrast(image).enhance(0.08)
    elif kind == "desaturated":
        image = image.convert("L").convert("RGB")
    elif kind == "stretched":
        image = image.resize((image.width * 3, max(1, image.height // 2)), Image.BILINEAR)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


class Tree:
    """The ImageFolder tree: files under random names in their class folder,
    and the truth about each, by key (the path under the tree)."""

    def __init__(self, root, rng):
        self.root, self.rng, self.truth = root, rng, {}

    def write(self, category, data, extension, **truth):
        while True:
            key = f"{category}/{self.rng.getrandbits(40):010x}.{extension}"
            if key not in self.truth:
                break
        path = self.root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.truth[key] = truth
        return key


def plant(options, work, rng):
    """Writes wave 1 and returns a function that writes wave 2."""
    per_copy, per_problem = options.copies_per_kind, options.problems_per_kind
    pictures = pick_originals(options.originals + per_problem * len(QUALITY_KINDS),
                              options.max_bytes, rng)
    originals, problems = pictures[:options.originals], pictures[options.originals:]
    first_wave = originals[:round(len(originals) * 0.8)]
    second_wave = originals[len(first_wave):]
    root = work / "images"
    if root.exists():
        shutil.rmtree(root)
    tree = Tree(root, rng)
    original_key = {}
    for category, path in first_wave:
        original_key[path] = tree.write(category, path.read_bytes(), "png", kind="original",
                                        wave=1)
    for n, (category, path) in enumerate(problems):
        kind = QUALITY_KINDS[n % len(QUALITY_KINDS)]
        tree.write(category, quality_problem(path, kind), "png", kind=kind, wave=1)

    def write_second_wave():
        for category, path in second_wave:
            tree.write(category, path.read_bytes(), "png", kind="original", wave=2)
        for kind in COPY_KINDS:
            for category, path in rng.sample(first_wave, per_copy):
                data, extension = copy_of(path, kind, rng)
                tree.write(category, data, extension, kind=kind, wave=2,
                           original=original_key[path])

    return root, tree, write_second_wave


# --- winnow ------------------------------------------------------------------------------


def import_folder(winnow, db, root):
    start = time.perf_counter()
    summary = json.loads(run_winnow(winnow, "import-folder", "--db", db, root))
    summary["wall_seconds"] = round(time.perf_counter() - start, 2)
    return summary


# --- what was caught ---------------------------------------------------------------------


def issue_names(sample):
    """The image-quality issues export gives a sample, as lower-case names, or
    None when this winnow's export has no issue field at all."""
    if "image_quality" in sample:  # {"issues": [names], "scores": ...}; null: not an image
        quality = sample["image_quality"]
        return set() if quality is None else {name.lower() for name in quality["issues"]}
    for field in ("issues", "quality_issues", "image_issues"):
        if field in sample:
            value = sample[field]
            if value is None:
                return set()
            if isinstance(value, str):
                return {v.strip().lower() for v in value.replace(";", ",").split(",") if v.strip()}
            if isinstance(value, dict):  # {name: score or flag}: flagged when truthy/true
                return {k.lower() for k, v in value.items()
                        if v is True or (isinstance(v, dict) and v.get("flagged"))}
            return {(v if isinstance(v, str) else v.get("name", "")).lower() for v in value}
    # Or one column per issue ("is_blurry": true, "dark": true, ...).
    columns = [k for k in sample
               if any(word in k.lower() for words in EXPECTED_ISSUE.values() for word in words)]
    if not columns:
        return None
    return {k.lower() for k in columns if sample[k] is True}


def has_issue(names, kind):
    return any(word in name for name in names for word in EXPECTED_ISSUE[kind])


def compare(truth, exported):
    by_key = {s["key"]: s for s in exported}
    key_of_id = {s["id"]: s["key"] for s in exported}
    missing = sorted(set(truth) - set(by_key))
    if missing:
        sys.exit(f"image_scenario: {len(missing)} files not in the database, e.g. {missing[0]}")

    def group_root(key):  # follow duplicate_of to the sample kept
        seen = set()
        while by_key[key]["duplicate_of"] is not None and key not in seen:
            seen.add(key)
            key = key_of_id[by_key[key]["duplicate_of"]]
        return key

    copies = {}
    for kind in COPY_KINDS:
        planted = [k for k, t in truth.items() if t["kind"] == kind]
        # A copy of an original that was rejected (a blank drawing: "cannot embed a
        # constant image") has nothing to be a duplicate of: not counted.
        keys = [k for k in planted if by_key[truth[k]["original"]]["status"] != "rejected"]
        flagged = [k for k in keys if by_key[k]["status"] in ("duplicate_exact", "duplicate_near")]
        right = [k for k in flagged if group_root(k) == group_root(truth[k]["original"])]
        copies[kind] = {"planted": len(keys), "of_rejected_originals": len(planted) - len(keys),
                        "caught": len(flagged), "of_the_right_original": len(right),
                        "recall": round(len(flagged) / len(keys), 4) if keys else None,
                        "as": dict(collections.Counter(by_key[k]["status"] for k in keys))}
    with_copies = {t["original"] for t in truth.values() if "original" in t}
    untouched = [k for k, t in truth.items() if t["kind"] == "original" and k not in with_copies]
    flagged_near = [k for k in untouched if by_key[k]["status"] == "duplicate_near"]
    untouched_result = {"originals": len(untouched), "flagged_near": len(flagged_near),
                        "rate": round(len(flagged_near) / len(untouched), 4),
                        "examples": [[k, group_root(k)] for k in flagged_near[:5]]}

    issues = {s["key"]: issue_names(s) for s in exported}
    if all(v is None for v in issues.values()):
        quality = {"note": "this winnow's export has no image-quality issues: the planted "
                           "problems were ingested but are not reported"}
    else:
        quality = {}
        plain = [k for k, t in truth.items() if t["kind"] == "original"]
        for kind in QUALITY_KINDS:
            keys = [k for k, t in truth.items() if t["kind"] == kind]
            caught = [k for k in keys if has_issue(issues[k] or set(), kind)]
            false = [k for k in plain if has_issue(issues[k] or set(), kind)]
            # Precision against the same pictures untouched: the planted ones
            # and the originals that got the issue.
            quality[kind] = {"planted": len(keys), "caught": len(caught),
                             "recall": round(len(caught) / len(keys), 4) if keys else None,
                             "untouched_with_issue": len(false),
                             "untouched_rate": round(len(false) / len(plain), 4),
                             "precision": round(len(caught) / (len(caught) + len(false)), 4)
                             if caught or false else None}
        names = collections.Counter(n for v in issues.values() if v for n in v)
        quality["issues_seen"] = dict(names.most_common())
    return copies, untouched_result, quality


def print_table(copies, untouched, quality):
    print(f"{'planted copy':<14}{'caught':>10}{'recall':>8}  (right original)")
    for kind, r in copies.items():
        print(f"{kind:<14}{r['caught']:>5} / {r['planted']:<3}{r['recall']:>7.2f}"
              f"  ({r['of_the_right_original']})")
    left_out = sum(r["of_rejected_originals"] for r in copies.values())
    if left_out:
        print(f"({left_out} copies of originals rejected as blank images are not counted)")
    print(f"untouched originals flagged near: {untouched['flagged_near']} / "
          f"{untouched['originals']} = {untouched['rate']:.3f}")
    if "note" in quality:
        print(f"quality problems: {quality['note']}")
        return
    print(f"{'planted problem':<16}{'caught':>10}{'recall':>8}{'untouched with it':>19}")
    for kind in QUALITY_KINDS:
        r = quality[kind]
        print(f"{kind:<16}{r['caught']:>5} / {r['planted']:<3}{r['recall']:>7.2f}"
              f"{r['untouched_with_issue']:>12} ({r['untouched_rate']:.3f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--winnow", default="build/bin/winnow", help="the winnow CLI")
    parser.add_argument("--work", default="build/demo/images",
                        help="folder for the tree, database and results")
    parser.add_argument("--originals", type=int, default=2000)
    parser.add_argument("--copies-per-kind", type=int, default=80)
    parser.add_argument("--problems-per-kind", type=int, default=40)
    parser.add_argument("--max-bytes", type=int, default=400_000,
                        help="larger clip-art files are not picked")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless what winnow guarantees held: every byte-identical "
                             "copy an exact duplicate, and the second import skipped every file "
                             "of the first (the demo's smoke test)")
    options = parser.parse_args()
    if not Path(options.winnow).is_file():
        sys.exit(f"image_scenario: no winnow CLI at {options.winnow} "
                 "(scripts/demo --images builds it)")
    if options.copies_per_kind > round(options.originals * 0.8):
        sys.exit("image_scenario: --copies-per-kind must not exceed the wave-1 originals")

    load_at_start = [round(x, 2) for x in os.getloadavg()]
    rng = random.Random(options.seed)
    work = Path(options.work)
    work.mkdir(parents=True, exist_ok=True)
    seconds = {}
    start = time.perf_counter()
    root, tree, write_second_wave = plant(options, work, rng)
    seconds["write_wave_1"] = time.perf_counter() - start

    db = work / "images.db"
    for stale in work.glob("images.db*"):
        stale.unlink()
    run_winnow(options.winnow, "init", "--db", db)
    print(f"wave 1: {len(tree.truth)} files in {root}", flush=True)
    waves = [import_folder(options.winnow, db, root)]
    start = time.perf_counter()
    write_second_wave()
    seconds["write_wave_2"] = time.perf_counter() - start
    print(f"wave 2: {len(tree.truth) - waves[0]['counts']['total']} new files", flush=True)
    waves.append(import_folder(options.winnow, db, root))
    (work / "truth.json").write_text(json.dumps(tree.truth, indent=1) + "\n")

    exported = [json.loads(line) for line in
                run_winnow(options.winnow, "export", "--db", db).splitlines() if line.strip()]
    status = json.loads(run_winnow(options.winnow, "status", "--db", db, "--json"))
    copies, untouched, quality = compare(tree.truth, exported)
    results = {
        "settings": {k: getattr(options, k) for k in
                     ("originals", "copies_per_kind", "problems_per_kind", "max_bytes", "seed")},
        "files": len(tree.truth),
        "status": {k: status.get(k) for k in ("total", "accepted", "duplicate_exact",
                                               "duplicate_near", "label_issue", "rejected")},
        "imports": [{k: w.get(k) for k in ("batch", "counts", "already_imported", "seconds",
                                           "samples_per_second", "rejections")} for w in waves],
        "copies": copies,
        "untouched": untouched,
        "quality": quality,
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        "load_average_at_start": load_at_start,
    }
    (work / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({k: results[k] for k in ("files", "status", "imports")}, indent=1))
    print_table(copies, untouched, quality)
    print(f"results: {work / 'results.json'}, truth: {work / 'truth.json'}")
    if options.check:
        failed = []
        if copies["bytes"]["as"].get("duplicate_exact", 0) != copies["bytes"]["planted"]:
            failed.append(f"byte-identical copies: {copies['bytes']['as']}")
        if waves[1]["already_imported"] != waves[0]["counts"]["total"]:
            failed.append(f"second import skipped {waves[1]['already_imported']} files, "
                          f"the first imported {waves[0]['counts']['total']}")
        if results["status"]["total"] != len(tree.truth):
            failed.append(f"{results['status']['total']} samples for {len(tree.truth)} files")
        if failed:
            sys.exit("image_scenario: check failed: " + "; ".join(failed))


if __name__ == "__main__":
    main()

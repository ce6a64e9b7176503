#!/usr/bin/python3
"""Text near duplicates on real prose: winnow's CLI against MinHash-LSH.

Builds a data set from the man pages installed on this machine (sections 1,
5, 7 and 8, rendered with groff; the thousands of generated gcloud pages are
left out), curates it with the `winnow` CLI at its defaults for a text
embedder, and measures the decisions against an exact all-pairs Jaccard of
5-codepoint shingles (winnow's verifier measure), next to a MinHash-LSH at
NeMo Curator's documented fuzzy-dedup settings on the same records.

The records (one manifest, in arrival order):
* `--originals` paragraphs (default 4,000), chosen by the seed from the man
  page paragraphs of 30-250 words, none with a shingle Jaccard >= 0.5 to
  another (so every true near-duplicate pair is one that was made here);
* `--edited` copies (default 400) of distinct originals, each with a share of
  its words drawn from [--edit-min, --edit-max] deleted, replaced by a word
  of the corpus or swapped with the next one, then with probability
  --punct-prob one to three punctuation changes and with probability
  --append-prob one sentence of another paragraph appended;
* `--verbatim` copies (default 100) of other distinct originals.
With --order originals-first (default) the originals come first, in the
seed's order, then the copies shuffled; with --order shuffled everything is
shuffled (a copy may then come before its original, and the pair counts as
found when the later of the two is flagged as a duplicate of the earlier).

Through the CLI: `winnow init --db D --embedder 'hashed-ngrams(n=3,dim=256)'`
(plus any --init-arg; `--embedder auto`: init without one, so the text chooses),
`winnow ingest --db D manifest.jsonl`, `winnow export`.

Measured:
* recall of the edited copies and of the verbatim copies (the copy flagged as
  a duplicate of its original), and the recall of the edited copies whose true
  Jaccard to the original is >= 0.8 (the verifier's threshold);
* precision: every flagged pair's true Jaccard (the lowest is reported; the
  target is none under 0.5) and the share of untouched originals flagged;
* curves: for thresholds t, recall of the records with an earlier record of
  Jaccard >= t and the share of flagged pairs with Jaccard >= t;
* the same for MinHash-LSH (5-codepoint shingles, 20 bands x 13 rows, 260
  hashes, Jaccard >= 0.8 on the bucket candidates), kept incrementally in
  arrival order as winnow is: a record is compared with the earlier records
  not flagged themselves that share a bucket with it.

With --cosines, also the index cosines of the copies to their originals and
of each original to its nearest other one, with the hashed-ngrams embedding
recomputed in Python (BLAKE2b for XXH3): where a text candidate gate can sit.

Python standard library plus numpy (/usr/bin/python3), and groff. Example (from the
repository root):
    /usr/bin/python3 bench/text_near_duplicates.py --winnow build/bin/winnow --seed 1
It prints one JSON object and writes it to WORK/results-seedS-....json.
"""

import argparse
import collections
import hashlib
import json
import math
import random
import re
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "demo"))
from shingle_sets import jaccard, shingles  # noqa: E402  examples/demo/shingle_sets.py
from winnow_cli import children_cpu_seconds, run_winnow  # noqa: E402  examples/demo/winnow_cli.py

EMBEDDER = "hashed-ngrams(n=3,dim=256)"
MAN_SECTIONS = ["man1", "man5", "man7", "man8"]
CURVE_THRESHOLDS = [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]
LSH_BANDS, LSH_ROWS, LSH_THRESHOLD = 20, 13, 0.8  # NeMo Curator's fuzzy-dedup defaults

# --- the corpus --------------------------------------------------------------------


def render(page):
    """A gzipped man page as text: one line per paragraph (a very long line
    length, no hyphenation, no overstriking)."""
    raw = zlib.decompress(page.read_bytes(), 16 + zlib.MAX_WBITS)
    done = subprocess.run(
        ["groff", "-t", "-man", "-Tutf8", "-rLL=3000n", "-rHY=0", "-P-c", "-P-b", "-P-u"],
        input=raw, capture_output=True, timeout=60)
    return done.stdout.decode("utf-8", errors="replace")


def prose_paragraphs(rendered):
    """The paragraphs of a rendered page that read as prose: 30-250 words,
    mostly alphabetic, starting with a letter and ending like a sentence."""
    out = []
    for line in rendered.splitlines():
        text = " ".join(line.split())
        words = text.split(" ")
        if not 30 <= len(words) <= 250 or not text[0].isalpha() or text[-1] not in ".:!?)":
            continue
        alphabetic = sum(1 for w in words if re.fullmatch(r"[A-Za-z][a-z'-]*[,.;:]?", w))
        if alphabetic >= 0.75 * len(words):
            out.append(text)
    return out


def man_paragraphs(work):
    """Every distinct prose paragraph of the installed man pages, in page
    order; cached in the work folder (rendering takes a few minutes)."""
    cache = work / "man_paragraphs.json"
    if cache.exists():
        return json.loads(cache.read_text())
    start = time.perf_counter()
    pages = sorted(p for section in MAN_SECTIONS for p in Path("/usr/share/man", section).glob("*.gz")
                   if not p.name.startswith("gcloud"))
    if not pages or subprocess.run(["which", "groff"], capture_output=True).returncode != 0:
        sys.exit("text_near_duplicates: needs man pages in /usr/share/man and groff "
                 "(scripts/install-deps installs groff-base; container images often drop man pages)")
    seen, paragraphs = set(), []
    for page in pages:
        try:
            text = render(page)
        except (OSError, zlib.error, subprocess.TimeoutExpired):
            continue
        for p in prose_paragraphs(text):
            if p not in seen:
                seen.add(p)
                paragraphs.append(p)
    cache.write_text(json.dumps(paragraphs, ensure_ascii=False))
    print(f"text_near_duplicates: {len(paragraphs)} paragraphs from {len(pages)} pages in "
          f"{time.perf_counter() - start:.0f} s", file=sys.stderr)
    return paragraphs


# --- shingles and the exact join ----------------------------------------------------


def similar_pairs(sets, threshold):
    """Every pair (j, i), j < i, with Jaccard >= threshold: {i: {j: Jaccard}}.

    An exact join with prefix and positional filtering (PPJoin, Xiao et al.
    2008): with shingles ordered rarest first, two sets with Jaccard >= t
    share one of the first |s| - ceil(t |s|) + 1 shingles of each; a pair
    whose overlap so far plus what is left after the matching positions
    cannot reach t (|x| + |y|) / (1 + t) is dropped; the rest are compared."""
    frequency = collections.Counter()
    for s in sets:
        frequency.update(s)
    rank = {x: r for r, x in enumerate(sorted(frequency, key=lambda x: (frequency[x], x)))}
    ordered = [sorted(rank[x] for x in s) for s in sets]
    by_prefix_shingle = collections.defaultdict(list)  # shingle -> [(set, position)]
    found = {}
    for i, x in enumerate(ordered):
        n = len(x)
        overlap = {}  # earlier set -> shared prefix shingles so far (-1: dropped)
        prefix = n - math.ceil(threshold * n - 1e-9) + 1
        for p in range(prefix):
            for j, q in by_prefix_shingle[x[p]]:
                m = len(ordered[j])
                seen = overlap.get(j, 0)
                if seen < 0 or min(n, m) < threshold * max(n, m):
                    continue
                needed = math.ceil(threshold * (n + m) / (1 + threshold) - 1e-9)
                overlap[j] = seen + 1 if seen + 1 + min(n - p - 1, m - q - 1) >= needed else -1
        for j, seen in overlap.items():
            if seen > 0:
                similarity = jaccard(sets[i], sets[j])
                if similarity >= threshold:
                    found.setdefault(i, {})[j] = similarity
        for p in range(prefix):
            by_prefix_shingle[x[p]].append((i, p))
    return found


# --- the data set -------------------------------------------------------------------


def choose_originals(paragraphs, count, rng):
    """`count` paragraphs in the seed's order, none with Jaccard >= 0.5 to an
    earlier chosen one (shared boilerplate across pages is common)."""
    pool = list(paragraphs)
    rng.shuffle(pool)
    pool = pool[:int(count * 1.5)]
    sets = [shingles(p) for p in pool]
    pairs = similar_pairs(sets, 0.5)
    chosen, kept = [], set()
    for i, p in enumerate(pool):
        if not any(j in kept for j in pairs.get(i, {})):
            kept.add(i)
            chosen.append(p)
    if len(chosen) < count:
        sys.exit(f"text_near_duplicates: only {len(chosen)} distinct paragraphs for {count} originals")
    return chosen[:count]


def change_punctuation(words, rng):
    """One small punctuation change: a comma becomes a semicolon or goes, a
    comma is added after a word, or a full stop is dropped."""
    at = rng.randrange(len(words))
    w = words[at]
    kind = rng.randrange(3)
    if kind == 0 and w.endswith(","):
        words[at] = w[:-1] + rng.choice([";", ""])
    elif kind == 1 and w[-1:].isalpha():
        words[at] = w + ","
    elif w.endswith(".") and at < len(words) - 1:
        words[at] = w[:-1]
    else:
        words[at] = w + ","


def edited_copy(text, options, vocabulary, sentences, rng):
    """The text with a share of its words deleted, replaced or swapped, then
    punctuation changes and an appended sentence by chance; (copy, edits)."""
    words = text.split(" ")
    strength = rng.uniform(options.edit_min, options.edit_max)
    edits = max(1, round(strength * len(words)))
    for _ in range(edits):
        at = rng.randrange(len(words))
        op = rng.randrange(3)
        if op == 0 and len(words) > 2:
            del words[at]
        elif op == 1:
            words[at] = rng.choice(vocabulary)
        elif at + 1 < len(words):
            words[at], words[at + 1] = words[at + 1], words[at]
        else:
            words[at] = rng.choice(vocabulary)
    punctuation = 0
    if rng.random() < options.punct_prob:
        punctuation = rng.randint(1, 3)
        for _ in range(punctuation):
            change_punctuation(words, rng)
    appended = rng.random() < options.append_prob
    if appended:
        words.append(rng.choice(sentences))
    return " ".join(words), {"strength": round(strength, 4), "word_edits": edits,
                             "punctuation": punctuation, "appended": appended}


def build_records(paragraphs, options):
    """The records in arrival order: dicts {key, text, kind, original}."""
    rng = random.Random(options.seed)
    originals = choose_originals(paragraphs, options.originals, rng)
    vocabulary = [w for p in paragraphs[::7] for w in p.split(" ") if w.isalpha()]
    sentences = [s for p in paragraphs[::5] for s in re.split(r"(?<=\.) ", p)
                 if 5 <= len(s.split(" ")) <= 25 and s.endswith(".")]
    records = [{"key": f"orig-{i:05d}", "text": t, "kind": "original", "original": None}
               for i, t in enumerate(originals)]
    sources = rng.sample(range(len(originals)), options.edited + options.verbatim)
    copies = []
    for n, i in enumerate(sources):
        if n < options.edited:
            text, edit = edited_copy(originals[i], options, vocabulary, sentences, rng)
            copies.append({"key": f"edit-{n:05d}", "text": text, "kind": "edited",
                           "original": f"orig-{i:05d}", "edit": edit})
        else:
            copies.append({"key": f"verb-{n:05d}", "text": originals[i], "kind": "verbatim",
                           "original": f"orig-{i:05d}"})
    if options.order == "originals-first":
        rng.shuffle(copies)
        records += copies
    else:
        records += copies
        rng.shuffle(records)
    return records


# --- winnow through the CLI ---------------------------------------------------------


def winnow_flags(records, options, run):
    """Curates the records with the CLI; ({key: duplicate_of key}, config, seconds)."""
    manifest = run / "manifest.jsonl"
    with manifest.open("w", encoding="utf-8") as out:
        for r in records:
            out.write(json.dumps({"key": r["key"], "text": r["text"]}, ensure_ascii=False) + "\n")
    db = run / "text.db"
    for stale in run.glob("text.db*"):
        stale.unlink()
    # --embedder auto: `init` without one, as a new user runs it (the first content chooses).
    embedder = [] if options.embedder == "auto" else ["--embedder", options.embedder]
    init = json.loads(run_winnow(options.winnow, "init", "--db", db, *embedder, *options.init_arg))
    start, cpu = time.perf_counter(), children_cpu_seconds()
    run_winnow(options.winnow, "ingest", "--db", db, manifest)
    seconds = {"ingest_wall": round(time.perf_counter() - start, 2),
               "ingest_cpu": round(children_cpu_seconds() - cpu, 2)}
    exported = [json.loads(line) for line in
                run_winnow(options.winnow, "export", "--db", db, "--format", "jsonl").splitlines()]
    key_of_id = {s["id"]: s["key"] for s in exported}
    flagged = {s["key"]: key_of_id[s["duplicate_of"]] for s in exported
               if s["status"] in ("duplicate_near", "duplicate_exact") and s.get("duplicate_of")}
    config = dict(init["config"])
    status = json.loads(run_winnow(options.winnow, "status", "--db", db, "--json"))
    config["embedder_used"] = status["embedder"]
    config["rejected"] = status["rejected"]
    return flagged, config, seconds


# --- MinHash-LSH (the comparison) ---------------------------------------------------


def minhash_lsh_flags(records, sets):
    """{key: duplicate_of key} of an incremental MinHash-LSH: 20 bands of 13
    minhashes ((a x + b) mod 2^31-1 over 32-bit shingle hashes), a record
    compared with the earlier unflagged records sharing a band bucket, flagged
    when its best such Jaccard is >= 0.8."""
    prime = (1 << 31) - 1
    rng = np.random.default_rng(12345)
    hashes = LSH_BANDS * LSH_ROWS
    a = rng.integers(1, prime, size=hashes, dtype=np.uint64)
    b = rng.integers(0, prime, size=hashes, dtype=np.uint64)
    buckets = collections.defaultdict(list)
    flagged = {}
    for i, (r, s) in enumerate(zip(records, sets)):
        x = np.fromiter((zlib.crc32(g.encode("utf-8")) % prime for g in s), dtype=np.uint64,
                        count=len(s))
        signature = ((np.outer(a, x) + b[:, None]) % prime).min(axis=1).astype(np.uint32)
        keys = [(band, signature[band * LSH_ROWS:(band + 1) * LSH_ROWS].tobytes())
                for band in range(LSH_BANDS)]
        candidates = {j for key in keys for j in buckets.get(key, ())}
        best, best_j = -1.0, None
        for j in sorted(candidates):
            similarity = jaccard(s, sets[j])
            if similarity > best:
                best, best_j = similarity, j
        if best >= LSH_THRESHOLD:
            flagged[r["key"]] = records[best_j]["key"]
            continue
        for key in keys:
            buckets[key].append(i)
    return flagged


# --- index cosines (why the text gate) ----------------------------------------------


def hashed_ngrams(text, n=3, dim=256):
    """winnow's hashed-ngrams(n=3,dim=256) embedding, with BLAKE2b for XXH3
    (not in Python's standard library): the same construction, other buckets."""
    v = np.zeros(dim)
    for i in range(max(1, len(text) - n + 1)):
        h = int.from_bytes(hashlib.blake2b(text[i:i + n].encode("utf-8"), digest_size=8).digest(),
                           "little")
        v[(h & 0x7FFFFFFFFFFFFFFF) % dim] += -1.0 if h >> 63 else 1.0
    return v / np.linalg.norm(v)


def cosine_statistics(records, sets):
    """The index cosine of each edited copy to its original (and the original's
    rank among the earlier records), and of each original to its nearest other
    original: where a text candidate gate can sit."""
    vectors = np.array([hashed_ngrams(r["text"]) for r in records])
    cosines = vectors @ vectors.T
    position = {r["key"]: i for i, r in enumerate(records)}
    reachable, below, worst_rank = [], [], 1
    for i, r in enumerate(records):
        if r["kind"] != "edited":
            continue
        j = position[r["original"]]
        earlier = cosines[i, :i] if j < i else cosines[j, :j]
        (reachable if jaccard(sets[i], sets[j]) >= 0.8 else below).append(cosines[i, j])
        if jaccard(sets[i], sets[j]) >= 0.8:
            worst_rank = max(worst_rank, int((earlier > cosines[i, j]).sum()) + 1)
    originals = [i for i, r in enumerate(records) if r["kind"] == "original"]
    among = cosines[np.ix_(originals, originals)]
    np.fill_diagonal(among, -1.0)
    nearest = among.max(axis=1)
    return {"copies_jaccard_ge_0.8": {"min": round(float(min(reachable)), 4),
                                      "p1": round(float(np.percentile(reachable, 1)), 4),
                                      "median": round(float(np.median(reachable)), 4),
                                      "worst_rank_of_original": worst_rank},
            "copies_jaccard_under_0.8": {"min": round(float(min(below)), 4) if below else None},
            "original_to_nearest_other": {
                q: round(float(np.percentile(nearest, p)), 4)
                for q, p in (("median", 50), ("p99", 99), ("max", 100))}}


# --- measuring ----------------------------------------------------------------------


def measure(records, sets, pairs, flagged):
    """Recall, precision and curves of one method's flags ({key: original key})."""
    position = {r["key"]: i for i, r in enumerate(records)}

    def true_jaccard(i, j):
        i, j = max(i, j), min(i, j)
        return pairs.get(i, {}).get(j) or jaccard(sets[i], sets[j])

    def caught(r):
        """The copy and its original: the later flagged as a duplicate of the earlier."""
        i, j = position[r["key"]], position[r["original"]]
        later, earlier = (r["key"], r["original"]) if i > j else (r["original"], r["key"])
        return flagged.get(later) == earlier

    out = {}
    for kind in ("edited", "verbatim"):
        copies = [r for r in records if r["kind"] == kind]
        out[f"recall_{kind}"] = round(sum(caught(r) for r in copies) / len(copies), 4) if copies else None
    edited_j = {r["key"]: true_jaccard(position[r["key"]], position[r["original"]])
                for r in records if r["kind"] == "edited"}
    reachable = [r for r in records if r["kind"] == "edited" and edited_j[r["key"]] >= 0.8]
    out["edited_with_jaccard_ge_0.8"] = round(len(reachable) / max(1, len(edited_j)), 4)
    out["recall_edited_jaccard_ge_0.8"] = round(sum(caught(r) for r in reachable) / max(1, len(reachable)), 4)
    pair_j = [true_jaccard(position[k], position[o]) for k, o in flagged.items()]
    out["flagged"] = len(flagged)
    out["min_flagged_jaccard"] = round(min(pair_j), 4) if pair_j else None
    out["flagged_pairs_jaccard_under_0.5"] = sum(1 for j in pair_j if j < 0.5)
    copy_originals = {r["original"] for r in records if r["original"]}
    untouched = [r for r in records if r["kind"] == "original" and r["key"] not in copy_originals]
    out["untouched_flagged_share"] = round(sum(r["key"] in flagged for r in untouched) / len(untouched), 5)
    curve = []
    for t in CURVE_THRESHOLDS:
        expected = {records[i]["key"] for i, matches in pairs.items()
                    if any(j < i and similarity >= t for j, similarity in matches.items())}
        hits = sum(1 for k in expected if k in flagged)
        curve.append({"jaccard_at_least": t, "expected": len(expected),
                      "recall": round(hits / len(expected), 4) if expected else None,
                      "precision": round(sum(1 for j in pair_j if j >= t) / len(pair_j), 4)
                      if pair_j else None})
    out["curve"] = curve
    return out


def cached_data_set(paragraphs, options, run):
    """build_records and its exact join (similar_pairs at the lowest curve
    threshold), kept in the run folder: they depend only on the corpus and
    the data settings. (records, pairs, seconds the join took)."""
    cache = run / "data_set.json"
    settings = [options.seed, options.originals, options.edited, options.verbatim, options.edit_min,
                options.edit_max, options.punct_prob, options.append_prob, options.order]
    fingerprint = hashlib.sha256(json.dumps([paragraphs, settings]).encode("utf-8")).hexdigest()
    if cache.exists():
        stored = json.loads(cache.read_text())
        if stored["paragraphs_sha256"] == fingerprint:
            pairs = {int(i): {int(j): v for j, v in m.items()} for i, m in stored["pairs"].items()}
            return stored["records"], pairs, stored["join_seconds"]
    records = build_records(paragraphs, options)
    start = time.perf_counter()
    pairs = similar_pairs([shingles(r["text"]) for r in records], min(CURVE_THRESHOLDS))
    seconds = round(time.perf_counter() - start, 1)
    cache.write_text(json.dumps({"paragraphs_sha256": fingerprint, "records": records,
                                 "pairs": pairs, "join_seconds": seconds}, ensure_ascii=False))
    return records, pairs, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--winnow", default="build/bin/winnow", help="the winnow CLI")
    parser.add_argument("--work", default="build/bench-text", help="work folder (cache, runs)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--originals", type=int, default=4000)
    parser.add_argument("--edited", type=int, default=400)
    parser.add_argument("--verbatim", type=int, default=100)
    parser.add_argument("--edit-min", type=float, default=0.02, help="least share of words edited")
    parser.add_argument("--edit-max", type=float, default=0.06, help="largest share of words edited")
    parser.add_argument("--punct-prob", type=float, default=0.5)
    parser.add_argument("--append-prob", type=float, default=0.3)
    parser.add_argument("--order", choices=["originals-first", "shuffled"], default="originals-first")
    parser.add_argument("--embedder", default=EMBEDDER)
    parser.add_argument("--init-arg", action="append", default=[],
                        help="one more argument for winnow init (repeat; e.g. --init-arg=--candidates)")
    parser.add_argument("--no-lsh", action="store_true", help="skip the MinHash-LSH comparison")
    parser.add_argument("--cosines", action="store_true",
                        help="also the index cosines of copies and originals (hashed_ngrams)")
    options = parser.parse_args()

    work = Path(options.work)
    work.mkdir(parents=True, exist_ok=True)
    name = (f"seed{options.seed}-e{options.edit_min:g}-{options.edit_max:g}-p{options.punct_prob:g}"
            f"-a{options.append_prob:g}-{options.order}")
    run = work / name
    run.mkdir(exist_ok=True)
    paragraphs = man_paragraphs(work)
    records, pairs, join_seconds = cached_data_set(paragraphs, options, run)
    sets = [shingles(r["text"]) for r in records]

    result = {"records": len(records), "man_paragraphs": len(paragraphs),
              "settings": {k: getattr(options, k) for k in
                           ("seed", "originals", "edited", "verbatim", "edit_min", "edit_max",
                            "punct_prob", "append_prob", "order", "embedder", "init_arg")},
              "join_seconds": join_seconds}
    flagged, config, seconds = winnow_flags(records, options, run)
    result["winnow"] = {"config": config, **seconds, **measure(records, sets, pairs, flagged)}
    if not options.no_lsh:
        start = time.perf_counter()
        lsh = minhash_lsh_flags(records, sets)
        result["minhash_lsh"] = {"bands": LSH_BANDS, "rows": LSH_ROWS, "threshold": LSH_THRESHOLD,
                                 "seconds": round(time.perf_counter() - start, 1),
                                 **measure(records, sets, pairs, lsh)}
    if options.cosines:
        result["cosines"] = cosine_statistics(records, sets)
    (work / f"results-{name}-{hashlib.sha1(' '.join(options.init_arg).encode()).hexdigest()[:6]}.json"
     ).write_text(json.dumps(result, indent=1))
    print(json.dumps(result))


if __name__ == "__main__":
    main()

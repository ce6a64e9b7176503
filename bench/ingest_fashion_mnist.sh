#!/bin/bash
# The 60k Fashion-MNIST ingest benchmark (docs/benchmarks.md, "Fashion-MNIST through the CLI"):
# N runs of `winnow init` + `winnow import-idx` of the train set into an empty store,
# one core, printing the load average, wall / user / sys seconds, peak RSS (KB), the
# ingest seconds and samples/s winnow reports, and the decision counts.
#
#   bench/ingest_fashion_mnist.sh [RUNS=3] [WINNOW=build/bin/winnow] [WORKDIR=/tmp/winnow-ingest-bench]
set -euo pipefail
RUNS=${1:-3}
WINNOW=${2:-build/bin/winnow}
WORK=${3:-/tmp/winnow-ingest-bench}
DATA=${WINNOW_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=1
mkdir -p "$WORK"
for i in $(seq "$RUNS"); do
  rm -f "$WORK"/ing.db*
  "$WINNOW" init --db "$WORK/ing.db" >/dev/null
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -o "$WORK/time" -f "%e %U %S %M" "$WINNOW" import-idx --limit 60000 --db "$WORK/ing.db" \
    "$DATA/train-images-idx3-ubyte.gz" "$DATA/train-labels-idx1-ubyte.gz" > "$WORK/ingest.json"
  read -r wall user sys rss < "$WORK/time"
  /usr/bin/python3 - "$WORK/ingest.json" "$load" "$wall" "$user" "$sys" "$rss" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps({"load": float(sys.argv[2]), "wall_s": float(sys.argv[3]), "user_s": float(sys.argv[4]),
                  "sys_s": float(sys.argv[5]), "peak_rss_kb": int(sys.argv[6]), "ingest_s": d["seconds"],
                  "samples_per_s": round(60000 / d["seconds"], 1), "counts": d["counts"]}))
PY
done

#!/usr/bin/env bash
# Renders the quality report's HTML page for the fixture in headless Chromium
# and checks the screenshot and the parsed DOM (check_report_png.py).
#
# Usage: render_png.sh RENDER_TOOL FIXTURE.json OUT_DIR
# Exit code 77 (ctest SKIP_RETURN_CODE) when Chromium is not installed.
set -euo pipefail

tool=$1 fixture=$2 out=$3

chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $chromium ]]; then
  echo "SKIP: chromium is not installed (apt-get install chromium, or scripts/install-deps)"
  exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)

mkdir -p "$out"
"$tool" "$fixture" "$out/report.html" "$out/report.md"

# Chromium needs a writable profile and, as root, --no-sandbox; its own
# D-Bus complaints on stderr are noise in a container. --headless is the new
# headless mode (the old one left Chromium in version 132).
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars
       --no-first-run --user-data-dir="$profile" --force-device-scale-factor=1)
url="file://$out/report.html"
timeout 120 "$chromium" "${flags[@]}" --window-size=1200,2400 --screenshot="$out/report.png" \
  "$url" 2>"$out/chromium-screenshot.log" >/dev/null
timeout 120 "$chromium" "${flags[@]}" --dump-dom "$url" >"$out/report-dom.html" \
  2>"$out/chromium-dom.log"

[[ -s $out/report.png ]] || { echo "FAIL: Chromium wrote no screenshot"; cat "$out"/chromium-*.log; exit 1; }
/usr/bin/python3 "$here/check_report_png.py" "$out/report.png" "$out/report-dom.html"

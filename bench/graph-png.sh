#!/usr/bin/env bash
# What a PNG costs over an SVG: `ifmeter graph -o g.png` (rsvg-convert run by
# ifmeter) against `-o g.svg`, alternated run by run so a drift of the shared
# machine falls on both, over a year of three interfaces (ifmeter-bench
# store-year 3), the clock set just after its last commit. Prints the median
# wall time and the median peak RSS (GNU time's %M: wait4 reports the largest
# of ifmeter and the rsvg-convert it waits for, not their sum) per kind.
# Usage: bench/graph-png.sh [BINDIR]   (default: .build/release)
#   GRAPH_RUNS   runs of each path behind the medians (default 21)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/.build/release}
runs=${GRAPH_RUNS:-21}
bench_tool="$root/.build/debug/ifmeter-bench"
[ -x "$bin/ifmeter" ] || { echo "graph-png: $bin/ifmeter is not an executable (swift build -c release)" >&2; exit 66; }
command -v rsvg-convert >/dev/null || { echo "graph-png: rsvg-convert not found (install librsvg2-bin)" >&2; exit 69; }
work=$(mktemp -d /var/tmp/ifmeter-graph.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/state"
"$bench_tool" store-year 3 "$work/state" >/dev/null
# store-year commits every 300 s from 2026-01-01 UTC for 365 days.
export IFMETER_TEST_CLOCK_OFFSET=$((1767225600 + 365 * 86400 + 60 - $(date +%s)))
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '%-11s %5s %12s %12s %10s %10s\n' kind runs svg_ms png_ms svg_kib png_kib
for kind in daily fiveminute summary; do
  : >"$work/svg.ms"; : >"$work/png.ms"; : >"$work/svg.kib"; : >"$work/png.kib"
  for _ in $(seq "$runs"); do
    for format in svg png; do
      start=$(date +%s%N)
      /usr/bin/time -f %M -o "$work/rss" "$bin/ifmeter" --state-dir "$work/state" --config /dev/null \
        graph --kind "$kind" -i tun0 -i tun1 -i tun2 -o "$work/g.$format" >/dev/null
      end=$(date +%s%N)
      echo $(((end - start) / 1000)) >>"$work/$format.ms"
      cat "$work/rss" >>"$work/$format.kib"
    done
  done
  printf '%-11s %5s %12s %12s %10s %10s\n' "$kind" "$runs" \
    "$(median <"$work/svg.ms" | awk '{ printf "%.1f", $1 / 1000 }')" "$(median <"$work/png.ms" | awk '{ printf "%.1f", $1 / 1000 }')" \
    "$(median <"$work/svg.kib")" "$(median <"$work/png.kib")"
done
# rsvg-convert alone on the last fiveminute SVG: its own share of the peak.
"$bin/ifmeter" --state-dir "$work/state" --config /dev/null graph --kind fiveminute -i tun0 -i tun1 -i tun2 -o "$work/g.svg" >/dev/null
/usr/bin/time -f 'rsvg-convert alone (fiveminute): %e s, %M KiB peak RSS' rsvg-convert -o "$work/alone.png" "$work/g.svg"
echo "png bytes: $(stat -c %s "$work/g.png"), svg bytes: $(stat -c %s "$work/g.svg")"

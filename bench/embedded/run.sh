#!/usr/bin/env bash
# The Embedded Swift experiment of issue 15, outside SwiftPM and `make bench`.
#   bench/embedded/run.sh errors   compile the daemon's Swift (IfmeterAccounting,
#                                  IfmeterCore, ifmeterd) in Embedded mode as it
#                                  is, and count the errors by message
#   bench/embedded/run.sh          (root) build Sampler.swift twice, Embedded and
#                                  full Swift with ifmeterd's release flags, and
#                                  measure each alone on 50 tuns in a private
#                                  namespace as bench/run.sh does; ifmeterd too
#                                  when `make release` built it
#   EMBEDDED_ROUNDS (3)  EMBEDDED_WAIT (35 s)  EMBEDDED_LINKS (50)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
here=bench/embedded
rounds=${EMBEDDED_ROUNDS:-3}
wait_seconds=${EMBEDDED_WAIT:-35}
links=${EMBEDDED_LINKS:-50}
embedded_lib=$(dirname "$(readlink -f "$(command -v swiftc)")")/../lib/swift/embedded/x86_64-unknown-linux-gnu
work=$(mktemp -d /var/tmp/ifmeter-embedded.XXXXXX)
holder=""
daemon=""
cleanup() {
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null
  [ -n "$holder" ] && kill "$holder" 2>/dev/null
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

if [ "${1:-}" = errors ]; then
  # Embedded Swift has no Glibc module: the C headers stand in for it, so
  # what the Swift overlay added (errno, variadic open/fcntl, mode_t
  # constants) shows up as errors of its own.
  mkdir -p "$work/Glibc" "$work/CKernel"
  printf 'module Glibc [system] {\n    header "glibc.h"\n    export *\n}\n' > "$work/Glibc/module.modulemap"
  printf '#include <%s.h>\n' errno fcntl limits math poll signal stdio stdlib string time unistd dirent fnmatch grp \
    sys/stat sys/types sys/file sys/time sys/socket sys/un sys/statvfs > "$work/Glibc/glibc.h"
  printf 'module CKernel {\n    header "%s/Sources/CKernel/include/ckernel.h"\n    export *\n}\n' "$root" > "$work/CKernel/module.modulemap"
  embedded=(-enable-experimental-feature Embedded -wmo -parse-as-library -Osize -package-name ifmeter -I "$work")
  compile() {  # module sources...
    local module=$1; shift
    swiftc "${embedded[@]}" -I "$work/Glibc" -I "$work/CKernel" -I Sources/CSQLite -I Sources/CNetlink \
      -module-name "$module" -emit-module -emit-module-path "$work/$module.swiftmodule" -c -o "$work/$module.o" "$@" \
      > "$work/$module.log" 2>&1 && echo "$module: compiles" || {
      echo "$module: $(grep -c '^[^ ]*: error:' "$work/$module.log") errors"
      grep '^[^ ]*: error:' "$work/$module.log" | sed 's/^[^ ]*: error: //' | sort | uniq -c | sort -rn || true
    }
  }
  compile IfmeterAccounting Sources/IfmeterAccounting/*.swift
  compile IfmeterCore $(find Sources/IfmeterCore -name '*.swift' | sort)
  compile ifmeterd Sources/ifmeterd/*.swift
  echo "(type-checking errors only: the Embedded restrictions -- key paths, any Error,"
  echo " dynamic casts -- are diagnosed later, once a module type-checks)"
  exit 0
fi

[ "$(id -u)" = 0 ] || { echo "embedded: needs root (network namespaces)" >&2; exit 77; }
for tool in swiftc cc pkg-config nsenter unshare ip; do
  command -v "$tool" >/dev/null || { echo "embedded: $tool is missing" >&2; exit 69; }
done

# ---- Build: CKernel by cc, the sampler and IfmeterAccounting as one module ----
mkdir -p "$work/obj"
for c in Sources/CKernel/*.c; do
  cc -Os -fPIC -I Sources/CKernel/include $(pkg-config --cflags libnl-route-3.0) -c "$c" -o "$work/obj/$(basename "$c" .c).o"
done
common=(-parse-as-library -wmo -Osize -package-name ifmeter -module-name Sampler
  -I "$here/CKernel" -I "$here/CSamplerLibc" Sources/IfmeterAccounting/*.swift "$here/Sampler.swift"
  "$work"/obj/*.o $(pkg-config --libs libnl-route-3.0)
  -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
# Embedded Swift's stdlib wants libm (Dictionary sizing calls ceil) and the
# Unicode tables (String comparison normalizes).
swiftc -enable-experimental-feature Embedded "${common[@]}" -L "$embedded_lib" -lswiftUnicodeDataTables -lm -o "$work/sampler-embedded"
swiftc -static-stdlib "${common[@]}" -o "$work/sampler-full"
variants=(sampler-embedded sampler-full)
[ -x .build/release/ifmeterd ] && variants+=(ifmeterd)

# ---- The namespace: 50 persistent tuns, held by a process, its own sysfs ----
unshare --net --mount --propagation private sh -c 'mount -t sysfs sysfs /sys && exec sleep infinity' &
holder=$!
for _ in $(seq 100); do [ "$(cat "/proc/$holder/comm" 2>/dev/null)" = sleep ] && break; sleep 0.02; done
inns() { nsenter -t "$holder" --net --mount -- "$@"; }
inns ip link set lo up
for i in $(seq 0 $((links - 1))); do echo "tuntap add dev tun$i mode tun"; done > "$work/batch"
inns ip -batch "$work/batch"

# Both samplers must agree with each other on the same links.
for v in sampler-embedded sampler-full; do
  echo "$v: $(SAMPLER_INTERVAL=1 SAMPLER_SAMPLES=2 inns "$work/$v"), $(stat -c %s "$work/$v") bytes"
done

# ---- Memory: each alone, from a private copy of its binary, KiB ----
declare -A rss pss uss own
mkdir -p "$work/private"
for round in $(seq "$rounds"); do
  for v in "${variants[@]}"; do
    rm -f "$work/private/$v"
    if [ "$v" = ifmeterd ]; then
      cp .build/release/ifmeterd "$work/private/$v"
      ( exec nsenter -t "$holder" --net --mount -- "$work/private/$v" --state-dir "$work/state-$round" 2>/dev/null ) &
    else
      cp "$work/$v" "$work/private/$v"
      ( exec nsenter -t "$holder" --net --mount -- "$work/private/$v" ) &
    fi
    daemon=$!
    sleep "$wait_seconds"
    read -r r p u < <(awk '/^Rss:/{r=$2} /^Pss:/{p=$2} /^Private_(Clean|Dirty):/{u+=$2} END{print r, p, u}' "/proc/$daemon/smaps_rollup")
    o=$(awk -v f="$work/private/$v" '/^[0-9a-f]+-[0-9a-f]+ /{m = ($6 == f)} m && /^Rss:/{s+=$2} END{print s+0}' "/proc/$daemon/smaps")
    if [ "$round" = "$rounds" ]; then  # where the pages are, mappings of 64 KiB or more
      awk '/^[0-9a-f]+-[0-9a-f]+ /{f=$6; if (f == "") f="(anonymous)"} /^Rss:/{r[f]+=$2} /^Pss:/{p[f]+=$2} END{for (f in r) if (r[f] >= 64) printf "  %s rss %d pss %d\n", f, r[f], p[f]}' "/proc/$daemon/smaps" |
        sed "s|$work/private/||" | sort -k3 -rn > "$work/composition-$v"
    fi
    kill -TERM "$daemon"; wait "$daemon" 2>/dev/null || true
    daemon=""
    rss[$v]+="$r "; pss[$v]+="$p "; uss[$v]+="$u "; own[$v]+="$o "
    echo "round $round $v: rss $r pss $p uss $u KiB, its own binary's pages $o KiB"
  done
done

middle() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
echo
echo "medians of $rounds runs, each alone for $wait_seconds s on $links tuns, KiB (MiB):"
echo "| | $(printf '%s | ' "${variants[@]}")"
for metric in rss pss uss own; do
  declare -n values=$metric
  line="| $metric |"
  for v in "${variants[@]}"; do
    # shellcheck disable=SC2086
    m=$(middle ${values[$v]})
    line+=" $m ($(mib "$m")) |"
  done
  echo "$line"
done
echo "| binary size | $(for v in "${variants[@]}"; do f=$work/$v; [ "$v" = ifmeterd ] && f=.build/release/ifmeterd; printf '%s (%s) | ' "$(stat -c %s "$f")" "$(mib $(( $(stat -c %s "$f") / 1024 )))"; done)"
for v in "${variants[@]}"; do echo "$v, round $rounds, KiB per mapping:"; cat "$work/composition-$v"; done

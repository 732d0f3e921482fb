#!/usr/bin/env bash
# The single-unit pipeline with a constant of its own in each stage
# (pipeline_consts.chr, issue 16) against the same loop written by hand in
# C++ (pipeline_consts.cpp), compiled with `g++ -O3 -march=x86-64-v2`
# (128-bit vectors, what Cranelift emits) and with `-march=native`, side
# by side in one run; chronc with its vectorizer on and off (`--exec
# simd=off`). Every run must print the same checksum.
#
# Usage: CHRONC=path/to/chronc bash benches/consts/run.sh
# Environment: N (stages, default 256), CYCLES (default 2000000), REPS
# (default 5). Prints per variant the median [min, max] of M cycles/s of
# wall time over REPS interleaved runs (chronc's from its own process,
# compile included).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
N="${N:-256}"
CYCLES="${CYCLES:-2000000}"
REPS="${REPS:-5}"
chronc="${CHRONC:-$root/target/release/chronc}"
[ -x "$chronc" ] || { echo "run.sh: no chronc at $chronc (build it, or set CHRONC)" >&2; exit 1; }
command -v g++ >/dev/null || { echo "run.sh: g++ is required" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/chronon-consts.XXXXXX")"
trap 'rm -rf "$work"' EXIT
g++ -O3 -march=x86-64-v2 -DN="$N" -o "$work/v2" "$here/pipeline_consts.cpp"
g++ -O3 -march=native -DN="$N" -o "$work/native" "$here/pipeline_consts.cpp"

run() {
    case "$1" in
        chronc) "$chronc" run "$here/pipeline_consts.chr" -p N="$N" --cycles "$CYCLES" \
            | sed -n 's/^ *top\.p\.checksum = /checksum=/p' ;;
        chronc-scalar) "$chronc" run "$here/pipeline_consts.chr" -p N="$N" --cycles "$CYCLES" \
            --exec simd=off | sed -n 's/^ *top\.p\.checksum = /checksum=/p' ;;
        *) "$work/$1" "$CYCLES" ;;
    esac
}

variants="chronc chronc-scalar v2 native"
want="$(run v2)"
echo "N = $N, $CYCLES cycles, $REPS runs; $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A times
for _ in $(seq "$REPS"); do
    for v in $variants; do
        start=$(date +%s.%N)
        got="$(run "$v")"
        end=$(date +%s.%N)
        [ "$got" = "$want" ] || { echo "run.sh: $v printed '$got', not '$want'" >&2; exit 1; }
        times[$v]+="$(echo "$end - $start" | bc -l) "
    done
done
echo "all variants: $want"
printf '%-28s | %s\n' "variant" "M cycles/s median [min, max]"
for v in $variants; do
    label="$v"
    case "$v" in
        chronc) label="chronc (JIT)" ;;
        chronc-scalar) label="chronc, --exec simd=off" ;;
        v2) label="g++ -O3 -march=x86-64-v2" ;;
        native) label="g++ -O3 -march=native" ;;
    esac
    printf '%-28s | %s\n' "$label" "$(echo "${times[$v]}" | tr ' ' '\n' | grep . | sort -g \
        | awk -v c="$CYCLES" '{t[NR]=$1} END {m=t[int((NR+1)/2)]; printf "%.2f [%.2f, %.2f]", c/m/1e6, c/t[NR]/1e6, c/t[1]/1e6}')"
done

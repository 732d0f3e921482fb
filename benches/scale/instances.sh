#!/usr/bin/env bash
# Instance scale (issue 14): wall time and peak memory of `chronc run` from
# source to the first edge (one cycle) for growing instance counts of
# benches/scale/cells.chr, in both forms, with GNU time; prints one row
# per run and the time and memory per instance, so a superlinear step
# shows as a growing per-instance figure.
#
# Usage: bash benches/scale/instances.sh   (CHRONC=path to use a built binary)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [ -n "${CHRONC:-}" ]; then
    chronc="$CHRONC"
else
    (cd "$root" && cargo build --release --bin chronc) >&2
    chronc="$root/target/release/chronc"
fi
[ -x /usr/bin/time ] || { echo "instances.sh: GNU time (/usr/bin/time) is required" >&2; exit 1; }
printf '%-6s %-8s %-8s %-10s %-12s %s\n' form N seconds MB us/inst KB/inst
for form in 0 1; do
    if [ "$form" = 0 ]; then sizes="65536 131072 262144 524288"; else sizes="65536 131072 262144 349000"; fi
    for n in $sizes; do
        /usr/bin/time -o /tmp/chronon-scale.$$ -f '%e %M' \
            "$chronc" run "$here/cells.chr" -p "N=$n" -p "FORM=$form" --cycles 1 -q --threads 1 >/dev/null
        read -r secs kb </tmp/chronon-scale.$$
        awk -v f="$form" -v n="$n" -v s="$secs" -v k="$kb" 'BEGIN {
            printf "%-6s %-8d %-8.2f %-10.0f %-12.2f %.2f\n", f, n, s, k / 1024, s * 1e6 / n, k / n
        }'
    done
done
rm -f /tmp/chronon-scale.$$

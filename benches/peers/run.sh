#!/usr/bin/env bash
# Peer comparison: the same designs on chronc (Cranelift JIT), Verilator
# (-O3, C++ harness) and Icarus Verilog (iverilog + vvp), side by side in one
# run. docs/performance.md, "Where we stand", gives the figures.
#
# Usage: bash benches/peers/run.sh
#
# For each design it
#   1. builds the model REPS times on each simulator (chronc: `chronc run`
#      with one cycle, i.e. front end + lowering + JIT; Verilator: verilate
#      and compile the C++ from scratch; Icarus: iverilog);
#   2. runs all three for the design's Icarus cycle count and fails loudly
#      unless they print the same checksum;
#   3. runs chronc and Verilator REPS times for the design's bench cycle
#      count (they must agree on every run) and Icarus REPS times for its
#      smaller count (each run checked again);
#   4. prints median [min, max] wall time, cycles per second and build time,
#      each also as a ratio to chronc, and (with GNU time installed) chronc's
#      and Verilator's cycles per second of process CPU time, which a loaded
#      machine disturbs far less than wall time.
#
# Environment overrides: REPS (default 5), BUILD_REPS (default 3), CHRONC (a chronc binary to use instead of
# building target/release/chronc), DESIGNS (the designs to run, of
# "pipe16 pipe256 pipe16u pipe256u crc32 decode wide512 fifo ring16 ring64 cpu4"; all by default), and
# per design <DESIGN>_CYCLES and <DESIGN>_ICARUS_CYCLES, where DESIGN is
# PIPE16, PIPE256, PIPE16U, PIPE256U, CRC32, DECODE, WIDE512, FIFO, RING16, RING64 or CPU4. pipe16u and pipe256u are
# pipeline_units.chr: the same pipeline as one unit per stage joined by
# channels, against the same Verilog twin. crc32 is a bit-level CRC-32
# (slices, concatenation, replication), decode RISC-V immediate decoding of
# a 64-bit word (slices and concatenations of scattered bits), wide512 a
# 512-bit datapath (xorshift and a multiply-add across eight limbs).
# ring16 and ring64 are examples/router_ring.chr (routers joined by
# latency-1 channels with credits) with 16 and 64 routers, COUNT and
# BUDGET past the run; the twin is router_ring.v, and the checksum is
# router 0's. cpu4 is examples/cpu4.chr (fetch, decode, four ALUs and
# writeback joined by latency-1 channels: a rate-4 output, fan-in, a flush
# path) with RETIRE past the run; the twin is cpu4.v, and the checksum is
# writeback's.
# "Cycles" are edges of the design's first clock (the writer clock of the
# FIFO design).

set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

REPS="${REPS:-5}"
BUILD_REPS="${BUILD_REPS:-3}"

die() {
    echo "run.sh: $*" >&2
    exit 1
}

# --- Tools -----------------------------------------------------------------

if ! command -v verilator >/dev/null || ! command -v iverilog >/dev/null; then
    echo "Installing verilator and iverilog from apt..." >&2
    sudo_cmd=()
    if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
    "${sudo_cmd[@]}" apt-get update
    "${sudo_cmd[@]}" apt-get install -y verilator iverilog
fi
for tool in verilator iverilog vvp jq make g++; do
    command -v "$tool" >/dev/null || die "$tool is required"
done

if [ -n "${CHRONC:-}" ]; then
    chronc="$CHRONC"
else
    (cd "$root" && cargo build --release --bin chronc) || die "cannot build chronc"
    chronc="$root/target/release/chronc"
fi
[ -x "$chronc" ] || die "no chronc binary at $chronc"

work="$(mktemp -d "${TMPDIR:-/tmp}/chronon-peers.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# Verilator's makefiles use a compiler cache when OBJCACHE is set; every
# build here must be a real one.
unset OBJCACHE
jobs="$(nproc)"

# --- Measuring -------------------------------------------------------------

# now: wall-clock seconds with microseconds.
now() { echo "$EPOCHREALTIME"; }

# Process CPU time (user + system) of the last timed run, from GNU time
# when installed: on a loaded machine it moves far less than wall time.
timer=()
if [ -x /usr/bin/time ]; then
    timer=(/usr/bin/time -o "$work/cpu" -f '%U %S')
fi
cpu_last() {
    if [ ${#timer[@]} -gt 0 ]; then
        awk '{ printf "%.6f", $1 + $2 }' "$work/cpu"
    else
        echo nan
    fi
}

# elapsed START END: END - START in seconds.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", b - a }'; }

# timed COMMAND...: runs the command (under GNU time when installed) with
# its output captured in $out, and writes its wall time alone to
# $work/wall, so that what a run_* function does with the output (jq, grep,
# awk: several processes for chronc's JSON) is not counted.
timed() {
    local t0 t1 rc=0
    t0="$(now)"
    out="$("${timer[@]}" "$@")" || rc=$?
    t1="$(now)"
    elapsed "$t0" "$t1" >"$work/wall"
    return "$rc"
}
wall_last() { cat "$work/wall"; }

# stats VALUES...: "median min max" of the values.
stats() {
    printf '%s\n' "$@" | sort -g | awk '
        { v[NR] = $1 }
        END {
            m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%s %s %s", m, v[1], v[NR]
        }'
}

# The last command's output, kept for error messages.
out=""

# run_chronc FILE PARAMS CYCLES: prints "checksum received wall_run";
# PARAMS is NAME=VALUE words separated by spaces, one `-p` each.
run_chronc() {
    local file="$1" params="$2" cycles="$3" args=()
    local p
    for p in $params; do args+=(-p "$p"); done
    timed "$chronc" run "$file" "${args[@]}" --cycles "$cycles" --json -q ||
        die "chronc failed on $file: $out"
    # Counters are u64: read them from the JSON text, because jq holds
    # numbers as doubles and would round sums above 2^53.
    local checksum received wall
    checksum="$(json_counter checksum <<<"$out")"
    received="$(json_counter received <<<"$out")"
    wall="$(jq -r '.wall_seconds' <<<"$out")"
    echo "${checksum:--} ${received:--} $wall"
}

# json_counter NAME: the value of the counter NAME in chronc's JSON report.
# Whitespace is dropped first so that compact and pretty JSON read alike.
json_counter() {
    tr -d ' \t\n' | { grep -o "\"name\":\"$1\",\"value\":[0-9]*" || true; } |
        head -1 | sed 's/.*://'
}

# parse_verilog: reads "checksum=A [received=B]" and prints "A B".
parse_verilog() {
    awk '/^checksum=/ {
        c = "-"; r = "-"
        for (i = 1; i <= NF; i++) {
            split($i, kv, "=")
            if (kv[1] == "checksum") c = kv[2]
            if (kv[1] == "received") r = kv[2]
        }
        print c, r
    }'
}

run_verilator() {
    local exe="$1" cycles="$2"
    timed "$exe" "$cycles" || die "verilator model $exe failed: $out"
    parse_verilog <<<"$out"
}

run_icarus() {
    local vvp_file="$1" cycles="$2"
    out="$(vvp -n "$vvp_file" "+cycles=$cycles")" || die "vvp $vvp_file failed: $out"
    parse_verilog <<<"$out"
}

# --- One design ------------------------------------------------------------

# fmt_stats "MEDIAN MIN MAX" SCALE DIGITS: "median [min, max]" times SCALE.
fmt_stats() {
    awk -v s="$1" -v k="$2" -v d="$3" 'BEGIN {
        split(s, v, " ")
        printf "%.*f [%.*f, %.*f]", d, v[1] * k, d, v[2] * k, d, v[3] * k
    }'
}

# rate "MEDIAN MIN MAX" CYCLES: cycles per second as "median min max" (the
# fastest run has the smallest wall time).
rate() {
    awk -v s="$1" -v n="$2" 'BEGIN { split(s, v, " "); printf "%s %s %s", n / v[1], n / v[3], n / v[2] }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3g", a / b }'; }

# bench NAME CHR PARAMS VERILOG_TOP VERILOG TB MAIN VERILATOR_PARAMS
#       ICARUS_PARAMS CYCLES ICARUS_CYCLES
bench() {
    local name="$1" chr="$2" params="$3" vtop="$4" vsrc="$5" tb="$6" main="$7"
    local vparams="$8" iparams="$9" cycles="${10}" icycles="${11}"
    case " ${DESIGNS:-pipe16 pipe256 pipe16u pipe256u crc32 decode wide512 fifo ring16 ring64 cpu4} " in
    *" $name "*) ;;
    *) return 0 ;;
    esac
    local dir="$work/$name"
    mkdir -p "$dir"
    echo
    echo "== $name: chronc and Verilator $cycles cycles, Icarus $icycles cycles," \
        "$REPS runs; builds $BUILD_REPS times =="

    # Builds.
    local t0 t1 b_chronc=() b_verilator=() b_icarus=() i
    for ((i = 0; i < BUILD_REPS; i++)); do
        run_chronc "$chr" "$params" 1 >/dev/null
        b_chronc+=("$(wall_last)")

        rm -rf "$dir/obj"
        t0="$(now)"
        # shellcheck disable=SC2086
        verilator -O3 --cc --exe --build -j "$jobs" -Wno-fatal \
            --top-module "$vtop" $vparams -CFLAGS "-DVTOP=V$vtop" -Mdir "$dir/obj" \
            "$vsrc" "$main" >"$dir/verilator.log" 2>&1 ||
            die "verilator failed on $vsrc; see the log:
$(tail -20 "$dir/verilator.log")"
        t1="$(now)"
        b_verilator+=("$(elapsed "$t0" "$t1")")

        t0="$(now)"
        # shellcheck disable=SC2086
        iverilog -g2005 $iparams -o "$dir/sim.vvp" "$tb" "$vsrc" ||
            die "iverilog failed on $vsrc"
        t1="$(now)"
        b_icarus+=("$(elapsed "$t0" "$t1")")
    done
    local model="$dir/obj/V$vtop"
    [ -x "$model" ] || die "no Verilator model built for $name"

    # Agreement of all three on Icarus's cycle count.
    local iref v k
    iref="$(run_chronc "$chr" "$params" "$icycles" | cut -d' ' -f1,2)"
    v="$(run_verilator "$model" "$icycles")"
    k="$(run_icarus "$dir/sim.vvp" "$icycles")"
    if [ "$iref" != "$v" ] || [ "$iref" != "$k" ]; then
        die "MISMATCH on $name after $icycles cycles: chronc [$iref] verilator [$v] icarus [$k]"
    fi
    echo "all three agree after $icycles cycles: checksum received = $iref"

    # Timed runs.
    local w_chronc=() r_chronc=() w_verilator=() w_icarus=() ref="" got line
    local c_chronc=() c_verilator=()
    for ((i = 0; i < REPS; i++)); do
        line="$(run_chronc "$chr" "$params" "$cycles")"
        w_chronc+=("$(wall_last)")
        c_chronc+=("$(cpu_last)")
        r_chronc+=("$(cut -d' ' -f3 <<<"$line")")
        got="$(cut -d' ' -f1,2 <<<"$line")"
        [ -z "$ref" ] && ref="$got"
        [ "$got" = "$ref" ] || die "chronc is not deterministic on $name: [$ref] then [$got]"

        got="$(run_verilator "$model" "$cycles")"
        w_verilator+=("$(wall_last)")
        c_verilator+=("$(cpu_last)")
        [ "$got" = "$ref" ] ||
            die "MISMATCH on $name after $cycles cycles: chronc [$ref] verilator [$got]"
    done
    for ((i = 0; i < REPS; i++)); do
        t0="$(now)"
        got="$(run_icarus "$dir/sim.vvp" "$icycles")"
        t1="$(now)"
        w_icarus+=("$(elapsed "$t0" "$t1")")
        [ "$got" = "$iref" ] ||
            die "MISMATCH on $name after $icycles cycles: chronc [$iref] icarus [$got]"
    done
    echo "chronc and Verilator agree after $cycles cycles: checksum received = $ref"

    # Report. Speeds come from process wall time (chronc's includes its
    # compile); "run only" is chronc's own timing of the simulation loop.
    local s_wc s_rc s_wv s_wi s_bc s_bv s_bi
    s_wc="$(stats "${w_chronc[@]}")"
    s_rc="$(stats "${r_chronc[@]}")"
    s_wv="$(stats "${w_verilator[@]}")"
    s_wi="$(stats "${w_icarus[@]}")"
    s_bc="$(stats "${b_chronc[@]}")"
    s_bv="$(stats "${b_verilator[@]}")"
    s_bi="$(stats "${b_icarus[@]}")"
    local cc cv ci crc
    cc="$(rate "$s_wc" "$cycles")"
    crc="$(rate "$s_rc" "$cycles")"
    cv="$(rate "$s_wv" "$cycles")"
    ci="$(rate "$s_wi" "$icycles")"
    local chronc_rate chronc_build
    chronc_rate="$(cut -d' ' -f1 <<<"$cc")"
    chronc_build="$(cut -d' ' -f1 <<<"$s_bc")"
    printf '%-22s | %-30s | %-13s | %-30s | %s\n' \
        "simulator" "Mcycles/s median [min, max]" "speed/chronc" \
        "build s median [min, max]" "build/chronc"
    printf '%-22s | %-30s | %-13s | %-30s | %s\n' \
        "chronc (JIT)" "$(fmt_stats "$cc" 1e-6 2)" "1.00" \
        "$(fmt_stats "$s_bc" 1 3)" "1"
    printf '%-22s | %-30s | %-13s | %-30s | %s\n' \
        "chronc, run loop only" "$(fmt_stats "$crc" 1e-6 2)" \
        "$(ratio "$(cut -d' ' -f1 <<<"$crc")" "$chronc_rate")" "-" "-"
    printf '%-22s | %-30s | %-13s | %-30s | %s\n' \
        "Verilator -O3" "$(fmt_stats "$cv" 1e-6 2)" \
        "$(ratio "$(cut -d' ' -f1 <<<"$cv")" "$chronc_rate")" \
        "$(fmt_stats "$s_bv" 1 3)" "$(ratio "$(cut -d' ' -f1 <<<"$s_bv")" "$chronc_build")"
    printf '%-22s | %-30s | %-13s | %-30s | %s\n' \
        "Icarus (vvp)" "$(fmt_stats "$ci" 1e-6 4)" \
        "$(ratio "$(cut -d' ' -f1 <<<"$ci")" "$chronc_rate")" \
        "$(fmt_stats "$s_bi" 1 3)" "$(ratio "$(cut -d' ' -f1 <<<"$s_bi")" "$chronc_build")"
    if [ ${#timer[@]} -gt 0 ]; then
        local ccpu vcpu
        ccpu="$(rate "$(stats "${c_chronc[@]}")" "$cycles")"
        vcpu="$(rate "$(stats "${c_verilator[@]}")" "$cycles")"
        printf '%-22s | %-30s | %-13s\n' "per process CPU second" "Mcycles/CPU s median [min, max]" "speed/chronc"
        printf '%-22s | %-30s | %-13s\n' "chronc (JIT)" "$(fmt_stats "$ccpu" 1e-6 2)" "1.00"
        printf '%-22s | %-30s | %-13s\n' "Verilator -O3" "$(fmt_stats "$vcpu" 1e-6 2)" \
            "$(ratio "$(cut -d' ' -f1 <<<"$vcpu")" "$(cut -d' ' -f1 <<<"$ccpu")")"
    fi
}

echo "chronc: $chronc"
echo "$(verilator --version)"
echo "$(iverilog -V 2>&1 | head -1)"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

bench pipe16 "$here/pipeline.chr" "N=16" pipeline "$here/pipeline.v" \
    "$here/checksum_tb.v" "$here/checksum_main.cpp" "-GN=16" "-DDUT=pipeline -DDUT_N=16" \
    "${PIPE16_CYCLES:-25000000}" "${PIPE16_ICARUS_CYCLES:-25000}"
bench pipe256 "$here/pipeline.chr" "N=256" pipeline "$here/pipeline.v" \
    "$here/checksum_tb.v" "$here/checksum_main.cpp" "-GN=256" "-DDUT=pipeline -DDUT_N=256" \
    "${PIPE256_CYCLES:-3000000}" "${PIPE256_ICARUS_CYCLES:-1200}"
bench pipe16u "$here/pipeline_units.chr" "N=16" pipeline "$here/pipeline.v" \
    "$here/checksum_tb.v" "$here/checksum_main.cpp" "-GN=16" "-DDUT=pipeline -DDUT_N=16" \
    "${PIPE16U_CYCLES:-25000000}" "${PIPE16U_ICARUS_CYCLES:-25000}"
bench pipe256u "$here/pipeline_units.chr" "N=256" pipeline "$here/pipeline.v" \
    "$here/checksum_tb.v" "$here/checksum_main.cpp" "-GN=256" "-DDUT=pipeline -DDUT_N=256" \
    "${PIPE256U_CYCLES:-3000000}" "${PIPE256U_ICARUS_CYCLES:-1200}"
bench crc32 "$here/crc32.chr" "" crc32 "$here/crc32.v" \
    "$here/checksum_tb.v" "$here/checksum_main.cpp" "" "-DDUT=crc32" \
    "${CRC32_CYCLES:-5000000}" "${CRC32_ICARUS_CYCLES:-20000}"
bench decode "$here/decode.chr" "" decode "$here/decode.v" \
    "$here/checksum_tb.v" "$here/checksum_main.cpp" "" "-DDUT=decode" \
    "${DECODE_CYCLES:-10000000}" "${DECODE_ICARUS_CYCLES:-20000}"
bench wide512 "$here/wide512.chr" "" wide512 "$here/wide512.v" \
    "$here/checksum_tb.v" "$here/checksum_main.cpp" "" "-DDUT=wide512" \
    "${WIDE512_CYCLES:-20000000}" "${WIDE512_ICARUS_CYCLES:-20000}"
bench fifo "$here/async_fifo.chr" "" async_fifo "$here/async_fifo.v" \
    "$here/async_fifo_tb.v" "$here/async_fifo_main.cpp" "" "" \
    "${FIFO_CYCLES:-8000000}" "${FIFO_ICARUS_CYCLES:-150000}"
ring="COUNT=4294967295 BUDGET=4294967295"
bench ring16 "$root/examples/router_ring.chr" "N=16 $ring" router_ring "$here/router_ring.v" \
    "$here/checksum_tb.v" "$here/checksum_main.cpp" "-GN=16" "-DDUT=router_ring -DDUT_N=16" \
    "${RING16_CYCLES:-5000000}" "${RING16_ICARUS_CYCLES:-20000}"
bench ring64 "$root/examples/router_ring.chr" "N=64 $ring" router_ring "$here/router_ring.v" \
    "$here/checksum_tb.v" "$here/checksum_main.cpp" "-GN=64" "-DDUT=router_ring -DDUT_N=64" \
    "${RING64_CYCLES:-1000000}" "${RING64_ICARUS_CYCLES:-5000}"
bench cpu4 "$root/examples/cpu4.chr" "RETIRE=4294967295" cpu4 "$here/cpu4.v" \
    "$here/checksum_tb.v" "$here/checksum_main.cpp" "" "-DDUT=cpu4" \
    "${CPU4_CYCLES:-5000000}" "${CPU4_ICARUS_CYCLES:-20000}"
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

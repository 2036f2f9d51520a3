#!/usr/bin/env bash
# Where a scenario's run spends its time: the top functions by self time.
#
#     bash bench/profile.sh NAME [SEED] [--top N] [--callgrind]
#
# NAME is a file of scenarios/examples (dumbbell, geo-clean, ...) or a path to any
# scenario file. Builds the `run` example (release profile: line tables, no frame
# pointers), then samples it with `perf record --call-graph dwarf` and prints the N
# (default 25) functions with the most self time, and for the first of them the callers
# that lead there. perf on this VM has no hardware counters: it samples the cpu-clock,
# which is fine for proportions. With --callgrind (or when perf is missing) it counts
# instructions under valgrind instead: repeatable whatever the machine's load, but blind
# to what an instruction costs (a `rep movsb` of 184 bytes counts as one).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
name="" seed=1 top=25 tool=perf
while [ $# -gt 0 ]; do
    case "$1" in
        --top) top="$2"; shift 2 ;;
        --callgrind) tool=callgrind; shift ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) if [ -z "$name" ]; then name="$1"; else seed="$1"; fi; shift ;;
    esac
done
[ -n "$name" ] || { echo "usage: bash bench/profile.sh NAME [SEED] [--top N] [--callgrind]" >&2; exit 2; }
scen="$name"
[ -f "$scen" ] || scen="$repo/scenarios/examples/$name.toml"
[ -f "$scen" ] || { echo "profile.sh: no scenario $name (looked for $scen)" >&2; exit 2; }
command -v perf >/dev/null 2>&1 || tool=callgrind

target="${CARGO_TARGET_DIR:-$repo/target}"
(cd "$repo" && cargo build --release -q -p hetpath-sim --example run)
bin="$target/release/examples/run"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

if [ "$tool" = perf ]; then
    perf record -q -F 4000 --call-graph dwarf,16384 -o "$out/perf.data" \
        "$bin" "$scen" "$seed" >"$out/run.txt"
    head -1 "$out/run.txt"
    echo "top $top functions by self time (perf, cpu-clock samples):"
    perf report -i "$out/perf.data" --no-children --stdio -g none --percent-limit 0 \
        2>/dev/null | grep -v '^#' | grep -v '^$' | head -n "$top" | tee "$out/top.txt"
    # The callers of the first two: inlined code shows under the function it sits in.
    head -2 "$out/top.txt" | sed -n 's/.*\[.\] //p' | while read -r sym; do
        echo
        echo "callers of $sym:"
        perf report -i "$out/perf.data" --no-children --stdio -G -S "$sym" \
            --percent-limit 1 2>/dev/null | grep -E -- '--[0-9.]+%--' | head -n 15
    done
else
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$bin" "$scen" "$seed" \
        >"$out/run.txt" 2>"$out/cg.err"
    head -1 "$out/run.txt"
    grep -E 'Collected' "$out/cg.err" | sed 's/^==[0-9]*== /instructions: /'
    echo "top $top functions by self instructions (callgrind):"
    callgrind_annotate --inclusive=no "$out/cg.out" 2>/dev/null \
        | grep -E '^ *[0-9,]+ \(' | head -n "$top"
fi

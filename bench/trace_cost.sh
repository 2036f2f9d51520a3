#!/usr/bin/env bash
# What the event trace costs: each example scenario run N times (default 7) with the
# trace off and on, alternately, by the engine's `run` example; prints the median wall
# time of each and their ratio. Usage: bash bench/trace_cost.sh [N]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n="${1:-7}"
cargo build --release --quiet --example run
bin=target/release/examples/run
wall() { "$bin" "$@" | sed -n 's/.*wall=\([0-9.]*\)s.*/\1/p'; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-10s %10s %10s %8s %14s\n' scenario off on on/off "trace events"
for s in geo-clean geo-loss geo-pep dumbbell; do
    f="scenarios/examples/$s.toml"
    off=(); on=()
    for _ in $(seq "$n"); do
        off+=("$(wall "$f")")
        on+=("$(wall "$f" --trace)")
    done
    a=$(printf '%s\n' "${off[@]}" | median)
    b=$(printf '%s\n' "${on[@]}" | median)
    events=$("$bin" "$f" --trace | sed -n 's/.*trace: \([0-9]*\) events.*/\1/p')
    printf '%-10s %9ss %9ss %8.3f %14s\n' "$s" "$a" "$b" "$(echo "$b / $a" | bc -l)" "$events"
done

#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a set time and reports executions and
# findings (docs/validation.md, "Fuzzing (issue 17)").
#
#   bench/fuzz.sh [SECONDS] [TARGET...]     default: 60 s each, every target
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Targets are
# built as `cargo fuzz build` does by default (release, debug assertions and overflow
# checks on) without a sanitizer (`-s none`): the decoders and the loader are safe Rust,
# so a finding is a panic (an overflow, an index out of bounds, an unwrap) or a timeout,
# which libFuzzer reports without AddressSanitizer, at about twice the speed.
# Corpora are kept in fuzz/corpus/<target>, crashes in fuzz/artifacts/<target>.
# Exit status: 0 if no target found anything, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
tdir="$CARGO_TARGET_DIR/fuzz"
cargo +nightly fuzz build -s none --target-dir "$tdir" || exit 2
logs=$(mktemp -d)
status=0
printf '%-18s %8s %14s %10s %8s\n' target seconds executions exec/s findings
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    # The loader starts from every scenario in the repository.
    if [ "$t" = scenario_load ] && [ -z "$(ls -A "fuzz/corpus/$t")" ]; then
        i=0
        while IFS= read -r f; do
            cp "$f" "fuzz/corpus/$t/seed-$i.toml"
            i=$((i + 1))
        done < <(find scenarios -name '*.toml' | sort)
    fi
    before=$(ls "fuzz/artifacts/$t" | wc -l)
    # -jobs=1, one process: the machine may be shared. -rss_limit_mb bounds memory.
    cargo +nightly fuzz run -s none --target-dir "$tdir" "$t" -- \
        -max_total_time="$secs" -print_final_stats=1 -rss_limit_mb=2048 \
        -timeout=10 >"$logs/$t.log" 2>&1
    rc=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$logs/$t.log" | grep -o '[0-9]*$' | tail -1)
    after=$(ls "fuzz/artifacts/$t" | wc -l)
    found=$((after - before))
    if [ "$rc" -ne 0 ] && [ "$found" -eq 0 ]; then found="rc=$rc"; fi
    rate=$(( ${execs:-0} / (secs > 0 ? secs : 1) ))
    printf '%-18s %8s %14s %10s %8s\n' "$t" "$secs" "${execs:-?}" "$rate" "$found"
    if [ "$found" != 0 ]; then
        status=1
        grep -m5 -E 'panicked|ERROR|SUMMARY|artifact' "$logs/$t.log" | sed 's/^/    /'
    fi
done
echo "logs: $logs"
exit $status

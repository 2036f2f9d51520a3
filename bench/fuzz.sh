#!/usr/bin/env bash
# Runs every fuzz target in fuzz/ for a set time and reports executions and findings
# (docs/validation.md, "Fuzzing"): the cargo-fuzz targets (fuzz/fuzz_targets)
# and the Python ones (fuzz/python/*.py, under Atheris, libFuzzer for Python).
#
#   bench/fuzz.sh [SECONDS] [TARGET...]     default: 60 s each, every target
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`); the Python
# targets need scripts/setup.sh's .venv, into which atheris is installed if missing.
# Cargo targets are
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
    mapfile -t targets < <(cargo +nightly fuzz list; for f in fuzz/python/*.py; do basename "$f" .py; done)
fi
py=.venv/bin/python
for t in "${targets[@]}"; do
    if [ -f "fuzz/python/$t.py" ] && ! "$py" -c 'import atheris' 2>/dev/null; then
        "$py" -m pip install --quiet atheris || exit 2
    fi
done
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
tdir="$CARGO_TARGET_DIR/fuzz"
cargo +nightly fuzz build -s none --target-dir "$tdir" || exit 2
logs=$(mktemp -d)
status=0
printf '%-18s %8s %14s %10s %8s\n' target seconds executions exec/s findings
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    # The loader starts from every scenario in the repository, a Python target from its
    # seed corpus (fuzz/python/corpus).
    if [ -z "$(ls -A "fuzz/corpus/$t")" ]; then
        if [ "$t" = scenario_load ]; then
            i=0
            while IFS= read -r f; do
                cp "$f" "fuzz/corpus/$t/seed-$i.toml"
                i=$((i + 1))
            done < <(find scenarios -name '*.toml' | sort)
        elif [ -f "fuzz/python/$t.py" ]; then
            cp fuzz/python/corpus/* "fuzz/corpus/$t/"
        fi
    fi
    before=$(ls "fuzz/artifacts/$t" | wc -l)
    # -jobs=1, one process: the machine may be shared. -rss_limit_mb bounds memory.
    opts=(-max_total_time="$secs" -print_final_stats=1 -rss_limit_mb=2048 -timeout=10)
    if [ -f "fuzz/python/$t.py" ]; then
        "$py" "fuzz/python/$t.py" "fuzz/corpus/$t" "${opts[@]}" \
            -artifact_prefix="fuzz/artifacts/$t/" >"$logs/$t.log" 2>&1
    else
        cargo +nightly fuzz run -s none --target-dir "$tdir" "$t" -- "${opts[@]}" >"$logs/$t.log" 2>&1
    fi
    rc=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$logs/$t.log" | grep -o '[0-9]*$' | tail -1)
    after=$(ls "fuzz/artifacts/$t" | wc -l)
    found=$((after - before))
    if [ "$rc" -ne 0 ] && [ "$found" -eq 0 ]; then found="rc=$rc"; fi
    rate=$(( ${execs:-0} / (secs > 0 ? secs : 1) ))
    printf '%-18s %8s %14s %10s %8s\n' "$t" "$secs" "${execs:-?}" "$rate" "$found"
    if [ "$found" != 0 ]; then
        status=1
        grep -m5 -E 'panicked|Traceback|Error|ERROR|SUMMARY|artifact' "$logs/$t.log" | sed 's/^/    /'
    fi
done
echo "logs: $logs"
exit $status

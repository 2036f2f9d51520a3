#!/usr/bin/env bash
# Runs every check, on the build `scripts/setup.sh --tests` installed (the README's test
# command runs both):
#   1. lints: rustfmt, clippy on every target with warnings as errors, ruff, the layering;
#   2. cargo test, in the test-fast profile (Cargo.toml), which the setup's build shares;
#   3. pytest, on one worker per core plus one (pytest-xdist; a group of tests stays on
#      one worker: conftest.py), in a new random order each time (pytest-randomly; the
#      seed is printed, and HETPATH_TEST_SEED=N repeats an order).
# Arguments are passed to pytest (e.g. `scripts/test.sh -k figures`).
#
# Live tests (namespaces, TUN, hetpath-live) skip where the machine cannot run them,
# with the reason. Under CI=true, on a machine where this process is root and can make a
# network namespace and a TUN device, they must run: HETPATH_REQUIRE_LIVE=1 is set and
# a live test that would skip fails. Set HETPATH_REQUIRE_LIVE=0 or 1 to decide yourself.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
py="$repo/.venv/bin/python"
if ! "$py" -c 'import pytest, xdist, pytest_randomly, hetpath' 2>/dev/null || [ ! -x "$repo/.venv/bin/ruff" ]; then
    echo "test.sh: error: the test environment is missing; run 'bash scripts/setup.sh --tests' first" >&2
    exit 2
fi
step() { printf '==> [%ds] %s\n' "$SECONDS" "$*"; }

step "lints: rustfmt, clippy (-D warnings), ruff, layering"
cargo fmt --all --check
cargo clippy --quiet --locked --workspace --all-targets --profile test-fast -- -D warnings
"$repo/.venv/bin/ruff" check --quiet python tests bench scripts fuzz
"$py" scripts/check_layers.py

# Whether live tests must run (the header). Probed with a namespace holding a TUN device.
live_probe() {
    local ns="hp-require-live-$$" ok=1
    [ "$(id -u)" = 0 ] && command -v ip >/dev/null 2>&1 || return 1
    ip netns add "$ns" 2>/dev/null || return 1
    ip -n "$ns" tuntap add dev hp-probe mode tun 2>/dev/null || ok=0
    ip netns del "$ns" 2>/dev/null || true
    [ "$ok" = 1 ]
}
if [ -z "${HETPATH_REQUIRE_LIVE:-}" ] && [ "${CI:-}" = true ] && live_probe; then
    export HETPATH_REQUIRE_LIVE=1
fi
step "live tests required: ${HETPATH_REQUIRE_LIVE:-0}"

step "cargo test (test-fast profile)"
# hetpath-py is a Python extension module: it links against the interpreter and is
# tested through pytest instead; hetpath-bench holds benchmarks only. The same packages
# as setup.sh's build, so that cargo resolves the same features and rebuilds nothing.
cargo test --quiet --locked --profile test-fast --workspace --exclude hetpath-py --exclude hetpath-bench

# A new order each time, printed so that a failure that depends on it can be repeated:
# HETPATH_TEST_SEED=N scripts/test.sh.
seed="${HETPATH_TEST_SEED:-$(( (RANDOM << 15) | RANDOM ))}"
# One worker per core, plus one: the two live groups (conftest.py) spend most of their
# time waiting on real time, so they share the cores with the simulations.
workers=$(( $(nproc 2>/dev/null || echo 2) + 1 ))
step "pytest ($workers workers, random order: HETPATH_TEST_SEED=$seed repeats it)"
"$py" -m pytest tests/python -q -n "$workers" --dist loadgroup --no-loadscope-reorder --randomly-seed="$seed" "$@"

#!/usr/bin/env bash
# Create .venv in the repo root and install hetpath with its Rust extension and the
# link emulator hetpath-live. Safe to run again: it reuses .venv and reinstalls the
# current sources (cargo rebuilds only what changed).
#
#   scripts/setup.sh           for use: the extension built profile-guided in the
#                              `release` profile (thin LTO, trained on
#                              scenarios/examples: the fastest engine), hetpath-live
#                              in `release`.
#   scripts/setup.sh --tests   for scripts/test.sh: the extension and hetpath-live in
#                              the `test-fast` profile (Cargo.toml: release code
#                              generation without LTO or a profile), which cargo test
#                              reuses, so the test command builds the crates once; plus
#                              pytest, pytest-randomly and ruff (the `test` extra), and
#                              nftables, faketime and ethtool where they can be
#                              installed (the live tests).
#
# Needs: python3 (>= 3.9) with the venv module, and a Rust toolchain (rustup).
# Env: PYTHON=/path/to/python3 to choose the interpreter; HETPATH_PGO=0 to build the
# extension without a profile (one build instead of two, a slower engine).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
venv="$repo/.venv"
python="${PYTHON:-python3}"

say() { printf '==> [%ds] %s\n' "$SECONDS" "$*"; }

tests=0
case "${1:-}" in
    "") ;;
    --tests) tests=1 ;;
    -h | --help) sed -n '2,/^[^#]/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: error: unknown option '$1'; expected --tests or nothing (see --help)" >&2; exit 2 ;;
esac

# rustup installs into ~/.cargo/bin, which non-login shells (CI) may not have on PATH.
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
    say "adding ~/.cargo/bin to PATH"
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "setup.sh: error: cargo not found; install Rust with rustup (https://rustup.rs)" >&2
    exit 1
fi
say "using $(cargo --version)"

if ! command -v "$python" >/dev/null 2>&1; then
    echo "setup.sh: error: $python not found; set PYTHON=/path/to/python3" >&2
    exit 1
fi

new_venv=""
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
    say "reusing virtual environment $venv ($("$venv/bin/python" --version))"
else
    say "creating virtual environment $venv with $("$python" --version)"
    rm -rf "$venv"
    "$python" -m venv "$venv"
    new_venv=1
fi

pip_install() { "$venv/bin/python" -m pip install --quiet --progress-bar off "$@"; }
if [ -n "$new_venv" ]; then
    say "upgrading pip"
    pip_install --upgrade pip
fi
target="$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"

if [ "$tests" = 1 ]; then
    # Everything the test command runs, built once in the test-fast profile: first the
    # extension (maturin, in $target).
    say "building the Rust extension (test-fast profile) and installing hetpath[test]; the first build takes a few minutes"
    MATURIN_PEP517_ARGS="--profile test-fast" pip_install "$repo[test]"
    # The Rust tests and hetpath-live in one build: with the test targets in it, cargo
    # resolves the dependencies' features as `cargo test` does (dev-dependencies add some),
    # so the tests then build nothing, and the binary shares their compiled crates.
    say "building the Rust tests and the link emulator hetpath-live (test-fast profile)"
    cargo build --quiet --profile test-fast --locked --workspace --exclude hetpath-py --exclude hetpath-bench \
        --bins --tests --examples
    if [ "$(uname -s)" = Linux ]; then
        install -m 0755 "$target/test-fast/hetpath-live" "$venv/bin/hetpath-live"
        # The PEP's namespace tests drive nft; as root with apt, install it rather than
        # let those tests skip (scripts/test.sh fails a skipped live test under CI).
        if ! command -v nft >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            say "installing nftables (nft) for the PEP's namespace tests"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nftables >/dev/null \
                || say "could not install nftables: the tests that need nft will say so"
        fi
        # The gateway fault tests restart a gateway with its wall clock stepped back
        # (tests/python/test_pep_faults.py): Debian's faketime, installed the same way.
        if ! command -v faketime >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            say "installing faketime for the gateway fault tests"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null \
                || say "could not install faketime: the clock-step test will say so"
        fi
        # Packet mode's offload test reads `ethtool -k` (tests/python/test_emulate_hygiene.py).
        if ! command -v ethtool >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            say "installing ethtool for the emulator's offload test"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ethtool >/dev/null \
                || say "could not install ethtool: the offload test will say so"
        fi
    fi
    say "checking the installation"
    "$venv/bin/hetpath" --version
    say "done: the test build is installed (a slower engine than scripts/setup.sh's); run scripts/test.sh"
    exit 0
fi

# Profile-guided optimisation (docs/performance.md, "Profile-guided build"): the extension
# is built instrumented, run on every example scenario, and built again with what those
# runs recorded. The engine then runs about a quarter faster; no result changes (the
# profile moves code, it never reorders arithmetic). It needs the llvm-profdata of
# rustc's own LLVM (rustup's llvm-tools component, added here when missing). Without it,
# or with HETPATH_PGO=0, the extension is built once, without a profile.
profdata=""
if [ "${HETPATH_PGO:-1}" != 0 ]; then
    host="$(rustc -vV | sed -n 's/^host: //p')"
    profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
    if [ ! -x "$profdata" ] && command -v rustup >/dev/null 2>&1; then
        say "adding rustup's llvm-tools (llvm-profdata, for the profile-guided build)"
        rustup component add llvm-tools >/dev/null 2>&1 || true
    fi
    if [ ! -x "$profdata" ]; then
        say "no llvm-profdata for $(rustc --version): building without a profile (slower engine)"
        profdata=""
    fi
fi

install_hetpath() {  # install_hetpath RUSTFLAGS TARGET_DIR PIP_ARGS...
    local flags="$1" dir="$2"
    shift 2
    RUSTFLAGS="${RUSTFLAGS:-} $flags" CARGO_TARGET_DIR="$dir" pip_install "$@"
}

if [ -n "$profdata" ]; then
    raw="$target/pgo/profraw"
    say "building the Rust extension instrumented (release) and installing hetpath; the first build takes a few minutes"
    install_hetpath "-Cprofile-generate=$raw" "$target/pgo/generate" "$repo"
    say "profiling it on scenarios/examples"
    rm -rf "$raw"
    for scenario in "$repo"/scenarios/examples/*.toml; do
        "$venv/bin/hetpath" run "$scenario" --json -q >/dev/null
    done
    "$profdata" merge -o "$target/pgo/merged.profdata" "$raw"
    say "building the Rust extension again with that profile"
    install_hetpath "-Cprofile-use=$target/pgo/merged.profdata" "$target/pgo/use" \
        --no-deps --force-reinstall "$repo"
else
    say "building the Rust extension (release) and installing hetpath; the first build takes a few minutes"
    pip_install "$repo"
fi

if [ "$(uname -s)" = Linux ]; then
    # The link emulator behind `hetpath emulate` (crates/hetpath-live): a plain binary,
    # built like the extension and put beside it in the virtual environment.
    say "building the link emulator hetpath-live (release) into $venv/bin"
    cargo build --quiet --release --locked -p hetpath-live
    install -m 0755 "$target/release/hetpath-live" "$venv/bin/hetpath-live"
fi

say "checking the installation"
"$venv/bin/hetpath" --version

say "done: run '.venv/bin/hetpath --help', or 'source .venv/bin/activate' to put hetpath on PATH"

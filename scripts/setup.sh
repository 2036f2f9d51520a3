#!/usr/bin/env bash
# Create .venv in the repo root and install hetpath (with its Rust extension,
# built by maturin in release mode) plus the test extra.  Safe to run again:
# it reuses .venv and reinstalls the current sources.
#
# Needs: python3 (>= 3.9) with the venv module, and a Rust toolchain (rustup).
# Env: PYTHON=/path/to/python3 to choose the interpreter.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
venv="$repo/.venv"
python="${PYTHON:-python3}"

say() { printf '==> %s\n' "$*"; }

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

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
    say "reusing virtual environment $venv ($("$venv/bin/python" --version))"
else
    say "creating virtual environment $venv with $("$python" --version)"
    rm -rf "$venv"
    "$python" -m venv "$venv"
fi

say "upgrading pip"
"$venv/bin/python" -m pip install --quiet --upgrade pip

say "building the Rust extension (release) and installing hetpath[test]; the first build takes a few minutes"
"$venv/bin/python" -m pip install --quiet --progress-bar off "$repo[test]"

if [ "$(uname -s)" = Linux ]; then
    # The link emulator behind `hetpath emulate` (crates/hetpath-live): a plain binary,
    # built like the extension and put beside it in the virtual environment.
    say "building the link emulator hetpath-live (release) into $venv/bin"
    cargo build --quiet --release --locked -p hetpath-live
    target="$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
    install -m 0755 "$target/release/hetpath-live" "$venv/bin/hetpath-live"
fi

say "checking the installation"
"$venv/bin/hetpath" --version

say "done: run '.venv/bin/hetpath --help', or 'source .venv/bin/activate' to put hetpath on PATH"

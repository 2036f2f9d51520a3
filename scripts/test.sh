#!/usr/bin/env bash
# Runs every test: the Rust workspace (release build: the whole-scenario tests simulate
# minutes of traffic) and the Python suite against the installed package in .venv.
# Run scripts/setup.sh first (the README's test command does both).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
    . "$HOME/.cargo/env"
fi
echo "==> layering (scripts/check_layers.py)"
"$repo/.venv/bin/python" scripts/check_layers.py
echo "==> cargo test (release)"
# hetpath-py is a Python extension module: it links against the interpreter and is
# tested through pytest instead.
cargo test --release --workspace --exclude hetpath-py
echo "==> pytest"
"$repo/.venv/bin/python" -m pytest tests/python -q

#!/usr/bin/env python3
"""Fails on an import against the layering of docs/architecture.md.

    python3 scripts/check_layers.py

Each crate's modules are listed bottom-up; a module may use (`crate::x`) only modules
listed before it. Test code (`tests.rs`, `*_tests.rs`, `proptests.rs`, `testing/`, and
everything from a `#[cfg(test)]` line to the end of a file) is exempt. Also checked:
the protocol crate names no simulator crate, and the simulator core (`sim/`) names no
concrete machine (`hetpath_proto::agent`): machines reach it through the registry in
`scenario/`. Exit status 1 lists every violation.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LAYERS = {
    "crates/hetpath-proto/src": [
        "time", "ids", "runs", "lift", "sctp_chunk", "stp", "packet", "esp", "esw", "crosslayer", "iface", "wire", "rap", "cc", "tcp",
        "sctp", "machine", "host", "agent", "testing",
    ],
    "crates/hetpath-sim/src": [
        "units", "ids", "rng", "traffic", "engine", "channel", "link", "esw_link", "wlan", "mobility", "results", "trace", "sim",
        "scenario", "capture",
    ],
    "crates/hetpath-live/src": ["buffers", "fate", "netlink", "tcp_diag", "emulator", "scenario", "output", "sys", "pep", "main"],
}
FORBIDDEN = [
    ("crates/hetpath-proto/src", re.compile(r"\bhetpath_sim\b"), "the protocol crate names the simulator"),
    ("crates/hetpath-sim/src/sim", re.compile(r"\bhetpath_proto::agent\b"),
     "the simulator core names a concrete machine (use the registry in scenario/)"),
]
USE = re.compile(r"\bcrate::([a-z_]+)")


def production_code(path: Path) -> str:
    """The file's non-test code, comments blanked (line numbers kept)."""
    if path.name in ("tests.rs", "proptests.rs") or path.name.endswith("_tests.rs"):
        return ""
    text = path.read_text()
    cut = text.find("#[cfg(test)]")
    text = text if cut < 0 else text[:cut]
    return "\n".join(line.split("//")[0] for line in text.splitlines())


def module_of(src: Path, path: Path) -> str:
    rel = path.relative_to(src)
    return rel.parts[0].removesuffix(".rs")


def main() -> int:
    problems = []
    for root, order in LAYERS.items():
        src = REPO / root
        rank = {m: i for i, m in enumerate(order)}
        for path in sorted(src.rglob("*.rs")):
            module = module_of(src, path)
            # A `#[path]` test file of a module (`x_tests.rs`) is that module's tests.
            if module in ("lib", "testing") or "testing" in path.parts or path.name.endswith("_tests.rs"):
                continue
            if module not in rank:
                problems.append(f"{path.relative_to(REPO)}: module '{module}' has no layer "
                                "in scripts/check_layers.py")
                continue
            for n, line in enumerate(production_code(path).splitlines(), 1):
                for used in USE.findall(line):
                    if used in rank and used != module and rank[used] > rank[module]:
                        problems.append(f"{path.relative_to(REPO)}:{n}: '{module}' uses "
                                        f"'{used}', a layer above it")
    for root, pattern, why in FORBIDDEN:
        for path in sorted((REPO / root).rglob("*.rs")):
            for n, line in enumerate(production_code(path).splitlines(), 1):
                if pattern.search(line):
                    problems.append(f"{path.relative_to(REPO)}:{n}: {why}")
    for p in problems:
        print(p)
    print(f"check_layers: {len(problems)} violation(s)" if problems else "check_layers: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

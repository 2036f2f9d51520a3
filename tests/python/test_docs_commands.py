"""Every command shown in README.md and docs/guide.md runs as documented.

The commands are read from the docs' ```sh / ```bash / ```console blocks (lines, or
parts of ``a && b`` lines, that start with ``hetpath `` or ``.venv/bin/hetpath ``) and
run in-process, in doc order, in one temporary directory where ``scenarios/`` is the
repository's; a command may use what an earlier one wrote, as a reader's would.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import Result
from helpers import invoke

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs/guide.md")
_BLOCK = re.compile(r"^```(?:sh|bash|console)[ \t]*\n(.*?)^```", re.M | re.S)
_PROGRAM = ("hetpath", ".venv/bin/hetpath")


def documented() -> list[tuple[str, list[str]]]:
    """(where, argv after the program) of every documented hetpath command."""
    found = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for block in _BLOCK.finditer(text):
            first_line = text.count("\n", 0, block.start(1)) + 1
            for k, line in enumerate(block.group(1).splitlines()):
                for part in line.removeprefix("$ ").split("&&"):
                    argv = shlex.split(part, comments=True)
                    if argv and argv[0] in _PROGRAM:
                        found.append((f"{doc}:{first_line + k}", argv[1:]))
    return found


def adjusted(argv: list[str]) -> list[str]:
    """A full reproduction takes minutes: run its --quick grid instead, which goes
    through the same code (the docs show both)."""
    if argv[:1] == ["reproduce"] and "--quick" not in argv:
        return [*argv, "--quick"]
    return argv


COMMANDS = documented()


def test_the_docs_show_commands() -> None:
    """Guards the extraction itself: an empty list would pass every test below."""
    assert len(COMMANDS) >= 8
    assert any(argv[:1] == ["report"] for _, argv in COMMANDS)


@pytest.fixture(scope="session")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[Result]:
    """Every documented command run once, in doc order, in one directory where
    ``scenarios/`` is the repository's: a command may use what an earlier one wrote, as a
    reader's would. Run here, not test by test, so the outcome of each does not depend on
    the order in which the tests run (pytest-randomly shuffles them)."""
    work = tmp_path_factory.mktemp("docs")
    (work / "scenarios").symlink_to(ROOT / "scenarios", target_is_directory=True)
    with pytest.MonkeyPatch.context() as m:
        m.chdir(work)
        return [invoke(adjusted(argv)) for _, argv in COMMANDS]


@pytest.mark.parametrize("k", range(len(COMMANDS)), ids=[f"{w} {' '.join(a)}" for w, a in COMMANDS])
def test_documented_command_runs(k: int, outcomes: list[Result]) -> None:
    where, argv = COMMANDS[k]
    result = outcomes[k]
    assert result.exit_code == 0, f"{where}: hetpath {' '.join(argv)}: {result.stderr}"

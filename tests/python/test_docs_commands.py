"""Every command shown in README.md, docs/guide.md and docs/live.md runs as documented,
and every output they show is what the command prints today.

The commands are read from the docs' ```sh / ```bash / ```console blocks (lines, or
parts of ``a && b`` lines, that start with ``hetpath `` or ``.venv/bin/hetpath ``) and
run in-process, in doc order, in one temporary directory where ``scenarios/`` is the
repository's; a command may use what an earlier one wrote, as a reader's would.

A block that shows a command's output says which command printed it, in an HTML comment
on the line before it (invisible on the rendered page)::

    <!-- output of: hetpath run scenarios/examples/geo-clean.toml; varies: in ([0-9.]+) s -->

The command is run afresh and its stdout compared with the block: the text between the
numbers word for word (runs of spaces and of the tables' rule characters count as one),
and every number exactly as printed, since a simulated run is deterministic. Numbers
matched by a group of a ``varies: REGEX`` option (the wall time) are not compared. A
number that is measured (live, or in wall time) and still shown carries a
``tolerance: 5%`` option instead: each number is then compared within that relative
tolerance. Any other code block that looks like a run's output (its headline) and has no
such comment fails the test, so an output cannot be shown unchecked.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import Result
from helpers import invoke

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs/guide.md", "docs/live.md")
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
def docs_work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory the documented commands run in, a reader's checkout."""
    work = tmp_path_factory.mktemp("docs")
    (work / "scenarios").symlink_to(ROOT / "scenarios", target_is_directory=True)
    return work


@pytest.fixture(scope="session")
def outcomes(docs_work: Path) -> list[Result]:
    """Every documented command run once, in doc order, in one directory where
    ``scenarios/`` is the repository's: a command may use what an earlier one wrote, as a
    reader's would. Run here, not test by test, so the outcome of each does not depend on
    the order in which the tests run (pytest-randomly shuffles them)."""
    work = docs_work
    with pytest.MonkeyPatch.context() as m:
        m.chdir(work)
        return [invoke(adjusted(argv)) for _, argv in COMMANDS]


@pytest.mark.parametrize("k", range(len(COMMANDS)), ids=[f"{w} {' '.join(a)}" for w, a in COMMANDS])
def test_documented_command_runs(k: int, outcomes: list[Result]) -> None:
    where, argv = COMMANDS[k]
    result = outcomes[k]
    assert result.exit_code == 0, f"{where}: hetpath {' '.join(argv)}: {result.stderr}"


# Shown outputs ---------------------------------------------------------------------------

_SHOWN = re.compile(r"^<!-- output of: (?P<head>.*?) -->\n```[a-z]*\n(?P<body>.*?)^```", re.M | re.S)
_ANY_BLOCK = re.compile(r"^```[a-z]*\n(.*?)^```", re.M | re.S)
#: A run's headline: what an undeclared output block would show.
_HEADLINE = re.compile(r"^\S+ +seed \d+ +[\d.]+ s simulated in", re.M)
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?|[-+]?\.\d+")
_RULES = re.compile(r"[─━│┃┼╇╈┡┩┏┓┗┛┳┻╋═]+")


class Shown:
    """One output block of the docs, with the command that printed it."""

    def __init__(self, doc: str, line: int, head: str, body: str) -> None:
        command, *options = [part.strip() for part in head.split(";")]
        self.where = f"{doc}:{line}"
        self.argv = shlex.split(command)
        assert self.argv and self.argv[0] in _PROGRAM, f"{self.where}: 'output of:' names no hetpath command"
        self.argv = self.argv[1:]
        self.body = body
        self.varies: list[re.Pattern[str]] = []
        self.tolerance = 0.0
        for option in options:
            key, _, value = option.partition(":")
            if key.strip() == "varies":
                self.varies.append(re.compile(value.strip()))
            elif key.strip() == "tolerance" and value.strip().endswith("%"):
                self.tolerance = float(value.strip()[:-1]) / 100
            else:
                raise AssertionError(f"{self.where}: unknown option {option!r} (varies: REGEX, tolerance: N%)")


def shown_outputs() -> list[Shown]:
    found = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for block in _SHOWN.finditer(text):
            line = text.count("\n", 0, block.start("body")) + 1
            found.append(Shown(doc, line, block.group("head"), block.group("body")))
    return found


def undeclared_outputs() -> list[str]:
    """Code blocks that show a run's headline with no 'output of:' comment before them."""
    found = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        declared = {m.start("body") for m in _SHOWN.finditer(text)}
        for block in _ANY_BLOCK.finditer(text):
            if block.start(1) not in declared and _HEADLINE.search(block.group(1)):
                found.append(f"{doc}:{text.count(chr(10), 0, block.start(1)) + 1}")
    return found


def tokens(text: str, varies: list[re.Pattern[str]]) -> list[str]:
    """Words and numbers, in order; what a ``varies`` group matched becomes ``<varies>``."""
    for pattern in varies:
        text = pattern.sub(_blank_groups, text)
    text = _RULES.sub("─", text)
    out: list[str] = []
    for word in text.split():
        pos = 0
        for number in _NUMBER.finditer(word):
            out += [w for w in (word[pos:number.start()],) if w] + [number.group()]
            pos = number.end()
        out += [w for w in (word[pos:],) if w]
    return out


def _blank_groups(m: re.Match[str]) -> str:
    text, base = m.group(0), m.start(0)
    for g in reversed(range(1, (m.re.groups or 0) + 1)):
        if m.start(g) >= 0:
            text = text[:m.start(g) - base] + "<varies>" + text[m.end(g) - base:]
    return text


def differences(shown: list[str], printed: list[str], tolerance: float) -> list[str]:
    """What differs between the block's tokens and the fresh output's, in words."""
    if len(shown) != len(printed):
        return [f"{len(shown)} words and numbers shown, {len(printed)} printed"]
    found = []
    for a, b in zip(shown, printed):
        if a == b:
            continue
        if _NUMBER.fullmatch(a) and _NUMBER.fullmatch(b) and tolerance > 0:
            x, y = float(a.replace(",", "")), float(b.replace(",", ""))
            if abs(x - y) <= tolerance * max(abs(x), abs(y)):
                continue
        kind = f"within {tolerance:.0%}" if tolerance else "exact"
        found.append(f"shows {a!r}, prints {b!r} ({kind})")
    return found


SHOWN = shown_outputs()


def test_the_docs_show_outputs() -> None:
    """Guards the extraction: the guide's first run is one of them."""
    assert any(s.where.startswith("docs/guide.md") and s.argv[:1] == ["run"] for s in SHOWN)


def test_every_shown_run_output_says_which_command_printed_it() -> None:
    assert not undeclared_outputs(), f"output blocks without '<!-- output of: ... -->': {undeclared_outputs()}"


@pytest.mark.parametrize("k", range(len(SHOWN)), ids=[f"{s.where} {' '.join(s.argv)}" for s in SHOWN])
def test_shown_output_is_what_the_command_prints(k: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shown = SHOWN[k]
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    result = invoke(shown.argv)
    assert result.exit_code == 0, f"{shown.where}: hetpath {' '.join(shown.argv)}: {result.stderr}"
    diff = differences(tokens(shown.body, shown.varies), tokens(result.stdout, shown.varies), shown.tolerance)
    assert not diff, f"{shown.where}: hetpath {' '.join(shown.argv)}: the docs show a stale output:\n  " + \
        "\n  ".join(diff) + f"\nIt prints now:\n{result.stdout}"


@pytest.mark.parametrize("shown, printed, tolerance, ok", [
    ("goodput 8.172 Mbit/s, 156 drops", "goodput 8.172 Mbit/s, 156 drops", 0.0, True),
    ("goodput 8.172 Mbit/s, 156 drops", "goodput 9.500 Mbit/s, 0 drops", 0.0, False),
    ("goodput 8.172 Mbit/s", "goodput 8.173 Mbit/s", 0.0, False),
    ("goodput 8.172 Mbit/s", "goodput 8.5 Mbit/s", 0.05, True),
    ("goodput 8.172 Mbit/s", "goodput 9.5 Mbit/s", 0.05, False),
    ("423,928 events", "423,929 events", 0.0, False),
    ("drops ─── 1", "drops ────────── 1", 0.0, True),
    ("flows", "flows links", 0.0, False),
])
def test_the_comparison_catches_a_drifted_number(shown: str, printed: str, tolerance: float, ok: bool) -> None:
    assert (not differences(tokens(shown, []), tokens(printed, []), tolerance)) == ok


def test_a_varying_number_is_not_compared() -> None:
    varies = [re.compile(r"in ([0-9.]+) s")]
    assert tokens("simulated in 0.09 s, 5 events", varies) == tokens("simulated in 1.73 s, 5 events", varies)
    assert tokens("simulated in 0.09 s, 5 events", varies) != tokens("simulated in 0.09 s, 6 events", varies)


def test_the_readme_states_the_quick_reproductions_run_count(outcomes: list[Result], docs_work: Path) -> None:
    """The README's first command reproduces tcp-radio --quick and says how many runs that
    is; the count is what the documented command ran (one row of runs.csv each)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"reduced\s+grid: ([\d,]+) runs", text)
    assert stated, "README.md no longer says how many runs the quick reproduction is"
    runs = (docs_work / "out" / "reproduce" / "tcp-radio" / "runs.csv").read_text().count("\n") - 1
    assert int(stated.group(1).replace(",", "")) == runs


# The guide's error messages ----------------------------------------------------------------

#: A change to geo-clean.toml that makes each error of the guide's section 4.10 (named by
#: a fragment of its line), so the lists and ranges the messages show stay what the
#: loader says. Line numbers are the guide's example file's and are not compared.
_ERRORS = [
    ("unknown field `speed`", 'rate = "10Mbps"', 'speed = "10Mbps"'),
    ("'10Mbs'", 'rate = "10Mbps"', 'rate = "10Mbs"'),
    ("'-10Mbps'", 'rate = "10Mbps"', 'rate = "-10Mbps"'),
    ("duration: '200'", 'duration = "200s"', 'duration = "200"'),
    ("(ab).delay: missing", 'delay = "300ms"', ""),
    ("unknown node 'moon'", 'to = "terminal"', 'to = "moon"'),
    ("unknown controller 'vegas'", 'cc = "newreno"', 'cc = "vegas"'),
    ("cc.beta: 2", 'cc = "newreno"', 'cc = { name = "cubic", beta = 2 }'),
    ("unknown field `growth`", 'cc = "newreno"', 'cc = { name = "cubic", growth = 2 }'),
    ("tcp.mss: 10", 'cc = "newreno"', 'cc = "newreno"\ntcp = { mss = 10 }'),
    ("unknown profile 'nope'", 'cc = "newreno"', 'cc = "newreno"\ntcp = { profile = "nope" }'),
]
_PREFIX = re.compile(r"^(?:hetpath: error: )?\S*geo\.toml: (?:line \d+: )?")


@pytest.mark.parametrize("fragment, old, new", _ERRORS, ids=[e[0] for e in _ERRORS])
def test_the_guides_error_message_is_the_loaders(fragment: str, old: str, new: str, tmp_path: Path) -> None:
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    shown = [line for line in guide.splitlines() if line.startswith("geo.toml: ") and fragment in line]
    assert len(shown) == 1, f"docs/guide.md shows {len(shown)} error lines with {fragment!r}"
    text = (ROOT / "scenarios" / "examples" / "geo-clean.toml").read_text(encoding="utf-8")
    assert f"\n{old}\n" in text
    bad = tmp_path / "geo.toml"
    bad.write_text(text.replace(f"\n{old}\n", f"\n{new}\n", 1), encoding="utf-8")
    result = invoke(["validate", str(bad)])
    assert result.exit_code == 2
    assert _PREFIX.sub("", result.stderr.strip()) == _PREFIX.sub("", shown[0])

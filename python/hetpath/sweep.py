"""Parameter sweeps: a base scenario, a grid of overrides, protocols and seeds.

A sweep file (TOML) names a base scenario and what to vary::

    [sweep]
    scenario = "base.toml"        # relative to the sweep file
    seeds = 10                    # seeds 1..10, or a list [1, 5, 9]
    flows = ["transfer"]          # flows to report (default: all)

    [grid]                        # the cartesian product of every axis
    "flow.transfer.size" = ["3KB", "100KB"]          # one key per axis...
    bandwidth = [                                     # ...or several keys together
        { label = "16k", "link.radio.rate" = "16kbps", "link.radio.channel.slot" = "857.6ms" },
        { label = "1M",  "link.radio.rate" = "1Mbps",  "link.radio.channel.slot" = "13.72ms" },
    ]

    [protocol.newreno]            # each protocol is a set of overrides
    "flow.transfer.cc" = "newreno"

Keys are dotted paths into the scenario; a step into an array of tables (``flow``,
``link``, ``node``) selects the entry by its ``name``.  Runs are (grid point x
protocol x seed); each is a complete scenario text, so a backend can run it anywhere
(see :mod:`hetpath.backends`).  :func:`aggregate` reduces them to a tidy table: one
row per grid point, protocol and flow, with the mean and 95% confidence half-width of
every metric the engine reports for a flow (see :data:`COMPLETION_METRICS` for which
runs count), and counts of the runs that did not complete.
"""

from __future__ import annotations

import copy
import itertools
import math
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

from . import _args, _bridge, _toml
from ._args import describe
from .backends import Backend
from .errors import ArgumentError, ScenarioError
from .stats import mean_ci95

if TYPE_CHECKING:
    import pandas as pd

    from .store import ResultsStore

#: Keys of the engine's flow record that describe a flow rather than measure it. Every
#: other key of ``hetpath.schema()["flow"]`` is a metric, aggregated by :func:`aggregate`.
IDENTITY = ("name", "cc", "from", "to", "start_s", "size_bytes", "aborted")
#: Metrics that exist only once a flow completed: averaged over completed runs. The
#: others are averaged over completed runs of a sized flow, and over every run that was
#: not aborted of a bulk flow (no size: it runs to the horizon by design, and its
#: goodput over the run is the measurement).
COMPLETION_METRICS = ("completion_s", "sender_done_s")


def flow_metrics() -> list[str]:
    """Every metric of a flow, in the engine's order (from the schema, never a copy)."""
    return [k for k in _bridge.schema()["flow"] if k not in IDENTITY]

#: Arrays of tables a dotted key can select an entry of, and the key that names it.
_ARRAYS = {"flow": "name", "link": "name", "node": "name", "base_station": "node", "agent": "name"}
#: Column names a run's records already use: an axis of that name would be overwritten.
RESERVED_AXES = ("protocol", "seed", "flow", "completed")
#: Seeds are u64 in the engine.
MAX_SEED = 2**64 - 1
#: More runs than this is a mistake (``--seeds 1000000000``), not a sweep: refused
#: before any task is built, since every task holds its scenario text in memory.
MAX_RUNS = 10_000_000


@dataclass
class Axis:
    """One grid dimension: a label per value and the overrides each value applies. A
    plain value is its own label, so numeric axes stay numeric in every output."""

    name: str
    labels: list[Any]
    overrides: list[dict[str, Any]]


@dataclass
class Sweep:
    """A base scenario and what to vary (see the module doc)."""

    base: dict[str, Any]
    source: str
    axes: list[Axis] = field(default_factory=list)
    protocols: dict[str, dict[str, Any]] = field(default_factory=lambda: {"default": {}})
    seeds: list[int] = field(default_factory=lambda: [1])
    flows: Optional[list[str]] = None
    #: The sweep file, named first in the errors of :func:`plan` (None: built in Python).
    file: Optional[str] = None


@dataclass(frozen=True)
class Task:
    """One run: the complete scenario text and the coordinates it belongs to."""

    point: tuple[tuple[str, Any], ...]
    protocol: str
    seed: int
    text: str
    source: str
    flows: Optional[tuple[str, ...]] = None


def set_key(doc: dict[str, Any], path: str, value: Any, where: str = "") -> None:
    """Set the dotted ``path`` in a parsed scenario; ``flow.<name>.``, ``link.<name>.``,
    ``node.<name>.`` and ``agent.<name>.`` (an agent that has a ``name``) select an
    entry of that array of tables by its ``name``, and
    ``base_station.<node>.`` by its ``node``. A step into a value that is not a table is
    a ``ScenarioError`` naming the key, never a ``TypeError``."""
    node, parts = find_entry(doc, path, where)
    if node is None:
        array, name = path.split(".")[:2]
        known = ", ".join(str(e.get(_ARRAYS[array])) for e in doc.get(array, []) if isinstance(e, dict)) or "none"
        raise ScenarioError(f"{where}'{path}': no [[{array}]] named '{name}' (defined: {known})")
    _set_in(node, parts, value, path, where)


def find_entry(doc: dict[str, Any], path: str, where: str = "") -> tuple[Optional[dict[str, Any]], list[str]]:
    """Where the dotted ``path`` starts, and the rest of it: ``doc`` itself, or for a path
    into an array of tables (:data:`_ARRAYS`) the entry it names, None when the scenario
    has no entry of that name. A malformed path is a ``ScenarioError``."""
    if not isinstance(path, str) or not path or any(p == "" for p in path.split(".")):
        raise ScenarioError(f"{where}{describe(path)}: expected a dotted key such as 'link.<name>.rate'")
    parts = path.split(".")
    if parts[0] not in _ARRAYS:
        return doc, parts
    if len(parts) < 3:
        raise ScenarioError(f"{where}'{path}': expected {parts[0]}.<name>.<key>")
    entries = doc.get(parts[0], [])
    if not isinstance(entries, list):
        raise ScenarioError(f"{where}'{path}': '{parts[0]}' is not an array of tables in the base scenario")
    by = _ARRAYS[parts[0]]
    match = [e for e in entries if isinstance(e, dict) and e.get(by) == parts[1]]
    return (match[0] if match else None), parts[2:]


def _set_in(node: dict[str, Any], parts: list[str], value: Any, path: str, where: str) -> None:
    for k, part in enumerate(parts[:-1]):
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            step = ".".join(parts[: k + 1])
            raise ScenarioError(f"{where}'{path}': '{step}' is a {_kind(node)}, not a table, so it has no key '{parts[k + 1]}'")
    node[parts[-1]] = value


def _kind(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "float", str: "string", list: "array"}.get(type(value), type(value).__name__)


def _seeds(value: Any, where: str) -> list[int]:
    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    if is_int(value) and 1 <= value <= MAX_RUNS:
        return list(range(1, value + 1))
    if is_int(value) and value > MAX_RUNS:
        raise ScenarioError(f"{where}sweep.seeds: {value} seeds is more than the limit of {MAX_RUNS:,} runs")
    if isinstance(value, list) and value and all(is_int(v) and 0 <= v <= MAX_SEED for v in value):
        seen: set[int] = set()
        for v in value:
            if v in seen:
                raise ScenarioError(f"{where}sweep.seeds: seed {v} is listed twice; each seed is one run")
            seen.add(v)
        return list(value)
    raise ScenarioError(f"{where}sweep.seeds: expected a positive count or a list of distinct seeds "
                        f"from 0 to 2^64-1, got {describe(value)}")


def _label(value: Any) -> Any:
    """An axis label: a number, string or boolean as itself (numeric axes stay numeric);
    anything else (a table, an array) as its TOML text, so rows can be grouped by it."""
    if isinstance(value, (str, int, float, bool)):
        return value
    return _toml._value(_toml.drop_none(value))


def _axis(name: str, values: Any, where: str) -> Axis:
    if not isinstance(values, list) or not values:
        raise ScenarioError(f"{where}grid.'{name}': expected a non-empty list of values")
    if name in RESERVED_AXES:
        raise ScenarioError(f"{where}grid.'{name}': '{name}' is reserved (a column of every run: "
                            f"{', '.join(RESERVED_AXES)}); name the axis otherwise, e.g. with a table value and a label")
    if all(isinstance(v, dict) for v in values):
        labels, overrides = [], []
        for k, v in enumerate(values):
            v = dict(v)
            label = v.pop("label", None)
            if not v:
                raise ScenarioError(f"{where}grid.'{name}'[{k}]: expected at least one key to set")
            # Unlabelled: its one value, or every key and value it sets, so that the row
            # names everything the point changes.
            if label is None:
                label = _label(next(iter(v.values()))) if len(v) == 1 else ", ".join(f"{x}={_label(y)}" for x, y in v.items())
            labels.append(_label(label))
            overrides.append(v)
    elif any(v is None for v in values):
        raise ScenarioError(f"{where}grid.'{name}': None is not a value (TOML has no null); leave the key out of the axis")
    elif any(isinstance(v, dict) for v in values):
        raise ScenarioError(f"{where}grid.'{name}': mix of tables and plain values; use one or the other")
    else:
        labels, overrides = [_label(v) for v in values], [{name: v} for v in values]
    seen: dict[Any, int] = {}
    for k, label in enumerate(labels):
        mark = (type(label).__name__, label) if isinstance(label, bool) else label
        if mark in seen:
            raise ScenarioError(f"{where}grid.'{name}'[{k}]: label {label!r} is used twice (also [{seen[mark]}]); "
                                f"rows would merge different configurations")
        seen[mark] = k
    return Axis(name, labels, overrides)


def _table(doc: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise ScenarioError(f"{where}{key}: expected a table [{key}], got {_kind(value)} {describe(value)}")
    return value


def load(path: Union[str, Path], text: Optional[str] = None) -> Sweep:
    """Read a sweep file; errors name the file and the key. ``text`` is the file's
    content if it is already in memory (``path`` then names it and anchors the base
    scenario's relative path)."""
    path, text = _file_args(path, text, "hetpath.sweep.load()")
    where = f"{path}: "
    doc = _toml.loads(_toml.read_file(path) if text is None else text, str(path))
    unknown = set(doc) - {"sweep", "grid", "protocol"}
    if unknown:
        raise ScenarioError(f"{where}unknown table(s) {', '.join(sorted(unknown))}; expected sweep, grid, protocol")
    sweep = _head(doc, path, where)
    sweep.axes = [_axis(name, values, where) for name, values in _table(doc, "grid", where).items()]
    return sweep


def load_experiments(path: Union[str, Path], text: Optional[str] = None) -> dict[str, Sweep]:
    """Read a family of sweeps over one base scenario: the ``[sweep]`` and ``[protocol.*]``
    tables of a sweep file, plus ``[experiment.<id>]`` tables, each with ``set`` (fixed
    overrides of the base) and ``grid`` (its axes, as in a sweep file). Other keys of an
    experiment table (a title, a section) are left to the caller. ``text`` as in
    :func:`load`."""
    path, text = _file_args(path, text, "hetpath.sweep.load_experiments()")
    where = f"{path}: "
    doc = _toml.loads(_toml.read_file(path) if text is None else text, str(path))
    unknown = set(doc) - {"sweep", "protocol", "experiment"}
    if unknown:
        raise ScenarioError(f"{where}unknown table(s) {', '.join(sorted(unknown))}; expected sweep, protocol, experiment")
    experiments = doc.get("experiment")
    if not isinstance(experiments, dict) or not experiments:
        raise ScenarioError(f"{where}experiment: expected [experiment.<id>] tables")
    out = {}
    for name, e in experiments.items():
        at = f"{where}experiment.{name}."
        if not isinstance(e, dict):
            raise ScenarioError(f"{at[:-1]}: expected a table")
        sweep = _head(doc, path, where)
        for key, value in _table(e, "set", at).items():
            set_key(sweep.base, key, value, at + "set: ")
        sweep.axes = [_axis(axis, values, at) for axis, values in _table(e, "grid", at).items()]
        out[name] = sweep
    return out


def _file_args(path: Any, text: Any, call: str) -> tuple[Path, Optional[str]]:
    """A sweep file's path and, if given, its text, checked (an ``ArgumentError`` names
    ``call``)."""
    if text is not None and not isinstance(text, str):
        raise ArgumentError(f"{call}: text: expected the file's text (a str) or None, got {describe(text)}")
    return _args.path(path, f"{call}: path"), text


def _head(doc: dict[str, Any], path: Path, where: str) -> Sweep:
    """The ``[sweep]`` and ``[protocol.*]`` tables: base scenario, seeds, flows, protocols."""
    head = _table(doc, "sweep", where)
    bad = set(head) - {"scenario", "seeds", "flows"}
    if bad:
        raise ScenarioError(f"{where}sweep: unknown key(s) {', '.join(sorted(bad))}; expected scenario, seeds, flows")
    if "scenario" not in head:
        raise ScenarioError(f"{where}sweep.scenario: missing: the base scenario file")
    if not isinstance(head["scenario"], str) or not head["scenario"]:
        raise ScenarioError(f"{where}sweep.scenario: expected a file name, got {head['scenario']!r}")
    base_path = path.parent / head["scenario"]
    try:
        base = _toml.loads(_toml.read_file(base_path), str(base_path))
    except ScenarioError as e:  # named from the sweep file too: that is where the mistake may be
        raise type(e)(f"{where}sweep.scenario: {e}") from None
    sweep = Sweep(base=base, source=str(base_path), seeds=_seeds(head.get("seeds", 1), where), file=str(path))
    if "flows" in head:
        flows = head["flows"]
        if not isinstance(flows, list) or not flows or not all(isinstance(f, str) for f in flows):
            raise ScenarioError(f"{where}sweep.flows: expected a non-empty list of flow names, got {flows!r}")
        sweep.flows = list(flows)
        _check_flows(base, sweep.flows, where)
    protocols = doc.get("protocol")
    if protocols is not None:
        if not isinstance(protocols, dict) or not protocols or not all(isinstance(v, dict) for v in protocols.values()):
            raise ScenarioError(f"{where}protocol: expected [protocol.<name>] tables of overrides")
        sweep.protocols = {k: dict(v) for k, v in protocols.items()}
    return sweep


def run_count(sweep: Sweep) -> int:
    """How many runs :func:`plan` would make."""
    return math.prod(len(a.labels) for a in sweep.axes) * len(sweep.protocols) * len(sweep.seeds)


def _check_flows(doc: dict[str, Any], flows: Sequence[str], where: str) -> None:
    """``sweep.flows`` must name flows of the scenario: found here, before any run."""
    defined = [str(f.get("name")) for f in doc.get("flow", []) if isinstance(f, dict)]
    for name in flows:
        if name not in defined:
            raise ScenarioError(f"{where}sweep.flows: no flow named '{name}' (defined: {', '.join(defined) or 'none'})")


def plan(sweep: Sweep) -> list[Task]:
    """Every run of the sweep; each distinct scenario is validated once, so a bad
    override fails here with the scenario's own error, before anything runs."""
    if not isinstance(sweep, Sweep):
        raise ArgumentError(f"hetpath.sweep.plan(): sweep: expected a Sweep (hetpath.sweep.load), got {describe(sweep)}")
    if run_count(sweep) > MAX_RUNS:
        raise ScenarioError(f"{sweep.file or sweep.source}: the sweep has {run_count(sweep):,} runs, more than the limit of {MAX_RUNS:,}")
    if len(set(sweep.seeds)) != len(sweep.seeds):
        raise ScenarioError(f"{sweep.file or sweep.source}: sweep.seeds: a seed is listed twice; each seed is one run")
    tasks = []
    flows = tuple(sweep.flows) if sweep.flows else None
    for combo in itertools.product(*[range(len(a.labels)) for a in sweep.axes]):
        point = tuple((a.name, a.labels[k]) for a, k in zip(sweep.axes, combo))
        for proto, proto_over in sweep.protocols.items():
            doc = copy.deepcopy(sweep.base)
            where = (f"{sweep.file}: " if sweep.file else "") + \
                f"{sweep.source} ({''.join(f'{n}={v}, ' for n, v in point)}protocol {proto}): "
            for a, k in zip(sweep.axes, combo):
                for key, value in a.overrides[k].items():
                    set_key(doc, key, value, where)
            for key, value in proto_over.items():
                set_key(doc, key, value, where)
            if flows:
                _check_flows(doc, flows, where)
            text = _toml.dumps(doc)
            try:
                _bridge.validate_text(text, sweep.source)
            except ScenarioError as e:
                raise ScenarioError(f"{where}{e}") from None
            tasks += [Task(point, proto, seed, text, sweep.source, flows) for seed in sweep.seeds]
    return tasks


def run_task(task: Task) -> list[dict[str, Any]]:
    """Run one task; one record per reported flow: the grid point, protocol, seed, and
    every key of the engine's flow record (``name`` as ``flow``), plus ``completed``.
    Top level so workers can pickle it."""
    return records(task, run_flows(task))


def run_flows(task: Task) -> list[dict[str, Any]]:
    """Run one task; the engine's flow records as it gives them (what the store keeps)."""
    return _bridge.run_text(task.text, task.source, seed=task.seed, series=False)["summary"]["flows"]


def records(task: Task, flows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A task's rows from its run's flow records (see :func:`run_task`)."""
    out = []
    for f in flows:
        if task.flows is not None and f["name"] not in task.flows:
            continue
        record = {**dict(task.point), "protocol": task.protocol, "seed": task.seed, "flow": f["name"]}
        record.update((k, v) for k, v in f.items() if k != "name")
        record["completed"] = f["completion_s"] is not None
        out.append(record)
    return out


def run(
    tasks: Sequence[Task],
    backend: Optional[Backend] = None,
    on_progress: Optional[Callable[[int, int], None]] = None,
    store: Optional["ResultsStore"] = None,
) -> "pd.DataFrame":
    """Run every task (all cores by default); one row per run and flow, in task order.

    With a ``store``, runs it already holds are not run again and each finished run is
    appended to it as it arrives, so an interrupt (KeyboardInterrupt) loses none."""
    import pandas as pd

    from .store import run_stored

    if not isinstance(tasks, (list, tuple)) or not all(isinstance(t, Task) for t in tasks):
        raise ArgumentError("hetpath.sweep.run(): tasks: expected a list of Task (hetpath.sweep.plan), "
                            f"got {describe(tasks)}")
    tasks = list(tasks)
    backend = _args.backend(backend, "hetpath.sweep.run(): backend")
    on_progress = _args.callback(on_progress, "hetpath.sweep.run(): on_progress")
    results = run_stored(run_flows, tasks, store, backend, on_progress)
    return pd.DataFrame([r for t, flows in zip(tasks, results) for r in records(t, flows)])


def aggregate(raw: "pd.DataFrame", by: Sequence[str], metrics: Optional[Sequence[str]] = None) -> "pd.DataFrame":
    """Tidy summary: one row per ``by`` group; for each metric (default: every metric of
    the schema present in ``raw``) its mean and 95% CI half-width over the runs that count
    for it (:data:`COMPLETION_METRICS`); ``runs``, ``seeds`` (distinct), ``completed``,
    ``aborted`` (the connection gave up), ``unfinished`` (still running at the horizon)
    and ``excluded`` (runs that count for no metric) counts."""
    import pandas as pd

    if metrics is None:
        metrics = [m for m in flow_metrics() if m in raw.columns]
    rows = []
    for key, g in raw.groupby(list(by), sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(by, key))
        completed = g["completed"].astype(bool)
        aborted = g["aborted"].astype(bool)
        bulk = g["size_bytes"].isna() if "size_bytes" in g else pd.Series(False, index=g.index)
        counted = completed | (bulk & ~aborted)
        row["runs"] = len(g)
        row["seeds"] = int(g["seed"].nunique()) if "seed" in g else len(g)
        row["completed"] = int(completed.sum())
        row["aborted"] = int(aborted.sum())
        row["unfinished"] = int((~completed & ~aborted).sum())
        row["excluded"] = int((~counted).sum())
        for m in metrics:
            over = completed if m in COMPLETION_METRICS else counted
            mean, ci, _ = mean_ci95(g.loc[over, m])
            row[m] = mean
            row[f"{m}_ci95"] = ci
        rows.append(row)
    out = pd.DataFrame(rows)
    # A metric no run had (say, completion of a bulk flow) is NaN, never an object column.
    stats = [c for m in metrics for c in (m, f"{m}_ci95")]
    out[stats] = out[stats].astype("float64")
    return out


class _CallableModule(types.ModuleType):
    """``hetpath.sweep`` is this module (``from hetpath import sweep; sweep.load(...)``)
    and, called, the Python entry point ``hetpath.sweep(scenario, grid=..., seeds=...)``
    (:func:`hetpath.sweep_api.sweep`): one name for both, so neither shadows the other."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .sweep_api import sweep

        return sweep(*args, **kwargs)

    def __reduce__(self) -> Any:
        """Pickled by name, as a plain module is: a function sent to a cluster worker
        (cloudpickle) may refer to ``sweep``, and the worker imports its own."""
        import importlib

        return importlib.import_module, (self.__name__,)


sys.modules[__name__].__class__ = _CallableModule

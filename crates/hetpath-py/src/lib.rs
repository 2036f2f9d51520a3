//! `hetpath._core`: the PyO3 bridge. Conversions only; all logic is in hetpath-sim.

use hetpath_sim::results::{self, Column, Series, Summary};
use hetpath_sim::sim::{DirId, FlowId, NodeId};
use hetpath_sim::trace::Trace;
use hetpath_sim::Simulation;
use hetpath_sim::{capture, scenario};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario file or value is invalid."
);
create_exception!(
    _core,
    SimulationError,
    PyRuntimeError,
    "A run failed for a reason other than its input."
);

/// Wall time between two Ctrl-C checks (and progress calls) during a run.
const CHECK_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// Ctrl-C presses seen by the package's SIGINT handler (`interrupt`), counted so that a
/// run in any thread stops: Python runs signal handlers, and `check_signals` raises, in
/// the main thread only, so a run in another thread would otherwise go on to its end.
static INTERRUPTS: AtomicU64 = AtomicU64::new(0);

/// Stops every run in progress, in every thread, with `KeyboardInterrupt` (called by
/// `hetpath._bridge`'s SIGINT handler).
#[pyfunction]
fn interrupt() {
    INTERRUPTS.fetch_add(1, Ordering::Relaxed);
}

fn scenario_err(e: scenario::ScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// Checks a scenario without running it; returns its warnings, one line each.
#[pyfunction]
fn validate(text: &str, path: &str) -> PyResult<Vec<String>> {
    scenario::load_warned(text, path, None, true)
        .map(|l| l.warnings.iter().map(ToString::to_string).collect())
        .map_err(scenario_err)
}

/// Parses, runs and summarises a scenario. See python/hetpath/_bridge.py for the contract.
#[pyfunction]
#[pyo3(signature = (text, path, seed=None, pcap_dir=None, progress=None, series=true, trace=false, warn=None, check=false))]
#[allow(clippy::too_many_arguments)] // the Python function's keyword arguments
fn run(
    py: Python<'_>,
    text: &str,
    path: &str,
    seed: Option<u64>,
    pcap_dir: Option<&str>,
    progress: Option<Py<PyAny>>,
    series: bool,
    trace: bool,
    warn: Option<Py<PyAny>>,
    check: bool,
) -> PyResult<Py<PyDict>> {
    let loaded = scenario::load_warned(text, path, seed, series).map_err(scenario_err)?;
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    // Told before the run starts, as the loader found them.
    if let Some(cb) = &warn {
        for w in &warnings {
            cb.call1(py, (w.as_str(),))?;
        }
    }
    let mut sim = loaded.sim;
    if trace {
        sim.enable_trace();
    }
    sim.check = check;
    let captures =
        match pcap_dir {
            Some(d) => Some(capture::attach(&mut sim, Path::new(d)).map_err(|e| {
                SimulationError::new_err(format!("{d}: cannot write captures: {e}"))
            })?),
            None => None,
        };
    let t0 = Instant::now();
    let mut failure: Option<PyErr> = None;
    let mut last = Instant::now();
    let interrupts = INTERRUPTS.load(Ordering::Relaxed);
    let finished = py.detach(|| {
        sim.run(&mut |now, end| {
            if INTERRUPTS.load(Ordering::Relaxed) != interrupts {
                failure = Some(PyKeyboardInterrupt::new_err(()));
                return false;
            }
            // Ctrl-C reaches Python only when we hold the GIL. The engine calls every 1%
            // of simulated time and every few thousand events; take the GIL at most every
            // CHECK_EVERY of wall time (and at the end), so checks cost nothing yet stop
            // a run within a fraction of a second.
            if now < end && last.elapsed() < CHECK_EVERY {
                return true;
            }
            last = Instant::now();
            Python::attach(|py| {
                let r = py.check_signals().and_then(|_| match &progress {
                    Some(cb) => cb
                        .call1(py, (now.as_secs_f64(), end.as_secs_f64()))
                        .map(|_| ()),
                    None => Ok(()),
                });
                match r {
                    Ok(()) => true,
                    Err(e) => {
                        failure = Some(e);
                        false
                    }
                }
            })
        })
    });
    let wall = t0.elapsed().as_secs_f64();
    if let Some(c) = captures {
        c.finish()
            .map_err(|e| SimulationError::new_err(format!("cannot write capture {e}")))?;
    }
    if let Some(e) = failure {
        return Err(e);
    }
    if let Some(e) = sim.failure() {
        return Err(SimulationError::new_err(format!("{path}: {e}")));
    }
    if !finished {
        return Err(SimulationError::new_err("the run was stopped early"));
    }
    sim.checked()
        .map_err(|v| SimulationError::new_err(format!("{path}: {v}")))?;
    let summary = sim.summary(wall);
    let out = PyDict::new(py);
    out.set_item("summary", summary.to_json())?;
    out.set_item("series", series_dict(py, &summary, sim.series())?)?;
    out.set_item("warnings", warnings)?;
    if let Some(t) = sim.trace() {
        out.set_item("trace", trace_dict(py, &sim, &summary, t)?)?;
    }
    Ok(out.unbind())
}

/// The trace as columns, ids resolved to names (`None` where an event has no flow or
/// link); a link direction is named by its link, and the node it leaves is `node`.
fn trace_dict<'py>(
    py: Python<'py>,
    sim: &Simulation,
    summary: &Summary,
    t: &Trace,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_s", &t.time_s)?;
    d.set_item("event", &t.event)?;
    let node = |n: &NodeId| sim.node_name(*n);
    d.set_item("node", t.node.iter().map(node).collect::<Vec<_>>())?;
    let flow = |f: &Option<FlowId>| f.map(|f| summary.flows[f.index()].name.as_str());
    d.set_item("flow", t.flow.iter().map(flow).collect::<Vec<_>>())?;
    let link = |l: &Option<DirId>| l.map(|l| summary.links[l.index()].name.as_str());
    d.set_item("link", t.link.iter().map(link).collect::<Vec<_>>())?;
    d.set_item("value", &t.value)?;
    d.set_item("cwnd_bytes", &t.cwnd_bytes)?;
    d.set_item("ssthresh_bytes", &t.ssthresh_bytes)?;
    Ok(d)
}

/// The series as columns named by `results::*Series::columns`, ids resolved to names.
fn series_dict<'py>(
    py: Python<'py>,
    summary: &Summary,
    s: &Series,
) -> PyResult<Bound<'py, PyDict>> {
    let columns = |cols: &[(&str, Column<'_>)]| -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (key, col) in cols {
            match col {
                Column::F64(v) => d.set_item(key, *v)?,
                Column::U64(v) => d.set_item(key, *v)?,
                Column::U32(v) => d.set_item(key, *v)?,
                Column::Flow(ids) => d.set_item(key, names(ids, |i| &summary.flows[i].name))?,
                Column::Link(ids) => d.set_item(key, names(ids, |i| &summary.links[i].name))?,
                Column::LinkFrom(ids) => d.set_item(key, names(ids, |i| &summary.links[i].from))?,
                Column::LinkTo(ids) => d.set_item(key, names(ids, |i| &summary.links[i].to))?,
            }
        }
        Ok(d)
    };
    let d = PyDict::new(py);
    d.set_item("flows", columns(&s.flows.columns())?)?;
    d.set_item("links", columns(&s.links.columns())?)?;
    Ok(d)
}

fn names<'a>(ids: &[u32], name: impl Fn(usize) -> &'a str) -> Vec<&'a str> {
    ids.iter().map(|&i| name(i as usize)).collect()
}

/// The result schema (`hetpath_sim::results::schema`): the keys of the summary and of
/// each kind of record, and the columns of both time series, each in output order.
#[pyfunction]
fn schema(py: Python<'_>) -> PyResult<Py<PyDict>> {
    let d = PyDict::new(py);
    for (name, keys) in results::schema() {
        d.set_item(name, keys)?;
    }
    Ok(d.unbind())
}

/// Congestion controller names accepted in scenarios.
#[pyfunction]
fn cc_names() -> Vec<&'static str> {
    hetpath_proto::cc::NAMES.to_vec()
}

/// A TCP profile for Python: (name, source, controller or None, keys as TOML,
/// [(controller, keys it alone gets)]).
type ProfileTuple = (
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static str,
    Vec<(&'static str, &'static str)>,
);

/// The TCP profiles.
#[pyfunction]
fn profiles() -> Vec<ProfileTuple> {
    scenario::profiles::PROFILES
        .iter()
        .map(|p| (p.name, p.source, p.cc, p.keys, p.per_cc.to_vec()))
        .collect()
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The git commit this extension was built from (`-dirty` if it had uncommitted
/// changes), or `None` outside a git checkout.
#[pyfunction]
fn build_commit() -> Option<&'static str> {
    Some(env!("HETPATH_GIT_COMMIT")).filter(|c| !c.is_empty())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(interrupt, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(cc_names, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(build_commit, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    Ok(())
}

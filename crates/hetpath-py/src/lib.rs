//! `hetpath._core`: the PyO3 bridge. Conversions only; all logic is in hetpath-sim.

use hetpath_sim::results::{Series, Summary};
use hetpath_sim::{capture, scenario, Simulation};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::Path;
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

fn scenario_err(e: scenario::ScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// Checks a scenario without running it.
#[pyfunction]
fn validate(text: &str, path: &str) -> PyResult<()> {
    scenario::load(text, path, None)
        .map(|_| ())
        .map_err(scenario_err)
}

/// Parses, runs and summarises a scenario. See python/hetpath/_bridge.py for the contract.
#[pyfunction]
#[pyo3(signature = (text, path, seed=None, pcap_dir=None, progress=None, series=true))]
fn run(
    py: Python<'_>,
    text: &str,
    path: &str,
    seed: Option<u64>,
    pcap_dir: Option<&str>,
    progress: Option<Py<PyAny>>,
    series: bool,
) -> PyResult<Py<PyDict>> {
    let mut sim = scenario::load(text, path, seed).map_err(scenario_err)?;
    sim.sampling = series;
    let captures =
        match pcap_dir {
            Some(d) => Some(capture::attach(&mut sim, Path::new(d)).map_err(|e| {
                SimulationError::new_err(format!("{d}: cannot write captures: {e}"))
            })?),
            None => None,
        };
    let t0 = Instant::now();
    let mut failure: Option<PyErr> = None;
    let finished = py.detach(|| {
        sim.run(&mut |now, end| {
            // Ctrl-C reaches Python only when we hold the GIL: check about every 1% of
            // simulated time, whether or not the caller asked for progress.
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
    if !finished {
        return Err(SimulationError::new_err("the run was stopped early"));
    }
    let out = PyDict::new(py);
    out.set_item("summary", summary_dict(py, &sim.summary(wall))?)?;
    out.set_item("series", series_dict(py, &sim, sim.series())?)?;
    Ok(out.unbind())
}

fn summary_dict<'py>(py: Python<'py>, s: &Summary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("scenario", &s.scenario)?;
    d.set_item("seed", s.seed)?;
    d.set_item("sim_time_s", s.sim_time_s)?;
    d.set_item("wall_time_s", s.wall_time_s)?;
    d.set_item("events", s.events)?;
    let flows = PyList::empty(py);
    for f in &s.flows {
        let x = PyDict::new(py);
        x.set_item("name", &f.name)?;
        x.set_item("cc", &f.cc)?;
        x.set_item("from", &f.from)?;
        x.set_item("to", &f.to)?;
        x.set_item("start_s", f.start_s)?;
        x.set_item("size_bytes", f.size_bytes)?;
        x.set_item("bytes_delivered", f.bytes_delivered)?;
        x.set_item("goodput_bps", f.goodput_bps)?;
        x.set_item("completion_s", f.completion_s)?;
        x.set_item("sender_done_s", f.sender_done_s)?;
        x.set_item("retransmissions", f.retransmissions)?;
        x.set_item("fast_retransmits", f.fast_retransmits)?;
        x.set_item("timeouts", f.timeouts)?;
        x.set_item("freezes", f.freezes)?;
        x.set_item("aborted", f.aborted)?;
        flows.append(x)?;
    }
    d.set_item("flows", flows)?;
    let links = PyList::empty(py);
    for l in &s.links {
        let x = PyDict::new(py);
        x.set_item("name", &l.name)?;
        x.set_item("from", &l.from)?;
        x.set_item("to", &l.to)?;
        x.set_item("rate_bps", l.rate_bps)?;
        x.set_item("utilization", l.utilization)?;
        x.set_item("drops", l.stats.drops)?;
        x.set_item("max_queue_pkts", l.stats.max_queue_pkts)?;
        x.set_item("max_queue_bytes", l.stats.max_queue_bytes)?;
        x.set_item("tx_packets", l.stats.tx_packets)?;
        x.set_item("tx_bytes", l.stats.tx_bytes)?;
        x.set_item("lost_packets", l.stats.lost_packets)?;
        links.append(x)?;
    }
    d.set_item("links", links)?;
    Ok(d)
}

fn series_dict<'py>(py: Python<'py>, sim: &Simulation, s: &Series) -> PyResult<Bound<'py, PyDict>> {
    let summary = sim.summary(0.0);
    let f = &s.flows;
    let flows = PyDict::new(py);
    flows.set_item("time_s", &f.time_s)?;
    flows.set_item(
        "flow",
        f.flow
            .iter()
            .map(|&i| summary.flows[i as usize].name.as_str())
            .collect::<Vec<_>>(),
    )?;
    flows.set_item("cwnd_bytes", &f.cwnd_bytes)?;
    flows.set_item("ssthresh_bytes", &f.ssthresh_bytes)?;
    flows.set_item("srtt_s", &f.srtt_s)?;
    flows.set_item("rto_s", &f.rto_s)?;
    flows.set_item("in_flight_bytes", &f.in_flight_bytes)?;
    flows.set_item("bytes_delivered", &f.bytes_delivered)?;
    let l = &s.links;
    let links = PyDict::new(py);
    let info = |i: &u32| &summary.links[*i as usize];
    links.set_item("time_s", &l.time_s)?;
    links.set_item(
        "link",
        l.link
            .iter()
            .map(|i| info(i).name.as_str())
            .collect::<Vec<_>>(),
    )?;
    links.set_item(
        "from",
        l.link
            .iter()
            .map(|i| info(i).from.as_str())
            .collect::<Vec<_>>(),
    )?;
    links.set_item(
        "to",
        l.link
            .iter()
            .map(|i| info(i).to.as_str())
            .collect::<Vec<_>>(),
    )?;
    links.set_item("queue_pkts", &l.queue_pkts)?;
    links.set_item("queue_bytes", &l.queue_bytes)?;
    links.set_item("tx_bytes", &l.tx_bytes)?;
    let d = PyDict::new(py);
    d.set_item("flows", flows)?;
    d.set_item("links", links)?;
    Ok(d)
}

/// Congestion controller names accepted in scenarios.
#[pyfunction]
fn cc_names() -> Vec<&'static str> {
    hetpath_proto::cc::NAMES.to_vec()
}

/// The TCP profiles: (name, source, controller or None, keys as TOML).
#[pyfunction]
fn profiles() -> Vec<(
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static str,
)> {
    scenario::profiles::PROFILES
        .iter()
        .map(|p| (p.name, p.source, p.cc, p.keys))
        .collect()
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(cc_names, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    Ok(())
}

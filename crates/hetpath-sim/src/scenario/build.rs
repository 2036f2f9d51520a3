//! Turns a parsed scenario file into a `Simulation`, checking everything serde cannot:
//! names that must exist, values that must be in range, paths that must connect.

use super::error::ScenarioError;
use super::spec::{
    AbcSpec, DelayedAckSpec, DirSpec, IlcSpec, IwSpec, RestoreSpec, RtoFormula, ScenarioFile,
    TcpSpec, Transport,
};
use super::units::QueueLimit;
use crate::channel::ChannelSpec;
use crate::link::{LinkDir, LinkParams};
use crate::rng;
use crate::sim::{FlowParams, Simulation};
use hetpath_proto::agent::Collaboration;
use hetpath_proto::cc;
use hetpath_proto::tcp::{DelayedAck, TcpConfig};
use hetpath_proto::{Dur, Time};
use std::collections::HashMap;
use std::path::Path;

/// Default DropTail limit when a link gives none (ns-3's and Linux's txqueuelen default).
pub const DEFAULT_QUEUE: QueueLimit = QueueLimit::Packets(100);
/// Default time-series period.
pub const DEFAULT_SAMPLE_INTERVAL: Dur = Dur::from_millis(100);

/// Parses and validates scenario text. `file` names it in errors and anchors relative
/// paths (channel traces).
pub fn parse(text: &str, file: &str) -> Result<ScenarioFile, ScenarioError> {
    toml::from_str(text).map_err(|e| ScenarioError::from_toml(file, text, &e))
}

/// Parses, validates and builds a runnable simulation; `seed` overrides the file's seed.
pub fn load(text: &str, file: &str, seed: Option<u64>) -> Result<Simulation, ScenarioError> {
    build(&parse(text, file)?, file, seed)
}

pub fn build(s: &ScenarioFile, file: &str, seed: Option<u64>) -> Result<Simulation, ScenarioError> {
    let err = |place: String, msg: String| ScenarioError::new(file, place, msg);
    let base_dir = Path::new(file).parent().unwrap_or(Path::new("."));
    let sc = &s.scenario;
    if sc.name.trim().is_empty() {
        return Err(err("scenario.name".into(), "must not be empty".into()));
    }
    if sc.duration.0 == Dur::ZERO {
        return Err(err(
            "scenario.duration".into(),
            "must be greater than zero".into(),
        ));
    }
    let sample = sc.sample_interval.map_or(DEFAULT_SAMPLE_INTERVAL, |d| d.0);
    if sample == Dur::ZERO {
        return Err(err(
            "scenario.sample_interval".into(),
            "must be greater than zero".into(),
        ));
    }
    let seed = seed.unwrap_or(sc.seed);
    let mut sim = Simulation::new(&sc.name, seed, sc.duration.0, sample);
    sim.stop_when_done = sc.stop_when_done;

    if s.nodes.len() < 2 {
        return Err(err(
            "node".into(),
            format!(
                "{} [[node]] table(s): a scenario needs at least two nodes",
                s.nodes.len()
            ),
        ));
    }
    // The [tcp] defaults must be valid on their own, whatever the flows override.
    tcp_config(&s.tcp).map_err(|(k, m)| err(format!("tcp.{k}"), m))?;
    let mut nodes = HashMap::new();
    for (i, n) in s.nodes.iter().enumerate() {
        if n.name.trim().is_empty() {
            return Err(err(format!("node[{i}].name"), "must not be empty".into()));
        }
        if nodes
            .insert(n.name.clone(), sim.add_node(&n.name))
            .is_some()
        {
            return Err(err(
                format!("node[{i}].name"),
                format!("node '{}' is defined twice", n.name),
            ));
        }
    }
    let node = |place: String, name: &str| {
        nodes.get(name).copied().ok_or_else(|| {
            let mut known: Vec<&str> = nodes.keys().map(String::as_str).collect();
            known.sort();
            err(
                place,
                format!("unknown node '{name}'; defined nodes: {}", known.join(", ")),
            )
        })
    };

    let mut link_names = HashMap::new();
    for (i, l) in s.links.iter().enumerate() {
        let at = format!("link[{i}] '{}'", l.name);
        if l.name.trim().is_empty() {
            return Err(err(format!("link[{i}].name"), "must not be empty".into()));
        }
        if link_names.insert(l.name.clone(), i).is_some() {
            return Err(err(
                format!("{at}.name"),
                "a link with this name is already defined".into(),
            ));
        }
        let a = node(format!("{at}.a"), &l.a)?;
        let b = node(format!("{at}.b"), &l.b)?;
        if a == b {
            return Err(err(
                at.clone(),
                "a link must join two different nodes".into(),
            ));
        }
        for (from, to, a_to_b) in [(a, b, true), (b, a, false)] {
            let dir = l.direction(a_to_b);
            let dname = if a_to_b { "ab" } else { "ba" };
            let at = format!("{at} ({dname})");
            let link = link_dir(&dir, &l.name, from, to, seed, &sim, base_dir)
                .map_err(|(k, m)| err(format!("{at}.{k}"), m))?;
            let li = sim.add_link_dir(link);
            for (k, o) in dir.outages.iter().flatten().enumerate() {
                if o.up.0 <= o.down.0 {
                    return Err(err(
                        format!("{at}.outages[{k}]"),
                        "'up' must be later than 'down'".into(),
                    ));
                }
                sim.add_outage(li, Time::ZERO + o.down.0, Time::ZERO + o.up.0);
            }
        }
    }

    super::mobile::build(s, file, seed, &mut sim, &nodes)?;

    let mut flow_names = HashMap::new();
    if s.flows.len() > 20_000 {
        return Err(err(
            "flow".into(),
            "at most 20000 flows per scenario".into(),
        ));
    }
    for (i, f) in s.flows.iter().enumerate() {
        let at = format!("flow[{i}] '{}'", f.name);
        if f.name.trim().is_empty() {
            return Err(err(format!("flow[{i}].name"), "must not be empty".into()));
        }
        if flow_names.insert(f.name.clone(), i).is_some() {
            return Err(err(
                format!("{at}.name"),
                "a flow with this name is already defined".into(),
            ));
        }
        let from = node(format!("{at}.from"), &f.from)?;
        let to = node(format!("{at}.to"), &f.to)?;
        if from == to {
            return Err(err(at, "'from' and 'to' must be different nodes".into()));
        }
        if !sim.reachable(from, to) || !sim.reachable(to, from) {
            return Err(err(
                at,
                format!(
                    "no path between '{}' and '{}' in both directions",
                    f.from, f.to
                ),
            ));
        }
        if !cc::NAMES.contains(&f.cc.as_str())
            && cc::by_name(&f.cc, cc::CcConfig::new(1460)).is_none()
        {
            return Err(err(
                format!("{at}.cc"),
                format!(
                    "unknown controller '{}'; expected one of {}",
                    f.cc,
                    cc::NAMES.join(", ")
                ),
            ));
        }
        if f.size.is_some_and(|b| b.0 == 0) {
            return Err(err(
                format!("{at}.size"),
                "must be greater than zero (omit it for a bulk transfer)".into(),
            ));
        }
        if f.transport == Transport::Ideal && f.size.is_none() {
            return Err(err(
                format!("{at}.size"),
                "missing: an ideal-transport flow needs a size".into(),
            ));
        }
        let tcp_spec = s.tcp.overridden_by(&f.tcp.unwrap_or_default());
        let mut tcp = tcp_config(&tcp_spec).map_err(|(k, m)| err(format!("{at}: tcp.{k}"), m))?;
        if tcp_spec.iw == Some(IwSpec::Bdp) {
            let bdp = sim.path_bdp(from, to, tcp.mss);
            tcp.initial_window = bdp.div_ceil(tcp.mss as u64).max(1) * tcp.mss as u64;
        }
        sim.add_flow(FlowParams {
            name: f.name.clone(),
            cc: f.cc.clone(),
            transport: f.transport,
            from,
            to,
            start: Time::ZERO + f.start.map_or(Dur::ZERO, |d| d.0),
            size: f.size.map(|b| b.0),
            tcp,
            ilc: match tcp_spec.ilc {
                Some(IlcSpec::LinkOnly) => Some(Collaboration::LinkOnly),
                Some(IlcSpec::LinkIp) => Some(Collaboration::LinkIp),
                Some(IlcSpec::Off) | None => None,
            },
            ipsec: f.ipsec,
        });
    }
    super::agents::build(s, file, &mut sim, &nodes, &link_names)?;
    Ok(sim)
}

fn link_dir(
    d: &DirSpec,
    name: &str,
    from: usize,
    to: usize,
    seed: u64,
    sim: &Simulation,
    base_dir: &Path,
) -> Result<LinkDir, (&'static str, String)> {
    let rate = d.rate.ok_or((
        "rate",
        "missing: give `rate` on the link or in its `ab`/`ba` table".to_string(),
    ))?;
    let delay = d.delay.ok_or((
        "delay",
        "missing: give `delay` on the link or in its `ab`/`ba` table".to_string(),
    ))?;
    let channel = d.channel.clone().unwrap_or_default();
    channel.validate(base_dir).map_err(|m| ("channel", m))?;
    let stream = rng::stream(
        seed,
        &format!(
            "link/{name}/{}-{}/channel",
            sim.node_name(from),
            sim.node_name(to)
        ),
    );
    let params = LinkParams {
        name: name.to_string(),
        from,
        to,
        rate_bps: rate.0,
        delay: delay.0,
        queue: d.queue.unwrap_or(DEFAULT_QUEUE),
    };
    Ok(LinkDir::new(params, build_channel(&channel, stream)))
}

fn build_channel(spec: &ChannelSpec, stream: rng::Rng) -> Box<dyn crate::channel::Channel> {
    crate::channel::build(spec, stream)
}

/// Applies a TCP spec over the RFC defaults of `TcpConfig::new`.
pub fn tcp_config(t: &TcpSpec) -> Result<TcpConfig, (&'static str, String)> {
    let mss = t.mss.unwrap_or(1460);
    if !(64..=65_495).contains(&mss) {
        return Err((
            "mss",
            format!("{mss} is out of range; expected 64 to 65495 bytes"),
        ));
    }
    let mut c = TcpConfig::new(mss);
    match t.iw {
        Some(IwSpec::Segments(0)) => return Err(("iw", "must be at least 1 segment".into())),
        Some(IwSpec::Segments(iw)) => c.initial_window = iw as u64 * mss as u64,
        // Needs the path: `build` sets it per flow.
        Some(IwSpec::Bdp) | None => {}
    }
    if let Some(g) = t.radio_growth {
        c.radio_growth = g;
    }
    match t.mpcp_packets {
        Some(n @ 2..=3) => c.mpcp_packets = n,
        Some(n) => {
            return Err((
                "mpcp_packets",
                format!("{n} is not supported; expected 2 or 3"),
            ))
        }
        None => {}
    }
    if let Some(r) = t.ilc_restore {
        c.restore_go_back_n = r == RestoreSpec::GoBackN;
    }
    if let Some(s) = t.initial_ssthresh {
        c.initial_ssthresh = s.0.max(2 * mss as u64);
    }
    if let Some(s) = t.sack {
        c.sack = s;
    }
    match t.delayed_ack {
        Some(DelayedAckSpec::Enabled(false)) => c.delayed_ack = None,
        Some(DelayedAckSpec::Enabled(true)) | None => {}
        Some(DelayedAckSpec::Params(p)) => {
            let d = c.delayed_ack.unwrap_or(DelayedAck {
                count: 2,
                timeout: Dur::from_millis(200),
            });
            let count = p.count.unwrap_or(d.count);
            if count == 0 {
                return Err(("delayed_ack.count", "must be at least 1".into()));
            }
            c.delayed_ack = Some(DelayedAck {
                count,
                timeout: p.timeout.map_or(d.timeout, |x| x.0),
            });
        }
    }
    match t.abc {
        Some(AbcSpec::Enabled(false)) => c.abc_limit = None,
        Some(AbcSpec::Enabled(true)) | None => {}
        Some(AbcSpec::Limit(0)) => {
            return Err((
                "abc",
                "the ABC limit L must be at least 1 (or false)".into(),
            ))
        }
        Some(AbcSpec::Limit(l)) => c.abc_limit = Some(l),
    }
    if let Some(d) = t.dupthresh {
        if d == 0 {
            return Err(("dupthresh", "must be at least 1".into()));
        }
        c.dupthresh = d;
    }
    if let Some(d) = t.initial_rto {
        c.rto.initial = d.0;
    }
    if let Some(d) = t.min_rto {
        c.rto.min = d.0;
    }
    if let Some(d) = t.max_rto {
        c.rto.max = d.0;
    }
    if c.rto.max == Dur::ZERO {
        return Err(("max_rto", "must be greater than zero".into()));
    }
    if c.rto.initial == Dur::ZERO {
        return Err(("initial_rto", "must be greater than zero".into()));
    }
    if c.rto.min > c.rto.max {
        let (min, max) = (c.rto.min.as_secs_f64(), c.rto.max.as_secs_f64());
        return Err(("min_rto", format!("{min} s is above max_rto ({max} s)")));
    }
    if let Some(b) = t.rto_backoff {
        c.rto.backoff = b;
    }
    if let Some(f) = t.rto_formula {
        c.rto.linux22 = f == RtoFormula::Linux22;
    }
    if let Some(n) = t.syn_retries {
        c.rto.syn_retries = n;
    }
    if let Some(n) = t.data_retries {
        c.rto.data_retries = n;
    }
    if let Some(b) = t.recv_buffer {
        if b.0 < mss as u64 {
            return Err(("recv_buffer", "must hold at least one segment".into()));
        }
        c.recv_buffer = b.0.min(1 << 30);
    }
    Ok(c)
}

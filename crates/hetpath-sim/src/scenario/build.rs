//! Turns a parsed scenario file into a `Simulation`, checking everything serde cannot:
//! names that must exist, values that must be in range, paths that must connect. Nodes
//! and links first, then the mobile host and its agents, the flows and the machines they
//! bring, and last the `[[agent]]` machines.

use super::checks::{self, FlowFacts};
use super::error::{KeyError, ScenarioError, ScenarioWarning};
use super::machines::{place_ideal, Names, StateManagers};
use super::spec::{
    DirSpec, IlcSpec, IpsecSpec, IpsecTable, LinkLayer, ScenarioFile, TcpSpec, Transport,
};
use super::tcp::{resolve, IwSpec};
use crate::channel::{Channel, NoLoss};
use crate::link::{LinkDir, LinkParams};
use crate::rng;
use crate::sim::{FlowParams, FlowTransport, Ipsec, NodeId, Simulation, TcpFlow};
use crate::units::QueueLimit;
use hetpath_proto::agent::Collaboration;
use hetpath_proto::host::lift_mh::SelfProtection;
use hetpath_proto::packet::EspSizes;
use hetpath_proto::{Dur, Time};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Default DropTail limit when a link gives none (ns-3's and Linux's txqueuelen default).
pub const DEFAULT_QUEUE: QueueLimit = QueueLimit::Packets(100);
/// Default time-series period.
pub const DEFAULT_SAMPLE_INTERVAL: Dur = Dur::from_millis(100);
/// Default bound on the time-series rows a run keeps (`scenario.max_samples`).
pub const DEFAULT_MAX_SAMPLES: u64 = 10_000_000;
/// The longest duration and latest time a scenario may give: 100 years, far from where
/// nanosecond times saturate at 2^64 (584 years), so that no time in a run does.
pub const MAX_TIME: Dur = Dur::from_secs(100 * 365 * 86_400);
/// A flow's controller when neither it nor its profile names one.
pub const DEFAULT_CC: &str = "newreno";
/// The most bytes `ipsec.esp_overhead` may add: more than any ESP transform does (8
/// bytes of header, up to 255 of padding, 2 of trailer, an IV and an ICV of tens of
/// bytes), and small enough that no packet size can wrap.
pub const MAX_ESP_OVERHEAD: u32 = 1024;

/// A scenario ready to run, and what the loader found odd about it.
pub struct Loaded {
    pub sim: Simulation,
    /// Settings that run, but probably not as meant (each one line, as errors are).
    pub warnings: Vec<ScenarioWarning>,
}

/// The longest scenario text the loader reads. The TOML parser holds the whole document
/// as a tree before the scenario is built, up to about 100 bytes of memory per byte of
/// text for files of many small tables (a million `[[node]]` tables, 58 MB, took 3.4 GB),
/// so the text is bounded, not the memory. 8 MiB is some 250,000 nodes, or a dumbbell
/// of 50,000 flows.
pub const MAX_SCENARIO_BYTES: usize = 8 << 20;

/// Parses and validates scenario text. `file` names it in errors and anchors relative
/// paths (channel traces).
pub fn parse(text: &str, file: &str) -> Result<ScenarioFile, ScenarioError> {
    if text.len() > MAX_SCENARIO_BYTES {
        return Err(ScenarioError::new(
            file,
            "",
            format!(
                "{} bytes, more than the {} MiB a scenario may have: reading one takes up to 100 times its size in memory",
                text.len(),
                MAX_SCENARIO_BYTES >> 20
            ),
        ));
    }
    toml::from_str(text).map_err(|e| ScenarioError::from_toml(file, text, &e))
}

/// Parses, validates and builds a runnable simulation; `seed` overrides the file's seed.
pub fn load(text: &str, file: &str, seed: Option<u64>) -> Result<Simulation, ScenarioError> {
    load_with(text, file, seed, true)
}

/// [`load`], choosing whether the run records its time series. Without them
/// (`series = false`: sweeps, a summary alone) `max_samples` does not apply, as nothing
/// is sampled.
pub fn load_with(
    text: &str,
    file: &str,
    seed: Option<u64>,
    series: bool,
) -> Result<Simulation, ScenarioError> {
    build(&parse(text, file)?, file, seed, series)
}

/// [`load_with`], keeping the warnings.
pub fn load_warned(
    text: &str,
    file: &str,
    seed: Option<u64>,
    series: bool,
) -> Result<Loaded, ScenarioError> {
    build_warned(&parse(text, file)?, file, seed, series)
}

pub fn build(
    s: &ScenarioFile,
    file: &str,
    seed: Option<u64>,
    series: bool,
) -> Result<Simulation, ScenarioError> {
    build_warned(s, file, seed, series).map(|l| l.sim)
}

/// Builds the simulation and collects the warnings (`checks`).
pub fn build_warned(
    s: &ScenarioFile,
    file: &str,
    seed: Option<u64>,
    series: bool,
) -> Result<Loaded, ScenarioError> {
    let err = |place: String, msg: String| ScenarioError::new(file, place, msg);
    let at = |place: &str| {
        let place = place.to_string();
        move |e: KeyError| ScenarioError::at(file, &place, e)
    };
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
    let too_late = |place: &str, d: Dur| {
        (d > MAX_TIME).then(|| {
            err(
                place.into(),
                format!(
                    "{} s is beyond the 100-year limit on times",
                    d.0 / 1_000_000_000
                ),
            )
        })
    };
    for (place, d) in [
        ("scenario.duration", sc.duration.0),
        ("scenario.sample_interval", sample),
    ] {
        if let Some(e) = too_late(place, d) {
            return Err(e);
        }
    }
    let seed = seed.unwrap_or(sc.seed);
    let mut sim = Simulation::new(&sc.name, seed, sc.duration.0, sample);
    sim.stop_when_done = sc.stop_when_done;
    match sc.max_events_per_instant {
        Some(0) => {
            return Err(err(
                "scenario.max_events_per_instant".into(),
                "must be at least 1".into(),
            ))
        }
        Some(n) => sim.max_events_per_instant = n,
        None => {}
    }

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
    resolve(&s.tcp, &TcpSpec::default(), None, DEFAULT_CC).map_err(at(""))?;
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

    let mut links = HashMap::new();
    // Each [[link]] direction's place in the file, for errors found once flows exist.
    let mut dir_places = HashMap::new();
    for (i, l) in s.links.iter().enumerate() {
        let place = format!("link[{i}] '{}'", l.name);
        if l.name.trim().is_empty() {
            return Err(err(format!("link[{i}].name"), "must not be empty".into()));
        }
        if links.contains_key(&l.name) {
            return Err(err(
                format!("{place}.name"),
                "a link with this name is already defined".into(),
            ));
        }
        let a = node(format!("{place}.a"), &l.a)?;
        let b = node(format!("{place}.b"), &l.b)?;
        if a == b {
            return Err(err(place, "a link must join two different nodes".into()));
        }
        let mut dirs = Vec::with_capacity(2);
        for (from, to, a_to_b) in [(a, b, true), (b, a, false)] {
            let mut spec = l.direction(a_to_b);
            if let Some(scale) = l.queue_scale {
                let queue = spec.queue.unwrap_or(DEFAULT_QUEUE);
                spec.queue = Some(
                    scaled_queue(queue, scale)
                        .map_err(|m| err(format!("{place}.queue_scale"), m))?,
                );
            }
            let place = format!("{place} ({})", if a_to_b { "ab" } else { "ba" });
            let (params, channel) =
                link_parts(&spec, &l.name, from, to, seed, &sim, base_dir).map_err(at(&place))?;
            for (k, o) in spec.outages.iter().flatten().enumerate() {
                if let Some(e) = too_late(&format!("{place}.outages[{k}].up"), o.up.0) {
                    return Err(e);
                }
                if o.up.0 <= o.down.0 {
                    return Err(err(
                        format!("{place}.outages[{k}]"),
                        "'up' must be later than 'down'".into(),
                    ));
                }
            }
            if l.layer == LinkLayer::Esw && spec.outages.is_some() {
                return Err(err(
                    format!("{place}.outages"),
                    "not supported on an ESW link (layer = \"esw\"): shadowing comes from its channel".into(),
                ));
            }
            dirs.push((params, channel, spec.outages.unwrap_or_default()));
        }
        let (ba, ba_ch, ba_out) = dirs.pop().expect("b -> a");
        let (ab, ab_ch, ab_out) = dirs.pop().expect("a -> b");
        let link = match (l.layer, &l.esw) {
            (LinkLayer::Ip, Some(_)) => {
                return Err(err(
                    format!("{place}.esw"),
                    "an [link.esw] table needs layer = \"esw\" on the link".into(),
                ))
            }
            (LinkLayer::Ip, None) => sim.add_link(LinkDir::new(ab, ab_ch), LinkDir::new(ba, ba_ch)),
            (LinkLayer::Esw, esw) => {
                let link = super::esw::link(esw.as_ref(), &ab, &ba, vec![ab_ch, ba_ch])
                    .map_err(at(&place))?;
                // The cells meet the channels in the ESW link; the directions only route.
                let (ab, ba) = (
                    LinkDir::new(ab, Box::new(NoLoss)),
                    LinkDir::new(ba, Box::new(NoLoss)),
                );
                sim.add_esw_link(ab, ba, link)
            }
        };
        for ((d, outages), side) in sim
            .link_dirs(link)
            .into_iter()
            .zip([ab_out, ba_out])
            .zip(["ab", "ba"])
        {
            // Only an IP link's queue counts bytes as bytes (ESW's counts 1500-byte packets).
            if l.layer == LinkLayer::Ip {
                dir_places.insert(d, format!("{place} ({side})"));
            }
            for o in outages {
                sim.add_outage(d, Time::ZERO + o.down.0, Time::ZERO + o.up.0);
            }
        }
        links.insert(l.name.clone(), link);
    }

    let ctx = super::wlan::Ctx {
        file,
        seed,
        base_dir,
        nodes: &nodes,
    };
    super::mobile::build(s, &ctx, &mut sim)?;
    super::wlan::build(s, &ctx, &mut sim, &links)?;

    let mut flow_names = HashMap::new();
    // Every flow's ends and packets, for the checks that need the agents and the paths.
    let mut facts: Vec<FlowFacts> = Vec::new();
    let mut state_managers = StateManagers::default();
    for (i, f) in s.flows.iter().enumerate() {
        let place = format!("flow[{i}] '{}'", f.name);
        if f.name.trim().is_empty() {
            return Err(err(format!("flow[{i}].name"), "must not be empty".into()));
        }
        if flow_names.insert(f.name.clone(), i).is_some() {
            return Err(err(
                format!("{place}.name"),
                "a flow with this name is already defined".into(),
            ));
        }
        let from = node(format!("{place}.from"), &f.from)?;
        let to = node(format!("{place}.to"), &f.to)?;
        if from == to {
            return Err(err(place, "'from' and 'to' must be different nodes".into()));
        }
        if !sim.reachable(from, to) || !sim.reachable(to, from) {
            return Err(err(
                place,
                format!(
                    "no path between '{}' and '{}' in both directions",
                    f.from, f.to
                ),
            ));
        }
        if f.size.is_some_and(|b| b.0 == 0) {
            return Err(err(
                format!("{place}.size"),
                "must be greater than zero (omit it for a bulk transfer)".into(),
            ));
        }
        // SCTP: [flow.sctp] and which keys belong to which transport (scenario/sctp.rs).
        let sctp = super::sctp::flow(f).map_err(at(&place))?;
        let own = f.tcp.clone().unwrap_or_default();
        let stack = resolve(&s.tcp, &own, f.cc.as_ref(), DEFAULT_CC).map_err(at(&place))?;
        let mut tcp = stack.tcp;
        if stack.spec.iw == Some(IwSpec::Bdp) {
            let bdp = sim.path_bdp(from, to, tcp.mss);
            tcp.initial_window = bdp.div_ceil(tcp.mss as u64).max(1) * tcp.mss as u64;
        }
        let start = f.start.map_or(Dur::ZERO, |d| d.0);
        if let Some(e) = too_late(&format!("{place}.start"), start) {
            return Err(e);
        }
        let start = Time::ZERO + start;
        let size = f.size.map(|b| b.0);
        let mut fact = FlowFacts {
            place: place.clone(),
            from,
            to,
            tcp: None,
            packets: None,
        };
        let (label, transport) = match f.transport {
            Transport::Tcp => {
                let label = f.cc.as_ref().map_or(stack.cc.name(), |c| c.name());
                let tcp_flow = TcpFlow {
                    tcp,
                    cc: stack.cc.clone(),
                    ipsec: ipsec(f.ipsec).map_err(at(&place))?,
                };
                fact.packets = Some(
                    checks::tcp_packets(tcp.mss, tcp_flow.ipsec.as_ref().map(|i| i.sizes))
                        .map_err(at(&place))?,
                );
                fact.tcp = Some(checks::TcpFacts {
                    cc: stack.cc.name(),
                    readable: tcp_flow.ipsec.is_none(),
                    lift: tcp_flow.ipsec.as_ref().is_some_and(|i| i.lift),
                    ilc: matches!(stack.spec.ilc, Some(IlcSpec::LinkOnly | IlcSpec::LinkIp)),
                });
                (label.to_string(), FlowTransport::Tcp(tcp_flow))
            }
            Transport::Ideal => {
                fact.packets = Some(checks::tcp_packets(tcp.mss, None).map_err(at(&place))?);
                ("ideal".to_string(), FlowTransport::Machines)
            }
            Transport::Sctp => ("sctp".to_string(), FlowTransport::Machines),
        };
        facts.push(fact);
        let mode = match stack.spec.ilc {
            _ if sctp.is_some() => None, // ILC-TCP is TCP's
            Some(IlcSpec::LinkOnly) => Some(Collaboration::LinkOnly),
            Some(IlcSpec::LinkIp) => Some(Collaboration::LinkIp),
            Some(IlcSpec::Off) | None => None,
        };
        let streams = sctp.as_ref().map(|s| s.streams());
        let web = super::web::check(f, &place, file, seed, streams)?;
        let is_web = web.is_some();
        let flow = sim.add_flow(FlowParams {
            name: f.name.clone(),
            label,
            from,
            to,
            start,
            size,
            transport,
        });
        if let Some((cfg, pages, rng)) = web {
            sim.set_web(flow, cfg, pages, rng);
        }
        if let Some(mode) = mode {
            state_managers
                .ensure(&mut sim, from, mode)
                .map_err(at(&place))?;
        }
        if f.transport == Transport::Ideal {
            let size = size.ok_or_else(|| {
                err(
                    format!("{place}.size"),
                    "missing: an ideal-transport flow needs a size".into(),
                )
            })?;
            place_ideal(&mut sim, flow, from, to, tcp.mss, size, start).map_err(at(&place))?;
        }
        match &sctp {
            Some(sctp) if is_web => {
                sctp.place_web(&mut sim, flow, &f.name, seed, (from, to), start)
            }
            Some(sctp) => sctp.place(&mut sim, flow, &f.name, seed, (from, to), start, size),
            None => {}
        }
    }
    let names = Names {
        nodes: &nodes,
        links: &links,
    };
    // A sweep selects an agent by its name (`agent.<name>.`): two of one name would
    // leave the second out of reach.
    let mut agent_names = HashSet::new();
    for (i, a) in s.agents.iter().enumerate() {
        if let Some(name) = a.name() {
            if !agent_names.insert(name) {
                return Err(err(
                    format!("agent[{i}].name"),
                    format!("agent '{name}' is defined twice"),
                ));
            }
        }
    }
    for (i, a) in s.agents.iter().enumerate() {
        a.place(&mut sim, &names, &s.tcp)
            .map_err(at(&format!("agent[{i}]")))?;
    }
    checks::agents(s, file, &mut sim, &names, &facts)?;
    checks::queues(file, &mut sim, &facts, &dir_places)?;
    if let Some((from, to, n)) = sim.port_overcommit() {
        let (a, b) = (sim.node_name(from), sim.node_name(to));
        return Err(err(
            "flow".into(),
            format!("{n} bulk TCP flows (no size: they never close) from '{a}' to '{b}': a host has at most {} ephemeral ports toward one server port", crate::sim::EPHEMERAL_PORTS),
        ));
    }
    let warnings = checks::warnings(s, file, &mut sim, &facts);
    sim.sampling = series;
    if series {
        check_samples(s, &sim, sample).map_err(at("scenario"))?;
    }
    Ok(Loaded { sim, warnings })
}

/// The time series must fit in `max_samples` rows: one per flow and per link direction
/// every `sample_interval`. Checked up front, as growing past memory aborts the process.
fn check_samples(s: &ScenarioFile, sim: &Simulation, sample: Dur) -> Result<(), KeyError> {
    let max = s.scenario.max_samples.unwrap_or(DEFAULT_MAX_SAMPLES);
    let per_sample = (s.flows.len() + sim.dirs().count()) as u128;
    let samples = (s.scenario.duration.0 .0 / sample.0) as u128 + 1;
    let rows = samples * per_sample;
    if rows > max as u128 {
        return Err(KeyError::new(
            "max_samples",
            format!(
                "the time series would hold {rows} rows ({samples} samples every sample_interval x {per_sample} flows and link directions), more than max_samples = {max}; raise sample_interval, or max_samples"
            ),
        ));
    }
    Ok(())
}

/// `queue` times a link's `queue_scale`, rounded to the nearest whole packet or byte; a
/// scale that is not a positive number, or a queue that would round to nothing, is refused.
fn scaled_queue(queue: QueueLimit, scale: f64) -> Result<QueueLimit, String> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(format!("{scale}: expected a positive number"));
    }
    let (n, unit) = match queue {
        QueueLimit::Packets(n) => (n, "packets"),
        QueueLimit::Bytes(b) => (b, "bytes"),
    };
    let scaled = (n as f64 * scale).round();
    if scaled < 1.0 || scaled >= u64::MAX as f64 {
        return Err(format!(
            "{scale}: a queue of {n} {unit} scaled by it is {scaled} {unit}; expected at least 1"
        ));
    }
    Ok(match queue {
        QueueLimit::Packets(_) => QueueLimit::Packets(scaled as u64),
        QueueLimit::Bytes(_) => QueueLimit::Bytes(scaled as u64),
    })
}

/// A link direction's parameters and channel.
fn link_parts(
    d: &DirSpec,
    name: &str,
    from: NodeId,
    to: NodeId,
    seed: u64,
    sim: &Simulation,
    base_dir: &Path,
) -> Result<(LinkParams, Box<dyn Channel>), KeyError> {
    let rate = d.rate.ok_or_else(|| {
        KeyError::new(
            "rate",
            "missing: give `rate` on the link or in its `ab`/`ba` table",
        )
    })?;
    let delay = d.delay.ok_or_else(|| {
        KeyError::new(
            "delay",
            "missing: give `delay` on the link or in its `ab`/`ba` table",
        )
    })?;
    let channel = d.channel.clone().unwrap_or_default();
    channel
        .validate(base_dir)
        .map_err(|e| KeyError::new("channel", e))?;
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
    Ok((params, channel.build(stream)))
}

/// The flow's `ipsec` key.
fn ipsec(spec: Option<IpsecSpec>) -> Result<Option<Ipsec>, KeyError> {
    let table = match spec {
        None | Some(IpsecSpec::Enabled(false)) => return Ok(None),
        Some(IpsecSpec::Enabled(true)) => IpsecTable::default(),
        Some(IpsecSpec::Table(t)) => t,
    };
    let sizes = match table.esp_overhead {
        None => EspSizes::default(),
        Some(n) if (10..=MAX_ESP_OVERHEAD).contains(&n) => EspSizes::Flat { icv: n - 10 },
        Some(n) => {
            return Err(KeyError::new(
                "ipsec.esp_overhead",
                format!("{n} bytes is out of range; expected 10 (ESP's 8-byte header and 2-byte trailer) to {MAX_ESP_OVERHEAD}"),
            ))
        }
    };
    let lift_protection = match table.self_protection {
        None => None,
        Some(_) if !table.lift => {
            return Err(KeyError::new(
                "ipsec.self_protection",
                "protects MH-LIFT: set `lift = true` too",
            ))
        }
        Some(p) => Some(SelfProtection {
            probes: match p.probes {
                Some(0) => {
                    return Err(KeyError::new(
                        "ipsec.self_protection.probes",
                        "must be at least 1",
                    ))
                }
                n => n.unwrap_or(3),
            },
            patience: match p.patience {
                Some(d) if d.0 == Dur::ZERO => {
                    return Err(KeyError::new(
                        "ipsec.self_protection.patience",
                        "must be greater than zero",
                    ))
                }
                d => d.map_or(Dur::from_secs(2), |d| d.0),
            },
        }),
    };
    Ok(Some(Ipsec {
        sizes,
        lift: table.lift,
        lift_protection,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_larger_than_the_limit_is_refused_before_it_is_parsed() {
        let mut text = "[scenario]\nname = \"x\"\nduration = \"1s\"\n".to_string();
        while text.len() <= MAX_SCENARIO_BYTES {
            text += "[[node]]\nname = \"n\"\n";
        }
        let e = parse(&text, "big.toml").unwrap_err();
        assert_eq!(e.place, "");
        assert!(e.to_string().starts_with("big.toml: "), "{e}");
        assert!(e.message.contains("more than the 8 MiB"), "{e}");
    }

    #[test]
    fn the_tcp_defaults_are_checked_before_any_flow() {
        let text = "[scenario]\nname = \"x\"\nduration = \"1s\"\n[tcp]\nmss = 10\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n";
        let e = load(text, "x.toml", None).err().unwrap();
        assert_eq!(e.place, "tcp.mss");
    }
}

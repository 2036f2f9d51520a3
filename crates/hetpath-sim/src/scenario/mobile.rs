//! Builds the `[radio]`, `[[base_station]]` and `[mobile]` tables: the wireless links from
//! the host to every station, its motion and disconnection schedule, and the Mobile IP
//! machines (an agent on every station, the mobile node on the host).

use super::build::DEFAULT_QUEUE;
use super::error::{KeyError, ScenarioError};
use super::spec::{MobileHop, PathLossSpec, RadioSpec, ScenarioFile};
use super::wlan::{build_one, Ctx, MobileWlanSpec};
use crate::channel::NoLoss;
use crate::link::{LinkDir, LinkParams};
use crate::mobility::{
    Access, Disconnection, MobileHost, Motion, PathLoss, Position, Radio, Station,
};
use crate::rng;
use crate::sim::{node_addr, NodeId, Simulation};
use hetpath_proto::agent::{MobileIpConfig, MobileNode, StationAgent};
use hetpath_proto::{Dur, Time};
use std::collections::HashMap;

/// Mobile IP agent advertisement period when the scenario gives none: ns-2's
/// `Agent/MIPBS beacon_period_`, which seed 002's simulations ran with.
pub const DEFAULT_ADVERTISE: Dur = Dur::from_secs(1);

/// The shortest advertisement period taken (docs/model-notes.md, "Mobile IP").
pub const MIN_ADVERTISE: Dur = Dur(1_000);

/// The largest transmit power taken, in watts (a megawatt): far above any radio, and
/// small enough that the received powers stay finite.
const MAX_TX_POWER_W: f64 = 1e6;

/// The longest `registration_delay` taken.
pub const MAX_REGISTRATION_DELAY: Dur = Dur::from_secs(60);

pub fn build(s: &ScenarioFile, ctx: &Ctx, sim: &mut Simulation) -> Result<(), ScenarioError> {
    let (file, seed, nodes) = (ctx.file, ctx.seed, ctx.nodes);
    let err = |place: &str, msg: String| ScenarioError::new(file, place, msg);
    let Some(m) = &s.mobile else {
        if !s.base_stations.is_empty() {
            return Err(err(
                "base_station",
                "base stations need a [mobile] host to serve".into(),
            ));
        }
        return Ok(());
    };
    let radio = radio(s.radio.as_ref().cloned().unwrap_or_default())
        .map_err(|e| ScenarioError::at(file, "radio", e))?;
    let lookup = |place: &str, name: &str| {
        nodes
            .get(name)
            .copied()
            .ok_or_else(|| err(place, format!("unknown node '{name}'")))
    };
    let host = lookup("mobile.node", &m.node)?;
    if let Some(p) = m.position {
        if !p.iter().all(|x| x.is_finite()) {
            return Err(err(
                "mobile.position",
                "expected two finite numbers [x, y] in metres".into(),
            ));
        }
    }
    if let Some(v) = m.speed {
        if !(v > 0.0 && v.is_finite()) {
            return Err(err(
                "mobile.speed",
                format!("expected a positive, finite number of metres per second, got {v}"),
            ));
        }
    }
    if s.base_stations.is_empty() {
        return Err(err(
            "base_station",
            "a [mobile] host needs at least one [[base_station]]".into(),
        ));
    }
    if m.hop == MobileHop::Link && m.wlan.is_some() {
        return Err(err(
            "mobile.wlan",
            "the DCF of the base stations' WLANs is used only with hop = \"wlan\" (hop is \"link\")".into(),
        ));
    }
    let queue = m.queue.unwrap_or(DEFAULT_QUEUE);
    let dcf = m.wlan.clone().unwrap_or_default();
    let mut stations = Vec::new();
    let mut station_of = HashMap::new();
    for (i, b) in s.base_stations.iter().enumerate() {
        let at = format!("base_station[{i}]");
        let node = lookup(&format!("{at}.node"), &b.node)?;
        if node == host {
            return Err(err(
                &format!("{at}.node"),
                "the mobile host cannot be a base station".into(),
            ));
        }
        if station_of.insert(b.node.clone(), i).is_some() {
            return Err(err(
                &format!("{at}.node"),
                format!("'{}' is a base station twice", b.node),
            ));
        }
        if !b.position.iter().all(|x| x.is_finite()) {
            return Err(err(
                &format!("{at}.position"),
                "expected two finite numbers [x, y] in metres".into(),
            ));
        }
        let dir = |from: NodeId, to: NodeId| {
            let params = LinkParams {
                name: format!("air/{}", b.node),
                from,
                to,
                rate_bps: m.rate.0,
                delay: m.delay.0,
                queue,
            };
            LinkDir::new(params, Box::new(NoLoss))
        };
        let link = match m.hop {
            MobileHop::Link => sim.add_link(dir(node, host), dir(host, node)),
            MobileHop::Wlan => station_wlan(s, &dcf, ctx, sim, &b.node, host, queue)?,
        };
        let [downlink, uplink] = sim.link_dirs(link);
        stations.push(Station {
            node,
            position: Position::new(b.position[0], b.position[1]),
            downlink,
            uplink,
        });
    }
    let station = |place: &str, name: &str| {
        station_of
            .get(name)
            .copied()
            .ok_or_else(|| err(place, format!("'{name}' is not a [[base_station]]")))
    };
    let home = station("mobile.home", &m.home)?;
    if m.rate.0 == 0 {
        return Err(err("mobile.rate", "must be greater than zero".into()));
    }
    let motion = match &m.path {
        None => None,
        Some(path) => {
            let start = m
                .position
                .unwrap_or([stations[home].position.x, stations[home].position.y]);
            let start = Position::new(start[0], start[1]);
            let mut legs = Vec::new();
            for (i, w) in path.iter().enumerate() {
                let speed = w.speed.or(m.speed).ok_or_else(|| {
                    err(
                        &format!("mobile.path[{i}].speed"),
                        "missing: give the leg or [mobile] a speed".into(),
                    )
                })?;
                legs.push((Position::new(w.to[0], w.to[1]), speed));
            }
            let depart = Time::ZERO + m.depart.map_or(Dur::ZERO, |d| d.0);
            if m.repeat {
                legs = repeated(start, &legs, depart, s.scenario.duration.0)
                    .map_err(|e| ScenarioError::at(file, "mobile.repeat", e))?;
            }
            Some(Motion::new(start, depart, &legs).map_err(|e| err("mobile.path", e.to_string()))?)
        }
    };
    let mut schedule = Vec::new();
    if let Some(d) = &m.disconnect {
        let reattach = d
            .reattach
            .iter()
            .flatten()
            .map(|n| station("mobile.disconnect.reattach", n))
            .collect::<Result<Vec<_>, _>>()?;
        if d.count > 10_000 {
            return Err(err(
                "mobile.disconnect.count",
                "at most 10000 disconnections".into(),
            ));
        }
        let jitter = d.jitter.map_or(Dur::ZERO, |j| j.0);
        let every = d.every.map(|e| e.0);
        if d.count > 1 && every.is_none_or(|e| e <= d.duration.0 + jitter) {
            return Err(err(
                "mobile.disconnect.every",
                "with count > 1, expected a period longer than duration + jitter".into(),
            ));
        }
        let name = &s.nodes[host.index()].name;
        let mut r = rng::stream(seed, &format!("mobile/{name}/disconnect"));
        // A zero duration is no disconnection at all (seed 002 Table 1's 0 s row).
        for k in 0..d.count as u64 {
            let at = Time::ZERO
                + d.first.0
                + every.unwrap_or(Dur::ZERO).saturating_mul(k)
                + Dur::from_secs_f64(jitter.as_secs_f64() * rng::uniform(&mut r));
            if d.duration.0 > Dur::ZERO {
                schedule.push(Disconnection {
                    at,
                    until: at + d.duration.0,
                    reattach: (!reattach.is_empty()).then(|| reattach[k as usize % reattach.len()]),
                });
            }
        }
    }
    let advertise = m.advertise.map_or(DEFAULT_ADVERTISE, |d| d.0);
    if advertise < MIN_ADVERTISE {
        return Err(err(
            "mobile.advertise",
            format!(
                "must be at least {} µs: each advertisement is an event, so a shorter period (a unit slip?) makes a run of billions of events per simulated second",
                MIN_ADVERTISE.0 / 1000
            ),
        ));
    }
    let registration_delay = m.registration_delay.map_or(Dur::ZERO, |d| d.0);
    if registration_delay > MAX_REGISTRATION_DELAY {
        return Err(err(
            "mobile.registration_delay",
            format!(
                "{} s: expected at most 60 s (a home agent's processing time; measured Mobile IP registrations take well under that)",
                registration_delay.as_secs_f64()
            ),
        ));
    }
    let cfg = MobileIpConfig {
        home_addr: node_addr(host),
        stations: stations.iter().map(|s| node_addr(s.node)).collect(),
        home,
        advertise_every: advertise,
        registration_delay,
    };
    // Each agent advertises with its own seeded phase within the first period.
    for (k, st) in stations.iter().enumerate() {
        let name = &s.nodes[st.node.index()].name;
        let mut r = rng::stream(seed, &format!("mobile/advertise/{name}"));
        let phase = Dur::from_secs_f64(advertise.as_secs_f64() * rng::uniform(&mut r));
        let agent = StationAgent::new(cfg.clone(), k, Time::ZERO + phase);
        sim.add_machine(st.node, vec![st.downlink], Box::new(agent));
    }
    let uplinks = stations.iter().map(|s| s.uplink).collect();
    let mobile_node = MobileNode::new(cfg, radio.warn_threshold_w);
    sim.add_machine(host, uplinks, Box::new(mobile_node));
    let access = Access::new(stations, motion, radio, home, schedule);
    sim.set_mobile(MobileHost {
        node: host,
        access,
        home,
    });
    Ok(())
}

/// With `hop = "wlan"`: the 802.11 medium of base station `bs` with the mobile host
/// `host` as its last station: the `[[wlan]]` whose access point `bs` is, or else one of
/// its own named `air/<bs>` (`dcf`, `[mobile.wlan]`'s keys, and `[mobile] queue`).
/// Returns the link between `bs` and the host.
fn station_wlan(
    s: &ScenarioFile,
    dcf: &MobileWlanSpec,
    ctx: &Ctx,
    sim: &mut Simulation,
    bs: &str,
    host: NodeId,
    queue: crate::units::QueueLimit,
) -> Result<crate::sim::LinkId, ScenarioError> {
    let mut own = s.wlans.iter().enumerate().filter(|(_, w)| w.ap == bs);
    let links = match (own.next(), own.next()) {
        (Some((i, w)), None) => build_one(w, &format!("wlan[{i}] '{}'", w.name), Some(host), ctx, sim)?,
        (Some(_), Some((j, _))) => {
            return Err(ScenarioError::new(
                ctx.file,
                format!("wlan[{j}].ap"),
                format!("base station '{bs}' is the access point of two WLANs: the mobile host would not know which to join"),
            ))
        }
        (None, _) => {
            let spec = dcf.wlan(format!("air/{bs}"), bs.to_string(), queue);
            build_one(&spec, "mobile.wlan", Some(host), ctx, sim)?
        }
    };
    Ok(*links.last().expect("the mobile host's link"))
}

/// `[radio]` over ns-2's defaults; `range`/`warn_range` set the thresholds by distance.
fn radio(spec: RadioSpec) -> Result<Radio, KeyError> {
    let mut r = Radio::ns2_default();
    if let Some(m) = spec.model {
        r.model = match m {
            PathLossSpec::FreeSpace => PathLoss::FreeSpace,
            PathLossSpec::TwoRay => PathLoss::TwoRayGround,
        };
    }
    // Every factor of the path-loss formula is a positive, finite number.
    let set = |key: &str, v: Option<f64>, field: &mut f64| match v {
        Some(v) if !(v > 0.0 && v.is_finite()) => Err(KeyError::new(
            key,
            format!("expected a positive, finite number, got {v}"),
        )),
        Some(v) => {
            *field = v;
            Ok(())
        }
        None => Ok(()),
    };
    set("tx_power_w", spec.tx_power_w, &mut r.tx_power_w)?;
    set("frequency_hz", spec.frequency_hz, &mut r.frequency_hz)?;
    set(
        "antenna_height_m",
        spec.antenna_height_m,
        &mut r.antenna_height_m,
    )?;
    set("antenna_gain", spec.antenna_gain, &mut r.antenna_gain)?;
    set("system_loss", spec.system_loss, &mut r.system_loss)?;
    if r.tx_power_w > MAX_TX_POWER_W {
        return Err(KeyError::new(
            "tx_power_w",
            format!("at most {MAX_TX_POWER_W:e} W, got {:e}", r.tx_power_w),
        ));
    }
    if spec.range.is_some() && spec.rx_threshold_w.is_some() {
        return Err(KeyError::new(
            "range",
            "give either range or rx_threshold_w, not both",
        ));
    }
    if spec.warn_range.is_some() && spec.warn_threshold_w.is_some() {
        return Err(KeyError::new(
            "warn_range",
            "give either warn_range or warn_threshold_w, not both",
        ));
    }
    let shape = r;
    let by_distance = |d: f64, key: &str| {
        if d.is_finite() && d > 0.0 {
            Ok(shape.received_power_w(d))
        } else {
            Err(KeyError::new(
                key,
                format!("expected a positive distance in metres, got {d}"),
            ))
        }
    };
    if let Some(d) = spec.range {
        r.rx_threshold_w = by_distance(d, "range")?;
    }
    set("rx_threshold_w", spec.rx_threshold_w, &mut r.rx_threshold_w)?;
    // The warning threshold defaults to 3 dB above reception (docs/model-notes.md).
    r.warn_threshold_w = 2.0 * r.rx_threshold_w;
    if let Some(d) = spec.warn_range {
        r.warn_threshold_w = by_distance(d, "warn_range")?;
    }
    set(
        "warn_threshold_w",
        spec.warn_threshold_w,
        &mut r.warn_threshold_w,
    )?;
    r.validate().map_err(|e| KeyError::new("", e))?;
    Ok(r)
}

/// The legs driven over and over, start -> waypoints -> start..., until `horizon`.
fn repeated(
    start: Position,
    legs: &[(Position, f64)],
    depart: Time,
    horizon: Dur,
) -> Result<Vec<(Position, f64)>, KeyError> {
    const MAX_LEGS: usize = 100_000;
    let Some(&(_, back_speed)) = legs.last() else {
        return Ok(Vec::new());
    };
    let mut cycle = legs.to_vec();
    cycle.push((start, back_speed));
    let mut out = Vec::new();
    let (mut at, mut t) = (start, depart.since(Time::ZERO).as_secs_f64());
    while t <= horizon.as_secs_f64() {
        let before = t;
        for &(to, speed) in &cycle {
            if !(speed > 0.0 && speed.is_finite()) {
                return Err(KeyError::new(
                    "",
                    format!("every leg needs a positive speed, got {speed}"),
                ));
            }
            t += at.distance(to) / speed;
            at = to;
            out.push((to, speed));
        }
        if t == before || out.len() > MAX_LEGS {
            return Err(KeyError::new(
                "",
                "the path must have length, and repeat at most 100000 legs within the run",
            ));
        }
    }
    Ok(out)
}

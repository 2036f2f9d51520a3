//! `[[wlan]]`: an 802.11b WLAN in infrastructure mode (`crate::wlan`): an access point,
//! its stations, the interface queue, and the DCF's parameters (defaults: seed 000
//! Table I and 802.11b). Each station is joined to the access point by a link named after
//! the WLAN, whose directions share the medium.

use super::error::{KeyError, ScenarioError};
use super::spec::{MobileHop, ScenarioFile};
use crate::channel::ChannelSpec;
use crate::link::{LinkDir, LinkParams};
use crate::rng;
use crate::sim::{NodeId, Simulation};
use crate::units::{Bytes, Duration, QueueLimit, Rate};
use crate::wlan::{Dcf, DcfParams};
use hetpath_proto::Dur;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

/// Seed 000 section IV.A: the access point's interface queue holds 50 packets.
pub const DEFAULT_QUEUE: QueueLimit = QueueLimit::Packets(50);

/// The longest `slot`, `sifs`, `difs` and `plcp` accepted: 50,000 times 802.11b's slot.
/// With `cw_max` at most 65535 a countdown then spans at most about 18 hours of simulated
/// time, so slot x count stays far inside the nanosecond clock (docs/model-notes.md).
pub const MAX_DCF_TIME: Dur = Dur::from_secs(1);

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WlanSpec {
    pub name: String,
    /// The access point's node.
    pub ap: String,
    /// The stations' nodes.
    pub stations: Vec<String>,
    /// Each station's interface queue, the access point's included (default 50 packets;
    /// a byte limit is counted in 1500-byte packets).
    pub queue: Option<QueueLimit>,
    /// A channel model for the frames every station sends (default: none).
    pub channel: Option<ChannelSpec>,
    pub slot: Option<Duration>,
    pub sifs: Option<Duration>,
    pub difs: Option<Duration>,
    /// PLCP preamble and header (default 192 us).
    pub plcp: Option<Duration>,
    pub data_rate: Option<Rate>,
    pub basic_rate: Option<Rate>,
    /// MAC header and FCS of a data frame (default 28 bytes).
    pub mac_overhead: Option<Bytes>,
    pub cw_min: Option<u32>,
    pub cw_max: Option<u32>,
    pub short_retry: Option<u32>,
    pub long_retry: Option<u32>,
    /// Frames longer than this go with RTS/CTS (default: RTS/CTS off, as seed 000).
    pub rts_threshold: Option<Bytes>,
    /// EIFS after a frame that could not be decoded (default true; false: DIFS).
    pub eifs: Option<bool>,
}

impl WlanSpec {
    /// The DCF parameters, checked.
    pub fn params(&self) -> Result<DcfParams, KeyError> {
        let d = DcfParams::default();
        let time = |key: &str, v: Option<Duration>, dft: Dur, zero_ok: bool| match v {
            Some(Duration(t)) if t == Dur::ZERO && !zero_ok => {
                Err(KeyError::new(key, "must be greater than zero"))
            }
            Some(Duration(t)) if t > MAX_DCF_TIME => Err(KeyError::new(
                key,
                format!(
                    "{} s: expected at most 1 s (802.11's are microseconds)",
                    t.as_secs_f64()
                ),
            )),
            Some(Duration(t)) => Ok(t),
            None => Ok(dft),
        };
        let rate = |key: &str, v: Option<Rate>, dft: u64| match v {
            Some(Rate(0)) => Err(KeyError::new(key, "must be greater than zero")),
            Some(Rate(r)) => Ok(r),
            None => Ok(dft),
        };
        let small = |key: &str, v: Option<u32>, dft: u32, min: u32| match v {
            Some(n) if n < min || n > 65_535 => {
                Err(KeyError::new(key, format!("{n}: expected {min} to 65535")))
            }
            Some(n) => Ok(n),
            None => Ok(dft),
        };
        let bytes = |key: &str, v: Option<Bytes>| match v {
            Some(Bytes(b)) => u32::try_from(b)
                .map(Some)
                .map_err(|_| KeyError::new(key, format!("{b} bytes is too large"))),
            None => Ok(None),
        };
        let p = DcfParams {
            slot: time("slot", self.slot, d.slot, false)?,
            sifs: time("sifs", self.sifs, d.sifs, true)?,
            difs: time("difs", self.difs, d.difs, true)?,
            plcp: time("plcp", self.plcp, d.plcp, true)?,
            data_rate: rate("data_rate", self.data_rate, d.data_rate)?,
            basic_rate: rate("basic_rate", self.basic_rate, d.basic_rate)?,
            mac_overhead: match bytes("mac_overhead", self.mac_overhead)? {
                // A MAC header and trailer larger than an IP datagram is a unit slip,
                // and a frame's size must stay far from wrapping.
                Some(b) if b > MAX_MAC_OVERHEAD => {
                    return Err(KeyError::new(
                        "mac_overhead",
                        format!("at most {MAX_MAC_OVERHEAD} bytes, got {b}"),
                    ))
                }
                b => b.unwrap_or(d.mac_overhead),
            },
            cw_min: small("cw_min", self.cw_min, d.cw_min, 0)?,
            cw_max: small("cw_max", self.cw_max, d.cw_max, 0)?,
            short_retry: small("short_retry", self.short_retry, d.short_retry, 1)?,
            long_retry: small("long_retry", self.long_retry, d.long_retry, 1)?,
            rts_threshold: bytes("rts_threshold", self.rts_threshold)?,
            eifs: self.eifs.unwrap_or(d.eifs),
        };
        if p.cw_min > p.cw_max {
            return Err(KeyError::new(
                "cw_min",
                format!("{} is above cw_max ({})", p.cw_min, p.cw_max),
            ));
        }
        Ok(p)
    }
}

/// The largest `mac_overhead` taken: an IPv4 datagram's size.
const MAX_MAC_OVERHEAD: u32 = 65_535;

/// `[mobile.wlan]`: the 802.11 medium of each base station that has no `[[wlan]]` of its
/// own when `[mobile] hop = "wlan"`, the same DCF keys as `[[wlan]]` (defaults 802.11b).
/// Its interface queue is `[mobile] queue`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MobileWlanSpec {
    pub channel: Option<ChannelSpec>,
    pub slot: Option<Duration>,
    pub sifs: Option<Duration>,
    pub difs: Option<Duration>,
    pub plcp: Option<Duration>,
    pub data_rate: Option<Rate>,
    pub basic_rate: Option<Rate>,
    pub mac_overhead: Option<Bytes>,
    pub cw_min: Option<u32>,
    pub cw_max: Option<u32>,
    pub short_retry: Option<u32>,
    pub long_retry: Option<u32>,
    pub rts_threshold: Option<Bytes>,
    pub eifs: Option<bool>,
}

impl MobileWlanSpec {
    /// The WLAN `name` of access point `ap` with no station of its own (the mobile host
    /// joins it), these DCF keys, and `queue`.
    pub fn wlan(&self, name: String, ap: String, queue: QueueLimit) -> WlanSpec {
        WlanSpec {
            name,
            ap,
            stations: Vec::new(),
            queue: Some(queue),
            channel: self.channel.clone(),
            slot: self.slot,
            sifs: self.sifs,
            difs: self.difs,
            plcp: self.plcp,
            data_rate: self.data_rate,
            basic_rate: self.basic_rate,
            mac_overhead: self.mac_overhead,
            cw_min: self.cw_min,
            cw_max: self.cw_max,
            short_retry: self.short_retry,
            long_retry: self.long_retry,
            rts_threshold: self.rts_threshold,
            eifs: self.eifs,
        }
    }
}

/// Whether `[[wlan]]` `w` is a base station's, which the mobile host joins (`[mobile] hop
/// = "wlan"`): built with the mobile host by `scenario/mobile.rs`, not by `build`.
pub fn joined_by_mobile(s: &ScenarioFile, w: &WlanSpec) -> bool {
    s.mobile.as_ref().is_some_and(|m| m.hop == MobileHop::Wlan)
        && s.base_stations.iter().any(|b| b.node == w.ap)
}

/// Builds every `[[wlan]]` but those a mobile host joins: the medium, and a link from the
/// access point to each station. `links` holds the names of the `[[link]]` tables, which
/// a WLAN's name must not take.
pub fn build(
    s: &ScenarioFile,
    ctx: &Ctx,
    sim: &mut Simulation,
    links: &HashMap<String, crate::sim::LinkId>,
) -> Result<(), ScenarioError> {
    let file = ctx.file;
    let mut names: Vec<&str> = Vec::new();
    for (i, w) in s.wlans.iter().enumerate() {
        let place = format!("wlan[{i}] '{}'", w.name);
        if w.name.trim().is_empty() {
            return Err(ScenarioError::new(
                file,
                format!("wlan[{i}].name"),
                "must not be empty",
            ));
        }
        if links.contains_key(&w.name) || names.contains(&w.name.as_str()) {
            return Err(ScenarioError::new(
                file,
                format!("{place}.name"),
                "a link or WLAN with this name is already defined",
            ));
        }
        names.push(&w.name);
        if !joined_by_mobile(s, w) {
            build_one(w, &place, None, ctx, sim)?;
        }
    }
    Ok(())
}

/// What building a WLAN, or the mobile host's stations, needs of the scenario.
pub struct Ctx<'a> {
    pub file: &'a str,
    pub seed: u64,
    pub base_dir: &'a Path,
    pub nodes: &'a HashMap<String, NodeId>,
}

/// Builds one WLAN (`place` names it in errors), with `extra` as its last station if
/// given (the mobile host). Returns the links from the access point to each station, in
/// order.
pub fn build_one(
    w: &WlanSpec,
    place: &str,
    extra: Option<NodeId>,
    ctx: &Ctx,
    sim: &mut Simulation,
) -> Result<Vec<crate::sim::LinkId>, ScenarioError> {
    let (file, seed) = (ctx.file, ctx.seed);
    let err = |key: &str, msg: String| ScenarioError::new(file, format!("{place}.{key}"), msg);
    let node = |key: &str, name: &str| {
        ctx.nodes
            .get(name)
            .copied()
            .ok_or_else(|| err(key, format!("unknown node '{name}'")))
    };
    let ap = node("ap", &w.ap)?;
    if w.stations.is_empty() && extra.is_none() {
        return Err(err("stations", "a WLAN needs at least one station".into()));
    }
    if w.stations.len() > 1000 {
        return Err(err(
            "stations",
            format!("{} stations: at most 1000", w.stations.len()),
        ));
    }
    let mut stations = Vec::new();
    for name in &w.stations {
        let n = node("stations", name)?;
        if n == ap || stations.contains(&n) {
            return Err(err(
                "stations",
                format!("'{name}' is the access point or listed twice"),
            ));
        }
        if Some(n) == extra {
            return Err(err(
                "stations",
                format!("'{name}' is the mobile host, which joins its base station's WLAN by itself ([mobile] hop = \"wlan\")"),
            ));
        }
        stations.push(n);
    }
    stations.extend(extra);
    let params = w.params().map_err(|e| ScenarioError::at(file, place, e))?;
    let queue = match w.queue.unwrap_or(DEFAULT_QUEUE) {
        QueueLimit::Packets(0) | QueueLimit::Bytes(0) => {
            return Err(err("queue", "must hold at least one packet".into()))
        }
        QueueLimit::Packets(n) => n as usize,
        QueueLimit::Bytes(b) => (b / 1500).max(1) as usize,
    };
    if let Some(c) = &w.channel {
        c.validate(ctx.base_dir)
            .map_err(|e| err("channel", e.to_string()))?;
    }
    let mut dcf = Dcf::new(
        params,
        stations.len() + 1,
        seed,
        &format!("wlan/{}", w.name),
    );
    if let Some(c) = &w.channel {
        for (k, &n) in std::iter::once(&ap).chain(&stations).enumerate() {
            let stream = rng::stream(
                seed,
                &format!("wlan/{}/{}/channel", w.name, sim.node_name(n)),
            );
            dcf.set_channel(k, c.build(stream));
        }
    }
    let dir = |from, to| {
        LinkDir::new(
            LinkParams {
                name: w.name.clone(),
                from,
                to,
                rate_bps: params.data_rate,
                delay: Dur::ZERO,
                queue: QueueLimit::Packets(queue as u64),
            },
            Box::new(crate::channel::NoLoss),
        )
    };
    let pairs = stations
        .iter()
        .map(|&st| (dir(ap, st), dir(st, ap)))
        .collect();
    Ok(sim.add_wlan(&w.name, dcf, pairs, queue))
}

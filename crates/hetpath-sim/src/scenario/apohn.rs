//! `[[agent]] kind = "apohn"`: APOHN (seed 000) between a sender node and the edge router
//! of its WLAN stations. It places three kinds of machine: the booster with its SBP/STP
//! connection on the sender, the edge router's end with LLE-TCP's agent, and LLE-TCP's
//! sink on each station. Their interfaces follow the routes, so the keys name only nodes.

use super::error::KeyError;
use super::machines::Names;
use crate::sim::{node_addr, MachineId, Simulation};
use crate::units::{Bytes, Duration, Rate};
use hetpath_proto::agent::apohn::{
    ApohnBridge, ApohnBridgeConfig, ApohnSender, ApohnSenderConfig, BoosterConfig, LleSink,
    WindowConfig,
};
use hetpath_proto::stp::StpConfig;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The largest booster buffer accepted, in datagrams: twice the bandwidth-delay product
/// of a 10 Gbit/s GEO hop in 1500-byte datagrams (1.5 GB of data). The booster keeps
/// every datagram it holds (about 500 bytes each in the simulator), and with a fixed
/// window its TCP fills the whole buffer at once, so a larger one could not be held
/// (docs/model-notes.md, "Seed 000").
pub const MAX_BUFFER: u64 = 1_000_000;

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum WindowKind {
    Adaptive,
    Fixed,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApohnSpec {
    /// A name for the agent, by which a sweep key (`agent.<name>.alpha`) selects it; the
    /// engine reads nothing else from it.
    pub name: Option<String>,
    /// The node whose TCP the booster serves.
    pub sender: String,
    /// The edge router: the far end of the SBP connection, access point of the WLAN.
    pub bridge: String,
    /// The WLAN stations the sender's flows go to; their TCP ACKs stay off the medium.
    pub stations: Vec<String>,
    /// Datagrams the booster holds until their station confirms them: the most its
    /// window reaches (default 2048).
    pub buffer: Option<u64>,
    /// The SBP window: `"adaptive"` (default: Vegas-style, keeping `alpha` to `beta`
    /// datagrams queued at the bottleneck) or `"fixed"` at `buffer`.
    pub window: Option<WindowKind>,
    /// Adaptive window: datagrams to keep queued at the bottleneck (default 2 and 4, Linux
    /// `tcp_vegas.c`).
    pub alpha: Option<u32>,
    pub beta: Option<u32>,
    /// QoS weights of the flows by destination port (default 1 each).
    pub weights: Option<BTreeMap<String, u32>>,
    /// STP's sending rate toward the edge router (default: the first hop's rate, the
    /// satellite link's dedicated capacity).
    pub rate: Option<Rate>,
    /// STP's POLL period, both ways.
    pub poll_interval: Option<Duration>,
    /// Bytes that subnetwork-layer encryption adds to each datagram (§III.E; default 0:
    /// off).
    pub encryption: Option<Bytes>,
}

impl ApohnSpec {
    pub fn place(&self, sim: &mut Simulation, names: &Names) -> Result<MachineId, KeyError> {
        let sender = names.node_at("sender", &self.sender)?;
        let bridge = names.node_at("bridge", &self.bridge)?;
        if sender == bridge {
            return Err(KeyError::new("bridge", "must differ from the sender"));
        }
        let unjoined = || {
            let msg = format!(
                "'{}' and '{}' are not joined by links",
                self.bridge, self.sender
            );
            KeyError::new("bridge", msg)
        };
        let up = sim.first_hop(sender, bridge).ok_or_else(unjoined)?;
        let down = sim.first_hop(bridge, sender).ok_or_else(unjoined)?;
        let mut stp = StpConfig::default();
        if let Some(p) = self.poll_interval {
            if p.0 == hetpath_proto::Dur::ZERO {
                return Err(KeyError::new("poll_interval", "must be greater than zero"));
            }
            stp.poll_interval = p.0;
        }
        let forward = StpConfig {
            rate_bps: self.rate.map_or(sim.dir(up).params.rate_bps, |r| r.0),
            ..stp
        };
        let back = StpConfig {
            rate_bps: sim.dir(down).params.rate_bps,
            ..stp
        };
        forward.check().map_err(|e| KeyError::new("rate", e))?;
        back.check().map_err(|e| KeyError::new("bridge", e))?;
        let buffer = self
            .buffer
            .unwrap_or(BoosterConfig::default().buffer as u64);
        if buffer == 0 {
            return Err(KeyError::new("buffer", "must be at least 1 packet"));
        }
        if buffer > MAX_BUFFER {
            return Err(KeyError::new(
                "buffer",
                format!("{buffer} datagrams: at most {MAX_BUFFER}, which the booster holds in about half a gigabyte"),
            ));
        }
        let window = self.window_config()?;
        let mut weights = Vec::new();
        for (port, &w) in self.weights.iter().flatten() {
            let key = format!("weights.{port}");
            let port: u16 = port
                .parse()
                .map_err(|_| KeyError::new(&key, "expected a port number (1 to 65535)"))?;
            if w == 0 {
                return Err(KeyError::new(&key, "a weight must be at least 1"));
            }
            weights.push((port, w));
        }
        let encryption = self.encryption.map_or(0, |b| b.0);
        if encryption > 1024 {
            return Err(KeyError::new("encryption", "expected at most 1024 bytes"));
        }
        if self.stations.is_empty() {
            return Err(KeyError::new("stations", "expected at least one station"));
        }
        let mut sinks = Vec::new();
        let mut air = Vec::new();
        for (i, name) in self.stations.iter().enumerate() {
            let key = format!("stations[{i}]");
            let st = names.node_at(&key, name)?;
            let not_station = || {
                let ap = &self.bridge;
                let msg =
                    format!("'{name}' must be a station of a WLAN whose access point is '{ap}'");
                KeyError::new(&key, msg)
            };
            let out = sim
                .first_hop(bridge, st)
                .filter(|&d| sim.is_wlan(d) && sim.dir(d).params.to == st)
                .ok_or_else(not_station)?;
            let back = sim.first_hop(st, bridge).ok_or_else(not_station)?;
            if !air.contains(&out) {
                air.push(out);
            }
            sinks.push((st, back));
        }
        let m = sim.add_machine(
            sender,
            vec![up],
            Box::new(ApohnSender::new(ApohnSenderConfig {
                me: node_addr(sender),
                bridge: node_addr(bridge),
                booster: BoosterConfig {
                    buffer: buffer as usize,
                    weights,
                    window,
                },
                stp: forward,
                encryption: encryption as u32,
            })),
        );
        let edge = ApohnBridge::new(ApohnBridgeConfig {
            me: node_addr(bridge),
            sender: node_addr(sender),
            stp: back,
        });
        sim.add_machine(bridge, air, Box::new(edge));
        for (st, d) in sinks {
            sim.add_machine(st, vec![d], Box::new(LleSink::new(node_addr(sender))));
        }
        Ok(m)
    }

    /// The window's parameters; `alpha` and `beta` belong to the adaptive window only.
    fn window_config(&self) -> Result<Option<WindowConfig>, KeyError> {
        if self.window == Some(WindowKind::Fixed) {
            for (key, v) in [("alpha", self.alpha), ("beta", self.beta)] {
                if v.is_some() {
                    return Err(KeyError::new(key, "only with window = \"adaptive\""));
                }
            }
            return Ok(None);
        }
        let mut w = WindowConfig::default();
        w.alpha = self.alpha.unwrap_or(w.alpha);
        w.beta = self.beta.unwrap_or(w.beta);
        if w.alpha == 0 {
            return Err(KeyError::new("alpha", "must be at least 1 datagram"));
        }
        if w.beta < w.alpha {
            return Err(KeyError::new(
                "beta",
                format!("must be at least alpha ({})", w.alpha),
            ));
        }
        Ok(Some(w))
    }
}

//! `[[flow]] transport = "sctp"` and its `[flow.sctp]` table: an SCTP association (RFC
//! 4960, `hetpath_proto::sctp`) between the flow's two nodes, seed 001 section IV's
//! baseline. The defaults are seed 001's (`SctpConfig::default`): IP MTU 1282 bytes,
//! 600-byte DATA chunks, two per packet, 10 streams, RTO.Min 1 s, fast retransmit on
//! the third miss indication (RFC 4960; 4 is RFC 2960's).
//!
//! The flow's two machines (`SctpEndpoint`) are placed like the ideal protocol's, one on
//! each node, both reporting on the flow's stream. A sized flow's bytes go as messages of
//! `message` bytes (default: one full packet of chunks, 1200 bytes) on the streams in
//! turn, and the flow completes when every message is delivered and acknowledged; a bulk
//! flow sends forever.
//!
//! A web flow (`[flow.web]`, `sim/web_sctp.rs`) places its ends the other way round: the
//! browser's endpoint on `to` starts the association (as a browser opens its TCP
//! connections), the server's waits on `from`; both keep their messages for the web
//! wiring, which maps the browser's channel k to stream k.

use super::error::KeyError;
use super::spec::{FlowSpec, IpsecSpec, Transport};
use crate::rng;
use crate::sim::{node_addr, FlowId, NodeId, Simulation};
use crate::units::{Bytes, Duration};
use hetpath_proto::agent::{EspSpis, SctpEndpoint};
use hetpath_proto::sctp::{SctpConfig, SctpConfigError};
use hetpath_proto::{Dur, Endpoint, Time};
use rand_core::Rng as _;
use serde::Deserialize;

/// ESP's flat overhead on an SCTP flow with `ipsec = true`: seed 001 section IV's 18
/// bytes (8 header, 2 trailer, 8 authentication).
pub const DEFAULT_ESP_OVERHEAD: u32 = 18;
/// RFC 4960 section 6.2: the SACK delay "MUST NOT be more than 500 ms".
const MAX_SACK_DELAY: Dur = Dur::from_millis(500);

/// `[flow.sctp]`: every key optional, seed 001's values by default.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SctpSpec {
    /// Outbound and inbound streams (default 10).
    pub streams: Option<u16>,
    /// User data bytes per DATA chunk (default 600).
    pub chunk: Option<u32>,
    /// DATA chunks bundled per packet at most (default 2).
    pub chunks_per_packet: Option<u32>,
    /// Miss indications that trigger fast retransmit: 3 (RFC 4960, default) or 4 (RFC
    /// 2960).
    pub fast_rtx: Option<u32>,
    /// RTO.Min, RTO.Initial, RTO.Max (defaults 1 s, 3 s, 60 s).
    pub rto_min: Option<Duration>,
    pub rto_initial: Option<Duration>,
    pub rto_max: Option<Duration>,
    /// Delayed SACK timer (default 200 ms, at most 500 ms).
    pub sack_delay: Option<Duration>,
    /// Receive window, advertised as a_rwnd (default 64 KiB).
    pub rwnd: Option<Bytes>,
    /// Path MTU, IP header included (default 1282).
    pub mtu: Option<u32>,
    /// Bytes per message of a flow's source (default: chunk * chunks_per_packet).
    pub message: Option<Bytes>,
    /// Association.Max.Retrans and Max.Init.Retransmits (RFC 4960 section 15: 10 and 8):
    /// consecutive timeouts after which the association aborts.
    pub max_retrans: Option<u32>,
    pub max_init_retrans: Option<u32>,
}

/// An SCTP flow as configured: both ends' parameters but for their tags and TSNs, ESP,
/// and the source's message size.
#[derive(Debug, Clone)]
pub struct SctpFlow {
    cfg: SctpConfig,
    esp: bool,
    message: u64,
}

/// Checks the keys that belong to one transport (`[flow.sctp]` to SCTP, `cc` and
/// `[flow.tcp]` to TCP) and, for an SCTP flow, resolves its parameters.
pub fn flow(f: &FlowSpec) -> Result<Option<SctpFlow>, KeyError> {
    if f.transport != Transport::Sctp {
        return match f.sctp {
            Some(_) => Err(KeyError::new(
                "sctp",
                "an [flow.sctp] table needs transport = \"sctp\"",
            )),
            None => Ok(None),
        };
    }
    if f.cc.is_some() {
        return Err(KeyError::new(
            "cc",
            "not used by transport = \"sctp\" (its congestion control is RFC 4960's)",
        ));
    }
    if f.tcp.is_some() {
        return Err(KeyError::new(
            "tcp",
            "an [flow.tcp] table needs a TCP flow; use [flow.sctp] with transport = \"sctp\"",
        ));
    }
    let esp_overhead = esp_overhead(f.ipsec)?;
    let spec = f.sctp.clone().unwrap_or_default();
    spec.resolve(esp_overhead)
        .map(Some)
        .map_err(|e| e.under("sctp"))
}

/// ESP's overhead from the flow's `ipsec` key: 0 without, seed 001's 18 bytes by default.
fn esp_overhead(spec: Option<IpsecSpec>) -> Result<u32, KeyError> {
    match spec {
        None | Some(IpsecSpec::Enabled(false)) => Ok(0),
        Some(IpsecSpec::Enabled(true)) => Ok(DEFAULT_ESP_OVERHEAD),
        Some(IpsecSpec::Table(t)) if t.lift => Err(KeyError::new(
            "ipsec.lift",
            "LIFT needs TCP: it reads TCP ACKs (transport = \"tcp\")",
        )),
        Some(IpsecSpec::Table(t)) => match t.esp_overhead {
            None => Ok(DEFAULT_ESP_OVERHEAD),
            Some(n) if n >= 10 => Ok(n),
            Some(n) => Err(KeyError::new(
                "ipsec.esp_overhead",
                format!("{n} bytes is less than ESP's 8-byte header and 2-byte trailer"),
            )),
        },
    }
}

impl SctpSpec {
    /// The association's parameters over the defaults; errors name keys of this table.
    fn resolve(&self, esp_overhead: u32) -> Result<SctpFlow, KeyError> {
        let d = SctpConfig::default();
        let dur = |v: Option<Duration>, dft: Dur| v.map_or(dft, |x| x.0);
        let rwnd = match self.rwnd {
            None => d.rwnd,
            Some(Bytes(b)) => u32::try_from(b).map_err(|_| {
                KeyError::new("rwnd", format!("{b} bytes exceeds a_rwnd's 32 bits"))
            })?,
        };
        let cfg = SctpConfig {
            mtu: self.mtu.unwrap_or(d.mtu),
            esp_overhead,
            max_chunk_payload: self.chunk.unwrap_or(d.max_chunk_payload),
            chunks_per_packet: self.chunks_per_packet.unwrap_or(d.chunks_per_packet),
            rwnd,
            streams: self.streams.unwrap_or(d.streams),
            rto_initial: dur(self.rto_initial, d.rto_initial),
            rto_min: dur(self.rto_min, d.rto_min),
            rto_max: dur(self.rto_max, d.rto_max),
            sack_delay: dur(self.sack_delay, d.sack_delay),
            fast_rtx_threshold: self.fast_rtx.unwrap_or(d.fast_rtx_threshold),
            max_retrans: self.max_retrans.unwrap_or(d.max_retrans),
            max_init_retrans: self.max_init_retrans.unwrap_or(d.max_init_retrans),
            ..d
        };
        cfg.validate().map_err(|e| self.key_of(e))?;
        if cfg.sack_delay == Dur::ZERO || cfg.sack_delay > MAX_SACK_DELAY {
            return Err(KeyError::new(
                "sack_delay",
                "must be above 0 and at most 500ms (RFC 4960 section 6.2)",
            ));
        }
        // The sender asks the peer's window for room for a whole chunk (sctp/sender.rs).
        if (cfg.rwnd as u64) < cfg.chunk_payload() as u64 {
            return Err(KeyError::new(
                "rwnd",
                format!(
                    "{} bytes is less than one {}-byte chunk",
                    cfg.rwnd,
                    cfg.chunk_payload()
                ),
            ));
        }
        let message = match self.message {
            Some(Bytes(0)) => return Err(KeyError::new("message", "must be at least 1B")),
            Some(Bytes(b)) => b,
            None => cfg.chunk_payload() as u64 * cfg.chunks_per_packet as u64,
        };
        Ok(SctpFlow {
            cfg,
            esp: esp_overhead > 0,
            message,
        })
    }

    /// The key a configuration error is about.
    fn key_of(&self, e: SctpConfigError) -> KeyError {
        let key = match e {
            SctpConfigError::MtuTooSmall { .. } => "mtu",
            SctpConfigError::Zero("max_chunk_payload") => "chunk",
            SctpConfigError::Zero("fast_rtx_threshold") => "fast_rtx",
            SctpConfigError::Zero(name) => name,
            // Blame a key the user wrote where the order allows.
            SctpConfigError::RtoOrder { min, initial, .. } => {
                if min == Dur::ZERO || (min > initial && self.rto_initial.is_none()) {
                    "rto_min"
                } else if min > initial || self.rto_max.is_none() {
                    "rto_initial"
                } else {
                    "rto_max"
                }
            }
        };
        let message = match e {
            SctpConfigError::MtuTooSmall { mtu, overhead } => format!(
                "{mtu} bytes leaves no room for a DATA chunk after {overhead} bytes of IP, ESP \
                 and SCTP headers"
            ),
            SctpConfigError::Zero(_) => "must be at least 1".to_string(),
            SctpConfigError::RtoOrder { .. } => {
                "need 0 < rto_min <= rto_initial <= rto_max".to_string()
            }
        };
        KeyError::new(key, message)
    }
}

impl SctpFlow {
    /// The association's outbound (and inbound) streams.
    pub fn streams(&self) -> u16 {
        self.cfg.streams
    }

    /// Places a web flow's two ends: the browser's on `to`, which starts the association
    /// at `start`, and the server's on `from` (the web flow must be set on `f`).
    pub fn place_web(
        &self,
        sim: &mut Simulation,
        f: FlowId,
        name: &str,
        seed: u64,
        (from, to): (NodeId, NodeId),
        start: Time,
    ) {
        let (browser, server) = self.ends(f, name, seed, (to, from), start);
        let m_server = sim.add_machine(from, Vec::new(), Box::new(server.keep_messages(true)));
        sim.bind_stream(f, m_server);
        let m_browser = sim.add_machine(to, Vec::new(), Box::new(browser.keep_messages(true)));
        sim.bind_stream(f, m_browser);
        sim.set_web_port(f, m_server, m_browser);
    }

    /// Places the flow's two ends: the client on `from`, which starts the association at
    /// `start` and sends `size` bytes (`None`: forever), and the server on `to`. Each end
    /// gets its own Initiate Tag and initial TSN (RFC 4960 section 5.1 asks for random
    /// ones) from the run's seed and the flow's name (docs/architecture.md, convention 3).
    #[allow(clippy::too_many_arguments)]
    pub fn place(
        &self,
        sim: &mut Simulation,
        f: FlowId,
        name: &str,
        seed: u64,
        (from, to): (NodeId, NodeId),
        start: Time,
        size: Option<u64>,
    ) {
        let (source, sink) = self.ends(f, name, seed, (from, to), start);
        let m = sim.add_machine(
            from,
            Vec::new(),
            Box::new(source.with_source(size, self.message)),
        );
        sim.bind_stream(f, m);
        let m = sim.add_machine(to, Vec::new(), Box::new(sink));
        sim.bind_stream(f, m);
    }

    /// The active end on `from` (INIT at `start`) and the passive one on `to`.
    fn ends(
        &self,
        f: FlowId,
        name: &str,
        seed: u64,
        (from, to): (NodeId, NodeId),
        start: Time,
    ) -> (SctpEndpoint, SctpEndpoint) {
        let mut draws = rng::stream(seed, &format!("flow/{name}/sctp"));
        let mut side = || SctpConfig {
            initiate_tag: draws.next_u32().max(1),
            initial_tsn: draws.next_u32(),
            ..self.cfg
        };
        let (client_cfg, server_cfg) = (side(), side());
        let (client, server) = endpoints(f, from, to);
        let mut source = SctpEndpoint::connect(client_cfg, client, server, start);
        let mut sink = SctpEndpoint::accept(server_cfg, server, client);
        if self.esp {
            // SPIs of their own, apart from the TCP flows' (from 0x1000, sim/flows.rs).
            let spi = 0x5C00_0000 + 2 * f.0;
            source = source.with_esp(EspSpis {
                outbound: spi,
                inbound: spi + 1,
            });
            sink = sink.with_esp(EspSpis {
                outbound: spi + 1,
                inbound: spi,
            });
        }
        (source, sink)
    }
}

/// An SCTP flow's client and server endpoints; the ports only tell apart the flows
/// between the same two nodes.
fn endpoints(f: FlowId, from: NodeId, to: NodeId) -> (Endpoint, Endpoint) {
    let port = |base: u32| (base + f.0 % 25_000) as u16;
    (
        Endpoint {
            addr: node_addr(from),
            port: port(40_000),
        },
        Endpoint {
            addr: node_addr(to),
            port: port(5_000),
        },
    )
}

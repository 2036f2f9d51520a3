//! The scenario file as written: serde structures that mirror the TOML, with every table
//! rejecting unknown keys. `build.rs` turns a parsed file into a runnable simulation;
//! controllers (`cc.rs`) and machines (`machines.rs`) have their own tagged tables.

use super::cc::CcSpec;
use super::machines::AgentSpec;
use crate::channel::ChannelSpec;
use crate::units::{Bytes, Duration, QueueLimit, Rate};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub scenario: ScenarioSection,
    #[serde(default)]
    pub tcp: TcpSpec,
    #[serde(default, rename = "node")]
    pub nodes: Vec<NodeSpec>,
    #[serde(default, rename = "link")]
    pub links: Vec<LinkSpec>,
    #[serde(default, rename = "flow")]
    pub flows: Vec<FlowSpec>,
    /// Radio propagation for base stations and the mobile host (ns-2's defaults).
    pub radio: Option<RadioSpec>,
    #[serde(default, rename = "base_station")]
    pub base_stations: Vec<BaseStationSpec>,
    /// The mobile host (at most one per scenario).
    pub mobile: Option<MobileSpec>,
    /// In-network machines: split-connection PEPs and congestion-feedback routers.
    #[serde(default, rename = "agent")]
    pub agents: Vec<AgentSpec>,
    /// 802.11 WLANs: an access point and its stations on one medium.
    #[serde(default, rename = "wlan")]
    pub wlans: Vec<super::wlan::WlanSpec>,
}

/// `[radio]`: the path-loss model and the thresholds of `mobility::Radio`. `range` and
/// `warn_range` (metres) are a shorthand for the thresholds at those distances.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RadioSpec {
    pub model: Option<PathLossSpec>,
    pub tx_power_w: Option<f64>,
    pub frequency_hz: Option<f64>,
    pub antenna_height_m: Option<f64>,
    pub antenna_gain: Option<f64>,
    pub system_loss: Option<f64>,
    pub rx_threshold_w: Option<f64>,
    pub warn_threshold_w: Option<f64>,
    pub range: Option<f64>,
    pub warn_range: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathLossSpec {
    FreeSpace,
    TwoRay,
}

/// `[[base_station]]`: a node that serves the mobile host over the air and runs a
/// Mobile IP agent (home agent for the host's home station, foreign agent otherwise).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaseStationSpec {
    pub node: String,
    /// [x, y] in metres.
    pub position: [f64; 2],
}

/// `[mobile]`: the mobile host, its wireless link, how it moves and when it is cut off.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MobileSpec {
    pub node: String,
    /// The base station of its home network, where its home agent runs.
    pub home: String,
    /// The wireless hop to every base station.
    pub rate: Rate,
    pub delay: Duration,
    pub queue: Option<QueueLimit>,
    /// Where the path starts (default: the home station's position).
    pub position: Option<[f64; 2]>,
    /// When the host starts moving along `path`.
    pub depart: Option<Duration>,
    /// Waypoints; without them the host stays on its home station (or wherever its
    /// disconnections reattach it) and coverage plays no part.
    pub path: Option<Vec<WaypointSpec>>,
    /// Metres per second for the legs that give no speed of their own.
    pub speed: Option<f64>,
    /// Drive the path again and again (from its last waypoint back through the first)
    /// until the end of the run: a host shuttling between cells.
    #[serde(default)]
    pub repeat: bool,
    /// Mobile IP agent advertisement period (RFC 3344 section 2.2).
    pub advertise: Option<Duration>,
    /// The home agent's time to process a registration request before it binds and
    /// replies (RFC 3344 section 3.8; default 0: the messages' own path only).
    pub registration_delay: Option<Duration>,
    /// Scheduled disconnections of the link.
    pub disconnect: Option<DisconnectSpec>,
    /// What the host's hop to each base station is: a point-to-point link pair (`rate`,
    /// `delay`, `queue`; the default) or that station's 802.11 DCF medium.
    #[serde(default)]
    pub hop: MobileHop,
    /// With `hop = "wlan"`: the DCF of the base stations without a `[[wlan]]` of their own.
    pub wlan: Option<super::wlan::MobileWlanSpec>,
}

/// `[mobile] hop`: the mobile host's wireless hop to a base station.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MobileHop {
    /// A link pair per station, up while associated (seed 002's hop as hetpath first
    /// modelled it).
    #[default]
    Link,
    /// The station's 802.11 DCF medium (`crate::wlan`), the host one of its stations
    /// while associated.
    Wlan,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaypointSpec {
    pub to: [f64; 2],
    /// Metres per second (default: the `[mobile]` speed).
    pub speed: Option<f64>,
}

/// `count` disconnections of `duration`, the k-th at `first + k * every` plus a uniform
/// draw in [0, jitter) from the seed; each ends on the next station of `reattach`
/// (cycled), or on the station the host had.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DisconnectSpec {
    pub count: u32,
    pub duration: Duration,
    pub first: Duration,
    pub every: Option<Duration>,
    pub jitter: Option<Duration>,
    pub reattach: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSection {
    pub name: String,
    pub duration: Duration,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Period of the cwnd/queue time series.
    pub sample_interval: Option<Duration>,
    /// End the run as soon as every flow has completed or aborted, instead of at
    /// `duration` (which then is a horizon). Ignored while a bulk flow is present.
    #[serde(default)]
    pub stop_when_done: bool,
    /// Most time-series rows a run may keep (duration / sample_interval x (flows + link
    /// directions)); a larger run is an error up front, not an out-of-memory abort.
    pub max_samples: Option<u64>,
    /// Most events that may run at one instant before the run stops with an error naming
    /// what spins (`sim/watchdog.rs`).
    pub max_events_per_instant: Option<u64>,
    /// Free text: where the scenario comes from, what it reproduces.
    pub description: Option<String>,
}

fn default_seed() -> u64 {
    1
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
}

/// A scheduled outage of a link direction: down at `down`, up again at `up`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutageSpec {
    pub down: Duration,
    pub up: Duration,
}

/// Settings that may differ per direction; at link level they apply to both.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirSpec {
    pub rate: Option<Rate>,
    pub delay: Option<Duration>,
    pub queue: Option<QueueLimit>,
    pub channel: Option<ChannelSpec>,
    pub outages: Option<Vec<OutageSpec>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub name: String,
    pub a: String,
    pub b: String,
    // The settings for both directions (serde cannot flatten a DirSpec here and still
    // reject unknown keys).
    pub rate: Option<Rate>,
    pub delay: Option<Duration>,
    pub queue: Option<QueueLimit>,
    /// Multiplies both directions' queue limit (after `ab`/`ba`), rounded to a whole
    /// packet or byte: one key a sensitivity sweep can set over a grid whose points
    /// each give their own `queue`. Default 1.
    pub queue_scale: Option<f64>,
    pub channel: Option<ChannelSpec>,
    pub outages: Option<Vec<OutageSpec>>,
    /// Overrides for the a -> b direction.
    pub ab: Option<DirSpec>,
    /// Overrides for the b -> a direction.
    pub ba: Option<DirSpec>,
    /// What carries IP datagrams: "ip" (default: the link serialises whole packets) or
    /// "esw" (EuroSkyWay cells in TDMA frame units, with an optional ARQ: `[link.esw]`).
    #[serde(default)]
    pub layer: LinkLayer,
    /// Parameters of an ESW link (`layer = "esw"`).
    pub esw: Option<super::esw::EswSpec>,
}

/// A link's `layer`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkLayer {
    #[default]
    Ip,
    Esw,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    /// The controller: a name (`cc = "cubic"`) or a table with its parameters
    /// (`[flow.cc] name = "cubic", beta = 0.7`). Default: the profile's, else newreno.
    pub cc: Option<CcSpec>,
    pub start: Option<Duration>,
    /// Bytes to transfer; absent means a bulk (unlimited) transfer.
    pub size: Option<Bytes>,
    #[serde(default)]
    pub transport: Transport,
    pub tcp: Option<TcpSpec>,
    /// IPsec ESP between the two hosts: nothing on the path can read the TCP header.
    /// `true`, or a table (`IpsecTable`).
    pub ipsec: Option<IpsecSpec>,
    /// `[flow.web]`: web pages instead of `size` bytes; `from` serves, `to` browses
    /// (`scenario/web.rs`).
    pub web: Option<super::web::WebSpec>,
    /// SCTP's parameters (`transport = "sctp"`: `super::sctp`).
    pub sctp: Option<super::sctp::SctpSpec>,
}

/// `ipsec = true` or `ipsec = { esp_overhead = 18, lift = true }`.
#[derive(Debug, Clone, Copy)]
pub enum IpsecSpec {
    Enabled(bool),
    Table(IpsecTable),
}

// By hand rather than `untagged`, so that a bad key inside the table is named in the
// error instead of "did not match any variant".
impl<'de> Deserialize<'de> for IpsecSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = IpsecSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("true, false or a table { esp_overhead = 18, lift = true }")
            }
            fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<IpsecSpec, E> {
                Ok(IpsecSpec::Enabled(b))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<IpsecSpec, A::Error> {
                IpsecTable::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(IpsecSpec::Table)
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IpsecTable {
    /// Bytes ESP adds around the TCP segment, flat: header 8 + trailer 2 + ICV, no IV
    /// or padding (seed 001 section IV: 18). Default: RFC 4303 with AES-CBC and
    /// HMAC-SHA1-96 (IV 16, padding to 16-byte blocks, ICV 12). 10 to
    /// `MAX_ESP_OVERHEAD`; the upper bound is checked as it is read, for TCP and SCTP
    /// flows alike.
    #[serde(default, deserialize_with = "esp_overhead")]
    pub esp_overhead: Option<u32>,
    /// The receiving end (`to`, the browser of a web flow) runs MH-LIFT (seed 001):
    /// place a `lift-bs` agent on the gateway for it to work with.
    #[serde(default)]
    pub lift: bool,
    /// MH-LIFT's self-protection against a gateway that forwards every FrACK (seed 001
    /// section III; off unless given): `{ probes = 3, patience = "2s" }`.
    pub self_protection: Option<SelfProtectionSpec>,
}

/// `esp_overhead`, at most `MAX_ESP_OVERHEAD`: a larger value would make packet sizes
/// wrap. (The lower bound, 10, is checked with the flow, where the error can name it.)
fn esp_overhead<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let n = i64::deserialize(d)?;
    let max = super::build::MAX_ESP_OVERHEAD;
    match u32::try_from(n) {
        Ok(n) if n <= max => Ok(Some(n)),
        _ => Err(serde::de::Error::custom(format!(
            "esp_overhead = {n} is out of range; expected 10 (ESP's 8-byte header and 2-byte trailer) to {max} bytes"
        ))),
    }
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelfProtectionSpec {
    /// Window probes in a row without data that inhibit LIFT (default 3).
    pub probes: Option<u32>,
    /// Data this soon after inhibiting keeps LIFT off (default 2 s).
    pub patience: Option<Duration>,
}

/// What carries a flow's bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// A TCP connection (`cc` and `[flow.tcp]` apply).
    #[default]
    Tcp,
    /// The oracle upper bound of seed 003 section 6 (`hetpath_proto::agent::ideal`).
    Ideal,
    /// An SCTP association (RFC 4960; `[flow.sctp]` applies: `super::sctp`).
    Sctp,
}

impl LinkSpec {
    /// The settings of one direction: link-level values overridden by `ab` or `ba`.
    pub fn direction(&self, a_to_b: bool) -> DirSpec {
        let both = DirSpec {
            rate: self.rate,
            delay: self.delay,
            queue: self.queue,
            channel: self.channel.clone(),
            outages: self.outages.clone(),
        };
        both.overridden_by(if a_to_b {
            self.ab.as_ref()
        } else {
            self.ba.as_ref()
        })
    }
}

/// `delayed_ack = false` or `delayed_ack = { count = 2, timeout = "200ms" }`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
pub enum DelayedAckSpec {
    Enabled(bool),
    Params(DelayedAckParams),
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelayedAckParams {
    pub count: Option<u32>,
    pub timeout: Option<Duration>,
}

/// `abc = 2` (limit L in segments) or `abc = false` (per-ACK counting).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
pub enum AbcSpec {
    Enabled(bool),
    Limit(u32),
}

/// `iw = 3` (segments) or `iw = "bdp"` (the path's bandwidth-delay product).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IwSpec {
    Segments(u32),
    /// Bottleneck rate times the round-trip time of an empty path, rounded up to whole
    /// segments (TCP-radio, seed 003 Table 3; see `Simulation::path_bdp`).
    Bdp,
}

impl<'de> Deserialize<'de> for IwSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<IwSpec, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(i64),
            S(String),
        }
        let bad = || serde::de::Error::custom("expected a number of segments or \"bdp\"");
        match Raw::deserialize(d).map_err(|_| bad())? {
            Raw::N(n) => u32::try_from(n).map(IwSpec::Segments).map_err(|_| bad()),
            Raw::S(s) if s == "bdp" => Ok(IwSpec::Bdp),
            Raw::S(_) => Err(bad()),
        }
    }
}

/// How the RTO is computed from the RTT estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum RtoFormula {
    #[serde(rename = "rfc6298")]
    Rfc6298,
    #[serde(rename = "linux-2.2")]
    Linux22,
    #[serde(rename = "linux")]
    Linux,
}

/// `pacing = true` (Linux fq rates), `false`, or `"hybla"` (Hybla's packet spacing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum PacingSpec {
    Enabled(bool),
    Named(PacingName),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PacingName {
    Fq,
    Hybla,
}

/// `local_queue`: what a host's connection does when its first-hop queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LocalQueueSpec {
    Wait,
    Cwr,
    Drop,
}

/// `abc_counts`: what the `abc` byte count counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AbcCountsSpec {
    Acked,
    Delivered,
}

/// `exit_credit`: what the ACK ending fast recovery grows the window by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExitCreditSpec {
    None,
    Acked,
}

/// `ssthresh_from`: what a loss halves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SsthreshFromSpec {
    Flightsize,
    Pipe,
    Cwnd,
}

/// `recovery`: "rfc6675", "prr" (RFC 6937 with the slow-start bound) or "prr-crb".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoverySpec {
    Rfc6675,
    Prr,
    PrrCrb,
}

/// `lost_retransmit`: "timeout" or "rack" (`hetpath_proto::tcp::LostRetransmit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LostRetransmitSpec {
    Timeout,
    Rack,
}

/// `newreno_timer`: "slow-but-steady" or "impatient" (`hetpath_proto::tcp::NewRenoTimer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NewRenoTimerSpec {
    SlowButSteady,
    Impatient,
}

/// `quick_ack`: "off" or "linux" (`hetpath_proto::tcp::QuickAck`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuickAckSpec {
    Off,
    Linux,
}

/// `handshake_ack`: "piggyback" or "separate".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HandshakeAckSpec {
    Piggyback,
    Separate,
}

/// `zero_window`: "retransmit" or "freeze" (`hetpath_proto::tcp::ZeroWindow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZeroWindowSpec {
    Retransmit,
    Freeze,
}

/// `sack_resend`: "head" or "lost" (`hetpath_proto::tcp::SackResend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SackResendSpec {
    Head,
    Lost,
}

/// `hystart`: "off", "classic" (Linux CUBIC), "rfc9406" (HyStart++) or "ns3" (ns-3.44
/// `TcpCubic`'s own variant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HystartSpec {
    Off,
    Classic,
    Rfc9406,
    Ns3,
}

/// `initial_ssthresh = "64KB"` or `"inf"`.
#[derive(Debug, Clone, Copy)]
pub struct Ssthresh(pub u64);

impl<'de> Deserialize<'de> for Ssthresh {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Ssthresh, D::Error> {
        let s = String::deserialize(d)?;
        if matches!(s.as_str(), "inf" | "infinite" | "infinity") {
            return Ok(Ssthresh(u64::MAX));
        }
        s.parse::<Bytes>()
            .map(|b| Ssthresh(b.0))
            .map_err(serde::de::Error::custom)
    }
}

/// TCP settings; `[tcp]` gives defaults for every flow, `[flow.tcp]` overrides per flow.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// A named set of defaults (`profiles.rs`) that the other keys override.
    pub profile: Option<String>,
    pub mss: Option<u32>,
    /// Initial window in segments, or "bdp".
    pub iw: Option<IwSpec>,
    pub initial_ssthresh: Option<Ssthresh>,
    pub sack: Option<bool>,
    pub delayed_ack: Option<DelayedAckSpec>,
    pub quick_ack: Option<QuickAckSpec>,
    pub abc: Option<AbcSpec>,
    pub dupthresh: Option<u32>,
    pub initial_rto: Option<Duration>,
    pub min_rto: Option<Duration>,
    pub max_rto: Option<Duration>,
    pub rto_backoff: Option<bool>,
    /// "rfc6298" (default), "linux-2.2" (adds Linux 2.2's margin) or "linux" (the
    /// minimum bounds the variance term), see `tcp::RtoFormula`.
    pub rto_formula: Option<RtoFormula>,
    pub syn_retries: Option<u32>,
    pub data_retries: Option<u32>,
    pub recv_buffer: Option<Bytes>,
    /// How long a connection stays in TIME-WAIT (default 2 MSL = 240 s).
    pub time_wait: Option<Duration>,
    /// ILC-TCP: ask a State Manager on timeouts ("link-only", "link-ip" or "off").
    pub ilc: Option<IlcSpec>,
    /// ILC-TCP: what RESTORE resends: "go-back-n" (default) or "first-segment".
    pub ilc_restore: Option<RestoreSpec>,
    pub local_queue: Option<LocalQueueSpec>,
    pub pacing: Option<PacingSpec>,
    /// Pacing rate in percent of cwnd/srtt in slow start and after (Linux 200 and 120).
    pub pacing_ss_ratio: Option<u32>,
    pub pacing_ca_ratio: Option<u32>,
    pub ssthresh_from: Option<SsthreshFromSpec>,
    /// "acked" (RFC 3465) or "delivered" (RFC 6937 DeliveredData, as Linux and ns-3).
    pub abc_counts: Option<AbcCountsSpec>,
    /// "none" (the RFCs) or "acked" (ns-3: the bytes it cumulatively acknowledges).
    pub exit_credit: Option<ExitCreditSpec>,
    pub recovery: Option<RecoverySpec>,
    pub timestamps: Option<bool>,
    pub handshake_ack: Option<HandshakeAckSpec>,
    pub hystart: Option<HystartSpec>,
    pub cwnd_validation: Option<bool>,
    pub zero_window: Option<ZeroWindowSpec>,
    /// Bounds on the persist timer's interval (defaults 0 and 60 s: RTO-based, capped).
    pub persist_min: Option<Duration>,
    pub persist_max: Option<Duration>,
    pub sack_resend: Option<SackResendSpec>,
    pub rto_restart_on_resend: Option<bool>,
    pub lost_retransmit: Option<LostRetransmitSpec>,
    pub newreno_timer: Option<NewRenoTimerSpec>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RestoreSpec {
    GoBackN,
    FirstSegment,
}

/// Which layers ILC-TCP's State Manager hears (seed 002 section 3.3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IlcSpec {
    Off,
    LinkOnly,
    LinkIp,
}

impl TcpSpec {
    /// Keys set in `over` win; the rest come from `self`.
    pub fn overridden_by(&self, over: &TcpSpec) -> TcpSpec {
        TcpSpec {
            profile: over.profile.clone().or_else(|| self.profile.clone()),
            mss: over.mss.or(self.mss),
            iw: over.iw.or(self.iw),
            initial_ssthresh: over.initial_ssthresh.or(self.initial_ssthresh),
            sack: over.sack.or(self.sack),
            delayed_ack: over.delayed_ack.or(self.delayed_ack),
            quick_ack: over.quick_ack.or(self.quick_ack),
            abc: over.abc.or(self.abc),
            dupthresh: over.dupthresh.or(self.dupthresh),
            initial_rto: over.initial_rto.or(self.initial_rto),
            min_rto: over.min_rto.or(self.min_rto),
            max_rto: over.max_rto.or(self.max_rto),
            rto_backoff: over.rto_backoff.or(self.rto_backoff),
            rto_formula: over.rto_formula.or(self.rto_formula),
            syn_retries: over.syn_retries.or(self.syn_retries),
            data_retries: over.data_retries.or(self.data_retries),
            recv_buffer: over.recv_buffer.or(self.recv_buffer),
            time_wait: over.time_wait.or(self.time_wait),
            ilc: over.ilc.or(self.ilc),
            ilc_restore: over.ilc_restore.or(self.ilc_restore),
            local_queue: over.local_queue.or(self.local_queue),
            pacing: over.pacing.or(self.pacing),
            pacing_ss_ratio: over.pacing_ss_ratio.or(self.pacing_ss_ratio),
            pacing_ca_ratio: over.pacing_ca_ratio.or(self.pacing_ca_ratio),
            ssthresh_from: over.ssthresh_from.or(self.ssthresh_from),
            abc_counts: over.abc_counts.or(self.abc_counts),
            exit_credit: over.exit_credit.or(self.exit_credit),
            recovery: over.recovery.or(self.recovery),
            timestamps: over.timestamps.or(self.timestamps),
            handshake_ack: over.handshake_ack.or(self.handshake_ack),
            hystart: over.hystart.or(self.hystart),
            cwnd_validation: over.cwnd_validation.or(self.cwnd_validation),
            zero_window: over.zero_window.or(self.zero_window),
            persist_min: over.persist_min.or(self.persist_min),
            persist_max: over.persist_max.or(self.persist_max),
            sack_resend: over.sack_resend.or(self.sack_resend),
            rto_restart_on_resend: over.rto_restart_on_resend.or(self.rto_restart_on_resend),
            lost_retransmit: over.lost_retransmit.or(self.lost_retransmit),
            newreno_timer: over.newreno_timer.or(self.newreno_timer),
        }
    }
}

impl DirSpec {
    /// Keys set in `over` win; the rest come from `self`.
    pub fn overridden_by(&self, over: Option<&DirSpec>) -> DirSpec {
        let Some(o) = over else { return self.clone() };
        DirSpec {
            rate: o.rate.or(self.rate),
            delay: o.delay.or(self.delay),
            queue: o.queue.or(self.queue),
            channel: o.channel.clone().or_else(|| self.channel.clone()),
            outages: o.outages.clone().or_else(|| self.outages.clone()),
        }
    }
}

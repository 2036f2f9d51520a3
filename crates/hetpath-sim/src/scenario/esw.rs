//! `[link.esw]`: the parameters of a EuroSkyWay link (`layer = "esw"`, `crate::esw_link`),
//! defaults from seed 001 Table I, and their checks.

use super::error::KeyError;
use crate::channel::Channel;
use crate::esw_link::{EswLink, EswParams};
use crate::link::LinkParams;
use crate::units::{Bytes, Duration, QueueLimit, Rate};
use hetpath_proto::esw::{EswConfig, CELL_BYTES};
use hetpath_proto::Dur;
use serde::Deserialize;

/// TDMA frame (Table I).
pub const DEFAULT_FRAME: Dur = Dur::from_micros(26_500);

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EswSpec {
    /// Selective-Repeat ARQ (default true); false: cells are sent once (unreliable).
    pub arq: Option<bool>,
    /// TDMA frame duration (default 26.5 ms).
    pub frame: Option<Duration>,
    /// Frame units per frame, one 60-byte cell each (default: the link's `rate` in
    /// whole cells per frame, 19 at 344 kbit/s).
    pub frame_units: Option<u32>,
    /// ESW-ACK period (default 636 ms).
    pub tack: Option<Duration>,
    /// A cell no ESW-ACK covered is sent again after this (default 1.5 s, our choice).
    pub rtx_timeout: Option<Duration>,
    /// Data-link timeout (default 31.8 s).
    pub dl_timeout: Option<Duration>,
    /// ARQ transmit window on each side (default 1003.82 KB).
    pub tx_window: Option<Bytes>,
    /// One shadowing process for both directions (default true).
    pub shared_channel: Option<bool>,
}

/// The ESW link a `[[link]]` with `layer = "esw"` describes: its `[link.esw]` keys (or
/// their defaults) over its two directions' rates, delays and queue, with the directions'
/// channels (a -> b first).
pub fn link(
    spec: Option<&EswSpec>,
    ab: &LinkParams,
    ba: &LinkParams,
    channels: Vec<Box<dyn Channel>>,
) -> Result<EswLink, KeyError> {
    // The IP queue above the link, in packets (a byte limit counted in 1500-byte ones).
    let backlog = match ab.queue {
        QueueLimit::Packets(n) => n as usize,
        QueueLimit::Bytes(b) => (b / 1500).max(1) as usize,
    };
    let rates = [Rate(ab.rate_bps), Rate(ba.rate_bps)];
    let params = spec
        .cloned()
        .unwrap_or_default()
        .params(rates, [ab.delay, ba.delay], backlog)?;
    Ok(EswLink::new(params, channels))
}

impl EswSpec {
    /// The link's parameters. `rates` and `delays` are per direction (a -> b first);
    /// `backlog` is the IP queue above the link, in packets.
    pub fn params(
        &self,
        rates: [Rate; 2],
        delays: [Dur; 2],
        backlog: usize,
    ) -> Result<EswParams, KeyError> {
        let positive = |key: &str, d: Option<Duration>, default: Dur| match d {
            Some(Duration(d)) if d == Dur::ZERO => Err(KeyError::new(
                format!("esw.{key}"),
                "must be greater than zero",
            )),
            Some(Duration(d)) => Ok(d),
            None => Ok(default),
        };
        let dft = EswConfig::default();
        let frame = positive("frame", self.frame, DEFAULT_FRAME)?;
        let units = match self.frame_units {
            Some(0) => {
                return Err(KeyError::new(
                    "esw.frame_units",
                    "must be at least 1 (one 60-byte cell per frame unit)",
                ))
            }
            Some(n) => [n, n],
            None => {
                let per_frame = |r: Rate| {
                    let cells = r.0 as f64 * frame.as_secs_f64() / (CELL_BYTES * 8) as f64;
                    cells.round().max(1.0) as u32
                };
                [per_frame(rates[0]), per_frame(rates[1])]
            }
        };
        // The slot clock computes in 64 bits (`EswLink::slot_start`).
        if units
            .iter()
            .any(|&n| frame.0.checked_mul(n as u64).is_none())
        {
            return Err(KeyError::new(
                "esw.frame_units",
                format!(
                    "{} per frame is too many for a frame that long",
                    units[0].max(units[1])
                ),
            ));
        }
        let tx_window = match self.tx_window {
            Some(Bytes(b)) if b < CELL_BYTES as u64 => {
                return Err(KeyError::new(
                    "esw.tx_window",
                    format!("{b} bytes: must hold at least one {CELL_BYTES}-byte cell"),
                ))
            }
            Some(Bytes(b)) => b,
            None => dft.tx_window_bytes,
        };
        let dl_timeout = positive("dl_timeout", self.dl_timeout, dft.dl_timeout)?;
        let cfg = EswConfig {
            arq: self.arq.unwrap_or(dft.arq),
            tack: positive("tack", self.tack, dft.tack)?,
            rtx_timeout: positive("rtx_timeout", self.rtx_timeout, dft.rtx_timeout)?,
            dl_timeout,
            tx_window_bytes: tx_window,
            reassembly_timeout: dl_timeout,
        };
        Ok(EswParams {
            cfg,
            frame,
            units,
            delay: delays,
            backlog,
            shared_channel: self.shared_channel.unwrap_or(true),
        })
    }
}

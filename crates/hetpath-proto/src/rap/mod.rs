//! Router-assisted congestion control (seed 004 section II): what routers running XCP,
//! VCP or MPCP compute from their outgoing interface, and how a receiver echoes it. The
//! end-host controllers are in `cc` (`xcp`, `vcp`, `mpcp` and RAPPEP's `-pep` forms).

pub mod echo;
pub mod load;
pub mod xcp_router;

pub use echo::Echo;
pub use load::{load_code, load_of, LoadConfig, LoadMonitor};
pub use xcp_router::{XcpRouter, XcpRouterConfig};

use crate::cc::Feedback;
use crate::packet::RouterFeedback;

/// What a router (or a RAPPEP traffic monitor) can see of the outgoing interface it
/// watches, at the moment it looks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Iface {
    /// Capacity seen by IP, bit/s.
    pub rate_bps: u64,
    /// Bytes waiting in the queue (not counting the one being serialised).
    pub queue_bytes: u64,
    /// Bytes the interface has put on the wire so far (monotonic; counted as each
    /// packet starts serialisation).
    pub tx_bytes: u64,
}

/// Which traffic rate a router's estimator counts: the bytes offered to the queue (XCP,
/// VCP and MPCP routers) or the bytes the interface sent (RAPPEP's traffic monitor, seed
/// 004 section III-B: "RTM monitors the outgoing traffic rate instead of input").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RateMeasure {
    #[default]
    Arrivals,
    Departures,
}

/// The sender's reading of an echo carried on an ACK.
pub fn decode(fb: &RouterFeedback) -> Feedback {
    match *fb {
        RouterFeedback::Xcp(h) => Feedback::Window(h.feedback),
        RouterFeedback::Load { code, bits } => Feedback::Load(load_of(code, bits)),
    }
}

//! Router-assisted congestion control (seed 004 section II): what routers running XCP,
//! VCP or MPCP compute from their outgoing interface, and how a receiver echoes it. The
//! end-host controllers are in `cc` (`xcp`, `vcp`, `mpcp` and RAPPEP's `-pep` forms); the
//! echo (`Echo`) belongs to every receiving connection.

pub mod echo;
pub mod load;
pub mod xcp_router;

pub use echo::Echo;
pub use load::{load_code, load_of, LoadConfig, LoadMonitor};
pub use xcp_router::{XcpRouter, XcpRouterConfig};

pub use crate::iface::Iface;
use crate::packet::RouterFeedback;

/// Congestion feedback for router-assisted controllers (seed 004): decoded from the echo
/// on an ACK, or handed over by a RAPPEP machine from its local traffic monitor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Feedback {
    /// XCP: change the window by this many bytes.
    Window(i64),
    /// A load factor: demand over capacity (1.0 keeps the bottleneck exactly full).
    Load(f64),
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

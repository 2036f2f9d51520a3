//! APOHN (seed 000): a subnetwork layer under an unchanged TCP/IP stack. At the sender
//! node the protocol booster (`booster.rs`) turns TCP into a source the subnetwork layer
//! controls, and one SBP connection per destination station carries its datagrams
//! (`sender.rs`) by STP (`crate::stp`) over the satellite hop. The edge router
//! (`bridge.rs`) passes them onto the WLAN and confirms each from its MAC ACK (LLE-TCP),
//! and the station's sink (`sink.rs`) keeps its TCP ACKs off the shared medium.

pub mod booster;
pub mod bridge;
pub mod sender;
pub mod sink;
mod stp_end;
#[cfg(test)]
mod tests;
pub mod window;

pub use booster::{Booster, BoosterConfig, BoosterStats};
pub use bridge::{ApohnBridge, ApohnBridgeConfig};
pub use sender::{ApohnSender, ApohnSenderConfig};
pub use sink::LleSink;
pub use window::{Window, WindowConfig};

/// An SBP datagram's header ahead of the IP packet it carries: the datagram id and the
/// flow's QoS class (a choice: the seed gives no format; docs/model-notes.md).
pub const DATAGRAM_HEADER: u32 = 8;

//! The machines that are not a node's host, each on the contract of `machine`:
//! proxies that terminate connections, routers that compute congestion feedback,
//! cross-layer managers, Mobile IP agents, the ideal protocol, LIFT's gateway half and the
//! ends of an SCTP association. Each is one file; a
//! scenario places them on nodes through the registry in `hetpath-sim`'s `scenario`.

pub mod apohn;
pub mod ideal;
pub mod lift_bs;
#[cfg(test)]
mod lift_bs_tests;
pub mod mobile_ip;
pub mod rap_router;
pub mod sctp_endpoint;
pub mod split;
pub mod state_manager;

pub use apohn::{ApohnBridge, ApohnSender, LleSink};
pub use ideal::{IdealSink, IdealSource};
pub use lift_bs::{LiftBs, LiftBsConfig};
pub use mobile_ip::{MobileIpConfig, MobileNode, StationAgent};
pub use rap_router::{RapRouter, RouterKind};
pub use sctp_endpoint::{EspSpis, Message, SctpEndpoint};
pub use split::{SplitConfig, SplitPep};
pub use state_manager::{Collaboration, StateManager};

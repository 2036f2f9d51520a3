//! Mobility: where a mobile node is (`motion`), what it hears (`propagation`), and which
//! station it is associated with (`access`).

pub mod motion;
pub mod propagation;

pub use motion::{Motion, MotionError, Position};
pub use propagation::{PathLoss, Radio, RadioError};
pub mod access;

pub use access::{Access, Disconnection, Station};

use crate::ids::NodeId;

/// A mobile host: its node, its wireless access, and the station of its home network.
/// Its Mobile IP agents are machines on the nodes (`hetpath_proto::agent::mobile_ip`).
pub struct MobileHost {
    pub node: NodeId,
    pub access: Access,
    pub home: usize,
}

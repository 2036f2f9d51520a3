//! Mobility: where a mobile node is (`motion`) and what it hears (`propagation`).

pub mod motion;
pub mod propagation;

pub use motion::{Motion, Position};
pub use propagation::{PathLoss, Radio};
pub mod access;
pub mod mobile_ip;

pub use access::{Access, Disconnection, Station};
pub use mobile_ip::MobileIp;

/// A mobile host: its node, its wireless access and its Mobile IP machinery.
pub struct MobileHost {
    pub node: usize,
    pub access: Access,
    pub mip: MobileIp,
}

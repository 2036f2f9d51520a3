//! A node's cross-layer bus (seed 002 section 3.2): layers publish typed signals, and
//! agents on the node (ILC-TCP's State Managers) hear them. The bus remembers each
//! layer's latest report, so an agent created later starts from the current state.

use hetpath_proto::crosslayer::Signal;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeBus {
    pub link_ok: bool,
    pub ip_ok: bool,
}

impl Default for NodeBus {
    fn default() -> NodeBus {
        NodeBus {
            link_ok: true,
            ip_ok: true,
        }
    }
}

impl NodeBus {
    pub fn note(&mut self, s: Signal) {
        match s {
            Signal::LinkOk => self.link_ok = true,
            Signal::LinkNotOk => self.link_ok = false,
            Signal::IpOk => self.ip_ok = true,
            Signal::IpNotOk => self.ip_ok = false,
        }
    }
}

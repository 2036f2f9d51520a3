//! A router running XCP, VCP or MPCP on one outgoing interface (seed 004 section II): it
//! watches the packets routed there and writes its feedback into their headers. The
//! computation lives in `rap`; this machine only connects it to the forwarding path. It
//! watches its interface 0.

use crate::ids::IfaceId;
use crate::machine::{At, Counter, Hooks, Machine, NodeView, Verdict};
use crate::packet::{Body, Packet, RouterFeedback};
use crate::rap::{load_code, LoadMonitor, XcpRouter};
use crate::time::Time;

pub enum RouterKind {
    /// XCP's efficiency and fairness controllers (Katabi et al. section 3.5).
    Xcp(XcpRouter),
    /// A load-factor router: VCP (2-bit codes) or MPCP (2n-bit codes); the width comes
    /// with each packet.
    Load(LoadMonitor),
}

pub struct RapRouter {
    kind: RouterKind,
    /// Data segments whose feedback field it wrote.
    stamped: u64,
}

const WATCHED: IfaceId = IfaceId(0);

impl RapRouter {
    pub fn new(kind: RouterKind) -> RapRouter {
        RapRouter { kind, stamped: 0 }
    }
    pub fn kind(&self) -> &RouterKind {
        &self.kind
    }
}

impl Machine for RapRouter {
    fn hooks(&self) -> Hooks {
        Hooks {
            departure: true,
            ..Hooks::default()
        }
    }

    fn handle_packet(&mut self, now: Time, at: At, p: &mut Packet, node: &dyn NodeView) -> Verdict {
        let At::Departure(i) = at else {
            return Verdict::Pass;
        };
        let iface = node.iface(i);
        let size = p.size();
        if let RouterKind::Load(m) = &mut self.kind {
            m.on_packet(now, size, &iface); // every packet loads the link
        }
        let Body::Tcp(seg) = &mut p.body else {
            if let RouterKind::Xcp(r) = &mut self.kind {
                r.on_unmarked(now, size, &iface);
            }
            return Verdict::Pass;
        };
        // Only data carries a request; an ACK's field is the echo on its way back.
        match (&mut self.kind, seg.rap.as_deref_mut()) {
            (RouterKind::Xcp(r), Some(RouterFeedback::Xcp(h))) if seg.len > 0 => {
                self.stamped += 1;
                r.on_packet(now, size, h, &iface)
            }
            // Other traffic loads the link too (ns-2 xcpq.cc counts all input).
            (RouterKind::Xcp(r), _) => r.on_unmarked(now, size, &iface),
            (RouterKind::Load(m), Some(RouterFeedback::Load { code, bits })) if seg.len > 0 => {
                // VCP section 3.1: a router only raises the code to its own level.
                self.stamped += 1;
                *code = (*code).max(load_code(m.load(), *bits));
            }
            _ => {}
        }
        Verdict::Pass
    }

    fn poll_timeout(&self) -> Option<Time> {
        match &self.kind {
            RouterKind::Xcp(r) => r.poll_timeout(),
            RouterKind::Load(m) => m.poll_timeout(),
        }
    }

    fn handle_timeout(&mut self, now: Time, node: &dyn NodeView) {
        let iface = node.iface(WATCHED);
        match &mut self.kind {
            RouterKind::Xcp(r) => r.handle_timeout(now, &iface),
            RouterKind::Load(m) => m.handle_timeout(now, &iface),
        }
    }
    fn kind(&self) -> &'static str {
        match self.kind {
            RouterKind::Xcp(_) => "xcp-router",
            RouterKind::Load(_) => "load-router",
        }
    }
    fn counters(&self, out: &mut Vec<Counter>) {
        out.push(("segments_stamped", self.stamped));
    }
}

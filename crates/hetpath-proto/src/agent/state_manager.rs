//! ILC-TCP's State Manager (seed 002, Chinta and Helal, section 3.3.5, Figure 7): a layer
//! beside the stack that hears the link and IP layers and, when TCP times out, tells it
//! to FREEZE or to PROCEED_NORMALLY; a frozen TCP is registered and RESTOREd when the
//! layers it listens to are all OK again.
//!
//! One per node, on the node's bus: the layers' signals come in as `handle_signal`, TCP's
//! WHAT_SHOULD_TCP_DO as a `Signal::WhatShouldTcpDo`, and the answers (`Advise`,
//! `Restore`) go out as signals for the node's host.

use crate::crosslayer::{Advice, Signal};
use crate::ids::ConnId;
use crate::machine::{At, Counter, Event, Hooks, Machine, NodeView, Verdict};
use crate::packet::Packet;
use crate::time::Time;
use std::collections::VecDeque;

/// Which layers report to the State Manager (section 3.3.1, Figure 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collaboration {
    /// LINK_ONLY: the link layer alone (the paper's ILC-TCP1).
    LinkOnly,
    /// LINK_IP: the link and IP layers (ILC-TCP2).
    LinkIp,
}

#[derive(Clone, Debug)]
pub struct StateManager {
    mode: Collaboration,
    link_up: bool,
    ip_up: bool,
    /// TCP_REGISTERED of Figure 7: the frozen connections waiting for RESTORE.
    registered: Vec<ConnId>,
    out: VecDeque<Signal>,
    /// What it answered and sent: FREEZE, PROCEED NORMALLY, RESTORE.
    freezes: u64,
    proceeds: u64,
    restores: u64,
}

impl StateManager {
    /// A State Manager whose layers start in the given state.
    pub fn new(mode: Collaboration, link_up: bool, ip_up: bool) -> StateManager {
        StateManager {
            mode,
            link_up,
            ip_up,
            registered: Vec::new(),
            out: VecDeque::new(),
            freezes: 0,
            proceeds: 0,
            restores: 0,
        }
    }

    pub fn mode(&self) -> Collaboration {
        self.mode
    }
    pub fn link_up(&self) -> bool {
        self.link_up
    }
    pub fn ip_up(&self) -> bool {
        self.ip_up
    }

    fn all_up(&self) -> bool {
        match self.mode {
            Collaboration::LinkOnly => self.link_up,
            Collaboration::LinkIp => self.link_up && self.ip_up,
        }
    }

    /// Figure 7's `restore_if_needed`.
    fn restore_if_needed(&mut self) {
        if self.all_up() {
            for c in self.registered.drain(..) {
                self.restores += 1;
                self.out.push_back(Signal::Restore(c));
            }
        }
    }

    /// WHAT_SHOULD_TCP_DO. A FREEZE registers TCP for a later RESTORE. Figure 7 sets
    /// TCP_REGISTERED only in its LINK_IP branch, but section 3.3.5 says the State
    /// Manager "registers the TCP so that it can restore sometime later when the link
    /// becomes up again" under LINK_ONLY too, and Figure 7's `restore_if_needed` tests
    /// TCP_REGISTERED in both branches, so both register here (docs/model-notes.md).
    fn what_should_tcp_do(&mut self, c: ConnId) -> Advice {
        if self.all_up() {
            Advice::ProceedNormally
        } else {
            if !self.registered.contains(&c) {
                self.registered.push(c);
            }
            Advice::Freeze
        }
    }
}

impl Machine for StateManager {
    fn hooks(&self) -> Hooks {
        Hooks::default()
    }

    fn handle_packet(&mut self, _: Time, _: At, _: &mut Packet, _: &dyn NodeView) -> Verdict {
        Verdict::Pass
    }

    /// A layer's notification. LINK_OK and IP_OK run `restore_if_needed` (Figure 7).
    /// Under LINK_ONLY the IP signals are noted but never consulted.
    fn handle_signal(&mut self, _now: Time, s: Signal, _node: &dyn NodeView) {
        match s {
            Signal::LinkNotOk => self.link_up = false,
            Signal::IpNotOk => self.ip_up = false,
            Signal::LinkOk => {
                self.link_up = true;
                self.restore_if_needed();
            }
            Signal::IpOk => {
                self.ip_up = true;
                self.restore_if_needed();
            }
            Signal::WhatShouldTcpDo(c) => {
                let advice = self.what_should_tcp_do(c);
                match advice {
                    Advice::Freeze => self.freezes += 1,
                    _ => self.proceeds += 1,
                }
                self.out.push_back(Signal::Advise(c, advice));
            }
            _ => {}
        }
    }

    fn poll_event(&mut self) -> Option<Event> {
        self.out.pop_front().map(Event::Signal)
    }
    fn kind(&self) -> &'static str {
        "state-manager"
    }
    fn counters(&self, out: &mut Vec<Counter>) {
        out.extend([
            ("advised_freeze", self.freezes),
            ("advised_proceed", self.proceeds),
            ("restores", self.restores),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::NoNode;
    use Signal::*;

    const C: ConnId = ConnId(3);

    fn hear(sm: &mut StateManager, s: Signal) -> Vec<Signal> {
        sm.handle_signal(Time::ZERO, s, &NoNode);
        std::iter::from_fn(|| sm.poll_event())
            .map(|e| match e {
                Event::Signal(s) => s,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn link_only_freezes_on_link_down_and_restores_on_link_ok() {
        let mut sm = StateManager::new(Collaboration::LinkOnly, true, true);
        assert_eq!(
            hear(&mut sm, WhatShouldTcpDo(C)),
            [Advise(C, Advice::ProceedNormally)]
        );
        hear(&mut sm, LinkNotOk);
        assert_eq!(
            hear(&mut sm, WhatShouldTcpDo(C)),
            [Advise(C, Advice::Freeze)]
        );
        // Not consulted under LINK_ONLY.
        assert_eq!(hear(&mut sm, IpNotOk), []);
        assert_eq!(hear(&mut sm, LinkOk), [Restore(C)]);
        assert_eq!(hear(&mut sm, LinkOk), [], "a RESTORE is sent once");
        assert_eq!(
            hear(&mut sm, WhatShouldTcpDo(C)),
            [Advise(C, Advice::ProceedNormally)]
        );
    }

    #[test]
    fn link_ip_waits_for_both_layers() {
        let mut sm = StateManager::new(Collaboration::LinkIp, true, true);
        hear(&mut sm, LinkNotOk);
        hear(&mut sm, IpNotOk);
        assert_eq!(
            hear(&mut sm, WhatShouldTcpDo(C)),
            [Advise(C, Advice::Freeze)]
        );
        assert_eq!(hear(&mut sm, LinkOk), [], "IP is not back yet");
        assert_eq!(
            hear(&mut sm, WhatShouldTcpDo(C)),
            [Advise(C, Advice::Freeze)]
        );
        assert_eq!(hear(&mut sm, IpOk), [Restore(C)]);
        assert_eq!(
            hear(&mut sm, WhatShouldTcpDo(C)),
            [Advise(C, Advice::ProceedNormally)]
        );
    }

    #[test]
    fn every_frozen_connection_is_restored_and_no_restore_without_a_freeze() {
        let mut sm = StateManager::new(Collaboration::LinkIp, false, true);
        assert_eq!(hear(&mut sm, LinkOk), []);
        hear(&mut sm, LinkNotOk);
        hear(&mut sm, WhatShouldTcpDo(ConnId(1)));
        hear(&mut sm, WhatShouldTcpDo(ConnId(2)));
        assert_eq!(
            hear(&mut sm, LinkOk),
            [Restore(ConnId(1)), Restore(ConnId(2))]
        );
    }
}

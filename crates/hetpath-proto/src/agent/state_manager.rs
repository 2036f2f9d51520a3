//! ILC-TCP's State Manager (seed 002, Chinta and Helal, section 3.3.5, Figure 7): a layer
//! beside the stack that hears the link and IP layers and, when TCP times out, tells it
//! to FREEZE or to PROCEED_NORMALLY; a frozen TCP is registered and RESTOREd when the
//! layers it listens to are all OK again.

use crate::crosslayer::{Advice, Signal};

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
    /// TCP_REGISTERED of Figure 7: a frozen TCP waits for RESTORE.
    registered: bool,
    restore_due: bool,
}

impl StateManager {
    /// A State Manager whose layers start in the given state.
    pub fn new(mode: Collaboration, link_up: bool, ip_up: bool) -> StateManager {
        StateManager {
            mode,
            link_up,
            ip_up,
            registered: false,
            restore_due: false,
        }
    }

    pub fn mode(&self) -> Collaboration {
        self.mode
    }

    /// A layer's notification. LINK_OK and IP_OK run `restore_if_needed` (Figure 7).
    /// Under LINK_ONLY the IP signals are noted but never consulted.
    pub fn handle_signal(&mut self, s: Signal) {
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
        }
    }

    fn all_up(&self) -> bool {
        match self.mode {
            Collaboration::LinkOnly => self.link_up,
            Collaboration::LinkIp => self.link_up && self.ip_up,
        }
    }

    fn restore_if_needed(&mut self) {
        if self.registered && self.all_up() {
            self.registered = false;
            self.restore_due = true;
        }
    }

    /// WHAT_SHOULD_TCP_DO. A FREEZE registers TCP for a later RESTORE. Figure 7 sets
    /// TCP_REGISTERED only in its LINK_IP branch, but section 3.3.5 says the State
    /// Manager "registers the TCP so that it can restore sometime later when the link
    /// becomes up again" under LINK_ONLY too, and Figure 7's `restore_if_needed` tests
    /// TCP_REGISTERED in both branches, so both register here (docs/model-notes.md).
    pub fn what_should_tcp_do(&mut self) -> Advice {
        if self.all_up() {
            Advice::ProceedNormally
        } else {
            self.registered = true;
            Advice::Freeze
        }
    }

    /// Whether a RESTORE is due for the registered TCP (taken once).
    pub fn poll_restore(&mut self) -> bool {
        std::mem::take(&mut self.restore_due)
    }

    pub fn link_up(&self) -> bool {
        self.link_up
    }
    pub fn ip_up(&self) -> bool {
        self.ip_up
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Signal::*;

    #[test]
    fn link_only_freezes_on_link_down_and_restores_on_link_ok() {
        let mut sm = StateManager::new(Collaboration::LinkOnly, true, true);
        assert_eq!(sm.what_should_tcp_do(), Advice::ProceedNormally);
        sm.handle_signal(LinkNotOk);
        assert_eq!(sm.what_should_tcp_do(), Advice::Freeze);
        sm.handle_signal(IpNotOk); // not consulted under LINK_ONLY
        assert!(!sm.poll_restore());
        sm.handle_signal(LinkOk);
        assert!(sm.poll_restore());
        assert!(!sm.poll_restore(), "a RESTORE is sent once");
        assert_eq!(sm.what_should_tcp_do(), Advice::ProceedNormally);
    }

    #[test]
    fn link_ip_waits_for_both_layers() {
        let mut sm = StateManager::new(Collaboration::LinkIp, true, true);
        sm.handle_signal(LinkNotOk);
        sm.handle_signal(IpNotOk);
        assert_eq!(sm.what_should_tcp_do(), Advice::Freeze);
        sm.handle_signal(LinkOk);
        assert!(!sm.poll_restore(), "IP is not back yet");
        assert_eq!(sm.what_should_tcp_do(), Advice::Freeze);
        sm.handle_signal(IpOk);
        assert!(sm.poll_restore());
        assert_eq!(sm.what_should_tcp_do(), Advice::ProceedNormally);
    }

    #[test]
    fn no_restore_without_a_freeze() {
        let mut sm = StateManager::new(Collaboration::LinkIp, false, true);
        sm.handle_signal(LinkOk);
        assert!(!sm.poll_restore());
    }
}

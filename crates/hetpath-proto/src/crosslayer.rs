//! Cross-layer signals: what the layers of one node tell each other outside the packet
//! path. A node's bus carries them (`hetpath-sim`'s `bus`); agents such as ILC-TCP's State
//! Manager listen. Kept small and typed so that LIFT and APOHN can add their own.

/// A layer's report about its own state (seed 002 section 3.3, Figures 4 and 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Signal {
    /// The link is good again after a problem (Figure 4).
    LinkOk,
    /// The link is failing: a disconnection is impending or has happened (Figure 4).
    LinkNotOk,
    /// IP-level connectivity is stable: at home, or registered with a foreign agent
    /// (Figure 5).
    IpOk,
    /// Away from home and not registered: packets toward the host may be lost.
    IpNotOk,
}

/// What TCP is told to do on a retransmission timeout (seed 002 section 3.3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    /// Nothing known: behave as standard TCP.
    ProceedNormally,
    /// Keep the window and the timer as they are and send nothing until RESTORE.
    Freeze,
}

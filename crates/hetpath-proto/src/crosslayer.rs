//! Cross-layer signals: what the layers and machines of one node tell each other outside
//! the packet path. The driver carries every signal a machine emits (or a link layer
//! reports) to the other machines on the same node: the node's bus. Kept small and typed
//! so that LIFT and APOHN can add their own.

use crate::ids::ConnId;

/// A layer's report about its own state, or a message between a node's machines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Signal {
    /// The link is good again after a problem (seed 002 section 3.3, Figure 4).
    LinkOk,
    /// The link is failing: a disconnection is impending or has happened (Figure 4).
    LinkNotOk,
    /// IP-level connectivity is stable: at home, or registered with a foreign agent
    /// (Figure 5).
    IpOk,
    /// Away from home and not registered: packets toward the host may be lost.
    IpNotOk,
    /// The node's wireless interface associated with a base station (802.11
    /// MLME-ASSOCIATE.indication); reported by the driver, which owns association.
    Associated,
    /// It lost its association (a handoff or a disconnection).
    Disassociated,
    /// ILC-TCP: a connection of the node's host timed out and asks WHAT_SHOULD_TCP_DO
    /// (seed 002 Figure 6). The node's State Manager answers with `Advise`.
    WhatShouldTcpDo(ConnId),
    /// The State Manager's answer to `WhatShouldTcpDo`.
    Advise(ConnId, Advice),
    /// RESTORE a frozen connection (seed 002 Figure 7, `restore_if_needed`).
    Restore(ConnId),
}

/// What TCP is told to do on a retransmission timeout (seed 002 section 3.3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Advice {
    /// Nothing known: behave as standard TCP.
    ProceedNormally,
    /// Keep the window and the timer as they are and send nothing until RESTORE.
    Freeze,
}

//! TCP as a sans-IO machine: configuration, RTT estimation, the sender's scoreboard and
//! loss recovery, the receiver, and the connection state machine that joins them.

mod config;
mod connection;
mod cwnd_usage;
mod freeze;
mod pacing;
mod prr;
mod receiver;
mod recovery;
mod report;
mod rtt;
mod scoreboard;
mod sender;

pub use crate::packet::Endpoint;
pub use config::{
    AbcCounts, DelayedAck, ExitCredit, HandshakeAck, LostRetransmit, NewRenoTimer, Pacing,
    QuickAck, Recovery, RtoConfig, RtoFormula, SackResend, SsthreshFrom, TcpConfig, ZeroWindow,
};
pub use connection::{Connection, Event, State};
pub use freeze::RestoreMode;
pub use receiver::Receiver;
pub use recovery::{AckInput, AckOutcome};
pub use report::ConnReport;
pub use rtt::RttEstimator;
pub use scoreboard::Scoreboard;
pub use sender::{Expiry, Outgoing, RecoveryMode, Sender, SenderStats};

#[cfg(test)]
mod tests;

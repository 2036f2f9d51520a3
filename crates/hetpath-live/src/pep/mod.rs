//! `hetpath-live pep`: a transparent split-connection PEP daemon (docs/live.md, "The
//! PEP"). Sans IO: `ring` (a connection's bounded buffer) and `relay` (the byte pump
//! between a connection's two legs, `SplitPep`'s rules on real sockets), `page_buf` (a
//! buffer's pages, mapped only while it holds bytes) and `memory_budget`
//! (`memory_limit`), `config` (the TOML file), `matching` (`[match]`: the allow list,
//! its exceptions and deny entries), `rules` (the nftables TPROXY table, programmed over
//! netlink by `rules::nftnl`, and the policy routing it installs), `metrics` (counters
//! and their Prometheus text, served by `metrics_http`); gateway mode (docs/live.md,
//! "Gateway mode"): `frame` (what a datagram carries), `seal` (a session's AEAD),
//! `handshake` (Noise NNpsk0 through snow), `session` (sessions, re-keys, restarts),
//! `keyrng` (the core's seeded randomness), `replay` (the replay window), `tcpseg` (a
//! satellite-leg segment in a frame), `stream` (the byte adapter beside hetpath-proto's
//! byte-counting TCP), `gateway` (the gateway core). Linux: `sock` (transparent
//! sockets, `TCP_CONGESTION`, `TCP_INFO`), `daemon` (integrated mode's epoll loop),
//! `gateway_daemon` and `timer` (gateway mode's), `cli`; the limits both loops share:
//! `accept` (accepting when descriptors run out), `per_source` (connections per client
//! address), `nofile` (`RLIMIT_NOFILE` against the cap).

#[cfg(target_os = "linux")]
pub mod accept;
#[cfg(target_os = "linux")]
pub mod admission;
#[cfg(target_os = "linux")]
pub mod cli;
pub mod config;
#[cfg(target_os = "linux")]
pub mod daemon;
pub mod frame;
pub mod gateway;
#[cfg(target_os = "linux")]
pub mod gateway_daemon;
pub mod gateway_types;
pub mod handshake;
pub mod keyrng;
pub mod log;
pub mod matching;
pub mod memory_budget;
pub mod metrics;
#[cfg(target_os = "linux")]
pub mod metrics_http;
pub mod monitor;
#[cfg(target_os = "linux")]
pub mod nofile;
pub mod page_buf;
#[cfg(target_os = "linux")]
pub mod per_source;
pub mod relay;
pub mod replay;
pub mod ring;
pub mod rules;
pub mod seal;
pub mod session;
#[cfg(target_os = "linux")]
pub mod sock;
pub mod stream;
pub mod tcpseg;
#[cfg(target_os = "linux")]
pub mod timer;

#[cfg(test)]
mod proptests;

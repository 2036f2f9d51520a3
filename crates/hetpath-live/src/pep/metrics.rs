//! The PEP's counters, shared between the relay loop (which writes them) and the metrics
//! endpoint (which reads them), and their Prometheus text exposition (format 0.0.4),
//! served by `metrics_http`.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// Leg index as `relay::Side::index`: 0 the client's, 1 the server's.
pub const LEGS: [&str; 2] = ["client", "server"];

#[derive(Default)]
pub struct Metrics {
    pub active: AtomicU64,
    pub accepted: AtomicU64,
    pub completed: AtomicU64,
    pub reset: AtomicU64,
    pub rejected_cap: AtomicU64,
    pub rejected_unmatched: AtomicU64,
    pub connect_failed: AtomicU64,
    /// Bytes read from each leg.
    pub bytes_in: [AtomicU64; 2],
    /// Bytes written to each leg.
    pub bytes_out: [AtomicU64; 2],
    /// Retransmitted segments of closed connections, per leg (`TCP_INFO`).
    pub retrans_closed: [AtomicU64; 2],
    /// Retransmitted segments of open connections, per leg, as last sampled.
    pub retrans_open: [AtomicU64; 2],
    /// Bytes held in the relay rings now, and the most they could hold.
    pub buffered: AtomicU64,
    pub buffer_limit: AtomicU64,
    /// The most ever held at once.
    pub buffered_peak: AtomicU64,
    /// Gateway mode: the satellite leg (hetpath-proto's TCP over sealed datagrams).
    pub gateway: AtomicBool,
    /// Segments the satellite leg's connections retransmitted (their `SenderStats`).
    pub sat_retransmissions: AtomicU64,
    /// Datagrams sent to and received from the peer, and received ones rejected
    /// (forged, replayed, of a session not held, malformed).
    pub sat_datagrams_out: AtomicU64,
    pub sat_datagrams_in: AtomicU64,
    pub sat_datagrams_rejected: AtomicU64,
    pub sat_bytes_out: AtomicU64,
    pub sat_bytes_in: AtomicU64,
    /// Times the peer gateway restarted (a session with a new boot id).
    pub peer_restarts: AtomicU64,
    /// Handshakes (`session.rs`): sessions confirmed, messages that failed to
    /// authenticate or went unanswered, recorded INITs refused, INITs over the rate limit.
    pub handshakes: AtomicU64,
    pub handshake_failures: AtomicU64,
    pub handshakes_replayed: AtomicU64,
    pub handshakes_limited: AtomicU64,
    /// Datagrams of a session this gateway does not hold (a peer on a stale session).
    pub stale_datagrams: AtomicU64,
    /// Of `rejected_unmatched`, connections a `match.deny` entry refused.
    pub denied: AtomicU64,
    /// Bytes mapped for the relay buffers now (`page_buf.rs`), the budget
    /// (`memory_limit`), and connections refused because it was reached.
    pub memory: AtomicU64,
    pub memory_limit: AtomicU64,
    pub rejected_memory: AtomicU64,
    /// Connections reset because their source held `max_connections_per_source`.
    pub rejected_per_source: AtomicU64,
    /// Clients reset because the daemon was out of file descriptors (EMFILE, ENFILE).
    pub rejected_descriptors: AtomicU64,
    /// Connections reset after `idle_timeout` without a byte moved either way.
    pub idle_timeouts: AtomicU64,
    /// Metrics requests closed unanswered: past their deadline, or over the bound held.
    pub scrapes_dropped: AtomicU64,
}

impl Metrics {
    pub fn new() -> Arc<Metrics> {
        Arc::new(Metrics::default())
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, rows: &[(&str, u64)]| {
            let _ = writeln!(
                s,
                "# HELP hetpath_pep_{name} {help}\n# TYPE hetpath_pep_{name} {kind}"
            );
            for (labels, v) in rows {
                let _ = writeln!(s, "hetpath_pep_{name}{labels} {v}");
            }
        };
        let g = |a: &AtomicU64| a.load(Relaxed);
        metric(
            "connections_active",
            "gauge",
            "Connections being relayed.",
            &[("", g(&self.active))],
        );
        metric(
            "connections_total",
            "counter",
            "Connections by outcome: accepted, then completed (FINs both ways) or reset; or refused.",
            &[
                ("{outcome=\"accepted\"}", g(&self.accepted)),
                ("{outcome=\"completed\"}", g(&self.completed)),
                ("{outcome=\"reset\"}", g(&self.reset)),
                ("{outcome=\"rejected_cap\"}", g(&self.rejected_cap)),
                ("{outcome=\"rejected_unmatched\"}", g(&self.rejected_unmatched)),
                ("{outcome=\"connect_failed\"}", g(&self.connect_failed)),
            ],
        );
        let per_leg = |a: &[AtomicU64; 2], dir: &str| -> Vec<(String, u64)> {
            (0..2)
                .map(|i| {
                    (
                        format!("{{leg=\"{}\",direction=\"{dir}\"}}", LEGS[i]),
                        g(&a[i]),
                    )
                })
                .collect()
        };
        let mut bytes = per_leg(&self.bytes_in, "in");
        bytes.extend(per_leg(&self.bytes_out, "out"));
        let rows: Vec<(&str, u64)> = bytes.iter().map(|(l, v)| (l.as_str(), *v)).collect();
        metric(
            "bytes_total",
            "counter",
            "Bytes read from (in) and written to (out) each leg.",
            &rows,
        );
        let retrans: Vec<(String, u64)> = (0..2)
            .map(|i| {
                (
                    format!("{{leg=\"{}\"}}", LEGS[i]),
                    g(&self.retrans_closed[i]) + g(&self.retrans_open[i]),
                )
            })
            .collect();
        let gateway = self.gateway.load(Relaxed);
        let mut rows: Vec<(&str, u64)> = retrans.iter().map(|(l, v)| (l.as_str(), *v)).collect();
        if gateway {
            rows.push(("{leg=\"satellite\"}", g(&self.sat_retransmissions)));
        }
        metric(
            "retransmissions_total",
            "counter",
            "Segments the PEP retransmitted on each leg (kernel TCP_INFO, open connections as last sampled; the satellite leg's hetpath-proto TCP in gateway mode).",
            &rows,
        );
        if gateway {
            metric(
                "satellite_datagrams_total",
                "counter",
                "Sealed datagrams sent to (out) and received from (in) the peer gateway, and received ones rejected (forged, replayed, stale, malformed).",
                &[
                    ("{direction=\"out\"}", g(&self.sat_datagrams_out)),
                    ("{direction=\"in\"}", g(&self.sat_datagrams_in)),
                    ("{direction=\"rejected\"}", g(&self.sat_datagrams_rejected)),
                ],
            );
            metric(
                "satellite_bytes_total",
                "counter",
                "UDP payload bytes sent to (out) and received from (in) the peer gateway.",
                &[
                    ("{direction=\"out\"}", g(&self.sat_bytes_out)),
                    ("{direction=\"in\"}", g(&self.sat_bytes_in)),
                ],
            );
            metric(
                "peer_restarts_total",
                "counter",
                "Times the peer gateway restarted (a session with a new boot id); each reset every connection.",
                &[("", g(&self.peer_restarts))],
            );
            metric(
                "handshakes_total",
                "counter",
                "Noise handshakes by outcome: completed (session confirmed), failed (did not authenticate, or unanswered), replayed (an INIT of a handshake already done), rate_limited.",
                &[
                    ("{outcome=\"completed\"}", g(&self.handshakes)),
                    ("{outcome=\"failed\"}", g(&self.handshake_failures)),
                    ("{outcome=\"replayed\"}", g(&self.handshakes_replayed)),
                    ("{outcome=\"rate_limited\"}", g(&self.handshakes_limited)),
                ],
            );
            metric(
                "stale_session_datagrams_total",
                "counter",
                "Datagrams of a session this gateway does not hold: the peer is on a stale session (one of them restarted), or a recording was replayed.",
                &[("", g(&self.stale_datagrams))],
            );
        }
        metric(
            "buffer_bytes",
            "gauge",
            "Bytes held in the relay buffers.",
            &[("", g(&self.buffered))],
        );
        metric(
            "buffer_peak_bytes",
            "gauge",
            "The most bytes ever held in the relay buffers at once.",
            &[("", g(&self.buffered_peak))],
        );
        metric(
            "buffer_limit_bytes",
            "gauge",
            "The most the relay buffers of the open connections can hold.",
            &[("", g(&self.buffer_limit))],
        );
        metric(
            "denied_total",
            "counter",
            "Connections a match.deny entry refused with a reset (also counted as rejected_unmatched).",
            &[("", g(&self.denied))],
        );
        metric(
            "memory_bytes",
            "gauge",
            "Bytes mapped for the relay buffers now (pages are mapped when bytes need them and unmapped when idle).",
            &[("", g(&self.memory))],
        );
        metric(
            "memory_limit_bytes",
            "gauge",
            "The relay buffers' memory budget (memory_limit).",
            &[("", g(&self.memory_limit))],
        );
        metric(
            "rejected_memory_total",
            "counter",
            "Connections reset at accept because the open connections' worst case and theirs would pass memory_limit.",
            &[("", g(&self.rejected_memory))],
        );
        metric(
            "connections_limited_total",
            "counter",
            "Connections reset at admission by a limit: per_source (max_connections_per_source), descriptors (out of file descriptors).",
            &[
                ("{limit=\"per_source\"}", g(&self.rejected_per_source)),
                ("{limit=\"descriptors\"}", g(&self.rejected_descriptors)),
            ],
        );
        metric(
            "idle_timeouts_total",
            "counter",
            "Connections reset on both legs after idle_timeout without a byte moved either way (also counted as reset).",
            &[("", g(&self.idle_timeouts))],
        );
        metric(
            "scrapes_dropped_total",
            "counter",
            "Metrics requests closed unanswered: incomplete at their deadline, or over the number held at once.",
            &[("", g(&self.scrapes_dropped))],
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_has_a_type_for_every_sample() {
        let m = Metrics::default();
        m.bytes_in[1].store(42, Relaxed);
        let t = m.render();
        assert!(
            t.contains("hetpath_pep_bytes_total{leg=\"server\",direction=\"in\"} 42\n"),
            "{t}"
        );
        for line in t.lines().filter(|l| !l.starts_with('#')) {
            let name = line.split(['{', ' ']).next().unwrap();
            assert!(t.contains(&format!("# TYPE {name} ")), "{name} has no TYPE");
        }
    }
}

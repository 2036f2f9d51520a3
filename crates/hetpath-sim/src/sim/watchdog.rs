//! The progress watchdog. A run whose simulated time stops advancing (a machine that arms
//! its timer for `now` every time it is woken, two machines answering each other at one
//! instant) would never end and say nothing. The run loop compares the clock at its
//! progress checks, every `PROGRESS_EVENTS` events, so the watchdog costs nothing per
//! event: when more than `max_events_per_instant` events have run without the clock
//! moving, the run stops with `RunError::Stalled`, naming what kept running.

use super::{DirId, Ev, FlowId, MachineId, Simulation};
use hetpath_proto::{ConnId, Time};
use std::fmt;

/// Events that may run at one instant before the run is stopped
/// (`[scenario] max_events_per_instant`). Flows starting together take about one event
/// each at that instant (20,000 flows at t = 0 on one host: 20,001), so bursts of
/// hundreds of thousands pass; a zero-time loop is stopped after a fraction of a second
/// (at 5 to 10 million events a second; longer if each of its events is slow).
pub const DEFAULT_MAX_EVENTS_PER_INSTANT: u64 = 1_000_000;

/// Events run and tallied after a stall is found, to name what spins.
const DIAGNOSED_EVENTS: u32 = 4096;

/// The spinners named in the error, most active first.
const NAMED: usize = 3;

/// Why a run could not go on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Stalled(Stall),
    /// A host has every ephemeral port in use toward one endpoint (the message names it).
    #[error("{0}")]
    PortsExhausted(String),
}

/// Simulated time stopped advancing.
#[derive(Debug, Clone, PartialEq)]
pub struct Stall {
    /// The instant it stopped at.
    pub at: Time,
    /// The limit passed (`max_events_per_instant`).
    pub limit: u64,
    /// Events run at that instant after the limit, to see what they were.
    pub sampled: u64,
    /// What ran them, described, with how many each ran, most first.
    pub spinning: Vec<(String, u64)>,
}

impl fmt::Display for Stall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "simulated time stopped advancing at {:.9} s: more than {} events ran at that instant ([scenario] max_events_per_instant); of the next {} there",
            self.at.as_secs_f64(),
            self.limit,
            self.sampled
        )?;
        for (i, (who, n)) in self.spinning.iter().enumerate() {
            let sep = if i == 0 { ":" } else { ";" };
            write!(f, "{sep} {n} by {who}")?;
        }
        Ok(())
    }
}

/// What an event wakes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Spinner {
    Machine(MachineId),
    Conn(MachineId, ConnId),
    Dir(DirId),
    Flow(FlowId),
    Other(&'static str),
}

impl Spinner {
    fn of(ev: Ev) -> Spinner {
        match ev {
            Ev::TxDone(d, _) | Ev::Arrive(d, _) | Ev::LinkState(d, _) => Spinner::Dir(d),
            Ev::Timer(m) => Spinner::Machine(m),
            Ev::ConnTimer(m, c) => Spinner::Conn(m, c),
            Ev::FlowStart(f) | Ev::WebWake(f) => Spinner::Flow(f),
            Ev::Sample => Spinner::Other("the time-series sampler"),
            Ev::Reassociate => Spinner::Other("the mobile host's association"),
            Ev::EswSlot(..) | Ev::EswArrive(..) => Spinner::Other("an ESW link"),
            Ev::Wlan(_) => Spinner::Other("a WLAN medium"),
        }
    }
}

impl Simulation {
    /// The run stopped at `now` with more than `limit` events there: runs up to
    /// `DIAGNOSED_EVENTS` more at that instant, tallied by what they wake.
    pub(super) fn stalled(&mut self, now: Time, limit: u64) -> RunError {
        let mut tally: Vec<(Spinner, u64)> = Vec::new();
        let mut sampled = 0;
        while sampled < DIAGNOSED_EVENTS {
            let Some((_, ev)) = self.q.pop_until(now) else {
                break;
            };
            let who = Spinner::of(ev);
            match tally.iter_mut().find(|e| e.0 == who) {
                Some(e) => e.1 += 1,
                None => tally.push((who, 1)),
            }
            self.dispatch(now, ev);
            sampled += 1;
        }
        // Most first; ties in the order first seen (the sort is stable).
        tally.sort_by_key(|e| std::cmp::Reverse(e.1));
        let spinning = tally
            .iter()
            .take(NAMED)
            .map(|&(who, n)| (self.describe(who), n))
            .collect();
        RunError::Stalled(Stall {
            at: now,
            limit,
            sampled: sampled as u64,
            spinning,
        })
    }

    fn describe(&self, who: Spinner) -> String {
        match who {
            Spinner::Machine(m) => self.machine_label(m),
            Spinner::Conn(m, c) => {
                let mut s = format!("connection {} of {}", c.0, self.machine_label(m));
                if let Some(conn) = self.machines[m.index()].host().map(|h| h.connection(c)) {
                    let (l, r) = (conn.local(), conn.remote());
                    s += &format!(" ({:?}:{} -> {:?}:{}", l.addr, l.port, r.addr, r.port);
                    let flow = self.streams.get(m.index()).and_then(|v| v.get(c.index()));
                    if let Some(Some(f)) = flow {
                        s += &format!(", flow '{}'", self.flows[f.index()].params.name);
                    }
                    s += ")";
                }
                s
            }
            Spinner::Dir(d) => self.dir_label(d),
            Spinner::Flow(f) => format!("flow '{}'", self.flows[f.index()].params.name),
            Spinner::Other(what) => what.to_string(),
        }
    }
}

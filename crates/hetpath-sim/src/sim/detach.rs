//! A link taken out of a loaded simulation for a driver that runs it on its own clock
//! (`hetpath-live`'s emulator): its two directions' parameters and channels exactly as the
//! loader built them (same seed, same random streams), and when each direction goes down
//! and up (its outages, or the mobile host's association for a wireless link). The
//! simulation is consumed: nothing else in it runs.

use super::{DirId, Simulation};
use crate::channel::Channel;
use crate::link::LinkParams;
use hetpath_proto::Time;

/// What happens to a detached direction at a scheduled time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateChange {
    /// An outage starts: what is on the wire and in the transmitter is lost, the queue
    /// holds (`LinkDir::set_up`).
    Down,
    /// The mobile host left the station: down, and the queue is dropped as well
    /// (`LinkDir::flush`), as the simulation's reassociation does.
    Detach,
    Up,
}

/// One direction of a detached link.
pub struct DetachedDir {
    pub params: LinkParams,
    pub channel: Box<dyn Channel>,
    /// State changes in time order; the direction starts up unless the first says
    /// otherwise at time zero.
    pub changes: Vec<(Time, StateChange)>,
}

/// Why a link cannot be detached.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DetachError {
    #[error("no link named '{name}'; links: {}", known.join(", "))]
    Unknown { name: String, known: Vec<String> },
    #[error("link '{name}' {why}")]
    Unsupported { name: String, why: &'static str },
}

impl Simulation {
    /// The two directions (a -> b first) of the link named `name`: a `[[link]]`'s name,
    /// or `air/STATION` for the mobile host's link to a base station.
    pub fn find_link(&self, name: &str) -> Result<[DirId; 2], DetachError> {
        if let Some(&pair) = self
            .links
            .iter()
            .find(|pair| self.dirs[pair[0].index()].params.name == name)
        {
            return Ok(pair);
        }
        let mut known: Vec<String> = self
            .links
            .iter()
            .map(|p| self.dirs[p[0].index()].params.name.clone())
            .collect();
        known.dedup();
        Err(DetachError::Unknown {
            name: name.into(),
            known,
        })
    }

    /// The link named `name` (`find_link`), detached.
    pub fn detach_link(self, name: &str) -> Result<[DetachedDir; 2], DetachError> {
        let dirs = self.find_link(name)?;
        self.detach(dirs)
    }

    /// The link whose directions are `[ab, ba]` (`find_link`), a -> b first. ESW and
    /// WLAN links are refused: their link layers are models of their own, not a
    /// `LinkDir`'s queue and channel.
    pub fn detach(mut self, [ab, ba]: [DirId; 2]) -> Result<[DetachedDir; 2], DetachError> {
        let name = self.dirs[ab.index()].params.name.clone();
        let unsupported = |why| DetachError::Unsupported {
            name: name.clone(),
            why,
        };
        if self.esw_of.get(ab.index()).is_some_and(Option::is_some) {
            return Err(unsupported(
                "is an ESW link (layer = \"esw\"), which emulation does not support",
            ));
        }
        let wlan = |d: DirId| self.wlan_of.get(d.index()).is_some_and(Option::is_some);
        if wlan(ab) || wlan(ba) {
            return Err(unsupported(
                "runs over a WLAN medium, which emulation does not support",
            ));
        }
        let mut changes = [Vec::new(), Vec::new()];
        for &(d, down, up) in &self.outages {
            for (k, dir) in [ab, ba].into_iter().enumerate() {
                if d == dir {
                    changes[k].push((down, StateChange::Down));
                    changes[k].push((up, StateChange::Up));
                }
            }
        }
        // Once for both directions: working them out moves the association on.
        let association = self.association_changes(ab);
        for c in &mut changes {
            c.extend_from_slice(&association);
        }
        let mut take = |d: DirId, changes: Vec<(Time, StateChange)>| {
            let mut changes = changes;
            changes.sort_by_key(|c| c.0); // stable: a down before an up at the same time
            let placeholder = crate::link::LinkDir::new(
                self.dirs[d.index()].params.clone(),
                Box::new(crate::channel::NoLoss),
            );
            let dir = std::mem::replace(&mut self.dirs[d.index()], placeholder);
            let (params, channel) = dir.into_parts();
            DetachedDir {
                params,
                channel,
                changes,
            }
        };
        let [c0, c1] = changes;
        Ok([take(ab, c0), take(ba, c1)])
    }

    /// For a wireless link (both directions alike): down from the start, then up and
    /// down as the mobile host's association moves to and from its station (what
    /// `start_mobility` and `reassociate` do to it in a run). Empty for any other link.
    fn association_changes(&mut self, d: DirId) -> Vec<(Time, StateChange)> {
        let end = self.end;
        let Some(m) = self.mobile.as_mut() else {
            return Vec::new();
        };
        let Some(station) = m
            .access
            .stations
            .iter()
            .position(|s| s.downlink == d || s.uplink == d)
        else {
            return Vec::new();
        };
        let mut out = vec![(Time::ZERO, StateChange::Detach)];
        for t in m.access.change_times(end) {
            if let Some((old, new)) = m.access.reassociate(t) {
                if old == Some(station) {
                    out.push((t, StateChange::Detach));
                }
                if new == Some(station) {
                    out.push((t, StateChange::Up));
                }
            }
        }
        out
    }
}

//! A mobile host's wireless access: which base station its link layer is associated with
//! at each instant, and how strong each frame it hears is.
//!
//! Association follows coverage when the host moves (it keeps its station while inside
//! that station's reception range and then takes the nearest station in range: a hard
//! handoff at the cell edge, as 802.11 association does) and a fixed anchor station when
//! it does not. An explicit disconnection schedule cuts the link on top of either; each
//! disconnection may end on another station (a handoff with a gap). Every instant at which
//! the association may change is known in advance (`change_times`), so nothing ticks. What
//! the host's link layer makes of association changes and frame power (LINK_OK,
//! LINK_NOT_OK) is the host's own machine (`hetpath_proto::agent::mobile_ip`).

use super::{Motion, Position, Radio};
use crate::ids::{DirId, NodeId};
use hetpath_proto::{Dur, Time};

/// A base station: a node with a wireless link pair to the mobile host.
#[derive(Debug, Clone)]
pub struct Station {
    pub node: NodeId,
    pub position: Position,
    /// Link directions station -> host and host -> station.
    pub downlink: DirId,
    pub uplink: DirId,
}

/// One scheduled loss of the link: detached during [at, until), then attached to
/// `reattach` (a station index) or, if `None`, to the station it had.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Disconnection {
    pub at: Time,
    pub until: Time,
    pub reattach: Option<usize>,
}

pub struct Access {
    pub stations: Vec<Station>,
    /// `None`: the host does not move, and its anchor station decides the association.
    pub motion: Option<Motion>,
    pub radio: Radio,
    schedule: Vec<Disconnection>,
    /// Disconnections whose end has been applied to `anchor`.
    applied: usize,
    anchor: usize,
    attached: Option<usize>,
}

/// Evaluate coverage just after an instant, so that a crossing at `t` counts as done.
const AFTER: Dur = Dur::from_nanos(1);

impl Access {
    /// `anchor` is the station a non-moving host starts on (and a moving host is checked
    /// against first). The schedule is sorted here.
    pub fn new(
        stations: Vec<Station>,
        motion: Option<Motion>,
        radio: Radio,
        anchor: usize,
        mut schedule: Vec<Disconnection>,
    ) -> Access {
        schedule.sort_by_key(|d| d.at);
        Access {
            stations,
            motion,
            radio,
            schedule,
            applied: 0,
            anchor,
            attached: None,
        }
    }

    pub fn attached(&self) -> Option<usize> {
        self.attached
    }

    /// Every instant in [0, end] at which the association may change.
    pub fn change_times(&self, end: Time) -> Vec<Time> {
        let mut t: Vec<Time> = vec![Time::ZERO];
        for d in &self.schedule {
            t.extend([d.at, d.until]);
        }
        if let Some(m) = &self.motion {
            let r = self.radio.reception_range_m();
            for s in &self.stations {
                t.extend(
                    m.crossings(s.position, r, Time::ZERO, end)
                        .iter()
                        .map(|c| c.0),
                );
            }
        }
        t.retain(|&x| x <= end);
        t.sort();
        t.dedup();
        t
    }

    /// Where the host is at `t` (a non-moving host sits at its anchor station).
    pub fn position(&self, t: Time) -> Position {
        match &self.motion {
            Some(m) => m.position_at(t),
            None => self.stations[self.anchor].position,
        }
    }

    fn in_range(&self, s: usize, t: Time) -> bool {
        self.motion.as_ref().is_none_or(|m| {
            m.is_inside(
                self.stations[s].position,
                self.radio.reception_range_m(),
                t + AFTER,
            )
        })
    }

    /// The station the host should be associated with at `t`. Calls must come in time
    /// order (they apply the ends of past disconnections).
    fn choose(&mut self, t: Time) -> Option<usize> {
        while self.applied < self.schedule.len() && self.schedule[self.applied].until <= t {
            if let Some(s) = self.schedule[self.applied].reattach {
                self.anchor = s;
            }
            self.applied += 1;
        }
        if self.schedule.iter().any(|d| d.at <= t && t < d.until) {
            return None;
        }
        let Some(m) = &self.motion else {
            return Some(self.anchor);
        };
        let keep = self.attached.unwrap_or(self.anchor);
        if self.in_range(keep, t) {
            return Some(keep);
        }
        let here = m.position_at(t + AFTER);
        (0..self.stations.len())
            .filter(|&s| self.in_range(s, t))
            .min_by(|&a, &b| {
                let d = |s: usize| here.distance(self.stations[s].position);
                d(a).total_cmp(&d(b))
            })
    }

    /// Re-evaluates the association at `t`. Returns the previous and the new station if
    /// it changed.
    pub fn reassociate(&mut self, t: Time) -> Option<(Option<usize>, Option<usize>)> {
        let new = self.choose(t);
        if new == self.attached {
            return None;
        }
        let old = std::mem::replace(&mut self.attached, new);
        Some((old, new))
    }

    /// The received power, in watts, of a frame from the station the host is associated
    /// with at `t`: known for a moving host, whose distance changes (seed 002 section 4:
    /// "low powered frames are an indication of impending link disconnection"); `None`
    /// for a host that does not move or is not associated.
    pub fn frame_power_w(&self, t: Time) -> Option<f64> {
        let m = self.motion.as_ref()?;
        let s = self.attached?;
        let d = m.position_at(t).distance(self.stations[s].position);
        Some(self.radio.received_power_w(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn station(i: u32, x: f64) -> Station {
        Station {
            node: NodeId(i),
            position: Position::new(x, 0.0),
            downlink: DirId(2 * i),
            uplink: DirId(2 * i + 1),
        }
    }
    fn s(x: f64) -> Time {
        Time::from_secs_f64(x)
    }

    #[test]
    fn schedule_cuts_and_reattaches() {
        let d = vec![Disconnection {
            at: s(10.0),
            until: s(13.0),
            reattach: Some(1),
        }];
        let mut a = Access::new(
            vec![station(0, 0.0), station(1, 500.0)],
            None,
            Radio::ns2_default(),
            0,
            d,
        );
        assert_eq!(a.change_times(s(100.0)), vec![Time::ZERO, s(10.0), s(13.0)]);
        assert_eq!(a.reassociate(Time::ZERO), Some((None, Some(0))));
        assert_eq!(a.reassociate(s(10.0)), Some((Some(0), None)));
        assert_eq!(a.reassociate(s(12.0)), None);
        assert_eq!(a.reassociate(s(13.0)), Some((None, Some(1))));
        // A host that does not move hears no change in power.
        assert_eq!(a.frame_power_w(s(13.5)), None);
    }

    #[test]
    fn moving_host_hands_off_at_the_cell_edge_and_warns_before() {
        // Stations 450 m apart with 250 m cells overlap by 50 m; the host drives through.
        let m = Motion::new(
            Position::new(0.0, 0.0),
            Time::ZERO,
            &[(Position::new(900.0, 0.0), 10.0)],
        )
        .unwrap();
        let radio = Radio::ns2_default();
        let mut a = Access::new(
            vec![station(0, 0.0), station(1, 450.0)],
            Some(m),
            radio,
            0,
            vec![],
        );
        let times = a.change_times(s(100.0));
        let mut seen = vec![];
        for t in times {
            if let Some((_, new)) = a.reassociate(t) {
                seen.push((t.as_secs_f64(), new));
            }
        }
        assert_eq!(seen[0], (0.0, Some(0)));
        // Leaves station 0's cell at its edge (about 250 m, 25 s) straight into station 1's.
        let edge = radio.reception_range_m() / 10.0;
        assert!(
            (seen[1].0 - edge).abs() < 1e-6 && seen[1].1 == Some(1),
            "{seen:?}"
        );
        // Frames weaken with distance from the station the host is associated with.
        let mut b = Access::new(vec![station(0, 0.0)], a.motion.clone(), radio, 0, vec![]);
        b.reassociate(Time::ZERO);
        let warn = radio.warning_range_m() / 10.0;
        let (near, far) = (
            b.frame_power_w(s(warn - 1.0)),
            b.frame_power_w(s(warn + 1.0)),
        );
        assert!(near.unwrap() > radio.warn_threshold_w);
        assert!(far.unwrap() < radio.warn_threshold_w);
    }
}

//! A mobile host's wireless access: which base station its link layer is associated with
//! at each instant, and what its link layer reports to the node's cross-layer bus.
//!
//! Association follows coverage when the host moves (it keeps its station while inside
//! that station's reception range and then takes the nearest station in range: a hard
//! handoff at the cell edge, as 802.11 association does) and a fixed anchor station when
//! it does not. An explicit disconnection schedule cuts the link on top of either; each
//! disconnection may end on another station (a handoff with a gap). Every instant at which
//! the association may change is known in advance (`change_times`), so nothing ticks.

use super::{Motion, Position, Radio};
use hetpath_proto::crosslayer::Signal;
use hetpath_proto::{Dur, Time};

/// A base station: a node with a wireless link pair to the mobile host.
#[derive(Debug, Clone)]
pub struct Station {
    pub node: usize,
    pub position: Position,
    /// Link directions station -> host and host -> station.
    pub downlink: usize,
    pub uplink: usize,
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
    /// The link layer's state as last reported (seed 002 Figure 4, `link_state`).
    link_ok: bool,
    /// Received power of the last frame from the current station, for the trend.
    last_power: Option<f64>,
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
            link_ok: true,
            last_power: None,
        }
    }

    pub fn attached(&self) -> Option<usize> {
        self.attached
    }
    pub fn link_ok(&self) -> bool {
        self.link_ok
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
    /// it changed, and the link layer's signal (losing the link is LINK_NOT_OK at once;
    /// LINK_OK waits for a frame, see `on_frame`).
    pub fn reassociate(
        &mut self,
        t: Time,
    ) -> Option<(Option<usize>, Option<usize>, Option<Signal>)> {
        let new = self.choose(t);
        if new == self.attached {
            return None;
        }
        let old = std::mem::replace(&mut self.attached, new);
        self.last_power = None;
        let signal = (old.is_some() && self.link_ok).then(|| {
            self.link_ok = false;
            Signal::LinkNotOk
        });
        Some((old, new, signal))
    }

    /// A frame from station `s` reached the host at `t`. Its received power is the link
    /// layer's evidence (seed 002 section 4: "low powered frames are an indication of
    /// impending link disconnection"). The quality is "deteriorating" (Figure 4:
    /// LINK_NOT_OK) when a frame is below the warning threshold and weaker than the one
    /// before it; any other frame means the link is good (LINK_OK after a problem), so a
    /// host entering a new cell at its weak edge is not held back until it is near the
    /// station (docs/model-notes.md).
    pub fn on_frame(&mut self, t: Time, s: usize) -> Option<Signal> {
        let deteriorating = match &self.motion {
            Some(m) => {
                let d = m.position_at(t).distance(self.stations[s].position);
                let p = self.radio.received_power_w(d);
                let falling = self.last_power.replace(p).is_some_and(|before| p < before);
                p < self.radio.warn_threshold_w && falling
            }
            None => false,
        };
        match (deteriorating, self.link_ok) {
            (true, true) => {
                self.link_ok = false;
                Some(Signal::LinkNotOk)
            }
            (false, false) => {
                self.link_ok = true;
                Some(Signal::LinkOk)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn station(i: usize, x: f64) -> Station {
        Station {
            node: i,
            position: Position::new(x, 0.0),
            downlink: 2 * i,
            uplink: 2 * i + 1,
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
        assert_eq!(a.reassociate(Time::ZERO), Some((None, Some(0), None)));
        assert_eq!(
            a.reassociate(s(10.0)),
            Some((Some(0), None, Some(Signal::LinkNotOk)))
        );
        assert_eq!(a.reassociate(s(13.0)), Some((None, Some(1), None)));
        assert_eq!(a.on_frame(s(13.5), 1), Some(Signal::LinkOk));
        assert_eq!(a.on_frame(s(14.0), 1), None);
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
            if let Some((_, new, _)) = a.reassociate(t) {
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
        // A frame from station 0 beyond the warning range is weak: LINK_NOT_OK.
        let mut b = Access::new(vec![station(0, 0.0)], a.motion.clone(), radio, 0, vec![]);
        b.reassociate(Time::ZERO);
        let warn = radio.warning_range_m() / 10.0;
        assert_eq!(b.on_frame(s(warn - 1.0), 0), None);
        assert_eq!(b.on_frame(s(warn + 1.0), 0), Some(Signal::LinkNotOk));
        // Driving into station 1's cell at its weak edge: the power rises, the link is good.
        let m = Motion::new(
            Position::new(-300.0, 0.0),
            Time::ZERO,
            &[(Position::new(0.0, 0.0), 10.0)],
        )
        .unwrap();
        let mut c = Access::new(vec![station(0, 0.0)], Some(m), radio, 0, vec![]);
        c.reassociate(s(6.0));
        c.link_ok = false;
        assert_eq!(c.on_frame(s(6.0), 0), Some(Signal::LinkOk));
        assert_eq!(c.on_frame(s(7.0), 0), None);
    }
}

//! Piecewise-linear node motion and the exact times it crosses a coverage circle.
//!
//! Coverage changes are found by solving each leg's quadratic, not by time stepping,
//! so handovers happen at the right nanosecond and cost nothing between events.

use hetpath_proto::{Dur, Time};

/// A point in the plane, in metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    pub x: f64,
    pub y: f64,
}

impl Position {
    pub const fn new(x: f64, y: f64) -> Position {
        Position { x, y }
    }

    /// Euclidean distance in metres.
    pub fn distance(self, o: Position) -> f64 {
        (self.x - o.x).hypot(self.y - o.y)
    }
}

/// One straight leg: at `p0` at `t0`, at `p1` at `t1`, uniform speed between.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Seg {
    t0: Time,
    p0: Position,
    t1: Time,
    p1: Position,
}

impl Seg {
    /// Position at `t`, which the caller keeps within `[t0, t1]`. Interpolates on
    /// integer nanoseconds so `crossings` and `position_at` use one parameterisation.
    fn at(&self, t: Time) -> Position {
        let span = self.t1.0.saturating_sub(self.t0.0);
        if span == 0 {
            return self.p1;
        }
        let f = t.0.saturating_sub(self.t0.0).min(span) as f64 / span as f64;
        Position {
            x: self.p0.x + f * (self.p1.x - self.p0.x),
            y: self.p0.y + f * (self.p1.y - self.p0.y),
        }
    }
}

/// A node's trajectory: stationary at `start` until `depart`, then straight legs to each
/// waypoint at its speed, then stationary at the last one.
#[derive(Clone, Debug, PartialEq)]
pub struct Motion {
    start: Position,
    /// Moving legs in time order, contiguous (`segs[i].t1 == segs[i + 1].t0`).
    segs: Vec<Seg>,
}

/// Why a path cannot be driven.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MotionError {
    #[error("motion start {0:?} must have finite coordinates")]
    NotFinite(Position),
    #[error("motion waypoint {0} {1:?} must have finite coordinates")]
    WaypointNotFinite(usize, Position),
    #[error("motion leg {0} speed must be positive and finite m/s, got {1}")]
    Speed(usize, f64),
}

impl Motion {
    /// A node that never moves.
    pub fn stationary(p: Position) -> Motion {
        Motion {
            start: p,
            segs: Vec::new(),
        }
    }

    /// `legs`: (waypoint, speed in m/s). Leg end times are rounded to the nanosecond.
    pub fn new(
        start: Position,
        depart: Time,
        legs: &[(Position, f64)],
    ) -> Result<Motion, MotionError> {
        if !(start.x.is_finite() && start.y.is_finite()) {
            return Err(MotionError::NotFinite(start));
        }
        let mut segs = Vec::with_capacity(legs.len());
        let (mut t, mut p) = (depart, start);
        for (i, &(wp, speed)) in legs.iter().enumerate() {
            if !(wp.x.is_finite() && wp.y.is_finite()) {
                return Err(MotionError::WaypointNotFinite(i, wp));
            }
            if !(speed.is_finite() && speed > 0.0) {
                return Err(MotionError::Speed(i, speed));
            }
            let t1 = t + Dur::from_secs_f64(p.distance(wp) / speed);
            segs.push(Seg {
                t0: t,
                p0: p,
                t1,
                p1: wp,
            });
            (t, p) = (t1, wp);
        }
        Ok(Motion { start, segs })
    }

    /// When the node reaches its last waypoint (`Time::ZERO` if it never moves).
    pub fn arrival(&self) -> Time {
        self.segs.last().map_or(Time::ZERO, |s| s.t1)
    }

    pub fn position_at(&self, t: Time) -> Position {
        // First leg that has not ended by `t`; zero-length legs are passed over.
        let i = self.segs.partition_point(|s| s.t1 <= t);
        match self.segs.get(i) {
            Some(s) if t <= s.t0 => s.p0,
            Some(s) => s.at(t),
            None => self.segs.last().map_or(self.start, |s| s.p1),
        }
    }

    /// Inside means distance <= radius (the boundary belongs to the cell).
    pub fn is_inside(&self, center: Position, radius: f64, t: Time) -> bool {
        self.position_at(t).distance(center) <= radius
    }

    /// Every time in [from, until] at which the distance to `center` crosses `radius`,
    /// with `true` if the node is inside (distance <= radius) just after it, sorted by
    /// time. Tangent touches are not crossings; a node already inside at `from`
    /// produces no event at `from`.
    ///
    /// The roots of each leg's quadratic, rounded to the nanosecond, are only
    /// candidates: each flag is `is_inside(t + 1 ns)` and candidates that change
    /// nothing are dropped, so the events always agree with `is_inside`.
    pub fn crossings(
        &self,
        center: Position,
        radius: f64,
        from: Time,
        until: Time,
    ) -> Vec<(Time, bool)> {
        if from > until || !(radius.is_finite() && radius >= 0.0) {
            return Vec::new();
        }
        let mut cands = Vec::new();
        for s in self.segs.iter().filter(|s| s.t1 >= from && s.t0 <= until) {
            leg_roots(s, center, radius, &mut cands);
        }
        cands.retain(|t| (from..=until).contains(t));
        cands.sort_unstable();
        cands.dedup();
        let mut state = self.is_inside(center, radius, from);
        let mut out = Vec::new();
        for t in cands {
            let after = self.is_inside(center, radius, t + Dur::from_nanos(1));
            if after != state {
                out.push((t, after));
                state = after;
            }
        }
        out
    }
}

/// Pushes the (rounded) times at which leg `s` crosses the circle with a sign change.
fn leg_roots(s: &Seg, c: Position, r: f64, out: &mut Vec<Time>) {
    // |p0 + u*v - c|^2 - r^2 = a u^2 + b u + k, u in [0, 1] the leg's time fraction.
    let (vx, vy) = (s.p1.x - s.p0.x, s.p1.y - s.p0.y);
    let (wx, wy) = (s.p0.x - c.x, s.p0.y - c.y);
    let a = vx * vx + vy * vy;
    let b = 2.0 * (wx * vx + wy * vy);
    let k = wx * wx + wy * wy - r * r;
    let disc = b * b - 4.0 * a * k;
    // a == 0: not moving; disc <= 0: misses or only touches; NaN: bad center.
    if !(a > 0.0 && disc > 0.0) {
        return;
    }
    // Numerically stable form: no cancellation between -b and sqrt(disc).
    let q = -0.5 * (b + b.signum() * disc.sqrt());
    let (t0, span) = (s.t0.0 as f64, s.t1.0.saturating_sub(s.t0.0) as f64);
    // Slack so a root exactly on a waypoint is not lost to rounding in both legs.
    const SLACK: f64 = 1e-9;
    for u in [q / a, k / q] {
        if (-SLACK..=1.0 + SLACK).contains(&u) {
            let ns = (t0 + u.clamp(0.0, 1.0) * span).round();
            out.push(Time(ns.min(u64::MAX as f64) as u64));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BS: Position = Position::new(500.0, 0.0);

    fn secs(s: f64) -> Time {
        Time::from_secs_f64(s)
    }

    #[test]
    fn passes_base_station() {
        let (o, end) = (Position::new(0.0, 0.0), Position::new(1000.0, 0.0));
        let m = Motion::new(o, Time::ZERO, &[(end, 10.0)]).unwrap();
        assert_eq!(
            m.crossings(BS, 250.0, Time::ZERO, Time::MAX),
            vec![(secs(25.0), true), (secs(75.0), false)]
        );
        // Window bounds, and no event at `from` when already inside.
        assert_eq!(
            m.crossings(BS, 250.0, secs(30.0), secs(80.0)),
            vec![(secs(75.0), false)]
        );
        assert_eq!(m.crossings(BS, 250.0, secs(25.0), secs(74.0)), vec![]);
        assert!(m.is_inside(BS, 250.0, secs(50.0)) && !m.is_inside(BS, 250.0, secs(80.0)));
    }

    #[test]
    fn stationary_never_crosses() {
        let m = Motion::stationary(Position::new(400.0, 0.0));
        assert!(m.crossings(BS, 250.0, Time::ZERO, Time::MAX).is_empty());
        assert!(m.crossings(BS, 100.0, Time::ZERO, Time::MAX).is_empty());
        assert_eq!(m.position_at(secs(1e6)), Position::new(400.0, 0.0));
    }

    #[test]
    fn grazing_leg_is_not_a_crossing() {
        let (a, b) = (Position::new(0.0, 250.0), Position::new(1000.0, 250.0));
        let m = Motion::new(a, secs(1.0), &[(b, 10.0)]).unwrap();
        assert!(m.crossings(BS, 250.0, Time::ZERO, Time::MAX).is_empty());
        // Bad radii give nothing rather than nonsense.
        assert!(m.crossings(BS, -250.0, Time::ZERO, Time::MAX).is_empty());
        assert!(m.crossings(BS, f64::NAN, Time::ZERO, Time::MAX).is_empty());
    }

    #[test]
    fn positions() {
        let legs = [
            (Position::new(100.0, 0.0), 10.0),
            (Position::new(100.0, 50.0), 5.0),
        ];
        let m = Motion::new(Position::new(0.0, 0.0), secs(5.0), &legs).unwrap();
        assert_eq!(m.position_at(Time::ZERO), Position::new(0.0, 0.0));
        assert_eq!(m.position_at(secs(5.0)), Position::new(0.0, 0.0));
        assert_eq!(m.position_at(secs(10.0)), Position::new(50.0, 0.0));
        assert_eq!(m.position_at(secs(15.0)), Position::new(100.0, 0.0));
        assert_eq!(m.position_at(secs(20.0)), Position::new(100.0, 25.0));
        assert_eq!(m.arrival(), secs(25.0));
        assert_eq!(m.position_at(secs(99.0)), Position::new(100.0, 50.0));
        assert_eq!(m.position_at(Time::MAX), Position::new(100.0, 50.0));
    }

    #[test]
    fn rejects_bad_legs() {
        let o = Position::new(0.0, 0.0);
        let bad = Position::new(f64::INFINITY, 0.0);
        let err = |start, legs: &[_]| {
            Motion::new(start, Time::ZERO, legs)
                .unwrap_err()
                .to_string()
        };
        assert!(err(o, &[(o, 0.0)]).contains("speed"));
        assert!(err(o, &[(o, f64::NAN)]).contains("speed"));
        assert!(err(o, &[(bad, 1.0)]).contains("finite"));
        assert!(err(bad, &[]).contains("finite"));
    }

    /// Tiny deterministic LCG (Knuth's MMIX constants), so the property needs no RNG crate.
    struct Lcg(u64);
    impl Lcg {
        fn unit(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// The flags agree with `is_inside` just after each event, and the state is constant
    /// between events, over many fixed pseudo-random trajectories.
    #[test]
    fn crossings_agree_with_is_inside() {
        let mut rng = Lcg(0x5eed);
        let mut total = 0;
        for _ in 0..2000 {
            let pt = |r: &mut Lcg| Position::new(r.unit() * 1000.0, r.unit() * 1000.0);
            let (start, center) = (pt(&mut rng), pt(&mut rng));
            let radius = 50.0 + rng.unit() * 400.0;
            let mut legs: Vec<_> = (0..6)
                .map(|_| (pt(&mut rng), 1.0 + rng.unit() * 30.0))
                .collect();
            // Edge cases: a waypoint exactly on the circle, and a repeated waypoint.
            let a = rng.unit() * std::f64::consts::TAU;
            let on = Position::new(center.x + radius * a.cos(), center.y + radius * a.sin());
            legs[(rng.unit() * 6.0) as usize].0 = on;
            let k = 1 + (rng.unit() * 5.0) as usize;
            legs[k].0 = legs[k - 1].0;
            let m = Motion::new(start, secs(rng.unit() * 10.0), &legs).unwrap();
            let from = secs(rng.unit() * 20.0);
            let until = m.arrival() + Dur::from_secs(1);
            let ev = m.crossings(center, radius, from, until);
            total += ev.len();
            let mut state = m.is_inside(center, radius, from);
            let mut prev = from;
            // Each event's interval since the previous one, then the tail up to `until`.
            let ends = ev.iter().map(|&(t, f)| (t, Some(f))).chain([(until, None)]);
            for (t, flag) in ends {
                assert!(t >= prev && t <= until);
                for j in 1..20u64 {
                    let s = Time(prev.0 + (t.0 - prev.0) * j / 20);
                    if s > prev && s < t {
                        assert_eq!(m.is_inside(center, radius, s), state, "{m:?} at {s:?}");
                    }
                }
                let before = Time(t.0.saturating_sub(1));
                if before > prev {
                    assert_eq!(
                        m.is_inside(center, radius, before),
                        state,
                        "{m:?} at {before:?}"
                    );
                }
                let Some(inside) = flag else { break };
                assert_ne!(inside, state, "event changes nothing at {t:?}");
                assert_eq!(
                    m.is_inside(center, radius, t + Dur::from_nanos(1)),
                    inside,
                    "{t:?}"
                );
                (state, prev) = (inside, t);
            }
        }
        assert!(total > 1000, "too few crossings exercised: {total}");
    }
}

//! The retransmission timeout of RFC 4960 section 6.3.1.

use crate::time::Dur;

/// SRTT, RTTVAR and RTO of one destination (this model is single-homed: one).
#[derive(Clone, Copy, Debug)]
pub(super) struct Rto {
    srtt: Option<Dur>,
    rttvar: Dur,
    rto: Dur,
    min: Dur,
    max: Dur,
}

impl Rto {
    /// Before any measurement RTO is RTO.Initial (rule C1).
    pub(super) fn new(initial: Dur, min: Dur, max: Dur) -> Rto {
        Rto {
            srtt: None,
            rttvar: Dur::ZERO,
            rto: initial,
            min,
            max,
        }
    }

    pub(super) fn rto(&self) -> Dur {
        self.rto
    }

    pub(super) fn srtt(&self) -> Option<Dur> {
        self.srtt
    }

    /// A new round-trip sample `r` (rules C2 and C3, alpha = 1/8 and beta = 1/4, then
    /// clamped to RTO.Min and RTO.Max by C6 and C7). The clock granularity G of C6 is one
    /// nanosecond here, so RTTVAR is used as it is. A measurement also ends any backoff.
    pub(super) fn on_measurement(&mut self, r: Dur) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Dur(r.0 / 2);
            }
            Some(srtt) => {
                let dev = if srtt > r { srtt - r } else { r - srtt };
                self.rttvar = Dur(self.rttvar.0 - self.rttvar.0 / 4 + dev.0 / 4);
                self.srtt = Some(Dur(srtt.0 - srtt.0 / 8 + r.0 / 8));
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        self.rto = (srtt + self.rttvar.saturating_mul(4)).clamp(self.min, self.max);
    }

    /// Timer expiry: RTO = RTO * 2, at most RTO.Max (section 6.3.3 rule E2).
    pub(super) fn back_off(&mut self) {
        self.rto = self.rto.saturating_mul(2).min(self.max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rto() -> Rto {
        Rto::new(Dur::from_secs(3), Dur::from_secs(1), Dur::from_secs(60))
    }

    #[test]
    fn first_and_later_samples() {
        let mut r = rto();
        assert_eq!(r.rto(), Dur::from_secs(3));
        // C2: SRTT = 2 s, RTTVAR = 1 s, RTO = 2 + 4 * 1 = 6 s.
        r.on_measurement(Dur::from_secs(2));
        assert_eq!(r.rto(), Dur::from_secs(6));
        // C3 with R' = 1 s: RTTVAR = 3/4 * 1 + 1/4 * |2 - 1| = 1 s,
        // SRTT = 7/8 * 2 + 1/8 * 1 = 1.875 s, RTO = 5.875 s.
        r.on_measurement(Dur::from_secs(1));
        assert_eq!(r.srtt(), Some(Dur::from_millis(1875)));
        assert_eq!(r.rto(), Dur::from_millis(5875));
    }

    #[test]
    fn clamped_and_backed_off() {
        let mut r = rto();
        r.on_measurement(Dur::from_millis(100));
        assert_eq!(r.rto(), Dur::from_secs(1), "RTO.Min");
        for _ in 0..6 {
            r.back_off();
        }
        assert_eq!(r.rto(), Dur::from_secs(60), "RTO.Max caps 64 s");
        r.on_measurement(Dur::from_millis(100));
        assert_eq!(r.rto(), Dur::from_secs(1), "a measurement ends the backoff");
    }
}

//! Proportional Rate Reduction (RFC 6937), the fast-recovery window of Linux and ns-3:
//! instead of dropping the window to ssthresh at once (RFC 6675), the sender sends in
//! proportion to what the receiver reports delivered, so that it reaches ssthresh at the
//! end of recovery, evenly rather than in a burst or a silence.

use super::config::Recovery;

/// One recovery episode's PRR state (RFC 6937 section 3).
#[derive(Clone, Copy, Debug)]
pub struct Prr {
    /// RecoverFS: FlightSize when recovery began.
    recover_fs: u64,
    /// prr_delivered: bytes the receiver reported delivered since then.
    delivered: u64,
    /// prr_out: bytes sent since then.
    out: u64,
    /// The Conservative Reduction Bound instead of the Slow Start Reduction Bound.
    crb: bool,
}

impl Prr {
    /// Recovery begins with `flight` bytes outstanding; `None` unless `mode` is PRR.
    pub fn start(mode: Recovery, flight: u64) -> Option<Prr> {
        let crb = match mode {
            Recovery::Rfc6675 => return None,
            Recovery::PrrSsrb => false,
            Recovery::PrrCrb => true,
        };
        Some(Prr {
            recover_fs: flight.max(1),
            delivered: 0,
            out: 0,
            crb,
        })
    }

    pub fn on_sent(&mut self, bytes: u64) {
        self.out += bytes;
    }

    /// An ACK reported `delivered` more bytes (cumulatively ACKed plus newly SACKed);
    /// returns the window to send against: pipe + sndcnt (RFC 6937 section 3).
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, mss: u64) -> u64 {
        self.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            // Proportional part: CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out.
            let target =
                (self.delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs as u128);
            (target.min(u64::MAX as u128) as u64).saturating_sub(self.out)
        } else {
            let limit = if self.crb {
                self.delivered.saturating_sub(self.out)
            } else {
                self.delivered.saturating_sub(self.out).max(delivered) + mss
            };
            (ssthresh - pipe).min(limit)
        };
        pipe + sndcnt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1000;

    /// RFC 6937 Appendix A's first example: 20 segments in flight, one lost, ssthresh 10:
    /// PRR sends one segment for every two delivered while pipe is above ssthresh.
    #[test]
    fn above_ssthresh_one_segment_goes_out_per_two_delivered() {
        let mut prr = Prr::start(Recovery::PrrSsrb, 20 * M).unwrap();
        let mut pipe = 19 * M; // the lost segment no longer counts
        let mut sent = 0;
        for _ in 0..10 {
            pipe -= M; // one more segment delivered
            let window = prr.on_ack(M, pipe, 10 * M, M);
            while pipe < window {
                prr.on_sent(M);
                pipe += M;
                sent += 1;
            }
        }
        assert_eq!(sent, 5);
    }

    /// Below ssthresh, the SSRB lets the window grow by one segment more than delivered
    /// (slow start), the CRB only by what was delivered.
    #[test]
    fn below_ssthresh_the_two_bounds_differ_by_one_segment() {
        let window = |mode| {
            let mut prr = Prr::start(mode, 20 * M).unwrap();
            prr.on_ack(2 * M, 4 * M, 10 * M, M) - 4 * M
        };
        assert_eq!(window(Recovery::PrrSsrb), 3 * M);
        assert_eq!(window(Recovery::PrrCrb), 2 * M);
        assert!(Prr::start(Recovery::Rfc6675, 20 * M).is_none());
    }
}

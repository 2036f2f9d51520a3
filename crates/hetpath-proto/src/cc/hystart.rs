//! Leaving slow start on rising delay: Ha and Rhee's HyStart as Linux runs it, and
//! HyStart++ (RFC 9406). One `HyStart` per connection, owned by a controller that feeds it
//! every ACK before it grows its window; any controller with an RFC 5681 slow start can
//! own one (CUBIC does, `CcConfig::hystart` selects the variant).
//!
//! The controller calls, per ACK taken outside recovery, `on_ack` first (true: end slow
//! start now, ssthresh = cwnd) and then grows by `slow_start_increase(credit)` while
//! cwnd < ssthresh. This is Linux's order: `cubictcp_acked` (pkts_acked, detection) runs
//! before `cubictcp_cong_avoid` (growth), and regardless of `tcp_is_cwnd_limited`; RFC
//! 9406 section 4.2 grows first and checks after, so here the one ACK that enters or
//! leaves Conservative Slow Start grows at the rate of the state it moves to.
//!
//! # Rounds
//!
//! Real stacks delimit a round by sequence numbers: it ends when SND.UNA passes the SND.NXT
//! recorded when it began (Linux `end_seq = snd_nxt`, `after(snd_una, end_seq)`; RFC 9406
//! `windowEnd`). A controller sees no sequence numbers, but it sees the same quantity:
//! `AckSample::bytes_in_flight` right after the ACK that begins a round is SND.NXT - SND.UNA
//! then (the sender builds the sample before sending anything in reply), and every later
//! ACK's `bytes_acked` is how far SND.UNA moved. So a round ends when the bytes acked since
//! it began exceed (Linux: `after`, strictly) or reach (RFC 9406: "windowEnd is ACKed") the
//! flight at its start. This is exact while no SACKed or lost data is outstanding (`pipe`
//! then equals SND.NXT - SND.UNA), which is the case in slow start before the first loss.
//!
//! # Classic (Linux `net/ipv4/tcp_cubic.c`: `cubictcp_acked`, `hystart_update`)
//!
//! - Runs on ACKs carrying an RTT sample (Linux returns when `rtt_us < 0`), while
//!   cwnd < ssthresh and nothing was found yet.
//! - `delay_min` is the smallest RTT sample seen (its own, not the sender's `min_rtt`),
//!   updated on every sample before the checks, and forgotten at a timeout as Linux's
//!   `bictcp_reset` on TCP_CA_Loss forgets it.
//! - A round begins at the first such ACK (Linux's `end_seq` from `cubictcp_init` is
//!   passed by the first data ACK) and whenever the previous one ended, whatever the
//!   window; its sample belongs to the new round. Only the detection below waits for
//!   cwnd >= 16 segments (`hystart_low_window`). This is Linux since "tcp_cubic: fix
//!   incorrect HyStart round start detection" (January 2025, in 6.14 and the stable
//!   trees); before it, rounds began at the first ACK with 16 segments, in the middle of
//!   a slow-start burst, so a round's first samples carried the burst's queue and the
//!   delay test fired early (the patch's own test: at cwnd 516 before, 632 after, on a
//!   619-packet path; here: docs/performance.md, "The simulator against the emulator").
//!   After a timeout the next round begins at the next such ACK.
//! - ACK train: ACKs closer than 2 ms (`hystart_ack_delta_us`) to the previous one of the
//!   chain extend it (a wider gap breaks it for the rest of the round); the train is found
//!   when it spans more than `delay_min + ack_delay`, halved when the sender is not paced
//!   (`sk_pacing_status == SK_PACING_NONE`). `ack_delay` is Linux's `hystart_ack_delay`:
//!   min(1 ms, 4 * 64 KiB / pacing rate), the pacing rate as `tcp_update_pacing_rate` sets
//!   it (200% of max(cwnd, flight)/srtt while cwnd < ssthresh/2, else 120%), 64 KiB being
//!   the default `sk_gso_max_size`. It is 1 ms unless cwnd exceeds ~130 kB per ms of srtt.
//! - Delay: the round's minimum RTT over all its samples; from the ninth sample on
//!   (HYSTART_MIN_SAMPLES = 8 samples first), found when it exceeds
//!   delay_min + clamp(delay_min/8, 4 ms, 16 ms).
//! - Found: ssthresh = cwnd, and HyStart stays off until a timeout re-arms it.
//! - Not modelled: Linux ignores samples for 1 s after a CUBIC epoch starts ("right after
//!   fast recovery"). Only `delay_min` could see them, and HyStart runs again only after a
//!   timeout, which resets `delay_min`; slow start does not follow fast recovery here.
//!
//! # ns-3 (`Ns3`: ns-3.44 `TcpCubic::PktsAcked`, `HystartUpdate`, `IncreaseWindow`)
//!
//! ns-3's own reading of the same algorithm, for cross-checks against it:
//! - the sample is the smoothed RTT (`TcpSocketBase` calls `PktsAcked` with `m_srtt`), on
//!   every ACK once there is one; `delay_min` is the smallest of them;
//! - it runs while cwnd <= ssthresh (not <) and cwnd >= 16 segments;
//! - the train must span more than the whole `delay_min`, with no `ack_delay` cushion;
//! - the round minimum is taken over the first 8 samples only, then compared with
//!   delay_min + clamp(delay_min, 4 ms, 1000 ms) (`HystartDelayThresh`, `HyStartDelayMax`):
//!   a doubling of the delay below 1 s;
//! - the round is reset after the checks, in `IncreaseWindow`, only while cwnd-limited and
//!   cwnd < ssthresh; a timeout resets it at once (`CongestionStateSet(CA_LOSS)`: the
//!   round starts then, with the flight then), and `found` and `delay_min` with it.
//! - Not modelled: ns-3 skips samples for 10 ms (`CubicDelta`) after a CUBIC epoch
//!   starts, and runs `HystartUpdate` in recovery too (where PRR can hold cwnd <=
//!   ssthresh); here recovery ACKs only lower `delay_min`.
//!
//! # RFC 9406 (HyStart++)
//!
//! - Rounds as above (ending when "windowEnd is ACKed"), from the first ACK; the minimum
//!   RTT and the sample count of each round, the previous round's minimum kept.
//! - Slow start: cwnd += min(N, L*SMSS); once a round has N_RTT_SAMPLE = 8 samples and both
//!   minima exist, a current minimum >= last + clamp(last/8, 4 ms, 16 ms) enters
//!   Conservative Slow Start with that minimum as the baseline.
//! - CSS: cwnd += min(N, L*SMSS)/4 (CSS_GROWTH_DIVISOR; the remainder is carried, no byte
//!   lost); after 8 samples, a round minimum under the baseline resumes slow start; the
//!   round CSS starts in counts, and at the end of the fifth (CSS_ROUNDS) ssthresh = cwnd.
//! - N is the controller's credit (`AckSample::credit`: the sender's byte counting, or one
//!   MSS per ACK). L: the RFC recommends infinity when paced and 8 when not (section 4.3);
//!   the sender is taken as not paced (the controller is not told), so credit is capped at
//!   8 MSS; `set_paced(true)` removes the cap.
//! - Only the initial slow start uses it (section 4.3, SHOULD): a loss or a timeout ends it
//!   for the connection, and later slow starts are RFC 5681's.
//!
//! Everything is integer nanoseconds and bytes; nothing is random.

use super::*;

/// Linux `hystart_low_window` and ns-3 `HyStartLowWindow`: 16 segments.
const LOW_WINDOW_SEGMENTS: u64 = 16;
/// Linux `hystart_ack_delta_us`.
const ACK_DELTA: Dur = Dur::from_millis(2);
/// Linux HYSTART_MIN_SAMPLES.
const MIN_SAMPLES: u32 = 8;
/// Linux HYSTART_DELAY_MIN / HYSTART_DELAY_MAX; RFC 9406 MIN_RTT_THRESH / MAX_RTT_THRESH.
const DELAY_MIN: Dur = Dur::from_millis(4);
const DELAY_MAX: Dur = Dur::from_millis(16);
/// ns-3 `HyStartDelayMax` (its threshold is clamp(delay_min, DELAY_MIN, this)).
const NS3_DELAY_MAX: Dur = Dur::from_millis(1000);
/// Linux `delay_min >> 3`; RFC 9406 MIN_RTT_DIVISOR.
const DELAY_DIVISOR: u64 = 8;
/// Linux `hystart_ack_delay`: at most 1 ms, from the default `sk_gso_max_size` (64 KiB).
const ACK_DELAY_CAP: Dur = Dur::from_millis(1);
const GSO_MAX_SIZE: u128 = 65_536;
/// RFC 9406 section 4.3.
const N_RTT_SAMPLE: u32 = 8;
const CSS_GROWTH_DIVISOR: u64 = 4;
const CSS_ROUNDS: u32 = 5;
const L_NON_PACED: u64 = 8;

/// One round: when it began, the flight then (SND.NXT - SND.UNA) and the bytes acked since.
#[derive(Clone, Copy, Debug)]
struct Round {
    start: Time,
    flight: u64,
    acked: u64,
}

impl Round {
    fn new(now: Time, flight: u64) -> Round {
        Round {
            start: now,
            flight,
            acked: 0,
        }
    }
}

/// Conservative Slow Start (RFC 9406).
#[derive(Clone, Copy, Debug)]
struct Css {
    baseline: Dur,
    rounds: u32,
}

/// The slow-start exit detector of one connection (module doc).
#[derive(Clone, Debug)]
pub struct HyStart {
    mode: Hystart,
    mss: u32,
    paced: bool,
    round: Option<Round>,
    /// Classic: smallest RTT sample (Linux `delay_min`); None before one.
    delay_min: Option<Dur>,
    /// Classic: the exit was found (Linux `found`).
    found: bool,
    /// Classic: the last ACK of the train (Linux `last_ack`).
    last_ack: Time,
    /// The current round's minimum RTT (Linux `curr_rtt`, RFC `currentRoundMinRTT`).
    round_min: Option<Dur>,
    /// Samples in the current round (Linux `sample_cnt`, RFC `rttSampleCount`).
    samples: u32,
    /// RFC 9406: the previous round's minimum (`lastRoundMinRTT`).
    last_round_min: Option<Dur>,
    css: Option<Css>,
    /// RFC 9406: CSS credit not yet added (below CSS_GROWTH_DIVISOR bytes).
    css_rem: u64,
    /// RFC 9406: the initial slow start is over (left, lost, or timed out).
    done: bool,
}

impl HyStart {
    pub fn new(mode: Hystart, mss: u32) -> HyStart {
        HyStart {
            mode,
            mss,
            paced: false,
            round: None,
            delay_min: None,
            found: false,
            last_ack: Time::ZERO,
            round_min: None,
            samples: 0,
            last_round_min: None,
            css: None,
            css_rem: 0,
            done: false,
        }
    }

    /// Whether the sender paces: Linux then waits for a train of the whole `delay_min`
    /// (not half), and RFC 9406 takes L = infinity (not 8).
    pub fn set_paced(&mut self, paced: bool) {
        self.paced = paced;
    }

    /// In RFC 9406's Conservative Slow Start.
    #[cfg(test)]
    pub fn in_css(&self) -> bool {
        self.css.is_some()
    }

    /// An ACK taken outside recovery, before the window grows (module doc). Returns true
    /// when slow start must end now: the controller sets ssthresh = cwnd.
    pub fn on_ack(&mut self, ack: &AckSample, cwnd: u64, ssthresh: u64) -> bool {
        self.count_acked(ack);
        match self.mode {
            Hystart::Off => false,
            Hystart::Classic => self.classic(ack, cwnd, ssthresh),
            Hystart::Rfc9406 => self.rfc9406(ack, cwnd, ssthresh),
            Hystart::Ns3 => self.ns3(ack, cwnd, ssthresh),
        }
    }

    /// An ACK during loss recovery: no detection, but SND.UNA moved and the RTT counts
    /// towards `delay_min` (Linux's pkts_acked sees every ACK).
    pub fn on_recovery_ack(&mut self, ack: &AckSample) {
        self.count_acked(ack);
        match self.mode {
            Hystart::Classic => {
                if let Some(rtt) = ack.rtt {
                    self.note_delay_min(rtt);
                }
            }
            Hystart::Ns3 if ack.srtt > Dur::ZERO => self.note_delay_min(ack.srtt),
            _ => {}
        }
    }

    /// What one ACK's `credit` adds to cwnd in slow start: the credit itself, except in
    /// RFC 9406's initial slow start (capped at L*SMSS, and divided by 4 in CSS).
    pub fn slow_start_increase(&mut self, credit: u64) -> u64 {
        if self.mode != Hystart::Rfc9406 || self.done {
            return credit;
        }
        let n = if self.paced {
            credit
        } else {
            credit.min(L_NON_PACED * self.mss as u64)
        };
        if self.css.is_none() {
            return n;
        }
        self.css_rem = self.css_rem.saturating_add(n);
        let inc = self.css_rem / CSS_GROWTH_DIVISOR;
        self.css_rem -= inc * CSS_GROWTH_DIVISOR;
        inc
    }

    /// A loss ended slow start. Linux keeps its HyStart state (only a timeout resets it);
    /// RFC 9406 is for the initial slow start only.
    pub fn on_congestion(&mut self) {
        if self.mode == Hystart::Rfc9406 {
            self.finish();
        }
    }

    /// A retransmission timeout. Classic: Linux `cubictcp_state(TCP_CA_Loss)` resets
    /// `found`, `delay_min` and the round, so the next slow start runs HyStart again; ns-3
    /// (`CubicReset`, `HystartReset`) likewise, with the round starting now.
    pub fn on_rto(&mut self, ev: &CongestionEvent) {
        match self.mode {
            Hystart::Off => {}
            Hystart::Classic | Hystart::Ns3 => {
                self.found = false;
                self.delay_min = None;
                self.round = None;
                self.round_min = None;
                self.samples = 0;
                if self.mode == Hystart::Ns3 {
                    self.round = Some(Round::new(ev.now, ev.bytes_in_flight));
                    self.last_ack = ev.now;
                }
            }
            Hystart::Rfc9406 => self.finish(),
        }
    }

    fn finish(&mut self) {
        self.done = true;
        self.css = None;
        self.round = None;
    }

    fn count_acked(&mut self, ack: &AckSample) {
        if let Some(r) = &mut self.round {
            r.acked = r.acked.saturating_add(ack.bytes_acked);
        }
    }

    fn note_delay_min(&mut self, rtt: Dur) {
        let rtt = Dur(rtt.as_nanos().max(1));
        if self.delay_min.is_none_or(|d| rtt < d) {
            self.delay_min = Some(rtt);
        }
    }

    /// Starts a round at this ACK: SND.NXT - SND.UNA is the flight after it.
    fn begin_round(&mut self, ack: &AckSample) {
        self.round = Some(Round::new(ack.now, ack.bytes_in_flight));
        self.round_min = None;
        self.samples = 0;
    }

    /// Linux `hystart_ack_delay`: the TSO/GRO cushion of the ACK-train threshold.
    fn ack_delay(&self, ack: &AckSample, cwnd: u64, ssthresh: u64) -> Dur {
        if ack.srtt == Dur::ZERO {
            return Dur::ZERO;
        }
        // rate = ratio% * max(cwnd, flight) / srtt; 4 * GSO / rate in nanoseconds.
        let ratio: u128 = if cwnd < ssthresh / 2 { 200 } else { 120 };
        let window = cwnd.max(ack.bytes_in_flight).max(1) as u128;
        let ns = 4 * GSO_MAX_SIZE * 100 * ack.srtt.as_nanos() as u128 / (ratio * window);
        Dur(ns.min(ACK_DELAY_CAP.as_nanos() as u128) as u64)
    }

    fn classic(&mut self, ack: &AckSample, cwnd: u64, ssthresh: u64) -> bool {
        let Some(delay) = ack.rtt else {
            return false;
        };
        self.note_delay_min(delay);
        let delay = Dur(delay.as_nanos().max(1));
        if self.found || cwnd >= ssthresh {
            return false;
        }
        // Linux: a new round once SND.UNA is after the recorded SND.NXT, on every
        // slow-start ACK, small windows included; only the detection waits for 16 segments
        // ("tcp_cubic: fix incorrect HyStart round start detection", 2025).
        if self.round.is_none_or(|r| r.acked > r.flight) {
            self.begin_round(ack);
            self.last_ack = ack.now;
        }
        if cwnd < LOW_WINDOW_SEGMENTS.saturating_mul(self.mss as u64) {
            return false;
        }
        let delay_min = self.delay_min.unwrap_or(delay);
        let round_start = self.round.map_or(ack.now, |r| r.start);
        // ACK train.
        if ack.now.since(self.last_ack) <= ACK_DELTA {
            self.last_ack = ack.now;
            let mut threshold = delay_min + self.ack_delay(ack, cwnd, ssthresh);
            if !self.paced {
                threshold = Dur(threshold.as_nanos() / 2);
            }
            if ack.now.since(round_start) > threshold {
                self.found = true;
            }
        }
        // Delay increase.
        self.round_min = Some(self.round_min.map_or(delay, |m| m.min(delay)));
        if self.samples < MIN_SAMPLES {
            self.samples += 1;
        } else if self
            .round_min
            .is_some_and(|m| m > delay_min + delay_threshold(delay_min))
        {
            self.found = true;
        }
        self.found
    }

    fn ns3(&mut self, ack: &AckSample, cwnd: u64, ssthresh: u64) -> bool {
        if ack.srtt == Dur::ZERO {
            return false;
        }
        let delay = Dur(ack.srtt.as_nanos().max(1));
        self.note_delay_min(delay);
        if self.round.is_none() {
            self.begin_round(ack);
            self.last_ack = ack.now;
        }
        if !self.found
            && cwnd <= ssthresh
            && cwnd >= LOW_WINDOW_SEGMENTS.saturating_mul(self.mss as u64)
        {
            let delay_min = self.delay_min.unwrap_or(delay);
            let round_start = self.round.map_or(ack.now, |r| r.start);
            if ack.now.since(self.last_ack) <= ACK_DELTA {
                self.last_ack = ack.now;
                if ack.now.since(round_start) > delay_min {
                    self.found = true;
                }
            }
            if self.samples < MIN_SAMPLES {
                self.round_min = Some(self.round_min.map_or(delay, |m| m.min(delay)));
                self.samples += 1;
            } else if self
                .round_min
                .is_some_and(|m| m > delay_min + delay_min.clamp(DELAY_MIN, NS3_DELAY_MAX))
            {
                self.found = true;
            }
            if self.found {
                return true;
            }
        }
        // `IncreaseWindow`: a new round once SND.UNA passes the recorded SND.NXT.
        if ack.cwnd_limited && cwnd < ssthresh && self.round.is_some_and(|r| r.acked > r.flight) {
            self.begin_round(ack);
            self.last_ack = ack.now;
        }
        false
    }

    fn rfc9406(&mut self, ack: &AckSample, cwnd: u64, ssthresh: u64) -> bool {
        if self.done || cwnd >= ssthresh {
            return false;
        }
        if self.round.is_none() {
            // windowEnd = SND.NXT at the first ACK.
            self.begin_round(ack);
        }
        if let Some(rtt) = ack.rtt {
            self.round_min = Some(self.round_min.map_or(rtt, |m| m.min(rtt)));
            self.samples += 1;
        }
        match self.css {
            None => {
                if let (true, Some(cur), Some(last)) = (
                    self.samples >= N_RTT_SAMPLE,
                    self.round_min,
                    self.last_round_min,
                ) {
                    if cur >= last + delay_threshold(last) {
                        self.css = Some(Css {
                            baseline: cur,
                            rounds: 0,
                        });
                        self.css_rem = 0;
                    }
                }
            }
            Some(css) => {
                if self.samples >= N_RTT_SAMPLE && self.round_min.is_some_and(|m| m < css.baseline)
                {
                    // The exit was spurious: back to slow start, HyStart++ included.
                    self.css = None;
                }
            }
        }
        // windowEnd acknowledged: the round ends with this ACK.
        if self.round.is_some_and(|r| r.acked >= r.flight) {
            self.last_round_min = self.round_min;
            self.begin_round(ack);
            if let Some(css) = &mut self.css {
                css.rounds += 1;
                if css.rounds >= CSS_ROUNDS {
                    self.finish();
                    return true;
                }
            }
        }
        false
    }
}

/// clamp(rtt/8, 4 ms, 16 ms): Linux `HYSTART_DELAY_THRESH(delay_min >> 3)` and RFC 9406's
/// RttThresh.
fn delay_threshold(rtt: Dur) -> Dur {
    Dur(rtt.as_nanos() / DELAY_DIVISOR).clamp(DELAY_MIN, DELAY_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;

    fn sample(now: Time, bytes: u64, rtt: Dur, flight: u64) -> AckSample {
        AckSample {
            now,
            bytes_acked: bytes,
            credit: bytes,
            rtt: Some(rtt),
            srtt: rtt,
            min_rtt: rtt,
            bytes_in_flight: flight,
            cwnd_limited: true,
            open: true,
        }
    }

    /// A sender in slow start over a path of `base` RTT plus queueing delay `queue(round)`:
    /// each round the window's segments are acked one by one, evenly spread over the base
    /// RTT (no ACK train), each doubling cwnd. Returns cwnd when slow start ended (at the
    /// ACK that asked), or None if it never did within `rounds`.
    struct Flow {
        hs: HyStart,
        cwnd: u64,
        ssthresh: u64,
        now: Time,
    }

    impl Flow {
        fn new(mode: Hystart, cwnd_segments: u64) -> Flow {
            Flow {
                hs: HyStart::new(mode, MSS),
                cwnd: cwnd_segments * M,
                ssthresh: u64::MAX,
                now: Time(1_000_000_000),
            }
        }

        /// One ACK after `gap`: detection, then growth as the owner does.
        fn ack(&mut self, gap: Dur, rtt: Dur, flight: u64) {
            self.now += gap;
            let a = sample(self.now, M, rtt, flight);
            if self.hs.on_ack(&a, self.cwnd, self.ssthresh) {
                self.ssthresh = self.cwnd;
            }
            if self.cwnd < self.ssthresh {
                self.cwnd += self.hs.slow_start_increase(a.credit);
            }
        }

        /// One round: the cwnd at its start is acked, one segment per ACK spaced `spacing`
        /// apart (the flight after each ACK is what remains of the round plus the new data
        /// sent in reply, which is at least what remains).
        fn round(&mut self, rtt: Dur, spacing: Dur) {
            let n = self.cwnd / M;
            for i in 0..n {
                let remaining = (n - 1 - i) * M;
                let flight = remaining + 2 * (i + 1) * M;
                self.ack(spacing, rtt, flight);
                if self.cwnd >= self.ssthresh {
                    return;
                }
            }
        }
    }

    fn ms(v: u64) -> Dur {
        Dur::from_millis(v)
    }

    fn rto(now: Time) -> CongestionEvent {
        CongestionEvent {
            now,
            bytes_in_flight: 30 * M,
            srtt: ms(40),
            min_rtt: ms(40),
            repeat: false,
        }
    }

    #[test]
    fn ns3_leaves_slow_start_only_when_the_delay_doubles() {
        // 100 ms path, ACKs 5 ms apart (no train); from 32 segments on the queue adds
        // 20 ms (Linux's threshold is 12.5 ms) or 120 ms (ns-3's is 100 ms).
        for (late, exits) in [(120, false), (220, true)] {
            let mut f = Flow::new(Hystart::Ns3, 4);
            for _ in 0..8 {
                let rtt = if f.cwnd >= 32 * M { ms(late) } else { ms(100) };
                f.round(rtt, ms(5));
            }
            assert_eq!(f.hs.found, exits, "queueing delay {late} ms");
            assert_eq!(f.ssthresh < u64::MAX, exits);
        }
    }

    #[test]
    fn ns3_ack_train_must_span_the_whole_min_rtt() {
        // 40 ms path, ACKs 1 ms apart, the round long enough not to end: the 42nd ACK is
        // the first more than 40 ms after the round began (Linux: the 22nd, above).
        let mut f = Flow::new(Hystart::Ns3, 16);
        for i in 0..41 {
            f.ack(ms(1), ms(40), 100 * M);
            assert_eq!(f.ssthresh, u64::MAX, "ack {i}");
        }
        f.ack(ms(1), ms(40), 100 * M);
        assert_eq!(f.ssthresh, 57 * M);
    }

    #[test]
    fn ns3_rto_starts_a_round_at_once() {
        let mut f = Flow::new(Hystart::Ns3, 16);
        for _ in 0..42 {
            f.ack(ms(1), ms(40), 100 * M);
        }
        assert!(f.hs.found);
        f.hs.on_rto(&rto(f.now));
        assert!(!f.hs.found && f.hs.delay_min.is_none());
        assert_eq!(
            f.hs.round.map(|r| (r.start, r.flight)),
            Some((f.now, 30 * M))
        );
    }

    #[test]
    fn delay_threshold_is_an_eighth_clamped() {
        assert_eq!(delay_threshold(ms(10)), ms(4));
        assert_eq!(delay_threshold(ms(80)), ms(10));
        assert_eq!(delay_threshold(ms(600)), ms(16));
    }

    #[test]
    fn classic_leaves_slow_start_when_rtt_rises() {
        // 100 ms path, ACKs 5 ms apart (never a train). The queue adds 20 ms (more than
        // clamp(100/8, 4, 16) = 12.5 ms) from the window of 32 segments on.
        let mut f = Flow::new(Hystart::Classic, 4);
        let mut exit_at = None;
        for _ in 0..12 {
            let rtt = if f.cwnd >= 32 * M { ms(120) } else { ms(100) };
            let start = f.cwnd;
            f.round(rtt, ms(5));
            if f.cwnd >= f.ssthresh {
                exit_at = Some((start, f.ssthresh));
                break;
            }
        }
        let (start, ssthresh) = exit_at.expect("HyStart never left slow start");
        assert_eq!(start, 32 * M);
        // Rounds begin at the first ACK (flight 5 segments), then at the ACK that takes the
        // acked count past the flight at the round's start: the 7th (cwnd 10, flight 11),
        // the 19th (cwnd 22, flight 23) and the 43rd (cwnd 46, the 15th ACK of the
        // 32-segment window). The 19th's round has 100 ms samples from the 16-segment
        // window, so its minimum stays low; the 43rd's first nine are all 120 ms, and the
        // ninth (the 51st ACK, cwnd 46 + 8) triggers. Before Linux's 2025 fix rounds began
        // at the first ACK with 16 segments, and this exit came at 42.
        assert_eq!(ssthresh, 54 * M);
        assert!(f.hs.found);
    }

    #[test]
    fn classic_stays_in_slow_start_when_rtt_is_flat_or_rises_little() {
        for rtt_late in [100, 112] {
            let mut f = Flow::new(Hystart::Classic, 4);
            for _ in 0..10 {
                let rtt = if f.cwnd >= 32 * M {
                    ms(rtt_late)
                } else {
                    ms(100)
                };
                f.round(rtt, ms(5));
            }
            assert_eq!(f.ssthresh, u64::MAX, "rtt {rtt_late}");
            assert_eq!(f.cwnd, (4 * M) << 10);
        }
    }

    #[test]
    fn classic_waits_for_sixteen_segments() {
        // The RTT is high from the start, but nothing is checked below 16 segments.
        let mut f = Flow::new(Hystart::Classic, 2);
        f.round(ms(100), ms(5));
        f.round(ms(200), ms(5));
        f.round(ms(200), ms(5));
        assert_eq!((f.cwnd, f.ssthresh), (16 * M, u64::MAX));
        f.round(ms(200), ms(5));
        // delay_min is 100 ms from the first round; the ninth sample at 16 segments fires.
        assert_eq!(f.ssthresh, 24 * M);
    }

    #[test]
    fn classic_ack_train_spanning_half_the_min_rtt() {
        // 40 ms path, every ACK 1 ms after the previous one (a train), RTT flat. The train
        // must span more than (delay_min + ack_delay)/2 = (40 + 1)/2 = 20.5 ms: the 22nd ACK
        // of the round, 21 ms after the round began at the first.
        let mut f = Flow::new(Hystart::Classic, 16);
        for i in 0..21 {
            f.ack(ms(1), ms(40), 40 * M);
            assert_eq!(f.ssthresh, u64::MAX, "ack {i}");
        }
        f.ack(ms(1), ms(40), 40 * M);
        assert_eq!(f.ssthresh, 37 * M);
        assert!(f.hs.found);
    }

    #[test]
    fn classic_ack_train_paced_needs_the_whole_min_rtt() {
        let mut f = Flow::new(Hystart::Classic, 16);
        f.hs.set_paced(true);
        for _ in 0..42 {
            f.ack(ms(1), ms(40), 100 * M);
        }
        assert_eq!(f.ssthresh, u64::MAX);
        f.ack(ms(1), ms(40), 100 * M); // the 43rd ACK: 42 ms > 40 + 1 ms
        assert!(f.hs.found);
    }

    #[test]
    fn classic_gap_breaks_the_train_until_next_round() {
        let mut f = Flow::new(Hystart::Classic, 16);
        f.ack(ms(1), ms(40), 30 * M); // round starts, flight 30 segments
        f.ack(ms(3), ms(40), 30 * M); // 3 ms gap: chain broken
        for _ in 0..25 {
            f.ack(ms(1), ms(40), 30 * M);
        }
        assert!(!f.hs.found, "train counted across a gap");
        // The round is over once more than its 30 segments are acked (Linux `after`): a
        // new chain starts at that ACK, the 31st.
        for _ in 0..4 {
            f.ack(ms(1), ms(40), 30 * M);
        }
        assert_eq!(f.hs.round.unwrap().acked, 30 * M);
        f.ack(ms(1), ms(40), 30 * M);
        assert!(!f.hs.found);
        let round = f.hs.round.unwrap();
        assert_eq!(round.acked, 0);
        for _ in 0..21 {
            f.ack(ms(1), ms(40), 60 * M);
        }
        assert!(f.hs.found);
    }

    #[test]
    fn ack_delay_is_linux_cushion() {
        let hs = HyStart::new(Hystart::Classic, MSS);
        let a = sample(Time::ZERO, M, ms(10), 0);
        assert_eq!(hs.ack_delay(&a, 20 * M, u64::MAX), ms(1));
        // 2 MB over 10 ms at 200%: 400 MB/s; 4 * 64 KiB of it is 655 us.
        assert_eq!(
            hs.ack_delay(&a, 2_000_000, u64::MAX),
            Dur::from_nanos(655_360)
        );
    }

    #[test]
    fn classic_rto_rearms_it() {
        let mut f = Flow::new(Hystart::Classic, 16);
        for _ in 0..22 {
            f.ack(ms(1), ms(40), 40 * M);
        }
        assert!(f.hs.found);
        f.hs.on_rto(&rto(f.now));
        assert!(!f.hs.found && f.hs.delay_min.is_none() && f.hs.round.is_none());
    }

    /// Slow start at 100 ms until the window is 32 segments, then the first window at 120 ms.
    fn into_css() -> (Flow, u64) {
        let mut f = Flow::new(Hystart::Rfc9406, 4);
        while f.cwnd < 32 * M {
            f.round(ms(100), ms(5));
        }
        assert!(!f.hs.in_css());
        let before = f.cwnd;
        f.round(ms(120), ms(5));
        assert!(f.hs.in_css());
        assert_eq!(f.ssthresh, u64::MAX);
        (f, before)
    }

    #[test]
    fn rfc9406_enters_css_and_grows_at_a_quarter() {
        // Rounds run from the first ACK on and end when the flight at their start has been
        // acked: here the 100 ms round that began at the fourth ACK of the 16-segment
        // window (flight 20) ends at the eighth ACK of the 32-segment window, so the next
        // round's eighth sample is its 16th ACK: 15 ACKs grow by a segment, 17 by a quarter.
        let (mut f, before) = into_css();
        assert_eq!(f.hs.css.unwrap().baseline, ms(120));
        assert_eq!(f.cwnd - before, 15 * M + 17 * M / 4);
        // A whole window in CSS adds a quarter of it.
        let w = f.cwnd / M * M;
        let c = f.cwnd;
        f.round(ms(120), ms(5));
        assert!(f.hs.in_css());
        assert_eq!(f.cwnd - c, w / 4);
    }

    #[test]
    fn rfc9406_leaves_after_five_css_rounds() {
        let (mut f, _) = into_css();
        // The round CSS began in counts; the fifth round's end sets ssthresh = cwnd.
        let mut seen = vec![0];
        while f.ssthresh == u64::MAX {
            let n = f.cwnd / M;
            for _ in 0..n {
                f.ack(ms(5), ms(120), 3 * f.cwnd);
                if let Some(c) = f.hs.css {
                    if seen.last() != Some(&c.rounds) {
                        seen.push(c.rounds);
                    }
                }
                if f.ssthresh != u64::MAX {
                    break;
                }
            }
            assert!(seen.len() <= 5, "{seen:?}");
        }
        assert_eq!(seen, [0, 1, 2, 3, 4]);
        assert!(!f.hs.in_css());
        assert_eq!(f.ssthresh, f.cwnd);
        // RFC 5681 growth from now on: HyStart++ was for the initial slow start.
        assert_eq!(f.hs.slow_start_increase(20 * M), 20 * M);
    }

    #[test]
    fn rfc9406_returns_to_slow_start_when_rtt_falls_back() {
        let (mut f, _) = into_css();
        // The round under way already has its 8 samples; the first one under the 120 ms
        // baseline resumes slow start before its own growth: the window doubles again.
        let w = f.cwnd / M * M;
        let c = f.cwnd;
        f.round(ms(101), ms(5));
        assert!(!f.hs.in_css());
        assert_eq!(f.cwnd - c, w);
        // and HyStart++ is still on: a later rise enters CSS again.
        f.round(ms(130), ms(5));
        f.round(ms(130), ms(5));
        assert!(f.hs.in_css());
    }

    #[test]
    fn rfc9406_flat_rtt_is_plain_slow_start() {
        let mut f = Flow::new(Hystart::Rfc9406, 4);
        for _ in 0..8 {
            f.round(ms(100), ms(5));
        }
        assert!(!f.hs.in_css());
        assert_eq!((f.cwnd, f.ssthresh), ((4 * M) << 8, u64::MAX));
    }

    #[test]
    fn rfc9406_caps_credit_at_l_unless_paced() {
        let mut hs = HyStart::new(Hystart::Rfc9406, MSS);
        assert_eq!(hs.slow_start_increase(20 * M), 8 * M);
        hs.set_paced(true);
        assert_eq!(hs.slow_start_increase(20 * M), 20 * M);
        // Only the initial slow start: after a loss, RFC 5681 growth.
        hs.set_paced(false);
        hs.on_congestion();
        assert_eq!(hs.slow_start_increase(20 * M), 20 * M);
        // Classic and off never change the credit.
        let mut c = HyStart::new(Hystart::Classic, MSS);
        assert_eq!(c.slow_start_increase(20 * M), 20 * M);
    }

    #[test]
    fn rounds_follow_the_flight_at_their_start() {
        // RFC 9406: the round ends when the flight at its start is acked (>=); Linux: when
        // more than it is (after).
        let mut hs = HyStart::new(Hystart::Rfc9406, MSS);
        let mut t = Time(0);
        let mut go = |hs: &mut HyStart, flight| {
            t += ms(1);
            hs.on_ack(&sample(t, M, ms(50), flight), 20 * M, u64::MAX);
        };
        go(&mut hs, 3 * M); // round begins: 3 segments to ack
        go(&mut hs, 4 * M);
        go(&mut hs, 5 * M);
        assert_eq!(hs.round.unwrap().acked, 2 * M);
        go(&mut hs, 6 * M); // third: windowEnd acked, new round of 6
        let r = hs.round.unwrap();
        assert_eq!((r.flight, r.acked), (6 * M, 0));
        assert_eq!(hs.last_round_min, Some(ms(50)));
    }
}

//! The XCP router (Katabi, Handley, Rohrs, SIGCOMM 2002, section 3.5): once per control
//! interval d an efficiency controller turns spare bandwidth and persistent queue into an
//! aggregate window change phi, and a fairness controller turns phi (plus some shuffled
//! traffic) into per-packet feedback that each packet's H_feedback is lowered to.
//!
//! - d is the average RTT of the traffic (section 3.5.1), averaged over packets as ns-2
//!   does (xcp/xcpq.cc, `Te_timeout` L7): sum(rtt_i*w_i) / sum(w_i) with w_i =
//!   rtt_i*s_i/cwnd_i, which counts every flow once whatever its rate. H_rtt is capped at
//!   `max_interval` in that mean, d is floored at `min_interval`, and before any RTT is
//!   known (or after an interval without one) d is `initial_interval`, 50 ms (ns-2's
//!   INITIAL_Te_VALUE). `fixed_interval` replaces all this (RAPPEP: the satellite RTT).
//! - phi = alpha*d*S - beta*Q (section 3.5.1), S = capacity - input rate, Q = the smallest
//!   queue sampled during the interval (at every packet and at the timer).
//! - h = max(0, gamma*y - |phi|), y = input traffic in d; xi_p and xi_n from the sums over
//!   the interval just ended, applied to the packets of the next one (section 3.5.2).
//! - Per packet (section 3.5.2): H_feedback = min(H_feedback, p_i - n_i), rounded to the
//!   nearest byte; a packet without an RTT gets at most zero, as in ns-2; H_cwnd is taken
//!   as at least one packet.
//! - The interval's totals are a budget (section 3.5.2: the fairness controller shares out
//!   h + max(phi, 0) of increase and h + max(-phi, 0) of decrease per interval; xi_p and
//!   xi_n are only estimates of how to split them, from the packets of the interval
//!   before). p_i is at most what is left of the increase and n_i of the decrease, and
//!   each packet's p_i and n_i are taken off them, as the authors' ns-2 router does
//!   (xcpq.cc, BTA_ and BTF_; without its experimental 1.1 on xi). Without the budget a
//!   flow absent from the last interval's sums (its window's packets arrive as one burst
//!   once per RTT and fell just outside it, or it has just started) is given a full share
//!   on top of everyone else's: on RAPPEP's 800 ms path with 1 Gbit/s access links, three
//!   flows starting together were each given the whole of phi and overflowed R1's queue.
//! - Input traffic for `Arrivals` is the bytes shown to `on_packet` and `on_unmarked`.
//! - Every quantity is bytes of window (header feedback is a per-packet cwnd change).
//!
//! The router goes dormant (no timer) after an interval that saw no XCP packet and starts
//! a new interval at the next one; an idle interval allocates nothing, so this only
//! spares the simulator empty timer events.

use super::{Iface, RateMeasure};
use crate::packet::XcpHeader;
use crate::time::{Dur, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct XcpRouterConfig {
    /// Efficiency-controller gain on spare bandwidth (section 3.5.1: 0.4).
    pub alpha: f64,
    /// Efficiency-controller gain on the persistent queue (section 3.5.1: 0.226).
    pub beta: f64,
    pub measure: RateMeasure,
    /// RAPPEP: a fixed control interval (the satellite leg's RTT) instead of the average
    /// RTT carried in the headers.
    pub fixed_interval: Option<Dur>,
    /// Fraction of the traffic shuffled every interval (section 3.5.2: 0.1).
    pub gamma: f64,
    /// Control interval while no RTT is known (ns-2 xcpq.h INITIAL_Te_VALUE, 50 ms).
    pub initial_interval: Dur,
    /// Shortest control interval (ns-2 XCP_MIN_INTERVAL, 1 ms).
    pub min_interval: Dur,
    /// H_rtt is capped at this in the average (ns-2 XCP_MAX_INTERVAL is 1 s; 10 s here so
    /// that GEO paths with long access legs are not cut short).
    pub max_interval: Dur,
}

impl Default for XcpRouterConfig {
    fn default() -> Self {
        XcpRouterConfig {
            alpha: 0.4,
            beta: 0.226,
            measure: RateMeasure::Arrivals,
            fixed_interval: None,
            gamma: 0.1,
            initial_interval: Dur::from_millis(50),
            min_interval: Dur::from_millis(1),
            max_interval: Dur::from_secs(10),
        }
    }
}

/// What the router learns during one control interval.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    /// Packets passed to `on_packet`.
    packets: u64,
    /// IP bytes offered (every packet shown to the router).
    offered: u64,
    /// sum(s_i) over packets with an RTT.
    sum_s: f64,
    /// sum(rtt_i*s_i/cwnd_i) over packets with an RTT, seconds.
    sum_w: f64,
    /// sum(min(rtt_i, max)*rtt_i*s_i/cwnd_i), seconds^2.
    sum_rtt_w: f64,
    /// Smallest queue sampled, bytes.
    min_queue: u64,
    /// The interface's `tx_bytes` when the interval began.
    tx_start: u64,
}

impl Tally {
    fn new(iface: &Iface) -> Tally {
        Tally {
            min_queue: iface.queue_bytes,
            tx_start: iface.tx_bytes,
            ..Tally::default()
        }
    }
}

#[derive(Debug)]
pub struct XcpRouter {
    cfg: XcpRouterConfig,
    /// Length d of the current control interval.
    interval: Dur,
    /// Start of the current interval; `None` while dormant.
    start: Option<Time>,
    tally: Tally,
    /// Fairness-controller coefficients computed at the end of the last interval.
    xi_p: f64,
    xi_n: f64,
    /// What is left this interval of the increase and decrease the last one decided,
    /// bytes (section 3.5.2; ns-2 BTA_ and BTF_).
    increase_left: f64,
    decrease_left: f64,
    /// Outputs of the last interval, for tests and traces.
    phi: f64,
    shuffled: f64,
    input_rate: f64,
    queue: u64,
}

impl XcpRouter {
    pub fn new(cfg: XcpRouterConfig) -> XcpRouter {
        let interval = cfg.fixed_interval.unwrap_or(cfg.initial_interval);
        XcpRouter {
            cfg,
            interval: Dur(interval.as_nanos().max(1)),
            start: None,
            tally: Tally::default(),
            xi_p: 0.0,
            xi_n: 0.0,
            increase_left: 0.0,
            decrease_left: 0.0,
            phi: 0.0,
            shuffled: 0.0,
            input_rate: 0.0,
            queue: 0,
        }
    }

    /// A packet of `size` IP bytes carrying `h` is offered to the interface `iface`: learn
    /// from it and lower `h.feedback` to this router's allocation (never raise it).
    pub fn on_packet(&mut self, now: Time, size: u32, h: &mut XcpHeader, iface: &Iface) {
        self.roll(now, iface);
        let t = &mut self.tally;
        t.packets += 1;
        t.offered = t.offered.saturating_add(size as u64);
        t.min_queue = t.min_queue.min(iface.queue_bytes);
        let rtt = h.rtt.as_secs_f64();
        if rtt > 0.0 && size > 0 {
            let s = size as f64;
            let w = rtt * s / window(h, size);
            t.sum_s += s;
            t.sum_w += w;
            t.sum_rtt_w += rtt.min(self.cfg.max_interval.as_secs_f64()) * w;
        }
        let fb = self.take_allocation(size, h);
        if fb < h.feedback as f64 {
            // `as` saturates; fb is finite and below an i64, so the result is too.
            h.feedback = h.feedback.min(fb.round() as i64);
        }
    }

    /// A packet without an XCP header (an ACK, a non-XCP flow) is offered to the
    /// interface: it loads the link, so it counts in the input traffic (ns-2 xcpq.cc L1
    /// counts every packet). Ignored while dormant.
    pub fn on_unmarked(&mut self, now: Time, size: u32, iface: &Iface) {
        self.handle_timeout(now, iface);
        if self.start.is_some() {
            self.tally.offered = self.tally.offered.saturating_add(size as u64);
            self.tally.min_queue = self.tally.min_queue.min(iface.queue_bytes);
        }
    }

    /// End of the current control interval, if one is running.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.start.map(|s| s + self.interval)
    }

    /// Ends the control interval if it is due; earlier calls are no-ops.
    pub fn handle_timeout(&mut self, now: Time, iface: &Iface) {
        if self.poll_timeout().is_some_and(|end| now >= end) {
            self.end_interval(now, iface);
        }
    }

    /// The control interval d now in force.
    pub fn control_interval(&self) -> Dur {
        self.interval
    }

    /// phi of the last interval, bytes (section 3.5.1).
    pub fn aggregate_feedback(&self) -> f64 {
        self.phi
    }

    /// h of the last interval, bytes (section 3.5.2).
    pub fn shuffled_traffic(&self) -> f64 {
        self.shuffled
    }

    /// Input rate measured over the last interval, bytes/s.
    pub fn input_rate(&self) -> f64 {
        self.input_rate
    }

    /// Persistent queue Q of the last interval, bytes.
    pub fn persistent_queue(&self) -> u64 {
        self.queue
    }

    /// The feedback this router would give a packet of `size` bytes carrying `h` now, bytes
    /// (section 3.5.2): p_i - n_i with p_i = xi_p*rtt_i^2*s_i/cwnd_i, n_i = xi_n*rtt_i*s_i,
    /// each at most what is left of the interval's budget. A packet without an RTT gets
    /// zero, as in ns-2 (xcpq.cc `do_before_packet_departure`).
    pub fn allocation(&self, size: u32, h: &XcpHeader) -> f64 {
        let (p, n) = self.shares(size, h);
        p - n
    }

    /// `allocation`, with its p_i and n_i taken off the interval's budget.
    fn take_allocation(&mut self, size: u32, h: &XcpHeader) -> f64 {
        let (p, n) = self.shares(size, h);
        self.increase_left -= p;
        self.decrease_left -= n;
        p - n
    }

    /// (p_i, n_i) for one packet, both finite, non-negative and within the budget.
    fn shares(&self, size: u32, h: &XcpHeader) -> (f64, f64) {
        let rtt = h.rtt.as_secs_f64();
        if rtt <= 0.0 || size == 0 {
            return (0.0, 0.0);
        }
        let s = size as f64;
        let p = self.xi_p * rtt * rtt * s / window(h, size);
        let n = self.xi_n * rtt * s;
        (within(p, self.increase_left), within(n, self.decrease_left))
    }

    /// Closes an overdue interval before a packet is counted, so the result does not
    /// depend on whether the timer or a packet at the same instant is handled first; wakes
    /// a dormant router.
    fn roll(&mut self, now: Time, iface: &Iface) {
        self.handle_timeout(now, iface);
        if self.start.is_none() {
            self.start = Some(now);
            self.tally = Tally::new(iface);
        }
    }

    /// Section 3.5: the efficiency controller's phi and the fairness controller's xi_p,
    /// xi_n from what the interval just ended measured.
    fn end_interval(&mut self, now: Time, iface: &Iface) {
        let Some(start) = self.start else { return };
        let t = self.tally;
        let elapsed = now.since(start).as_secs_f64().max(1e-9);
        let input = match self.cfg.measure {
            RateMeasure::Arrivals => t.offered,
            RateMeasure::Departures => iface.tx_bytes.saturating_sub(t.tx_start),
        };
        let rate = input as f64 / elapsed;
        let q = t.min_queue.min(iface.queue_bytes);
        self.interval = self.next_interval(&t);
        let d = self.interval.as_secs_f64();

        let capacity = iface.rate_bps as f64 / 8.0;
        let phi = self.cfg.alpha * d * (capacity - rate) - self.cfg.beta * q as f64;
        let y = rate * d; // input traffic in an average RTT
        let h = (self.cfg.gamma * y - phi.abs()).max(0.0);
        self.xi_p = ratio(h + phi.max(0.0), d * t.sum_w);
        self.xi_n = ratio(h + (-phi).max(0.0), d * t.sum_s);
        self.increase_left = h + phi.max(0.0);
        self.decrease_left = h + (-phi).max(0.0);
        (self.phi, self.shuffled, self.input_rate, self.queue) = (phi, h, rate, q);

        if t.packets == 0 {
            self.start = None; // dormant until the next XCP packet
        } else {
            self.start = Some(now);
            self.tally = Tally::new(iface);
        }
    }

    /// d for the next interval (see the module doc).
    fn next_interval(&self, t: &Tally) -> Dur {
        let d = match self.cfg.fixed_interval {
            Some(d) => d,
            None if t.sum_w > 0.0 => Dur::from_secs_f64(t.sum_rtt_w / t.sum_w)
                .max(self.cfg.min_interval)
                .min(self.cfg.max_interval.max(self.cfg.min_interval)),
            None => self.cfg.initial_interval,
        };
        Dur(d.as_nanos().max(1))
    }
}

/// H_cwnd in bytes, at least one packet so that a zero window cannot divide by zero.
fn window(h: &XcpHeader, size: u32) -> f64 {
    h.cwnd.max(size as u64).max(1) as f64
}

/// x clamped to [0, left]; zero when x is not finite.
fn within(x: f64, left: f64) -> f64 {
    if x.is_finite() {
        x.min(left).max(0.0)
    } else {
        0.0
    }
}

/// a / b, or zero when b is not positive or the quotient is not finite.
fn ratio(a: f64, b: f64) -> f64 {
    let r = a / b;
    if b > 0.0 && r.is_finite() {
        r
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CcConfig, CongestionControl, Xcp};
    use crate::rap::Feedback;

    const MS: u64 = 1_000_000;
    const PKT: u32 = 1500;

    fn at(ms: u64) -> Time {
        Time(ms * MS)
    }

    fn iface(mbps: u64, queue: u64, tx: u64) -> Iface {
        Iface {
            rate_bps: mbps * 1_000_000,
            queue_bytes: queue,
            tx_bytes: tx,
            ..Iface::default()
        }
    }

    fn hdr(cwnd: u64, rtt_ms: u64, feedback: i64) -> XcpHeader {
        XcpHeader {
            cwnd,
            rtt: Dur::from_millis(rtt_ms),
            feedback,
        }
    }

    /// `n` packets of one flow, evenly spaced from `from_ms` over `span_ms`.
    fn offer(r: &mut XcpRouter, from_ms: u64, span_ms: u64, n: u64, h: XcpHeader, i: &Iface) {
        for k in 0..n {
            let mut h = h;
            r.on_packet(Time(from_ms * MS + k * span_ms * MS / n), PKT, &mut h, i);
        }
    }

    #[test]
    fn idle_link_gives_positive_feedback() {
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        let link = iface(10, 0, 0);
        assert_eq!(r.poll_timeout(), None);
        // 10 packets (15 kB) of a 100 ms flow in the first, default 50 ms interval.
        offer(&mut r, 0, 50, 10, hdr(15_000, 100, 1 << 30), &link);
        assert_eq!(r.poll_timeout(), Some(at(50)));
        r.handle_timeout(at(50), &link);
        // phi = 0.4 * 0.1 s * (1.25 MB/s - 0.3 MB/s) = 38 kB.
        assert!((r.aggregate_feedback() - 38_000.0).abs() < 1.0);
        assert_eq!(r.control_interval(), Dur::from_millis(100));
        let mut h = hdr(15_000, 100, 1 << 30);
        r.on_packet(at(60), PKT, &mut h, &link);
        assert!(h.feedback > 0 && h.feedback < 1 << 30, "{}", h.feedback);
        // h = 0 (|phi| > gamma*y), so the 10 packets share phi: 3.8 kB each.
        assert!((h.feedback - 3_800).abs() <= 1, "{}", h.feedback);
    }

    #[test]
    fn standing_queue_and_overload_give_negative_feedback() {
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        let busy = iface(10, 60_000, 0);
        // 100 packets in 50 ms is 3 MB/s into a 1.25 MB/s link, over a 60 kB queue.
        offer(&mut r, 0, 50, 100, hdr(150_000, 100, 1 << 30), &busy);
        r.handle_timeout(at(50), &busy);
        assert!(r.aggregate_feedback() < 0.0);
        assert_eq!(r.persistent_queue(), 60_000);
        let mut h = hdr(150_000, 100, 1 << 30);
        r.on_packet(at(55), PKT, &mut h, &busy);
        assert!(h.feedback < 0, "{}", h.feedback);
        // Twice the packets of the interval before take no more than its decrease.
        let budget = -r.aggregate_feedback() + r.shuffled_traffic();
        let mut taken = -h.feedback;
        for k in 0..199 {
            let mut h = hdr(150_000, 100, 1 << 30);
            r.on_packet(Time(56 * MS + k * 100_000), PKT, &mut h, &busy);
            taken -= h.feedback;
        }
        assert!((taken as f64) <= budget + 200.0, "{taken} of {budget}");
        assert!((taken as f64) > 0.99 * budget, "{taken} of {budget}");
    }

    #[test]
    fn departures_measure_counts_transmitted_bytes() {
        let cfg = XcpRouterConfig {
            measure: RateMeasure::Departures,
            ..XcpRouterConfig::default()
        };
        let mut r = XcpRouter::new(cfg);
        // Few packets offered, but the interface sent 125 kB in 50 ms: 2.5 MB/s > 1.25.
        offer(&mut r, 0, 10, 2, hdr(15_000, 100, 0), &iface(10, 0, 1_000));
        r.handle_timeout(at(50), &iface(10, 0, 126_000));
        assert!((r.input_rate() - 2_500_000.0).abs() < 1.0);
        assert!(r.aggregate_feedback() < 0.0);
    }

    #[test]
    fn interval_follows_mean_rtt() {
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        let link = iface(10, 0, 0);
        assert_eq!(r.control_interval(), Dur::from_millis(50));
        // Same window: the 100 ms flow sends three packets for each of the 300 ms flow's.
        offer(&mut r, 0, 30, 3, hdr(15_000, 100, 0), &link);
        offer(&mut r, 40, 1, 1, hdr(15_000, 300, 0), &link);
        r.handle_timeout(at(50), &link);
        assert_eq!(r.control_interval(), Dur::from_millis(200));
        assert_eq!(r.poll_timeout(), Some(at(250)));
        // Only the 300 ms flow now.
        offer(&mut r, 100, 50, 5, hdr(15_000, 300, 0), &link);
        r.handle_timeout(at(250), &link);
        assert_eq!(r.control_interval(), Dur::from_millis(300));
        // No RTT at all: back to the default.
        offer(&mut r, 300, 50, 5, hdr(15_000, 0, 0), &link);
        r.handle_timeout(at(550), &link);
        assert_eq!(r.control_interval(), Dur::from_millis(50));
    }

    #[test]
    fn fixed_interval_is_kept() {
        let cfg = XcpRouterConfig {
            fixed_interval: Some(Dur::from_millis(600)),
            ..XcpRouterConfig::default()
        };
        let mut r = XcpRouter::new(cfg);
        let link = iface(10, 0, 0);
        offer(&mut r, 10, 100, 10, hdr(15_000, 100, 0), &link);
        assert_eq!(r.poll_timeout(), Some(at(610)));
        r.handle_timeout(at(610), &link);
        assert_eq!(r.control_interval(), Dur::from_millis(600));
        assert_eq!(r.poll_timeout(), Some(at(1210)));
    }

    #[test]
    fn early_timeout_is_a_no_op_and_idle_router_sleeps() {
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        let link = iface(10, 0, 0);
        r.handle_timeout(at(5), &link); // nothing running
        offer(&mut r, 0, 10, 4, hdr(15_000, 100, 0), &link);
        r.handle_timeout(at(49), &link);
        assert_eq!(
            (r.poll_timeout(), r.aggregate_feedback()),
            (Some(at(50)), 0.0)
        );
        r.handle_timeout(at(50), &link);
        r.handle_timeout(at(150), &link); // an interval without packets
        assert_eq!(r.poll_timeout(), None);
        // Woken by the next packet, which gets nothing: the idle interval allocated
        // nothing, and it carried no RTT, so d is the default again (ns-2).
        let mut h = hdr(15_000, 100, 1 << 30);
        r.on_packet(at(400), PKT, &mut h, &link);
        assert_eq!((h.feedback, r.poll_timeout()), (0, Some(at(450))));
    }

    /// Section 3.5.2: an interval hands out at most h + max(phi, 0) of increase, however
    /// many more packets it sees than the interval its xi_p was computed from. On
    /// RAPPEP's path one flow's three packets made the interval before; three more flows'
    /// first windows arrived in the next, and each was given the whole of phi.
    #[test]
    fn an_interval_hands_out_no_more_increase_than_it_decided() {
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        let link = iface(10, 0, 0);
        let first = hdr(3 * PKT as u64, 800, 1 << 40);
        offer(&mut r, 0, 1, 3, first, &link);
        r.handle_timeout(at(50), &link);
        let budget = r.aggregate_feedback() + r.shuffled_traffic();
        assert!(
            budget > 300_000.0,
            "an idle 10 Mbit/s, 800 ms link: {budget}"
        );
        let mut given = 0i64;
        for flow in 0..4 {
            for k in 0..3 {
                let mut h = first;
                r.on_packet(at(100 + 10 * flow + k), PKT, &mut h, &link);
                assert!(h.feedback >= 0, "{}", h.feedback);
                given += h.feedback;
            }
        }
        assert!(
            (given as f64) <= budget + 12.0,
            "handed out {given} of a budget of {budget}"
        );
        // The first flow's window took it all; the next interval starts afresh.
        assert!((given as f64) > 0.99 * budget, "{given} of {budget}");
    }

    #[test]
    fn feedback_is_never_raised() {
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        let link = iface(10, 0, 0);
        offer(&mut r, 0, 50, 10, hdr(15_000, 100, 0), &link);
        r.handle_timeout(at(50), &link);
        assert!(r.aggregate_feedback() > 0.0);
        // An upstream router already asked for less.
        let mut h = hdr(15_000, 100, -7);
        r.on_packet(at(60), PKT, &mut h, &link);
        assert_eq!(h.feedback, -7);
        // No RTT yet: at most zero.
        let mut h = hdr(15_000, 0, 500);
        r.on_packet(at(61), PKT, &mut h, &link);
        assert_eq!(h.feedback, 0);
        // A zero window or a zero-sized packet neither panics nor raises.
        for (cwnd, size) in [(0, PKT), (15_000, 0), (0, 0)] {
            let mut h = hdr(cwnd, 100, 10_000_000);
            r.on_packet(at(62), size, &mut h, &link);
            assert!(h.feedback <= 10_000_000);
        }
        let mut h = hdr(u64::MAX, u64::MAX / MS, 1_000);
        r.on_packet(at(63), PKT, &mut h, &link);
        assert!(h.feedback <= 1_000);
    }

    /// Closed loop on bare state: flows with one RTT share a fluid link. Every round each
    /// flow sends its window spread over the RTT; the router sees every packet; the
    /// feedback comes back (one ACK per packet) at the end of the round.
    #[test]
    fn flows_converge_to_fair_full_link() {
        const RTT_MS: u64 = 100;
        const RATE: u64 = 12_000_000; // 1.5 MB/s: BDP = 150 kB = 100 packets
        let bdp = (RATE / 8 * RTT_MS / 1000) as f64;
        let mut r = XcpRouter::new(XcpRouterConfig::default());
        let mut flows: Vec<Xcp> = [60u64, 2, 3]
            .iter()
            .map(|&n| {
                Xcp::new(CcConfig {
                    initial_window: n * PKT as u64,
                    ..CcConfig::new(PKT)
                })
            })
            .collect();
        let (mut queue, mut sent, mut last) = (0f64, 0u64, 0u64);
        for round in 0..40u64 {
            let t0 = round * RTT_MS * MS;
            // Interleave the flows' packets in time order.
            let mut pkts: Vec<(u64, usize)> = Vec::new();
            for (i, f) in flows.iter().enumerate() {
                let n = f.cwnd() / PKT as u64;
                pkts.extend((0..n).map(|k| (t0 + k * RTT_MS * MS / n + i as u64, i)));
            }
            pkts.sort_unstable();
            let mut echoes = vec![Vec::new(); flows.len()];
            for (t, i) in pkts {
                // The fluid queue drains at the link rate between packets.
                let drained = (RATE as f64 / 8.0) * (t - last) as f64 * 1e-9;
                let out = drained.min(queue);
                queue -= out;
                sent += out as u64;
                last = t;
                let link = iface(RATE / 1_000_000, queue as u64, sent);
                if let Some(end) = r.poll_timeout() {
                    if end.0 <= t {
                        r.handle_timeout(end, &link);
                    }
                }
                let Some(crate::packet::RouterFeedback::Xcp(mut h)) =
                    flows[i].request(Dur::from_millis(RTT_MS))
                else {
                    panic!("raw XCP must stamp a header");
                };
                r.on_packet(Time(t), PKT, &mut h, &link);
                queue += PKT as f64;
                echoes[i].push(h.feedback);
            }
            for (f, fbs) in flows.iter_mut().zip(echoes) {
                for fb in fbs {
                    f.on_feedback(Time(t0 + RTT_MS * MS), Feedback::Window(fb));
                }
            }
        }
        let w: Vec<f64> = flows.iter().map(|f| f.cwnd() as f64).collect();
        let total: f64 = w.iter().sum();
        assert!(
            (total - bdp).abs() < 0.1 * bdp,
            "sum {total} vs BDP {bdp}: {w:?}"
        );
        let mean = total / w.len() as f64;
        for x in &w {
            assert!((x - mean).abs() < 0.15 * mean, "unfair: {w:?}");
        }
    }
}

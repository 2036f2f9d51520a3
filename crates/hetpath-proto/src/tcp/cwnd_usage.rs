//! Whether the sender is using its window (RFC 7661 "cwnd-limited"), tracked as Linux
//! does (`tcp_cwnd_validate`, `tcp_is_cwnd_limited` in net/ipv4/tcp_output.c and
//! include/net/tcp.h): over each window of data, did the sender ever have the window
//! full? In slow start it also counts as limited while cwnd is under twice the largest
//! flight of the last window, so that slow start can double what was actually sent.

#[derive(Clone, Copy, Debug, Default)]
pub struct CwndUsage {
    limited: bool,
    /// Largest flight seen in the current window.
    max_flight: u64,
    /// The window ends when this sequence number is acknowledged.
    window_end: u64,
}

impl CwndUsage {
    /// After a transmission attempt: `limited` if the window stopped the sender (or is
    /// now full).
    pub fn on_attempt(&mut self, limited: bool, flight: u64, snd_una: u64, snd_max: u64) {
        if snd_una >= self.window_end || limited || (!self.limited && flight > self.max_flight) {
            self.limited = limited;
            self.max_flight = flight;
            self.window_end = snd_max;
        }
    }

    pub fn is_limited(&self, cwnd: u64, ssthresh: u64) -> bool {
        self.limited || (cwnd < ssthresh && cwnd < 2 * self.max_flight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_application_limited_sender_is_not_cwnd_limited() {
        let mut u = CwndUsage::default();
        // Two segments out against a 10-segment window, in congestion avoidance.
        u.on_attempt(false, 2_000, 1, 2_001);
        assert!(!u.is_limited(10_000, 5_000));
        // In slow start a window under twice the flight still counts as used...
        assert!(u.is_limited(3_000, 100_000));
        // ...and a full window always does.
        u.on_attempt(true, 10_000, 1, 10_001);
        assert!(u.is_limited(10_000, 5_000));
    }
}

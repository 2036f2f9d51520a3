//! `ReplayWindow`: which packet numbers of the peer's current epoch were already
//! accepted (RFC 4303 §3.4.3's sliding window, RFC 6479's bitmap): a number above the
//! highest seen moves the window, one inside it is accepted once, one below it is
//! rejected. Updated only after the datagram authenticated (`check`, then `commit`), so
//! forged datagrams cannot move it.

/// Packet numbers remembered below the highest one.
pub const WINDOW: u64 = 1024;
const WORDS: usize = (WINDOW / 64) as usize;

#[derive(Clone, Debug)]
pub struct ReplayWindow {
    /// The highest number accepted, if any.
    top: Option<u64>,
    /// Bit `n % WINDOW`: number `n` (within the window) was accepted.
    bits: [u64; WORDS],
}

impl Default for ReplayWindow {
    fn default() -> Self {
        ReplayWindow {
            top: None,
            bits: [0; WORDS],
        }
    }
}

impl ReplayWindow {
    fn bit(n: u64) -> (usize, u64) {
        let i = n % WINDOW;
        ((i / 64) as usize, 1 << (i % 64))
    }

    /// Whether `n` would be accepted (new and not too old).
    pub fn check(&self, n: u64) -> bool {
        match self.top {
            None => true,
            Some(top) if n > top => true,
            Some(top) if top - n >= WINDOW => false,
            Some(_) => {
                let (w, b) = Self::bit(n);
                self.bits[w] & b == 0
            }
        }
    }

    /// Records `n` as accepted; returns false (and changes nothing) if `check` fails.
    pub fn commit(&mut self, n: u64) -> bool {
        if !self.check(n) {
            return false;
        }
        match self.top {
            Some(top) if n <= top => {}
            top => {
                // Forget the numbers the window slides past.
                let from = top.map_or(0, |t| t + 1);
                if n - from >= WINDOW || top.is_none() {
                    self.bits = [0; WORDS];
                } else {
                    for m in from..n {
                        let (w, b) = Self::bit(m);
                        self.bits[w] &= !b;
                    }
                }
                self.top = Some(n);
            }
        }
        let (w, b) = Self::bit(n);
        self.bits[w] |= b;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_number_once_reordering_inside_the_window_and_nothing_older() {
        let mut r = ReplayWindow::default();
        assert!(r.commit(5));
        assert!(!r.commit(5), "replay");
        assert!(r.commit(3), "late but new");
        assert!(!r.commit(3));
        assert!(r.commit(5 + WINDOW - 1));
        assert!(!r.check(5), "seen");
        assert!(!r.check(4), "just below the window");
        assert!(r.commit(6), "the window's lowest number");
        assert!(r.commit(5 + 3 * WINDOW));
        assert!(!r.check(5 + WINDOW - 1), "slid out");
        assert!(
            r.commit(5 + 2 * WINDOW + 1),
            "inside, after a jump: its bit was cleared"
        );
    }
}

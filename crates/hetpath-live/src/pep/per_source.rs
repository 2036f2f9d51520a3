//! Connections held per client address (`max_connections_per_source`), so that one
//! client cannot take every slot under `max_connections`. Memory follows the sources
//! with connections open: an address is forgotten with its last connection.

use std::collections::HashMap;
use std::net::Ipv4Addr;

pub struct PerSource {
    limit: usize,
    held: HashMap<Ipv4Addr, usize>,
}

impl PerSource {
    pub fn new(limit: usize) -> PerSource {
        PerSource {
            limit,
            held: HashMap::new(),
        }
    }

    /// Counts one more connection from `src`; false (and not counted) at the limit.
    pub fn admit(&mut self, src: Ipv4Addr) -> bool {
        let n = self.held.entry(src).or_insert(0);
        if *n >= self.limit {
            return false;
        }
        *n += 1;
        true
    }

    /// One connection from `src` ended.
    pub fn release(&mut self, src: Ipv4Addr) {
        if let Some(n) = self.held.get_mut(&src) {
            *n -= 1;
            if *n == 0 {
                self.held.remove(&src);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_at_its_limit_waits_for_one_of_its_own_to_end() {
        let (a, b) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
        let mut p = PerSource::new(2);
        assert!(p.admit(a) && p.admit(a));
        assert!(!p.admit(a), "a third from the same source");
        assert!(p.admit(b), "another source is not held back");
        p.release(a);
        assert!(p.admit(a));
        p.release(a);
        p.release(a);
        p.release(b);
        assert!(p.held.is_empty(), "forgotten with the last connection");
    }
}

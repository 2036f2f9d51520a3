//! A set of sequence numbers kept as disjoint runs: what a receiver holds above a gap,
//! in the blocks its acknowledgements code (an ESW-ACK's blocks of contiguous cells, seed
//! 001 section IV; an SCTP SACK's Gap Ack Blocks, RFC 4960 section 3.3.4). Coding an
//! acknowledgement then costs the number of blocks, not the number of items held.

use std::collections::BTreeMap;

/// Disjoint, non-adjacent half-open runs `[start, end)`, merged on insert.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunSet {
    /// start -> end.
    runs: BTreeMap<u64, u64>,
}

impl RunSet {
    pub fn contains(&self, x: u64) -> bool {
        self.runs
            .range(..=x)
            .next_back()
            .is_some_and(|(_, &end)| x < end)
    }

    /// Adds `x` (no-op if present), merging with the runs it touches.
    pub fn insert(&mut self, x: u64) {
        if self.contains(x) || x == u64::MAX {
            return;
        }
        let before = self
            .runs
            .range(..x)
            .next_back()
            .filter(|(_, &end)| end == x)
            .map(|(&start, _)| start);
        let after = self.runs.remove(&(x + 1));
        let end = after.unwrap_or(x + 1);
        match before {
            Some(start) => {
                self.runs.insert(start, end);
            }
            None => {
                self.runs.insert(x, end);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The lowest run.
    pub fn first(&self) -> Option<(u64, u64)> {
        self.runs.first_key_value().map(|(&s, &e)| (s, e))
    }

    pub fn pop_first(&mut self) -> Option<(u64, u64)> {
        self.runs.pop_first()
    }

    /// Runs, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.runs.iter().map(|(&s, &e)| (s, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_neighbours() {
        let mut r = RunSet::default();
        for x in [5, 7, 3, 6, 10, 4] {
            r.insert(x);
        }
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(3, 8), (10, 11)]);
        assert!(r.contains(7) && !r.contains(8) && !r.contains(2));
        r.insert(9);
        r.insert(8);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(3, 11)]);
        assert_eq!(r.pop_first(), Some((3, 11)));
        assert_eq!(r.first(), None);
    }
}

//! Static routes: the first link direction from a node toward a destination, by hop
//! count, ties to the link declared first. They are computed per destination on first
//! use, from one reverse breadth-first search (O(nodes + links)), and kept until the
//! topology changes: adding flows or machines keeps them. A dense table per destination
//! is one index on the packet path; past `DENSE_MAX_NODES` nodes only the hops of paths
//! asked for are kept, so memory stays linear in nodes + links.

use super::DirId;
use crate::link::LinkDir;
use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Above this many nodes a full table per destination could reach gigabytes.
pub(super) const DENSE_MAX_NODES: usize = 4096;

/// No route (also: not yet reached by the search).
const NONE: u32 = u32::MAX;

pub(super) struct Routes {
    /// Per node, the wired link directions leaving it, in the order declared.
    out: Vec<Vec<u32>>,
    /// Per node, the wired link directions reaching it.
    into: Vec<Vec<u32>>,
    /// Per link direction, its near and far nodes.
    from: Vec<u32>,
    to: Vec<u32>,
    /// Packets for the mobile host go to its home agent: (mobile host, home agent).
    home: Option<(u32, u32)>,
    table: Table,
}

enum Table {
    /// Per destination, the first hop from every node, once asked for.
    Dense(Vec<OnceCell<Box<[u32]>>>),
    /// (node, destination) -> first hop, filled along each path asked for.
    Sparse(RefCell<HashMap<(u32, u32), u32, BuildHasherDefault<PairHasher>>>),
}

impl Routes {
    /// `wired(d)`: whether link direction `d` carries static routes (the mobile host's
    /// wireless links do not).
    pub(super) fn new(
        nodes: usize,
        dirs: &[LinkDir],
        wired: impl Fn(usize) -> bool,
        home: Option<(u32, u32)>,
    ) -> Routes {
        Self::with_layout(nodes, dirs, wired, home, nodes <= DENSE_MAX_NODES)
    }

    fn with_layout(
        nodes: usize,
        dirs: &[LinkDir],
        wired: impl Fn(usize) -> bool,
        home: Option<(u32, u32)>,
        dense: bool,
    ) -> Routes {
        let mut out = vec![Vec::new(); nodes];
        let mut into = vec![Vec::new(); nodes];
        for (i, d) in dirs.iter().enumerate() {
            if wired(i) {
                out[d.params.from.index()].push(i as u32);
                into[d.params.to.index()].push(i as u32);
            }
        }
        let table = if dense {
            Table::Dense((0..nodes).map(|_| OnceCell::new()).collect())
        } else {
            Table::Sparse(RefCell::default())
        };
        Routes {
            out,
            into,
            from: dirs.iter().map(|d| d.params.from.0).collect(),
            to: dirs.iter().map(|d| d.params.to.0).collect(),
            home,
            table,
        }
    }

    /// The first hop from `node` toward `dst` (a node index), if `dst` can be reached.
    #[inline]
    pub(super) fn next_hop(&self, node: u32, dst: u32) -> Option<DirId> {
        let dst = match self.home {
            Some((mh, ha)) if dst == mh && node != mh => ha,
            _ => dst,
        };
        let (n, t) = (node as usize, dst as usize);
        // The packet path: a column already built, one index.
        if let Table::Dense(cols) = &self.table {
            if let Some(&hop) = cols.get(t).and_then(OnceCell::get).and_then(|c| c.get(n)) {
                return (hop != NONE).then_some(DirId(hop));
            }
        }
        self.next_hop_cold(n, t)
    }

    /// A column not built yet, the sparse table, or a node out of range.
    #[cold]
    fn next_hop_cold(&self, n: usize, t: usize) -> Option<DirId> {
        if n >= self.out.len() || t >= self.out.len() {
            return None;
        }
        let hop = match &self.table {
            Table::Dense(cols) => cols[t].get_or_init(|| self.column(t))[n],
            Table::Sparse(cache) => {
                let hit = cache.borrow().get(&(n as u32, t as u32)).copied();
                hit.unwrap_or_else(|| self.fill_path(cache, n, t))
            }
        };
        (hop != NONE).then_some(DirId(hop))
    }

    /// Hop counts to `t` from every node (`NONE`: unreachable).
    fn distances(&self, t: usize) -> Vec<u32> {
        let mut dist = vec![NONE; self.out.len()];
        dist[t] = 0;
        let mut frontier = std::collections::VecDeque::from([t]);
        while let Some(v) = frontier.pop_front() {
            for &d in &self.into[v] {
                let u = self.from[d as usize] as usize;
                if dist[u] == NONE {
                    dist[u] = dist[v] + 1;
                    frontier.push_back(u);
                }
            }
        }
        dist
    }

    /// The first direction declared from `u` that is one hop nearer to the destination.
    fn hop(&self, u: usize, dist: &[u32]) -> u32 {
        if dist[u] == NONE || dist[u] == 0 {
            return NONE;
        }
        self.out[u]
            .iter()
            .copied()
            .find(|&d| dist[self.to[d as usize] as usize] == dist[u] - 1)
            .unwrap_or(NONE)
    }

    fn column(&self, t: usize) -> Box<[u32]> {
        let dist = self.distances(t);
        (0..self.out.len()).map(|u| self.hop(u, &dist)).collect()
    }

    /// Computes the path from `n` to `t` and keeps the first hop of every node on it.
    #[cold]
    fn fill_path(
        &self,
        cache: &RefCell<HashMap<(u32, u32), u32, BuildHasherDefault<PairHasher>>>,
        n: usize,
        t: usize,
    ) -> u32 {
        let dist = self.distances(t);
        let mut cache = cache.borrow_mut();
        let first = self.hop(n, &dist);
        let mut u = n;
        loop {
            let hop = self.hop(u, &dist);
            cache.insert((u as u32, t as u32), hop);
            if hop == NONE {
                break;
            }
            u = self.to[hop as usize] as usize;
            if u == t || cache.contains_key(&(u as u32, t as u32)) {
                break;
            }
        }
        first
    }
}

/// A multiplicative hash for (node, destination) pairs: the sparse table is read once per
/// hop, where SipHash would cost more than the lookup it guards.
#[derive(Default)]
pub(super) struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::NoLoss;
    use crate::link::LinkParams;
    use crate::sim::NodeId;
    use hetpath_proto::Dur;
    use std::collections::VecDeque;

    fn dir(from: u32, to: u32) -> LinkDir {
        let params = LinkParams {
            name: "l".into(),
            from: NodeId(from),
            to: NodeId(to),
            rate_bps: 1,
            delay: Dur::ZERO,
            queue: crate::units::QueueLimit::Packets(1),
        };
        LinkDir::new(params, Box::new(NoLoss))
    }

    /// The routes as they were computed before the sparse table: a BFS from every source, the
    /// first hop inherited from the node that discovered each.
    fn all_pairs(nodes: usize, dirs: &[LinkDir]) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); nodes];
        for (i, d) in dirs.iter().enumerate() {
            out[d.params.from.index()].push(i as u32);
        }
        (0..nodes)
            .map(|src| {
                let mut first = vec![NONE; nodes];
                let mut seen = vec![false; nodes];
                seen[src] = true;
                let mut frontier = VecDeque::from([src]);
                while let Some(u) = frontier.pop_front() {
                    for &d in &out[u] {
                        let v = dirs[d as usize].params.to.index();
                        if !seen[v] {
                            seen[v] = true;
                            first[v] = if u == src { d } else { first[u] };
                            frontier.push_back(v);
                        }
                    }
                }
                first
            })
            .collect()
    }

    #[test]
    fn both_layouts_give_the_routes_of_a_search_from_every_source() {
        let mut x: u64 = 7;
        let mut draw = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % n) as u32
        };
        for case in 0..60 {
            let nodes = 2 + (case % 25) as usize;
            let links = draw(3 * nodes as u64) as usize;
            let mut dirs = Vec::new();
            for _ in 0..links {
                let (a, b) = (draw(nodes as u64), draw(nodes as u64));
                if a != b {
                    dirs.push(dir(a, b));
                    if draw(4) != 0 {
                        dirs.push(dir(b, a)); // mostly both ways, as links are
                    }
                }
            }
            let want = all_pairs(nodes, &dirs);
            for dense in [true, false] {
                let r = Routes::with_layout(nodes, &dirs, |_| true, None, dense);
                for (s, row) in want.iter().enumerate() {
                    for (t, &w) in row.iter().enumerate() {
                        let got = r.next_hop(s as u32, t as u32).map_or(NONE, |d| d.0);
                        assert_eq!(got, w, "case {case} dense {dense}: {s} -> {t}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_long_chain_keeps_only_the_hops_asked_for() {
        let n = 20_000u32;
        let dirs: Vec<LinkDir> = (0..n - 1)
            .flat_map(|i| [dir(i, i + 1), dir(i + 1, i)])
            .collect();
        let r = Routes::new(n as usize, &dirs, |_| true, None);
        assert!(matches!(r.table, Table::Sparse(_)));
        assert_eq!(r.next_hop(0, n - 1), Some(DirId(0)));
        assert_eq!(r.next_hop(n - 1, 0), Some(DirId(2 * (n - 2) + 1)));
        let Table::Sparse(cache) = &r.table else {
            unreachable!()
        };
        assert!(cache.borrow().len() <= 2 * n as usize);
    }
}

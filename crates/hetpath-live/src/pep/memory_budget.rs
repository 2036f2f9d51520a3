//! The PEP's memory budget (`memory_limit`, docs/live.md "The PEP"): the most its relay
//! buffers may occupy. At load, `max_connections` times the most one connection can
//! hold (two buffers of `buffer_bytes` in whole pages: integrated mode's two rings,
//! gateway mode's send and receive buffers) must fit in it, or the file is refused. At
//! run time the daemons report the bytes actually mapped (`page_buf.rs`; they follow the
//! bytes in flight, so usually far less), and admit a connection only if the open
//! connections' worst case and its own fit (`MemoryBudget::admits`), refusing it with a
//! reset otherwise: the bound holds at every admission by construction, not only
//! through `max_connections` (with a file that passed the start check the two refuse
//! the same connections).

use super::page_buf::mapped_len;
use serde::Deserialize;

/// `memory_limit` when not given: 1 GiB. Eight times the defaults' worst case (256
/// connections × 2 × 256 KiB = 128 MiB), and an amount a host that forwards a satellite
/// link's traffic can spare beside the kernel's own socket buffers; a configuration
/// that needs more says so with `memory_limit`.
pub const DEFAULT_MEMORY_LIMIT: u64 = 1 << 30;
/// The accepted range: 1 MiB to 1 TiB.
pub const MEMORY_LIMIT_RANGE: (u64, u64) = (1 << 20, 1 << 40);

/// `memory_limit` as written: bytes, or a size with a unit ("512MiB").
#[derive(Deserialize)]
#[serde(untagged)]
pub enum RawSize {
    Bytes(u64),
    Text(String),
}

/// The bytes `raw` names, or what was expected.
pub fn parse_limit(raw: Option<&RawSize>) -> Result<u64, String> {
    let (lo, hi) = MEMORY_LIMIT_RANGE;
    let expect = |got: String| {
        format!(
            "a size from 1MiB to 1TiB, in bytes or with a unit (\"512MiB\", \"2GiB\"), got {got}"
        )
    };
    let v = match raw {
        None => return Ok(DEFAULT_MEMORY_LIMIT),
        Some(RawSize::Bytes(n)) => *n,
        Some(RawSize::Text(s)) => match s.parse::<hetpath_sim::units::Bytes>() {
            Ok(b) => b.0,
            Err(_) => return Err(expect(format!("'{s}'"))),
        },
    };
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(expect(v.to_string()))
    }
}

/// The most one connection's buffers occupy: two of `buffer_bytes`, in whole pages.
pub fn per_connection(buffer_bytes: usize) -> u64 {
    2 * mapped_len(buffer_bytes) as u64
}

/// The start check: `Err` (what was expected of `memory_limit`) when `max_connections`
/// connections at their fullest would not fit in `limit`.
pub fn check(max_connections: usize, buffer_bytes: usize, limit: u64) -> Result<(), String> {
    let each = per_connection(buffer_bytes);
    let most = each.saturating_mul(max_connections as u64);
    if most <= limit {
        return Ok(());
    }
    Err(format!(
        "at least max_connections × 2 × buffer_bytes (in pages) = {max_connections} × {each} = {most} bytes ({}), got {limit} ({}); lower max_connections or buffer_bytes, or raise memory_limit",
        mib(most),
        mib(limit)
    ))
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// The run-time side: the limit and one connection's worst case.
#[derive(Clone, Copy, Debug)]
pub struct MemoryBudget {
    pub limit: u64,
    pub per_connection: u64,
}

impl MemoryBudget {
    pub fn new(limit: u64, buffer_bytes: usize) -> MemoryBudget {
        MemoryBudget {
            limit,
            per_connection: per_connection(buffer_bytes),
        }
    }

    /// Whether a new connection may open while `reserved` bytes are the open
    /// connections' worst case: it may if its own worst case fits beside them.
    pub fn admits(&self, reserved: u64) -> bool {
        reserved.saturating_add(self.per_connection) <= self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_bytes_or_a_size_within_its_range() {
        assert_eq!(parse_limit(None), Ok(DEFAULT_MEMORY_LIMIT));
        assert_eq!(parse_limit(Some(&RawSize::Bytes(1 << 21))), Ok(1 << 21));
        let text = |s: &str| parse_limit(Some(&RawSize::Text(s.into())));
        assert_eq!(text("512MiB"), Ok(512 << 20));
        assert_eq!(text("2GiB"), Ok(2 << 30));
        assert!(text("512").unwrap_err().contains("got '512'"));
        assert!(text("lots").is_err());
        assert!(parse_limit(Some(&RawSize::Bytes(1000))).is_err());
        assert!(text("2TiB").is_err());
    }

    #[test]
    fn the_start_check_compares_the_worst_case_with_the_limit() {
        let each = per_connection(256 << 10);
        assert_eq!(each, 512 << 10);
        assert_eq!(check(256, 256 << 10, 128 << 20), Ok(()));
        let e = check(257, 256 << 10, 128 << 20).unwrap_err();
        assert!(e.contains("257 × 524288 = 134742016 bytes"), "{e}");
        assert!(e.contains("got 134217728 (128.0 MiB)"), "{e}");
        // Rounded to pages: 1 KiB buffers cost a page each.
        assert_eq!(per_connection(1024), 2 * mapped_len(1) as u64);
    }

    #[test]
    fn a_connection_is_admitted_only_if_its_worst_case_fits() {
        let b = MemoryBudget::new(1 << 20, 256 << 10);
        assert!(b.admits(0));
        assert!(b.admits(512 << 10));
        assert!(!b.admits((512 << 10) + 1));
    }
}

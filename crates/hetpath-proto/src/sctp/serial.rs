//! 32-bit TSNs widened to 64 bits, so that the association compares them with `<`.
//!
//! TSNs wrap (RFC 4960 section 1.6, serial number arithmetic of RFC 1982). Inside the
//! machine every TSN is a `u64` whose low 32 bits are the wire value; a wire TSN is
//! widened to the `u64` nearest a reference the machine knows (its cumulative TSN), which
//! is right whenever the two are less than 2^31 apart, as section 1.6 requires.

/// The first widened TSN: the initial TSN lifted by 2^32 so that widening never
/// underflows.
pub(super) fn first(initial_tsn: u32) -> u64 {
    (1 << 32) | initial_tsn as u64
}

/// The 64-bit TSN with low bits `tsn` nearest `near`.
pub(super) fn widen(near: u64, tsn: u32) -> u64 {
    let diff = tsn.wrapping_sub(near as u32) as i32;
    near.wrapping_add_signed(diff as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widening_crosses_the_wrap() {
        let near = first(u32::MAX - 1);
        assert_eq!(widen(near, u32::MAX), near + 1);
        assert_eq!(widen(near, 0), near + 2);
        assert_eq!(widen(near, 5), near + 7);
        assert_eq!(widen(near + 7, u32::MAX - 3), near - 2);
        assert_eq!(widen(first(0), 0), 1 << 32);
    }
}

//! Netdev features by name (`ETHTOOL_GFEATURES`/`ETHTOOL_SFEATURES`, the interface
//! `ethtool -K` uses), for the offloads the legacy one-flag commands do not reach: the
//! legacy `ETHTOOL_STSO` clears only the four TSO flags its kernel knew
//! (`NETIF_F_ALL_TSO`), and a newer kernel has more (`tx-tcp-accecn-segmentation`), so
//! `ethtool -k` still said `tcp-segmentation-offload: on` after it.

use std::io;
use std::os::fd::RawFd;

const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
const ETHTOOL_GFEATURES: u32 = 0x3a;
const ETHTOOL_SFEATURES: u32 = 0x3b;
const ETH_SS_FEATURES: u32 = 4;
const ETH_GSTRING_LEN: usize = 32;

/// Features turned off by [`off`], to put back with [`restore`]: per 32-bit block, the
/// bits changed and what was requested before.
#[derive(Debug, Clone, Default)]
pub struct SavedFeatures {
    changed: Vec<u32>,
    requested: Vec<u32>,
}

/// Whether `name` is a TCP segmentation offload (`ethtool -k` lists these under
/// `tcp-segmentation-offload`: `tx-tcp-segmentation`, `tx-tcp6-segmentation`, ...).
pub fn is_tso(name: &str) -> bool {
    name.starts_with("tx-tcp") && name.ends_with("-segmentation")
}

/// Turns off every active feature of interface `name` (asked through socket `fd`) whose
/// name `pick` selects; what changed, to restore, and whether any stays on (fixed by
/// the driver, or refused).
pub fn off(fd: RawFd, name: &str, pick: fn(&str) -> bool) -> io::Result<(SavedFeatures, bool)> {
    let names = feature_names(fd, name)?;
    let blocks = names.len().div_ceil(32);
    let before = get(fd, name, blocks)?;
    let mut changed = vec![0u32; blocks];
    let mut stuck = false;
    for (i, n) in names.iter().enumerate() {
        let (b, bit) = (i / 32, 1u32 << (i % 32));
        let [available, _requested, active, _never] = before[b];
        if active & bit == 0 || !pick(n) {
            continue;
        }
        if available & bit == 0 {
            stuck = true;
        } else {
            changed[b] |= bit;
        }
    }
    let saved = SavedFeatures {
        requested: before.iter().map(|blk| blk[1]).collect(),
        changed,
    };
    if saved.changed.iter().any(|&m| m != 0) {
        set(fd, name, &saved.changed, &vec![0; blocks])?;
        let after = get(fd, name, blocks)?;
        stuck |= after
            .iter()
            .zip(&saved.changed)
            .any(|(blk, m)| blk[2] & m != 0);
    }
    Ok((saved, stuck))
}

/// Puts back what [`off`] changed; failures are ignored (the interface may be gone).
pub fn restore(fd: RawFd, name: &str, saved: &SavedFeatures) {
    if saved.changed.iter().any(|&m| m != 0) {
        let _ = set(fd, name, &saved.changed, &saved.requested);
    }
}

/// `SIOCETHTOOL` with `buf` (a command structure, starting with its command word, as
/// large as the kernel reads and writes for it: each caller sizes it).
fn ioctl(fd: RawFd, name: &str, buf: &mut [u64]) -> io::Result<()> {
    super::packet::ethtool_ptr(fd, name, buf.as_mut_ptr().cast())
}

/// A zeroed, 8-byte aligned buffer of at least `bytes` bytes.
fn buffer(bytes: usize) -> Vec<u64> {
    vec![0u64; bytes.div_ceil(8)]
}

fn u32_at(buf: &[u64], word: usize) -> u32 {
    let bytes: &[u8] = as_bytes(buf);
    u32::from_ne_bytes(bytes[word * 4..word * 4 + 4].try_into().expect("4 bytes"))
}

fn set_u32(buf: &mut [u64], word: usize, v: u32) {
    let bytes = as_bytes_mut(buf);
    bytes[word * 4..word * 4 + 4].copy_from_slice(&v.to_ne_bytes());
}

fn as_bytes(buf: &[u64]) -> &[u8] {
    // SAFETY: any u64 slice is a valid byte slice of eight times its length.
    unsafe { std::slice::from_raw_parts(buf.as_ptr().cast(), buf.len() * 8) }
}

fn as_bytes_mut(buf: &mut [u64]) -> &mut [u8] {
    // SAFETY: as above; the borrow is exclusive.
    unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast(), buf.len() * 8) }
}

/// The interface's feature names, by bit (`ETH_SS_FEATURES`).
fn feature_names(fd: RawFd, name: &str) -> io::Result<Vec<String>> {
    // struct ethtool_sset_info: cmd, reserved, sset_mask (u64), data[1].
    let mut info = buffer(8 + 8 + 4);
    set_u32(&mut info, 0, ETHTOOL_GSSET_INFO);
    info[1] = 1 << ETH_SS_FEATURES;
    ioctl(fd, name, &mut info)?;
    let count = if info[1] & (1 << ETH_SS_FEATURES) != 0 {
        u32_at(&info, 4) as usize
    } else {
        0
    };
    // struct ethtool_gstrings: cmd, string_set, len, then len strings of 32 bytes.
    let mut strings = buffer(12 + count * ETH_GSTRING_LEN);
    set_u32(&mut strings, 0, ETHTOOL_GSTRINGS);
    set_u32(&mut strings, 1, ETH_SS_FEATURES);
    set_u32(&mut strings, 2, count as u32);
    ioctl(fd, name, &mut strings)?;
    let bytes = &as_bytes(&strings)[12..12 + count * ETH_GSTRING_LEN];
    Ok(bytes
        .chunks(ETH_GSTRING_LEN)
        .map(|s| {
            let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
            String::from_utf8_lossy(&s[..end]).into_owned()
        })
        .collect())
}

/// `ETHTOOL_GFEATURES`: per block, available, requested, active, never changed.
fn get(fd: RawFd, name: &str, blocks: usize) -> io::Result<Vec<[u32; 4]>> {
    let mut buf = buffer(8 + blocks * 16);
    set_u32(&mut buf, 0, ETHTOOL_GFEATURES);
    set_u32(&mut buf, 1, blocks as u32);
    ioctl(fd, name, &mut buf)?;
    Ok((0..blocks)
        .map(|b| std::array::from_fn(|k| u32_at(&buf, 2 + b * 4 + k)))
        .collect())
}

/// `ETHTOOL_SFEATURES`: per block, the bits to change (`valid`) and their new values.
fn set(fd: RawFd, name: &str, valid: &[u32], requested: &[u32]) -> io::Result<()> {
    let mut buf = buffer(8 + valid.len() * 8);
    set_u32(&mut buf, 0, ETHTOOL_SFEATURES);
    set_u32(&mut buf, 1, valid.len() as u32);
    for (b, (&v, &r)) in valid.iter().zip(requested).enumerate() {
        set_u32(&mut buf, 2 + b * 2, v);
        set_u32(&mut buf, 3 + b * 2, r & v);
    }
    ioctl(fd, name, &mut buf)
}

#[cfg(test)]
mod tests {
    use super::is_tso;

    #[test]
    fn every_tcp_segmentation_feature_is_tso_and_no_other() {
        for n in [
            "tx-tcp-segmentation",
            "tx-tcp-ecn-segmentation",
            "tx-tcp-mangleid-segmentation",
            "tx-tcp6-segmentation",
            "tx-tcp-accecn-segmentation",
        ] {
            assert!(is_tso(n), "{n}");
        }
        for n in [
            "tx-udp-segmentation",
            "tx-gso-partial",
            "tx-checksum-ipv4",
            "tx-gre-segmentation",
        ] {
            assert!(!is_tso(n), "{n}");
        }
    }
}

//! Netlink framing (linux/netlink.h) shared by the PEP's nf_tables batch
//! (`pep::rules::nftnl`) and the kernel connections' dump (`tcp_diag`): the header's
//! flags and kinds, and the walk over the messages of one read. Pure bytes; the walk
//! never panics, whatever it is given.

pub const NLM_F_REQUEST: u16 = 0x01;
pub const NLM_F_ACK: u16 = 0x04;
pub const NLM_F_DUMP: u16 = 0x300;
pub const NLMSG_ERROR: u16 = 2;
pub const NLMSG_DONE: u16 = 3;
/// `struct nlmsghdr`: length, kind, flags, sequence number, port id.
pub const HEADER: usize = 16;

/// One message of a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    pub kind: u16,
    pub seq: u32,
    /// What follows the header, up to the message's length (its padding excluded).
    pub body: &'a [u8],
}

impl Message<'_> {
    /// An `NLMSG_ERROR`'s errno (positive; 0 is an acknowledgement), if this is one.
    pub fn error(&self) -> Option<i32> {
        let e = u32_at(self.body, 0)?;
        (self.kind == NLMSG_ERROR).then(|| (e as i32).saturating_neg())
    }
}

/// A field of host byte order at `at`, if `b` holds it (netlink headers, attributes and
/// the kernel structures they carry are all in host order).
pub fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}
pub fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}
pub fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// A message whose length field does not fit the bytes read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;

/// Netlink aligns every message and attribute to 4 bytes.
pub fn align4(n: usize) -> usize {
    n.saturating_add(3) & !3
}

/// The messages of `buf` in order; a malformed one ends the walk with `Err(Malformed)`.
/// Trailing bytes shorter than a header are ignored.
pub fn messages(buf: &[u8]) -> impl Iterator<Item = Result<Message<'_>, Malformed>> {
    let mut rest = Some(buf);
    std::iter::from_fn(move || {
        let b = rest.take()?;
        let (Some(len), Some(kind), Some(seq)) = (u32_at(b, 0), u16_at(b, 4), u32_at(b, 8)) else {
            return None; // shorter than a header
        };
        let len = len as usize;
        if len < HEADER || len > b.len() {
            return Some(Err(Malformed));
        }
        rest = Some(&b[align4(len).min(b.len())..]);
        Some(Ok(Message {
            kind,
            seq,
            body: &b[HEADER..len],
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn message(kind: u16, seq: u32, body: &[u8]) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend(((HEADER + body.len()) as u32).to_ne_bytes());
        m.extend(kind.to_ne_bytes());
        m.extend([0; 2]);
        m.extend(seq.to_ne_bytes());
        m.extend([0; 4]);
        m.extend(body);
        m.resize(align4(m.len()), 0);
        m
    }

    #[test]
    fn walks_padded_messages_and_reads_errors() {
        let mut b = message(20, 1, &[1, 2, 3]);
        b.extend(message(NLMSG_ERROR, 2, &(-13i32).to_ne_bytes()));
        b.extend(message(NLMSG_ERROR, 3, &0i32.to_ne_bytes()));
        let m: Vec<_> = messages(&b).collect::<Result<_, _>>().unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!((m[0].kind, m[0].seq, m[0].body), (20, 1, &[1u8, 2, 3][..]));
        assert_eq!(
            m.iter().map(Message::error).collect::<Vec<_>>(),
            [None, Some(13), Some(0)]
        );
        let mut bad = message(20, 1, &[]);
        bad[0] = 200;
        assert_eq!(messages(&bad).next(), Some(Err(Malformed)));
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            for m in messages(&bytes).flatten() {
                let _ = m.error();
            }
        }
    }
}

//! Gateway mode's frames: what travels, encrypted, inside one datagram between the two
//! gateways (docs/live.md, "Gateway mode", "Datagrams"). A datagram holds frames back to back;
//! each names its connection by a 64-bit id that its opener never reuses. The first
//! frame of a connection, `Open`, carries the original addresses, so that the far
//! gateway connects to the server in the client's name; `Accept` or `Refuse` answers
//! it once that connect is decided, so "connection refused" reaches the client.
//! `Segment` carries one of the satellite leg's TCP segments (hetpath-proto's wire
//! bytes); `Reset` aborts a connection; `Padding` fills the rest.
//!
//! Layout (big-endian): a type byte, the connection id (8 bytes), then `Open`: client
//! address and port, server address and port (6 + 6 bytes); `Refuse`: a reason byte;
//! `Segment`: a 2-byte length and the bytes. `Padding` is a zero byte and runs to the
//! end. `decode` takes any bytes and never panics.

use std::net::{Ipv4Addr, SocketAddrV4};

/// A connection's id, chosen by the gateway that opened it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub u64);

/// Why the far gateway could not open the server leg.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefuseReason {
    /// The server answered with a RST.
    Refused,
    /// No route, or ICMP unreachable.
    Unreachable,
    /// No answer in time.
    Timeout,
    /// The far gateway is at its connection cap, or the match does not allow it.
    Policy,
}

impl RefuseReason {
    fn code(self) -> u8 {
        match self {
            RefuseReason::Refused => 1,
            RefuseReason::Unreachable => 2,
            RefuseReason::Timeout => 3,
            RefuseReason::Policy => 4,
        }
    }

    fn from_code(c: u8) -> Option<RefuseReason> {
        Some(match c {
            1 => RefuseReason::Refused,
            2 => RefuseReason::Unreachable,
            3 => RefuseReason::Timeout,
            4 => RefuseReason::Policy,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    Open {
        conn: ConnId,
        client: SocketAddrV4,
        server: SocketAddrV4,
    },
    Accept {
        conn: ConnId,
    },
    Refuse {
        conn: ConnId,
        reason: RefuseReason,
    },
    Segment {
        conn: ConnId,
        bytes: Vec<u8>,
    },
    Reset {
        conn: ConnId,
    },
}

const PADDING: u8 = 0;
const OPEN: u8 = 1;
const ACCEPT: u8 = 2;
const REFUSE: u8 = 3;
const SEGMENT: u8 = 4;
const RESET: u8 = 5;

/// The longest `Segment` payload a frame can carry.
pub const MAX_SEGMENT: usize = u16::MAX as usize;

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("frame truncated at byte {0}")]
    Truncated(usize),
    #[error("unknown frame type {ty} at byte {at}")]
    UnknownType { ty: u8, at: usize },
    #[error("unknown refuse reason {0}")]
    UnknownReason(u8),
    #[error("segment of {0} bytes is longer than a frame can carry")]
    TooLong(usize),
}

impl Frame {
    pub fn conn(&self) -> ConnId {
        match self {
            Frame::Open { conn, .. }
            | Frame::Accept { conn }
            | Frame::Refuse { conn, .. }
            | Frame::Segment { conn, .. }
            | Frame::Reset { conn } => *conn,
        }
    }

    /// Bytes `encode` appends.
    pub fn encoded_len(&self) -> usize {
        9 + match self {
            Frame::Open { .. } => 12,
            Frame::Accept { .. } | Frame::Reset { .. } => 0,
            Frame::Refuse { .. } => 1,
            Frame::Segment { bytes, .. } => 2 + bytes.len(),
        }
    }

    /// Appends the frame to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), FrameError> {
        let (ty, conn) = match self {
            Frame::Open { conn, .. } => (OPEN, conn),
            Frame::Accept { conn } => (ACCEPT, conn),
            Frame::Refuse { conn, .. } => (REFUSE, conn),
            Frame::Segment { conn, bytes } => {
                if bytes.len() > MAX_SEGMENT {
                    return Err(FrameError::TooLong(bytes.len()));
                }
                (SEGMENT, conn)
            }
            Frame::Reset { conn } => (RESET, conn),
        };
        out.push(ty);
        out.extend_from_slice(&conn.0.to_be_bytes());
        match self {
            Frame::Open { client, server, .. } => {
                for a in [client, server] {
                    out.extend_from_slice(&a.ip().octets());
                    out.extend_from_slice(&a.port().to_be_bytes());
                }
            }
            Frame::Refuse { reason, .. } => out.push(reason.code()),
            Frame::Segment { bytes, .. } => {
                out.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
                out.extend_from_slice(bytes);
            }
            Frame::Accept { .. } | Frame::Reset { .. } => {}
        }
        Ok(())
    }
}

/// A bounds-checked reader.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], FrameError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or(FrameError::Truncated(self.at))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u64(&mut self) -> Result<u64, FrameError> {
        let s = self.take(8)?;
        Ok(u64::from_be_bytes(s.try_into().expect("8 bytes")))
    }

    fn u16(&mut self) -> Result<u16, FrameError> {
        let s = self.take(2)?;
        Ok(u16::from_be_bytes([s[0], s[1]]))
    }

    fn addr(&mut self) -> Result<SocketAddrV4, FrameError> {
        let s = self.take(4)?;
        let ip = Ipv4Addr::new(s[0], s[1], s[2], s[3]);
        Ok(SocketAddrV4::new(ip, self.u16()?))
    }
}

/// The frames of a datagram's plaintext, in order.
pub fn decode(bytes: &[u8]) -> Result<Vec<Frame>, FrameError> {
    let mut c = Cursor { b: bytes, at: 0 };
    let mut out = Vec::new();
    while c.at < bytes.len() {
        let at = c.at;
        let ty = c.take(1)?[0];
        if ty == PADDING {
            break;
        }
        let conn = ConnId(c.u64()?);
        out.push(match ty {
            OPEN => Frame::Open {
                conn,
                client: c.addr()?,
                server: c.addr()?,
            },
            ACCEPT => Frame::Accept { conn },
            REFUSE => {
                let r = c.take(1)?[0];
                Frame::Refuse {
                    conn,
                    reason: RefuseReason::from_code(r).ok_or(FrameError::UnknownReason(r))?,
                }
            }
            SEGMENT => {
                let n = c.u16()? as usize;
                Frame::Segment {
                    conn,
                    bytes: c.take(n)?.to_vec(),
                }
            }
            RESET => Frame::Reset { conn },
            ty => return Err(FrameError::UnknownType { ty, at }),
        });
    }
    Ok(out)
}

/// Encodes `frames` back to back.
pub fn encode(frames: &[Frame]) -> Result<Vec<u8>, FrameError> {
    let mut out = Vec::with_capacity(frames.iter().map(Frame::encoded_len).sum());
    for f in frames {
        f.encode(&mut out)?;
    }
    Ok(out)
}

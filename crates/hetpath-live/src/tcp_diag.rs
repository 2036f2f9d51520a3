//! The kernel's TCP connections as `sock_diag` reports them: the netlink request for every
//! TCP socket of a network namespace with its `tcp_info` (`SOCK_DIAG_BY_FAMILY` with the
//! `INET_DIAG_INFO` extension, linux/inet_diag.h), and a decoder of the answer into
//! `hetpath run`'s flow columns. `hetpath emulate` samples the kernel flows over its link
//! this way (`sys::flow_sampler`), as `ss -ti` would. Pure bytes: the decoder takes
//! whatever a socket read gave and never panics (`tcp_diag_tests`).

use crate::netlink::{
    align4, messages, u16_at, u32_at, u64_at, NLMSG_DONE, NLM_F_DUMP, NLM_F_REQUEST,
};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// linux/sock_diag.h.
pub const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `struct inet_diag_msg`: family, state, timer, retrans, the socket id (48 bytes),
/// expires, rqueue, wqueue, uid, inode.
const DIAG_MSG: usize = 72;
/// `INET_DIAG_INFO`: the attribute holding `struct tcp_info`.
const INET_DIAG_INFO: u16 = 2;
pub const AF_INET: u8 = 2;
pub const AF_INET6: u8 = 10;
const IPPROTO_TCP: u8 = 6;
/// Every state but LISTEN, TIME_WAIT, CLOSE and SYN_RECV (linux/tcp_states.h): the
/// sockets that carry a connection and have a `tcp_info`.
const STATES: u32 = (1 << 1) | (1 << 2) | (1 << 4) | (1 << 5) | (1 << 8) | (1 << 9) | (1 << 11);
/// `TCP_INFINITE_SSTHRESH`, ssthresh before the first loss.
const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// One TCP socket's sending side at a sample, in `FlowSeries`'s units (bytes, seconds).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpSample {
    pub local: SocketAddr,
    pub remote: SocketAddr,
    /// `tcpi_snd_cwnd` × `tcpi_snd_mss`.
    pub cwnd_bytes: u64,
    /// NaN while ssthresh is infinite (or unset), as the simulator's column.
    pub ssthresh_bytes: f64,
    /// `tcpi_rtt` (the smoothed RTT); NaN before the first sample.
    pub srtt_s: f64,
    pub rto_s: f64,
    /// `tcp_packets_in_flight` (unacked − sacked − lost + retransmitted) × MSS.
    pub in_flight_bytes: u64,
    /// `tcpi_bytes_acked`: what the peer has acknowledged (0 on kernels before 4.1).
    pub bytes_delivered: u64,
}

/// The request for every TCP socket of `family` (`AF_INET` or `AF_INET6`) with its
/// `tcp_info`: a netlink header and a `struct inet_diag_req_v2` whose socket id is zero.
pub fn request(family: u8, seq: u32) -> [u8; 72] {
    let mut m = [0u8; 72];
    m[0..4].copy_from_slice(&72u32.to_ne_bytes());
    m[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    m[6..8].copy_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    m[8..12].copy_from_slice(&seq.to_ne_bytes());
    m[16] = family;
    m[17] = IPPROTO_TCP;
    m[18] = 1 << (INET_DIAG_INFO - 1);
    m[20..24].copy_from_slice(&STATES.to_ne_bytes());
    m
}

/// Where a dump stands after one read.
#[derive(Debug, PartialEq, Eq)]
pub enum Dump {
    /// More messages follow.
    More,
    Done,
    /// The kernel refused the request (its errno), or the bytes were malformed (EINVAL).
    Failed(i32),
}

/// Decodes the messages of one read of a dump, appending a sample per TCP socket that has
/// a `tcp_info`, a peer off the loopback, and has sent data (kernels before 4.6 do not
/// say, and all their sockets are kept). `EINVAL` stands for bytes that are not a
/// netlink dump.
pub fn decode(buf: &[u8], out: &mut Vec<TcpSample>) -> Dump {
    const EINVAL: i32 = 22;
    for m in messages(buf) {
        let Ok(m) = m else {
            return Dump::Failed(EINVAL);
        };
        match (m.kind, m.error()) {
            (NLMSG_DONE, _) => return Dump::Done,
            (_, Some(0)) => {}
            (_, Some(errno)) => return Dump::Failed(errno),
            (SOCK_DIAG_BY_FAMILY, None) => out.extend(socket(m.body)),
            _ => {}
        }
    }
    Dump::More
}

/// One `inet_diag_msg` and its attributes: a sample if it carries a `tcp_info`.
fn socket(body: &[u8]) -> Option<TcpSample> {
    let head = body.get(..DIAG_MSG)?;
    let addr = |port_at: usize, ip_at: usize| -> Option<SocketAddr> {
        let port = u16::from_be_bytes(head.get(port_at..port_at + 2)?.try_into().ok()?);
        let ip = match head[0] {
            AF_INET => IpAddr::V4(Ipv4Addr::from(
                <[u8; 4]>::try_from(head.get(ip_at..ip_at + 4)?).ok()?,
            )),
            AF_INET6 => IpAddr::V6(Ipv6Addr::from(
                <[u8; 16]>::try_from(head.get(ip_at..ip_at + 16)?).ok()?,
            )),
            _ => return None,
        };
        Some(SocketAddr::new(ip, port))
    };
    let (local, remote) = (addr(4, 8)?, addr(6, 24)?);
    if remote.ip().to_canonical().is_loopback() {
        return None;
    }
    let mut at = DIAG_MSG;
    while at + 4 <= body.len() {
        let len = u16_at(body, at)? as usize;
        let kind = u16_at(body, at + 2)?;
        if len < 4 || len > body.len() - at {
            return None;
        }
        if kind == INET_DIAG_INFO {
            return tcp_info(&body[at + 4..at + len], local, remote);
        }
        at += align4(len);
    }
    None
}

/// The fields of `struct tcp_info` (linux/tcp.h) the flow series needs; `None` if the
/// attribute stops before `tcpi_total_retrans` (kernels since 2.6 reach it).
fn tcp_info(i: &[u8], local: SocketAddr, remote: SocketAddr) -> Option<TcpSample> {
    let field = |at: usize| u32_at(i, at);
    let (rto, mss, unacked, sacked, lost, retrans) = (
        field(8)?,
        field(16)?,
        field(24)?,
        field(28)?,
        field(32)?,
        field(36)?,
    );
    let (rtt, ssthresh, cwnd) = (field(68)?, field(76)?, field(80)?);
    field(100)?; // tcpi_total_retrans: the end of the oldest layout read here
    if field(156) == Some(0) {
        return None; // tcpi_data_segs_out: it has sent no data, so it carries no flow
    }
    let mss = u64::from(mss);
    let in_flight = u64::from(unacked.saturating_sub(sacked.saturating_add(lost)))
        .saturating_add(u64::from(retrans));
    Some(TcpSample {
        local,
        remote,
        cwnd_bytes: u64::from(cwnd).saturating_mul(mss),
        ssthresh_bytes: if ssthresh == 0 || ssthresh >= INFINITE_SSTHRESH {
            f64::NAN
        } else {
            ssthresh as f64 * mss as f64
        },
        srtt_s: if rtt == 0 { f64::NAN } else { rtt as f64 / 1e6 },
        rto_s: rto as f64 / 1e6,
        in_flight_bytes: in_flight.saturating_mul(mss),
        bytes_delivered: u64_at(i, 120).unwrap_or(0),
    })
}

#[cfg(test)]
#[path = "tcp_diag_tests.rs"]
mod tcp_diag_tests;

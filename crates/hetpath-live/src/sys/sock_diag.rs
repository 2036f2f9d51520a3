//! A `NETLINK_SOCK_DIAG` socket bound to one network namespace (opened inside it), which
//! dumps that namespace's TCP connections (`tcp_diag`) whenever asked, from any thread.

use super::check;
use crate::tcp_diag::{decode, request, Dump, TcpSample, AF_INET, AF_INET6};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

pub struct DiagSocket {
    fd: OwnedFd,
    seq: u32,
    buf: Vec<u8>,
}

impl DiagSocket {
    /// A socket on the caller's namespace, or on the one bound at `netns`.
    pub fn open(netns: Option<&Path>) -> io::Result<DiagSocket> {
        match netns {
            Some(ns) => super::in_netns(ns, DiagSocket::open_here)?,
            None => DiagSocket::open_here(),
        }
    }

    fn open_here() -> io::Result<DiagSocket> {
        // SAFETY: plain socket(2); the descriptor is owned from here on.
        let fd = check(unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                libc::NETLINK_SOCK_DIAG,
            )
        })?;
        // SAFETY: a new descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // A dump the kernel never finishes must not hold the sampler forever.
        let timeout = libc::timeval {
            tv_sec: 1,
            tv_usec: 0,
        };
        // SAFETY: a valid option value of its own size.
        check(unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&timeout as *const libc::timeval).cast(),
                size_of::<libc::timeval>() as libc::socklen_t,
            )
        })?;
        Ok(DiagSocket {
            fd,
            seq: 0,
            buf: vec![0; 64 * 1024],
        })
    }

    /// Every TCP connection of the namespace (IPv4, then IPv6) with a `tcp_info`, into
    /// `out` (cleared first).
    pub fn dump(&mut self, out: &mut Vec<TcpSample>) -> io::Result<()> {
        out.clear();
        for family in [AF_INET, AF_INET6] {
            self.seq = self.seq.wrapping_add(1);
            let req = request(family, self.seq);
            // SAFETY: an all-zero sockaddr_nl is valid (plain integers); address zero is
            // the kernel, the default destination of a netlink socket never connected.
            let mut to: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
            to.nl_family = libc::AF_NETLINK as libc::sa_family_t;
            // SAFETY: `req` and `to` are valid for the lengths passed.
            check(unsafe {
                libc::sendto(
                    self.fd.as_raw_fd(),
                    req.as_ptr().cast(),
                    req.len(),
                    0,
                    (&to as *const libc::sockaddr_nl).cast(),
                    size_of::<libc::sockaddr_nl>() as libc::socklen_t,
                ) as libc::c_int
            })?;
            loop {
                // SAFETY: `buf` is valid for its length.
                let n = unsafe {
                    libc::recv(
                        self.fd.as_raw_fd(),
                        self.buf.as_mut_ptr().cast(),
                        self.buf.len(),
                        0,
                    )
                };
                if n < 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(e);
                }
                if n == 0 {
                    return Err(io::Error::other("the kernel ended a sock_diag dump early"));
                }
                match decode(&self.buf[..n as usize], out) {
                    Dump::More => continue,
                    Dump::Done => break,
                    // A kernel without IPv6 has no AF_INET6 sockets to report.
                    Dump::Failed(libc::EAFNOSUPPORT | libc::ENOENT) if family == AF_INET6 => break,
                    Dump::Failed(errno) => return Err(io::Error::from_raw_os_error(errno)),
                }
            }
        }
        Ok(())
    }
}

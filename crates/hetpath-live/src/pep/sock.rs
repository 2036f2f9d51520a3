//! The PEP's socket options (Linux): `IP_TRANSPARENT` so that the listener accepts
//! connections addressed to anyone (TPROXY) and the server leg binds the client's own
//! address and port; `TCP_CONGESTION` per leg; bounded kernel buffers; `TCP_INFO`'s
//! retransmission count; `SO_LINGER` 0 to reset.

use mio::net::{TcpListener, TcpStream};
use socket2::{Domain, Protocol, SockRef, Socket, Type};
use std::io;
use std::net::{SocketAddr, SocketAddrV4};
use std::os::fd::{AsFd, AsRawFd};

fn setsockopt<T>(
    fd: &impl AsRawFd,
    level: i32,
    name: i32,
    value: &T,
    len: usize,
) -> io::Result<()> {
    // SAFETY: `value` points at `len` readable bytes for the duration of the call.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            value as *const T as *const libc::c_void,
            len as libc::socklen_t,
        )
    };
    crate::sys::check(r).map(|_| ())
}

fn transparent(s: &Socket) -> io::Result<()> {
    setsockopt(s, libc::SOL_IP, libc::IP_TRANSPARENT, &1i32, 4)
}

/// Sets the connection's congestion controller by its kernel name.
pub fn set_congestion(fd: &impl AsRawFd, name: &str) -> io::Result<()> {
    setsockopt(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_CONGESTION,
        &name.as_bytes()[0],
        name.len(),
    )
}

/// `SO_SNDBUF` and `SO_RCVBUF` (the kernel doubles them); 0 leaves autotuning on.
pub fn set_buffers(s: &impl AsFd, bytes: usize) -> io::Result<()> {
    if bytes > 0 {
        let r = SockRef::from(s);
        r.set_send_buffer_size(bytes)?;
        r.set_recv_buffer_size(bytes)?;
    }
    Ok(())
}

/// `SO_SNDBUFFORCE` and `SO_RCVBUFFORCE` (CAP_NET_ADMIN: past `rmem_max`/`wmem_max`),
/// falling back to `set_buffers`: the gateway's UDP socket takes a window's burst.
pub fn force_buffers(fd: &(impl AsRawFd + AsFd), bytes: usize) {
    let v = bytes.min(i32::MAX as usize) as i32;
    let forced = [libc::SO_SNDBUFFORCE, libc::SO_RCVBUFFORCE]
        .iter()
        .all(|&opt| setsockopt(fd, libc::SOL_SOCKET, opt, &v, 4).is_ok());
    if !forced {
        let _ = set_buffers(fd, bytes);
    }
}

/// The TPROXY listener on `0.0.0.0:port`, nonblocking.
pub fn listener(port: u16, backlog: i32) -> io::Result<TcpListener> {
    let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP))?;
    s.set_reuse_address(true)?;
    transparent(&s)?;
    s.set_nonblocking(true)?;
    s.bind(&SocketAddr::from(([0, 0, 0, 0], port)).into())?;
    s.listen(backlog)?;
    Ok(TcpListener::from_std(s.into()))
}

/// Starts the server leg: a transparent socket bound to the client's address and port,
/// connecting (nonblocking) to the original destination.
pub fn connect_as(
    client: SocketAddrV4,
    server: SocketAddrV4,
    congestion: Option<&str>,
    buffers: usize,
) -> io::Result<TcpStream> {
    let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP))?;
    transparent(&s)?;
    s.set_reuse_address(true)?;
    s.set_tcp_nodelay(true)?;
    if let Some(cc) = congestion {
        set_congestion(&s, cc)?;
    }
    set_buffers(&s, buffers)?;
    s.set_nonblocking(true)?;
    s.bind(&SocketAddr::V4(client).into())?;
    match s.connect(&SocketAddr::V4(server).into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(TcpStream::from_std(s.into()))
}

/// Makes the next close send a RST.
pub fn set_abort(s: &impl AsFd) {
    let _ = SockRef::from(s).set_linger(Some(std::time::Duration::ZERO));
}

/// Undoes `set_abort`: the next close ends the connection normally.
pub fn clear_abort(s: &impl AsFd) {
    let _ = SockRef::from(s).set_linger(None);
}

/// Segments retransmitted over the connection's life (`tcpi_total_retrans`).
pub fn retransmissions(fd: &impl AsRawFd) -> Option<u64> {
    let mut info = std::mem::MaybeUninit::<libc::tcp_info>::zeroed();
    let mut len = size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `info` has room for `len` bytes; the kernel writes at most that.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            info.as_mut_ptr() as *mut libc::c_void,
            &mut len,
        )
    };
    // SAFETY: zero-initialised, then filled (in part) by the kernel.
    (r == 0).then(|| u64::from(unsafe { info.assume_init() }.tcpi_total_retrans))
}

/// The kernel's congestion controls (`tcp_available_congestion_control`).
pub fn available_congestion() -> Vec<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

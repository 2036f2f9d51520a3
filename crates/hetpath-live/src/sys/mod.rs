//! Linux I/O for the link core: packet ports (`port`: the seam between the loop and an
//! interface kind; TUN devices in `tun`, AF_PACKET sockets on Ethernet interfaces in
//! `packet`), the event loop (`event_loop`: epoll, an absolute timerfd, signals), and the
//! kernel connections' sampler (`sock_diag`, `flow_sampler`).

mod ethtool_features;
pub mod event_loop;
pub mod flow_sampler;
pub mod packet;
pub mod port;
pub mod sock_diag;
pub mod tun;

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Runs `f` inside the network namespace bound at `netns` (`/run/netns/NAME`), then comes
/// back to the caller's: what `f` opens there (a TUN device, a socket) stays there while
/// its descriptor lives. The outer error is entering or leaving, naming `netns`.
pub(crate) fn in_netns<T>(netns: &Path, f: impl FnOnce() -> T) -> io::Result<T> {
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", netns.display()));
    let home = File::open("/proc/thread-self/ns/net")?;
    let there = File::open(netns).map_err(named)?;
    // SAFETY: an open file; setns refuses (EINVAL) one that is not a network namespace.
    check(unsafe { libc::setns(there.as_raw_fd(), libc::CLONE_NEWNET) }).map_err(named)?;
    let r = f();
    // SAFETY: as above; coming home must not fail silently.
    check(unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) })?;
    Ok(r)
}

/// `Ok(r)` for a non-negative return value, the OS error otherwise.
pub(crate) fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

//! Linux I/O for the link core: packet ports (`port`: the seam between the loop and an
//! interface kind; TUN devices in `tun`, AF_PACKET sockets on Ethernet interfaces in
//! `packet`), and the event loop (`event_loop`: epoll, an
//! absolute timerfd, signals).

pub mod event_loop;
pub mod packet;
pub mod port;
pub mod tun;

use std::io;

/// `Ok(r)` for a non-negative return value, the OS error otherwise.
pub(crate) fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

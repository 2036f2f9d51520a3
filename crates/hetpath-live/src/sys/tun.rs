//! TUN devices (layer 3: each read and write is one IP packet, no link header), opened
//! with `TUNSETIFF`, optionally inside a network namespace: the device is created in the
//! namespace the thread is in when it is opened, and stays there while the descriptor
//! lives, wherever the process goes afterwards.

use super::check;
use super::port::Port;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

/// `_IOW('T', 202, int)`.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

/// `struct ifreq` as `TUNSETIFF` reads it: the name, then the flags.
#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

pub struct Tun {
    fd: OwnedFd,
}

impl Tun {
    /// Creates (or attaches to) TUN device `name` in the caller's network namespace,
    /// non-blocking, without the packet-information header.
    pub fn open(name: &str) -> io::Result<Tun> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(['/', ' ']) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "'{name}' is not a valid interface name (1 to 15 characters, no '/' or space)"
                ),
            ));
        }
        let path = CString::new("/dev/net/tun").expect("no NUL");
        // SAFETY: a valid C string; the result is checked.
        let fd = check(unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        })?;
        // SAFETY: `fd` was just opened and is owned here alone.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: IFF_TUN | IFF_NO_PI,
            _pad: [0; 22],
        };
        for (d, s) in req.name.iter_mut().zip(name.bytes()) {
            *d = s as libc::c_char;
        }
        // SAFETY: `req` is a properly laid out ifreq that outlives the call.
        check(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req) })?;
        Ok(Tun { fd })
    }

    /// [`Tun::open`] inside the network namespace bound at `netns` (`/run/netns/NAME`),
    /// returning to the caller's namespace afterwards.
    pub fn open_in(name: &str, netns: &Path) -> io::Result<Tun> {
        super::in_netns(netns, || Tun::open(name))?
    }
}

impl Port for Tun {
    fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: `buf` is valid for `buf.len()` bytes.
        let n = unsafe { libc::read(self.fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        }
    }

    fn send(&self, packet: &[u8]) -> io::Result<bool> {
        // SAFETY: `packet` is valid for its length.
        let n = unsafe { libc::write(self.fd(), packet.as_ptr().cast(), packet.len()) };
        if n >= 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::EINTR) => Ok(false),
            // A malformed packet the kernel refuses is that packet's loss, not the run's.
            Some(libc::EINVAL) | Some(libc::EIO) => Ok(false),
            _ => Err(e),
        }
    }
}

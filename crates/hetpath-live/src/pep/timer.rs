//! An absolute `CLOCK_MONOTONIC` timerfd for the gateway's loop (Linux): the core's
//! deadlines (pacing gaps of about a millisecond at 10 Mbit/s, the shaper's spacing) need
//! better than epoll's millisecond timeout, which mio rounds up, so a 1.1 ms gap would
//! become 2 and halve a paced rate. With a timer slack of 1 ns, as the emulator's loop
//! asks (`sys::event_loop`), wake-ups land within tens of microseconds.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `CLOCK_MONOTONIC` in nanoseconds: the clock the timer runs on.
pub fn monotonic_ns() -> u64 {
    crate::sys::event_loop::monotonic_ns()
}

pub struct Timer {
    fd: OwnedFd,
    armed: Option<u64>,
}

impl Timer {
    pub fn new() -> io::Result<Timer> {
        // SAFETY: plain syscalls with valid arguments; the descriptor is owned here.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
            let fd = crate::sys::check(libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            ))?;
            Ok(Timer {
                fd: OwnedFd::from_raw_fd(fd),
                armed: None,
            })
        }
    }

    pub fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Fires at `at_ns` (`monotonic_ns`), or never with `None`; a no-op if already so.
    pub fn arm(&mut self, at_ns: Option<u64>) -> io::Result<()> {
        if self.armed == at_ns {
            return Ok(());
        }
        let ns = at_ns.unwrap_or(0).max(u64::from(at_ns.is_some())); // zero disarms
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (ns % 1_000_000_000) as libc::c_long,
            },
        };
        let mut old = MaybeUninit::<libc::itimerspec>::uninit();
        // SAFETY: a valid descriptor and spec.
        crate::sys::check(unsafe {
            libc::timerfd_settime(self.fd(), libc::TFD_TIMER_ABSTIME, &spec, old.as_mut_ptr())
        })?;
        self.armed = at_ns;
        Ok(())
    }

    /// After it fired: reads the expiry count so that the next expiry is an edge again.
    pub fn drain(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: reading into a local buffer; EAGAIN is fine.
        unsafe { libc::read(self.fd(), buf.as_mut_ptr().cast(), buf.len()) };
        self.armed = None;
    }
}

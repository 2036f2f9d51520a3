//! An absolute `CLOCK_MONOTONIC` timerfd for the gateway's loop (Linux): the core's
//! deadlines (pacing gaps of about a millisecond at 10 Mbit/s, the shaper's spacing) need
//! better than epoll's millisecond timeout, which mio rounds up, so a 1.1 ms gap would
//! become 2 and halve a paced rate. With a timer slack of 1 ns, as the emulator's loop
//! asks (`sys::event_loop`), wake-ups land within tens of microseconds.

use crate::sys::event_loop;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// `CLOCK_MONOTONIC` in nanoseconds: the clock the timer runs on.
pub fn monotonic_ns() -> u64 {
    event_loop::monotonic_ns()
}

pub struct Timer {
    fd: OwnedFd,
    armed: Option<u64>,
}

impl Timer {
    pub fn new() -> io::Result<Timer> {
        // SAFETY: prctl on the calling thread with valid arguments.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        Ok(Timer {
            fd: event_loop::timer_fd()?,
            armed: None,
        })
    }

    pub fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Fires at `at_ns` (`monotonic_ns`), or never with `None`; a no-op if already so.
    pub fn arm(&mut self, at_ns: Option<u64>) -> io::Result<()> {
        if self.armed != at_ns {
            event_loop::arm(&self.fd, at_ns)?;
            self.armed = at_ns;
        }
        Ok(())
    }

    /// After it fired: reads the expiry count so that the next expiry is an edge again.
    pub fn drain(&mut self) {
        event_loop::drain_fd(&self.fd);
        self.armed = None;
    }
}

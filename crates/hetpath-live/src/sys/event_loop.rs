//! The driver: one thread per link, blocked in `epoll_wait` on the two ports, a timerfd
//! armed at the core's next deadline in absolute monotonic time (so a late wake-up does
//! not push later deadlines back), and a signalfd for SIGINT and SIGTERM. The timer
//! slack is set to 1 ns, and the thread asks for `SCHED_FIFO` when it may: the core
//! keeps the rate exact whatever the wake-up latency, but latency is delay.

use super::check;
use super::port::Port;
use crate::emulator::Emulator;
use crate::fate::{Dir, Observer};
use hetpath_proto::{Dur, Time};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// How the loop runs.
#[derive(Debug, Clone)]
pub struct LoopOptions {
    /// The most packets read from one port per wake-up before the others get a turn.
    pub batch: usize,
    /// Ask for `SCHED_FIFO` (ignored without the capability).
    pub realtime: bool,
    /// Stop after this long (else at SIGINT or SIGTERM).
    pub duration: Option<Dur>,
}

impl Default for LoopOptions {
    fn default() -> LoopOptions {
        LoopOptions {
            batch: 64,
            realtime: true,
            duration: None,
        }
    }
}

/// What the loop saw.
#[derive(Debug, Default, Clone, Copy)]
pub struct LoopReport {
    /// From start to stop.
    pub elapsed: Dur,
    /// Packets the far device refused (its queue full); delivered by the link, lost after.
    pub write_drops: u64,
    /// Whether `SCHED_FIFO` was granted.
    pub realtime: bool,
    pub wakeups: u64,
}

/// `CLOCK_MONOTONIC` in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = MaybeUninit::<libc::timespec>::uninit();
    // SAFETY: `ts` is written by the call, which cannot fail for this clock.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, ts.as_mut_ptr()) };
    // SAFETY: initialised above.
    let ts = unsafe { ts.assume_init() };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn owned(fd: RawFd) -> OwnedFd {
    // SAFETY: `fd` was just returned by a successful call and is owned here alone.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// Blocks SIGINT and SIGTERM for the calling thread, returning that set. Every thread of
/// the core blocks them, so that they queue for the loop's signalfd: a thread that left
/// them open would take them, and their default action ends the process unwritten. The
/// main thread blocks them before it says `ready` (threads it starts inherit the mask):
/// a stop sent at once, when the command run beside the core exits at once, would
/// otherwise find them open and end the core with its files empty.
pub fn block_stop_signals() -> io::Result<libc::sigset_t> {
    // SAFETY: plain sigset manipulation on a local set.
    unsafe {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        libc::sigaddset(set.as_mut_ptr(), libc::SIGINT);
        libc::sigaddset(set.as_mut_ptr(), libc::SIGTERM);
        let set = set.assume_init();
        check(libc::pthread_sigmask(
            libc::SIG_BLOCK,
            &set,
            std::ptr::null_mut(),
        ))?;
        Ok(set)
    }
}

/// SIGINT and SIGTERM as a descriptor (blocked for the thread so they queue there).
pub(crate) fn signal_fd() -> io::Result<OwnedFd> {
    let set = block_stop_signals()?;
    // SAFETY: a valid set; the result checked.
    Ok(owned(check(unsafe {
        libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC)
    })?))
}

/// A non-blocking `CLOCK_MONOTONIC` timerfd, armed with absolute times by `arm`.
pub(crate) fn timer_fd() -> io::Result<OwnedFd> {
    // SAFETY: a plain syscall; its result checked.
    Ok(owned(check(unsafe {
        libc::timerfd_create(
            libc::CLOCK_MONOTONIC,
            libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
        )
    })?))
}

/// Sets `timer` to fire at `at_ns` (`monotonic_ns`, absolute), or never with `None`.
pub(crate) fn arm(timer: &OwnedFd, at_ns: Option<u64>) -> io::Result<()> {
    // Zero disarms a timerfd, so a deadline at 0 is asked for at 1 ns.
    let ns = at_ns.map_or(0, |t| t.max(1));
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
    // SAFETY: valid descriptor and spec.
    check(unsafe {
        libc::timerfd_settime(
            timer.as_raw_fd(),
            libc::TFD_TIMER_ABSTIME,
            &spec,
            std::ptr::null_mut(),
        )
    })?;
    Ok(())
}

/// Reads a timerfd's (or signalfd's) pending count, so its next expiry is an edge again.
pub(crate) fn drain_fd(fd: &OwnedFd) {
    let mut buf = [0u8; 128];
    // SAFETY: reading into a local buffer; errors (EAGAIN) are fine.
    unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
}

/// Asks for real-time scheduling and a 1 ns timer slack; `true` if FIFO was granted.
fn tune_thread(realtime: bool) -> bool {
    // SAFETY: prctl and sched_setscheduler on the calling thread with valid arguments.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        if !realtime {
            return false;
        }
        let p = libc::sched_param { sched_priority: 10 };
        libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0
    }
}

const TOKEN_TIMER: u64 = 2;
const TOKEN_SIGNAL: u64 = 3;

/// Runs `emu` between port `a` (side a: what it reads goes a -> b) and port `b` until a
/// signal or the duration. Time zero of the core is the moment this is called.
pub fn run<P: Port, O: Observer>(
    emu: &mut Emulator<O>,
    a: &P,
    b: &P,
    opts: &LoopOptions,
) -> io::Result<LoopReport> {
    let mut report = LoopReport {
        realtime: tune_thread(opts.realtime),
        ..LoopReport::default()
    };
    let signals = signal_fd()?;
    let timer = timer_fd()?;
    // SAFETY: a plain syscall; its result checked.
    let ep = owned(check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?);
    for (fd, token) in [
        (a.fd(), 0),
        (b.fd(), 1),
        (timer.as_raw_fd(), TOKEN_TIMER),
        (signals.as_raw_fd(), TOKEN_SIGNAL),
    ] {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: valid descriptors and event.
        check(unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
    }
    let start = monotonic_ns();
    let now = || Time(monotonic_ns().saturating_sub(start));
    let end = opts.duration.map(|d| Time::ZERO + d);
    let mut scratch = vec![0u8; crate::buffers::SLOT_BYTES];
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; 8];
    'run: loop {
        let deadline = match (emu.poll_timeout(), end) {
            (Some(t), Some(e)) => Some(t.min(e)),
            (t, e) => t.or(e),
        };
        arm(&timer, deadline.map(|t| start + t.0))?;
        // SAFETY: `events` is valid for its length.
        let n = unsafe {
            libc::epoll_wait(ep.as_raw_fd(), events.as_mut_ptr(), events.len() as i32, -1)
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        report.wakeups += 1;
        for ev in &events[..n as usize] {
            match ev.u64 {
                0 | 1 => {
                    let (port, dir) = if ev.u64 == 0 {
                        (a, Dir::Ab)
                    } else {
                        (b, Dir::Ba)
                    };
                    read_batch(emu, port, dir, opts.batch, &mut scratch, &now)?;
                }
                TOKEN_TIMER => drain_fd(&timer),
                _ => break 'run,
            }
        }
        let t = now();
        emu.handle_timeout(t);
        write_out(emu, a, b, &mut report)?;
        if end.is_some_and(|e| t >= e) {
            break;
        }
    }
    emu.handle_timeout(now());
    write_out(emu, a, b, &mut report)?;
    report.elapsed = now().since(Time::ZERO);
    Ok(report)
}

/// Reads up to `batch` packets from one port straight into the core's slots.
fn read_batch<P: Port, O: Observer>(
    emu: &mut Emulator<O>,
    port: &P,
    dir: Dir,
    batch: usize,
    scratch: &mut [u8],
    now: &impl Fn() -> Time,
) -> io::Result<()> {
    for _ in 0..batch {
        match emu.take_slot() {
            Some(s) => match port.recv(emu.space(s))? {
                Some(n) => emu.handle_read(now(), dir, s, n),
                None => {
                    emu.return_slot(s);
                    return Ok(());
                }
            },
            None => match port.recv(scratch)? {
                Some(n) => emu.handle_no_buffer(now(), dir, n),
                None => return Ok(()),
            },
        }
    }
    Ok(())
}

/// Writes every delivered packet to the far side's port.
fn write_out<P: Port, O: Observer>(
    emu: &mut Emulator<O>,
    a: &P,
    b: &P,
    report: &mut LoopReport,
) -> io::Result<()> {
    while let Some((dir, s)) = emu.poll_transmit() {
        let far = if dir == Dir::Ab { b } else { a };
        let sent = far.send(emu.packet(s));
        emu.release(s);
        if !sent? {
            report.write_drops += 1;
        }
    }
    Ok(())
}

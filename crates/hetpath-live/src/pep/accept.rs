//! Accepting the listener's connections when descriptors run out (EMFILE, ENFILE).
//! Without care a client then hangs in the backlog: accept fails, the edge-triggered
//! listener reports no new edge for it, and once descriptors return it is still queued
//! ahead of newer clients. So one descriptor is kept spare: out of descriptors, it is
//! closed, the waiting client accepted and reset at once (`SO_LINGER` 0), and the spare
//! reopened; every client sheds this way until the backlog is empty. If the spare cannot
//! be reopened (another thread took the descriptor), the acceptor is `pending` and the
//! loop accepts again after each wake-up, so the backlog drains as descriptors return.

use super::config::LogLevel;
use super::log::log;
use super::metrics::Metrics;
use super::sock;
use mio::net::{TcpListener, TcpStream};
use std::fs::File;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;

/// What freeing the spare did.
enum Shed {
    /// A waiting client was accepted and reset.
    One,
    /// No client was waiting.
    Empty,
    /// No descriptor could be freed for it: clients wait.
    NoSpare,
}

pub struct Acceptor {
    spare: Option<File>,
    pending: bool,
}

impl Default for Acceptor {
    fn default() -> Acceptor {
        Acceptor::new()
    }
}

impl Acceptor {
    /// With its spare descriptor open (none if even that one is short).
    pub fn new() -> Acceptor {
        Acceptor {
            spare: File::open("/dev/null").ok(),
            pending: false,
        }
    }

    /// The listener may hold clients that could not be accepted: accept again when a
    /// descriptor is freed.
    pub fn pending(&self) -> bool {
        self.pending
    }

    /// The next connection, or `None` once the backlog is empty (or cannot be read now:
    /// then `pending`).
    pub fn next(&mut self, l: &TcpListener, m: &Metrics) -> Option<(TcpStream, SocketAddr)> {
        loop {
            match l.accept() {
                Ok(x) => return Some(x),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.pending = false;
                    return None;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The client gave up before it was accepted: the next one.
                Err(e) if e.raw_os_error() == Some(libc::ECONNABORTED) => {}
                // The kernel takes the descriptor before it looks at the backlog, so this
                // says nothing of whether a client waits: the spare tells.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                    match self.shed_one(l, m) {
                        Shed::One => {}
                        Shed::Empty => {
                            self.pending = false;
                            return None;
                        }
                        Shed::NoSpare => {
                            if !self.pending {
                                log(
                                    LogLevel::Warn,
                                    format_args!(
                                        "accept: {e}; clients wait until descriptors are freed"
                                    ),
                                );
                            }
                            self.pending = true;
                            return None;
                        }
                    }
                }
                Err(e) => {
                    if !self.pending {
                        log(LogLevel::Warn, format_args!("accept: {e}"));
                    }
                    self.pending = true;
                    return None;
                }
            }
        }
    }

    /// Frees the spare to accept one client and reset it, then takes the spare back.
    fn shed_one(&mut self, l: &TcpListener, m: &Metrics) -> Shed {
        if self.spare.take().is_none() {
            self.spare = File::open("/dev/null").ok();
            return Shed::NoSpare;
        }
        let shed = match l.accept() {
            Ok((c, peer)) => {
                sock::set_abort(&c);
                drop(c);
                m.rejected_descriptors.fetch_add(1, Relaxed);
                log(
                    LogLevel::Warn,
                    format_args!("reset {peer}: out of file descriptors"),
                );
                Shed::One
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Shed::Empty,
            // Another thread took the freed descriptor, or the system is out.
            Err(_) => Shed::NoSpare,
        };
        self.spare = File::open("/dev/null").ok();
        shed
    }
}

//! A packet port: where the event loop reads a side's packets and writes the packets
//! delivered to it. A TUN device (layer 3, `tun.rs`) is one; an AF_PACKET socket on an
//! Ethernet interface (a bump in the wire at layer 2, `packet.rs`) is another, with the
//! loop and the core unchanged.

use std::io;
use std::os::fd::RawFd;

pub trait Port {
    /// The descriptor the loop polls for readability (non-blocking).
    fn fd(&self) -> RawFd;
    /// Reads one packet into `buf`: its length, or `None` when nothing is waiting.
    fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>>;
    /// Writes one packet out; `Ok(false)` if the device had no room (it is dropped).
    fn send(&self, packet: &[u8]) -> io::Result<bool>;
}

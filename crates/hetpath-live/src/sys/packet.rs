//! AF_PACKET ports: a bump in the wire between two existing Ethernet interfaces. Each
//! side is a raw packet socket (`SOCK_RAW`, `ETH_P_ALL`) bound to one interface, in
//! promiscuous mode, with `PACKET_IGNORE_OUTGOING` so it does not read back what it
//! writes: every frame the interface receives is read whole (Ethernet header included)
//! and written, unchanged, to the other interface once the link delivers it.
//!
//! Offloads: GRO and LRO would hand the socket merged super-frames, larger than the MTU,
//! and the link must see the frames as they crossed the wire. At open, GRO, GSO, TSO and
//! LRO are turned off on the interface with the `SIOCETHTOOL` ioctl (`ETHTOOL_SGRO`,
//! `ETHTOOL_SGSO`, `ETHTOOL_STSO`, `ETHTOOL_SFLAGS`: no `ethtool` program needed), and
//! put back as they were when the port is dropped. Any frame still larger than the
//! interface's MTU plus the Ethernet header (a veth peer that segments nothing, a
//! setting the driver refused) is dropped and counted (`oversize`), never forwarded.
//!
//! Checksum offload: a frame sent by a local stack over a veth (or any device with TX
//! checksum offload whose frames reach the socket before a NIC would fill the checksum)
//! carries a partial TCP or UDP checksum. The socket reads each frame behind a virtio
//! net header (`PACKET_VNET_HDR`), which says so (`NEEDS_CSUM`, with where the sum starts
//! and where it goes), and the port completes the checksum as the kernel's
//! `skb_checksum_help` would before the frame enters the link.
//!
//! VLAN tags: the kernel takes an 802.1Q (or 802.1ad) tag out of every frame it receives
//! before packet sockets see it, whatever the device's offloads; the socket asks for it
//! back (`PACKET_AUXDATA`) and the port puts it back in the frame, where it was, so a
//! trunk keeps its tags across the bump.
//!
//! The socket is created inside the interface's namespace (if given) and stays tied to
//! it, wherever the process goes afterwards (as `tun.rs` does for TUN devices).

use super::check;
use super::ethtool_features;
use super::port::Port;
use std::cell::Cell;
use std::fmt;
use std::io;
use std::mem::{size_of, MaybeUninit};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

/// The Ethernet header in front of every frame: two addresses and the EtherType.
pub const ETH_HEADER: usize = 14;

const SIOCETHTOOL: libc::c_ulong = 0x8946;
const ETHTOOL_GTSO: u32 = 0x1e;
const ETHTOOL_STSO: u32 = 0x1f;
const ETHTOOL_GGSO: u32 = 0x23;
const ETHTOOL_SGSO: u32 = 0x24;
const ETHTOOL_GFLAGS: u32 = 0x25;
const ETHTOOL_SFLAGS: u32 = 0x26;
const ETHTOOL_GGRO: u32 = 0x2b;
const ETHTOOL_SGRO: u32 = 0x2c;
const ETH_FLAG_LRO: u32 = 1 << 15;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_VNET_HDR: libc::c_int = 15;
/// `struct virtio_net_hdr`: flags, gso_type, hdr_len, gso_size, csum_start, csum_offset.
const VNET_HDR: usize = 10;
const VNET_NEEDS_CSUM: u8 = 1;
const PACKET_AUXDATA: libc::c_int = 8;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
/// A VLAN tag: its TPID and TCI.
pub const VLAN_TAG: usize = 4;

/// `struct tpacket_auxdata`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct AuxData {
    status: u32,
    len: u32,
    snaplen: u32,
    mac: u16,
    net: u16,
    vlan_tci: u16,
    vlan_tpid: u16,
}
const ARPHRD_ETHER: u16 = 1;

/// `struct ifreq`: the name, then a union (an int, a pointer, an address).
#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    u: IfReqU,
}

#[repr(C)]
union IfReqU {
    int: libc::c_int,
    data: *mut libc::c_void,
    addr: libc::sockaddr,
    _pad: [u8; 24],
}

/// `struct ethtool_value`.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// Why a port could not be opened: bad input (no such interface, not Ethernet, no
/// permission) or a system failure.
#[derive(Debug)]
pub struct OpenError {
    pub message: String,
    /// An input error (exit 2) rather than a failure (exit 1).
    pub input: bool,
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// An offload the port turned off, to put back: the get and set commands, the value.
#[derive(Debug, Clone, Copy)]
struct Saved {
    set: u32,
    value: u32,
}

pub struct PacketPort {
    fd: OwnedFd,
    name: String,
    ifindex: libc::c_int,
    mtu: usize,
    oversize: Cell<u64>,
    saved: Vec<Saved>,
    /// The TSO features turned off by name (those the legacy command does not reach).
    saved_features: ethtool_features::SavedFeatures,
    /// Offloads the driver would not turn off (`ethtool -k` names).
    stuck: Vec<&'static str>,
}

fn ifreq(name: &str) -> IfReq {
    let mut r = IfReq {
        name: [0; libc::IFNAMSIZ],
        u: IfReqU { _pad: [0; 24] },
    };
    for (d, s) in r.name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    r
}

fn ethtool(fd: RawFd, name: &str, cmd: u32, data: u32) -> io::Result<u32> {
    let mut v = EthtoolValue { cmd, data };
    let mut r = ifreq(name);
    r.u.data = (&mut v as *mut EthtoolValue).cast();
    // SAFETY: `r` is a valid ifreq pointing at `v`, both outliving the call.
    check(unsafe { libc::ioctl(fd, SIOCETHTOOL as _, &mut r) })?;
    Ok(v.data)
}

/// `SIOCETHTOOL` on interface `name` with the command structure at `data`.
pub(super) fn ethtool_ptr(fd: RawFd, name: &str, data: *mut libc::c_void) -> io::Result<()> {
    let mut r = ifreq(name);
    r.u.data = data;
    // SAFETY: `r` is a valid ifreq; the caller's `data` is a command structure as large
    // as the kernel reads and writes for its command, alive for the call.
    check(unsafe { libc::ioctl(fd, SIOCETHTOOL as _, &mut r) })?;
    Ok(())
}

fn setsockopt<T>(fd: RawFd, level: libc::c_int, opt: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: `v` is valid for `size_of::<T>()` bytes.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (v as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

impl PacketPort {
    /// Opens interface `name` of the caller's namespace, or of the namespace bound at
    /// `netns` (`/run/netns/NAME`), returning to the caller's namespace afterwards.
    pub fn open(name: &str, netns: Option<&Path>) -> Result<PacketPort, OpenError> {
        let Some(ns) = netns else {
            return PacketPort::open_here(name, "");
        };
        let entered = super::in_netns(ns, || {
            PacketPort::open_here(name, &format!(" in {}", ns.display()))
        });
        entered.map_err(|e| OpenError {
            // A namespace that is missing, not one, or not ours to enter: the user's.
            input: matches!(
                e.kind(),
                io::ErrorKind::NotFound
                    | io::ErrorKind::PermissionDenied
                    | io::ErrorKind::InvalidInput
            ),
            message: format!("cannot enter {e}"),
        })?
    }

    fn open_here(name: &str, where_: &str) -> Result<PacketPort, OpenError> {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(['/', ' ']) {
            return Err(OpenError {
                message: format!(
                    "'{name}' is not a valid interface name (1 to 15 characters, no '/' or space)"
                ),
                input: true,
            });
        }
        let fail = |what: &str, e: io::Error| {
            let input = matches!(
                e.raw_os_error(),
                Some(libc::ENODEV) | Some(libc::EPERM) | Some(libc::EACCES)
            );
            let message = match e.raw_os_error() {
                Some(libc::ENODEV) => format!("no interface '{name}'{where_}"),
                Some(libc::EPERM) | Some(libc::EACCES) => format!(
                    "interface '{name}'{where_}: {what}: {e} (a packet socket needs root, CAP_NET_RAW and CAP_NET_ADMIN)"
                ),
                _ => format!("interface '{name}'{where_}: {what}: {e}"),
            };
            OpenError { message, input }
        };
        // Protocol 0: nothing is queued until bind() names the interface.
        // SAFETY: plain socket call; the result is checked.
        let fd = check(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        })
        .map_err(|e| fail("socket(AF_PACKET)", e))?;
        // SAFETY: just returned, owned here alone.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let raw = fd.as_raw_fd();

        let mut r = ifreq(name);
        // SAFETY: a valid ifreq outliving the call.
        check(unsafe { libc::ioctl(raw, libc::SIOCGIFINDEX as _, &mut r) })
            .map_err(|e| fail("SIOCGIFINDEX", e))?;
        // SAFETY: the kernel wrote the int member.
        let ifindex = unsafe { r.u.int };
        let mut r = ifreq(name);
        // SAFETY: as above.
        check(unsafe { libc::ioctl(raw, libc::SIOCGIFHWADDR as _, &mut r) })
            .map_err(|e| fail("SIOCGIFHWADDR", e))?;
        // SAFETY: the kernel wrote the address member.
        let family = unsafe { r.u.addr.sa_family };
        if family != ARPHRD_ETHER {
            return Err(OpenError {
                message: format!(
                    "interface '{name}'{where_} is not Ethernet (ARPHRD {family}); packet mode bridges Ethernet interfaces, TUN mode takes layer-3 devices"
                ),
                input: true,
            });
        }
        let mut r = ifreq(name);
        // SAFETY: as above.
        check(unsafe { libc::ioctl(raw, libc::SIOCGIFMTU as _, &mut r) })
            .map_err(|e| fail("SIOCGIFMTU", e))?;
        // SAFETY: the kernel wrote the int member.
        let mtu = unsafe { r.u.int }.max(68) as usize;

        let mut port = PacketPort {
            fd,
            name: name.to_string(),
            ifindex,
            mtu,
            oversize: Cell::new(0),
            saved: Vec::new(),
            saved_features: Default::default(),
            stuck: Vec::new(),
        };
        port.offloads_off();

        let mreq = libc::packet_mreq {
            mr_ifindex: ifindex,
            mr_type: libc::PACKET_MR_PROMISC as u16,
            mr_alen: 0,
            mr_address: [0; 8],
        };
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)
            .map_err(|e| fail("PACKET_ADD_MEMBERSHIP", e))?;
        setsockopt(raw, libc::SOL_PACKET, PACKET_VNET_HDR, &1 as &libc::c_int)
            .map_err(|e| fail("PACKET_VNET_HDR", e))?;
        setsockopt(raw, libc::SOL_PACKET, PACKET_AUXDATA, &1 as &libc::c_int)
            .map_err(|e| fail("PACKET_AUXDATA", e))?;
        // Older kernels (< 4.20) lack it: `recv` also skips outgoing frames itself.
        let _ = setsockopt(
            raw,
            libc::SOL_PACKET,
            PACKET_IGNORE_OUTGOING,
            &1 as &libc::c_int,
        );
        // Room for bursts while the core sleeps (forced past rmem_max where permitted).
        let size: libc::c_int = 4 << 20;
        if setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &size).is_err() {
            let _ = setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, &size);
        }
        if setsockopt(raw, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &size).is_err() {
            let _ = setsockopt(raw, libc::SOL_SOCKET, libc::SO_SNDBUF, &size);
        }
        // SAFETY: an all-zero sockaddr_ll is valid; the fields are set below.
        let mut sll: libc::sockaddr_ll = unsafe { MaybeUninit::zeroed().assume_init() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = ifindex;
        // SAFETY: `sll` is a valid sockaddr_ll of the given length.
        check(unsafe {
            libc::bind(
                raw,
                (&sll as *const libc::sockaddr_ll).cast(),
                size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })
        .map_err(|e| fail("bind", e))?;
        Ok(port)
    }

    /// GRO, GSO, TSO and LRO off, remembering what they were; those the driver refuses
    /// to change (or lacks the ioctl for) are noted in `stuck`.
    fn offloads_off(&mut self) {
        let raw = self.fd.as_raw_fd();
        for (get, set, what) in [
            (ETHTOOL_GGRO, ETHTOOL_SGRO, "gro"),
            (ETHTOOL_GGSO, ETHTOOL_SGSO, "gso"),
            (ETHTOOL_GTSO, ETHTOOL_STSO, "tso"),
        ] {
            match ethtool(raw, &self.name, get, 0) {
                Ok(0) => {}
                Ok(v) => match ethtool(raw, &self.name, set, 0) {
                    Ok(_) => self.saved.push(Saved { set, value: v }),
                    Err(_) => self.stuck.push(what),
                },
                Err(_) => self.stuck.push(what),
            }
        }
        // The TSO flags the legacy command leaves on (a newer kernel's): by name.
        match ethtool_features::off(raw, &self.name, ethtool_features::is_tso) {
            Ok((saved, stuck)) => {
                self.saved_features = saved;
                if stuck && !self.stuck.contains(&"tso") {
                    self.stuck.push("tso");
                }
            }
            Err(_) => {
                if !self.stuck.contains(&"tso") {
                    self.stuck.push("tso");
                }
            }
        }
        if let Ok(flags) = ethtool(raw, &self.name, ETHTOOL_GFLAGS, 0) {
            if flags & ETH_FLAG_LRO != 0 {
                match ethtool(raw, &self.name, ETHTOOL_SFLAGS, flags & !ETH_FLAG_LRO) {
                    Ok(_) => self.saved.push(Saved {
                        set: ETHTOOL_SFLAGS,
                        value: flags,
                    }),
                    Err(_) => self.stuck.push("lro"),
                }
            }
        }
    }

    /// The interface's MTU (the largest frame forwarded is this plus [`ETH_HEADER`]).
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// Frames dropped for being larger than MTU + Ethernet header.
    pub fn oversize(&self) -> u64 {
        self.oversize.get()
    }

    /// Offloads that could not be turned off (`gro`, `gso`, `tso`, `lro`).
    pub fn stuck_offloads(&self) -> &[&'static str] {
        &self.stuck
    }

    pub fn ifindex(&self) -> libc::c_int {
        self.ifindex
    }
}

impl Drop for PacketPort {
    /// Puts the offloads back as they were (the socket's namespace is the interface's,
    /// so this works from anywhere); failures are ignored.
    fn drop(&mut self) {
        ethtool_features::restore(self.fd.as_raw_fd(), &self.name, &self.saved_features);
        for s in self.saved.iter().rev() {
            let _ = ethtool(self.fd.as_raw_fd(), &self.name, s.set, s.value);
        }
    }
}

/// What to do with a frame of `len` bytes (its length before any truncation) read into
/// a buffer of `room` bytes from an interface of MTU `mtu`: forward it, or drop it as
/// oversize (a super-frame, or one the buffer could not hold whole).
pub fn fits(len: usize, room: usize, mtu: usize) -> bool {
    len <= mtu + ETH_HEADER && len <= room
}

/// Puts a VLAN tag (`tpid`, `tci`) back into the `len`-byte frame at the start of `buf`,
/// after the two addresses; the frame's new length, or `None` if `buf` has no room.
pub fn insert_vlan(buf: &mut [u8], len: usize, tpid: u16, tci: u16) -> Option<usize> {
    if len < 12 || len + VLAN_TAG > buf.len() {
        return None;
    }
    buf.copy_within(12..len, 12 + VLAN_TAG);
    buf[12..14].copy_from_slice(&tpid.to_be_bytes());
    buf[14..16].copy_from_slice(&tci.to_be_bytes());
    Some(len + VLAN_TAG)
}

/// Completes a partial checksum in `frame` as `skb_checksum_help` does: the ones'
/// complement sum from `start` to the end (the field at `start + offset` holds the
/// pseudo-header's sum), folded, complemented, 0 sent as 0xffff. `false` if the
/// offsets lie outside the frame (it is then left alone).
pub fn complete_checksum(frame: &mut [u8], start: usize, offset: usize) -> bool {
    let at = start + offset;
    if start >= frame.len() || at + 2 > frame.len() {
        return false;
    }
    let mut sum: u64 = 0;
    let mut chunks = frame[start..].chunks_exact(2);
    for c in &mut chunks {
        sum += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u64::from(*last) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let folded = !(sum as u16);
    let value = if folded == 0 { 0xffff } else { folded };
    frame[at..at + 2].copy_from_slice(&value.to_be_bytes());
    true
}

/// The `PACKET_AUXDATA` control message of a received frame (zeros if there is none).
fn aux_data(msg: &libc::msghdr) -> AuxData {
    // SAFETY: the CMSG macros walk the control buffer the kernel filled, within
    // `msg_controllen`; the aux data is read unaligned.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_PACKET
                && (*c).cmsg_type == PACKET_AUXDATA
                && (*c).cmsg_len as usize >= libc::CMSG_LEN(size_of::<AuxData>() as u32) as usize
            {
                return std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<AuxData>());
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    AuxData::default()
}

impl Port for PacketPort {
    fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // Bounded: each turn consumes a frame; the rest wait for the next wake-up.
        for _ in 0..256 {
            let mut vnet = [0u8; VNET_HDR];
            // SAFETY: zeroed sockaddr_ll is valid; the kernel fills it.
            let mut sll: libc::sockaddr_ll = unsafe { MaybeUninit::zeroed().assume_init() };
            let mut iov = [
                libc::iovec {
                    iov_base: vnet.as_mut_ptr().cast(),
                    iov_len: VNET_HDR,
                },
                libc::iovec {
                    iov_base: buf.as_mut_ptr().cast(),
                    iov_len: buf.len(),
                },
            ];
            // Room for one control message (the aux data), aligned as cmsghdr.
            let mut control = [0u64; 8];
            // SAFETY: an all-zero msghdr is valid; the pointers are set below.
            let mut msg: libc::msghdr = unsafe { MaybeUninit::zeroed().assume_init() };
            msg.msg_name = (&mut sll as *mut libc::sockaddr_ll).cast();
            msg.msg_namelen = size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            msg.msg_iov = iov.as_mut_ptr();
            msg.msg_iovlen = iov.len() as _;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = size_of::<[u64; 8]>() as _;
            // MSG_TRUNC: the frame's real length, even when longer than `buf`.
            // SAFETY: every buffer named by `msg` is valid for its length.
            let n =
                unsafe { libc::recvmsg(self.fd(), &mut msg, libc::MSG_TRUNC | libc::MSG_DONTWAIT) };
            if n < 0 {
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                    _ => Err(e),
                };
            }
            if sll.sll_pkttype == libc::PACKET_OUTGOING {
                continue;
            }
            let n = (n as usize).saturating_sub(VNET_HDR);
            let aux = aux_data(&msg);
            let tagged = aux.status & TP_STATUS_VLAN_VALID != 0;
            // The tag is counted in neither the MTU nor the frame read.
            let room = if tagged {
                buf.len().saturating_sub(VLAN_TAG)
            } else {
                buf.len()
            };
            if !fits(n, room, self.mtu) {
                self.oversize.set(self.oversize.get() + 1);
                continue;
            }
            if vnet[0] & VNET_NEEDS_CSUM != 0 {
                // Offsets from the frame as read, before any tag goes back in.
                let start = u16::from_le_bytes([vnet[6], vnet[7]]) as usize;
                let offset = u16::from_le_bytes([vnet[8], vnet[9]]) as usize;
                complete_checksum(&mut buf[..n], start, offset);
            }
            if tagged {
                let tpid = if aux.status & TP_STATUS_VLAN_TPID_VALID != 0 {
                    aux.vlan_tpid
                } else {
                    0x8100
                };
                // `room` kept the space for it.
                let n = insert_vlan(buf, n, tpid, aux.vlan_tci).expect("room was kept");
                return Ok(Some(n));
            }
            return Ok(Some(n));
        }
        Ok(None)
    }

    fn send(&self, frame: &[u8]) -> io::Result<bool> {
        // A zero virtio header: no offload asked of the device.
        let vnet = [0u8; VNET_HDR];
        let iov = [
            libc::iovec {
                iov_base: vnet.as_ptr() as *mut libc::c_void,
                iov_len: VNET_HDR,
            },
            libc::iovec {
                iov_base: frame.as_ptr() as *mut libc::c_void,
                iov_len: frame.len(),
            },
        ];
        // SAFETY: an all-zero msghdr is valid; the iovecs are only read.
        let mut msg: libc::msghdr = unsafe { MaybeUninit::zeroed().assume_init() };
        msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
        msg.msg_iovlen = iov.len() as _;
        // SAFETY: every buffer named by `msg` is valid for its length.
        let n = unsafe { libc::sendmsg(self.fd(), &msg, libc::MSG_DONTWAIT) };
        if n >= 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::EINTR) => Ok(false),
            // A frame the device refuses, or a device down, is that frame's loss.
            Some(libc::EMSGSIZE) | Some(libc::EINVAL) | Some(libc::ENETDOWN)
            | Some(libc::ENXIO) | Some(libc::EIO) => Ok(false),
            _ => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_up_to_mtu_plus_the_header_fit_and_larger_ones_do_not() {
        assert!(fits(1514, 2048, 1500));
        assert!(!fits(1515, 2048, 1500));
        assert!(!fits(65_000, 2048, 1500), "a GRO super-frame");
        assert!(!fits(2100, 2048, 9000), "a jumbo frame larger than a slot");
        assert!(fits(42, 2048, 1500), "an ARP frame");
    }

    /// An IPv4 UDP datagram's checksum, completed from the pseudo-header sum a sender
    /// with TX checksum offload leaves, equals the one computed in full.
    #[test]
    fn a_partial_checksum_is_completed_as_the_kernel_would() {
        let src = [10u8, 79, 0, 1];
        let dst = [10u8, 79, 0, 2];
        let payload = b"hello, bump in the wire";
        let udp_len = 8 + payload.len();
        let mut udp = vec![0u8; udp_len];
        udp[0..2].copy_from_slice(&4000u16.to_be_bytes());
        udp[2..4].copy_from_slice(&5001u16.to_be_bytes());
        udp[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
        udp[8..].copy_from_slice(payload);
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&src);
        pseudo.extend_from_slice(&dst);
        pseudo.extend_from_slice(&[0, 17]);
        pseudo.extend_from_slice(&(udp_len as u16).to_be_bytes());
        // In full: the pseudo-header and the datagram, checksum field zero.
        let mut whole = pseudo.clone();
        whole.extend_from_slice(&udp);
        let mut probe = whole.clone();
        probe.extend_from_slice(&[0, 0]); // room for complete_checksum to write
        let n = whole.len();
        complete_checksum(&mut probe, 0, n);
        let expected = [probe[n], probe[n + 1]];
        // Offloaded: the field holds the pseudo-header's folded sum, behind 14 + 20 bytes.
        let mut s: u32 = pseudo
            .chunks(2)
            .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
            .sum();
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        let mut frame = vec![0u8; ETH_HEADER + 20];
        frame.extend_from_slice(&udp);
        let start = ETH_HEADER + 20;
        frame[start + 6..start + 8].copy_from_slice(&(s as u16).to_be_bytes());
        assert!(complete_checksum(&mut frame, start, 6));
        assert_eq!(frame[start + 6..start + 8], expected);
        assert_ne!(expected, [0, 0]);
        assert!(!complete_checksum(&mut frame, 4000, 6), "outside the frame");
    }

    #[test]
    fn a_vlan_tag_goes_back_after_the_addresses() {
        let mut buf = [0u8; 64];
        let frame: Vec<u8> = (0..20).collect();
        buf[..20].copy_from_slice(&frame);
        assert_eq!(insert_vlan(&mut buf, 20, 0x8100, 0x0064), Some(24));
        assert_eq!(buf[..12], frame[..12]);
        assert_eq!(buf[12..16], [0x81, 0x00, 0x00, 0x64]);
        assert_eq!(buf[16..24], frame[12..20]);
        assert_eq!(insert_vlan(&mut buf, 62, 0x8100, 1), None, "no room");
    }

    #[test]
    fn a_missing_interface_is_an_input_error_naming_it() {
        // Without the privilege this is EPERM at socket(), also an input error.
        let e = PacketPort::open("hpnosuchdev0", None)
            .err()
            .expect("no such device");
        assert!(e.input, "{}", e.message);
        assert!(
            e.message.contains("hpnosuchdev0") || e.message.contains("root"),
            "{}",
            e.message
        );
    }
}

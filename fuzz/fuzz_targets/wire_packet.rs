//! IPv4 + TCP decoding on arbitrary bytes: the checked views, `Ipv4Repr::parse`,
//! `TcpRepr::parse`, `PacketRepr::parse` and `decode` (which also tries SCTP). The
//! input is tried as is and with its IPv4 header checksum filled in, so that the fuzzer
//! reaches the TCP and SCTP layers.
#![no_main]
use hetpath_proto::wire::{self, Ipv4Packet, Ipv4Repr, PacketRepr, TcpPacket, TcpRepr, WireCtx};
use libfuzzer_sys::fuzz_target;

fn all(bytes: &[u8]) {
    let ctx = WireCtx::new(1, 2, 7);
    if let Ok(p) = PacketRepr::parse(bytes) {
        let _ = p.to_packet(&ctx);
    }
    let _ = wire::decode(bytes, &ctx);
    if let Ok(ip) = Ipv4Packet::new_checked(bytes) {
        if let Ok(repr) = Ipv4Repr::parse(&ip) {
            let payload = ip.payload();
            if let Ok(tcp) = TcpPacket::new_checked(payload) {
                let seg_len = usize::from(ip.total_len()).saturating_sub(ip.header_len());
                let _ = TcpRepr::parse(&tcp, repr.src, repr.dst, seg_len);
                let _ = TcpRepr::parse(&tcp, repr.src, repr.dst, payload.len());
            }
        }
    }
    if let Ok(tcp) = TcpPacket::new_checked(bytes) {
        let _ = TcpRepr::parse(&tcp, Default::default(), Default::default(), bytes.len());
    }
}

fuzz_target!(|data: &[u8]| {
    all(data);
    if data.len() >= 20 {
        let mut fixed = data.to_vec();
        let mut ip = Ipv4Packet::new_unchecked(&mut fixed[..]);
        if ip.header_len() <= data.len() {
            ip.fill_checksum();
            all(&fixed);
        }
    }
});

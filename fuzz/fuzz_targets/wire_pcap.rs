//! The pcap reader on arbitrary bytes, and each record it yields through
//! `PacketRepr::parse`.
#![no_main]
use hetpath_proto::wire::{PacketRepr, PcapReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(reader) = PcapReader::new(data) {
        let _ = reader.header();
        for rec in reader.take(1 << 16) {
            match rec {
                Ok(r) => {
                    let _ = PacketRepr::parse(r.data);
                }
                Err(_) => break,
            }
        }
    }
});

//! SCTP's RFC 4960 decoder on arbitrary bytes, with and without the CRC32c check (the
//! fuzzer cannot forge checksums; without the check it reaches every chunk parser).
#![no_main]
use hetpath_proto::wire::sctp;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = sctp::decode(data);
    if let Ok(p) = sctp::decode_with(data, false) {
        // What decodes re-encodes without a panic.
        let _ = sctp::encode(&p);
    }
});

//! The LIFT header decoder on arbitrary bytes; what decodes re-emits.
#![no_main]
use hetpath_proto::wire::lift;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((h, _)) = lift::parse(data) {
        let mut out = [0u8; 64];
        let _ = lift::emit(&h, &mut out);
    }
});

//! TCP options on arbitrary bytes: the option iterator and `OptionSet::parse`.
#![no_main]
use hetpath_proto::wire::{OptionSet, TcpOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for opt in TcpOptions::new(data).take(64) {
        if opt.is_err() {
            break;
        }
    }
    if let Ok(set) = OptionSet::parse(data) {
        let mut out = [0u8; 60];
        if set.len() <= out.len() {
            let _ = set.emit(&mut out[..set.len()]);
        }
    }
});

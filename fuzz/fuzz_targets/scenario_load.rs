//! The scenario loader on arbitrary bytes: a `ScenarioError` or a simulation, never a
//! panic. Invalid UTF-8 is read lossily, as a user's file with a stray byte would be.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = hetpath_sim::load(&text, "fuzz.toml", None);
});

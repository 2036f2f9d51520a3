//! `KeyRng`: the gateway core's randomness, a ChaCha20 keystream from a 32-byte seed.
//! The daemon seeds it from the kernel (`from_os`), a test from a constant, so the core
//! stays sans IO and a test run is repeatable. It draws the Noise ephemerals
//! (`handshake.rs`, through snow's `Random`), this run's boot id, connection ids and the
//! satellite leg's initial sequence numbers.

use chacha20::cipher::{KeyIvInit, StreamCipher};
use chacha20::ChaCha20;

pub struct KeyRng(ChaCha20);

impl KeyRng {
    pub fn new(seed: [u8; 32]) -> KeyRng {
        KeyRng(ChaCha20::new(&seed.into(), &[0u8; 12].into()))
    }

    /// Seeded from the kernel's random source.
    pub fn os_seed() -> std::io::Result<[u8; 32]> {
        use std::io::Read;
        let mut seed = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut seed)?;
        Ok(seed)
    }

    pub fn fill(&mut self, dest: &mut [u8]) {
        dest.fill(0);
        self.0.apply_keystream(dest);
    }

    pub fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill(&mut b);
        u64::from_be_bytes(b)
    }

    /// A seed for an independent generator (one per handshake).
    pub fn fork(&mut self) -> [u8; 32] {
        let mut s = [0u8; 32];
        self.fill(&mut s);
        s
    }
}

impl snow::types::Random for KeyRng {
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), snow::Error> {
        self.fill(dest);
        Ok(())
    }
}

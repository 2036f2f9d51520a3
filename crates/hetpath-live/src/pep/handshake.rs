//! Gateway mode's key exchange: Noise `NNpsk0` (the Noise Protocol Framework, revision
//! 34, sections 7.5 and 9), through the `snow` crate, with X25519, SHA-256 and the
//! configured AEAD. Gateway A initiates; each side brings a fresh ephemeral key, so the
//! session's keys are new even if either side's state or clock is not.
//!
//! ```text
//! -> psk, e        INIT:     type=3 | flags | tag (8) | e (32) | {boot, number} (16+16)
//! <- e, ee         RESPONSE: type=4 | flags | tag (8) | e (32) | {boot} (8+16)
//!                  REQUEST:  type=5 | flags | 8 zero bytes (B asks A to initiate)
//! ```
//!
//! The 10-byte head (type, flags, the initiation's random tag) is the Noise prologue,
//! so it is authenticated too. With the PSK mixed in first, INIT's payload is encrypted
//! under a key that needs the PSK and no Diffie-Hellman: a forged INIT is rejected for
//! the price of a few hashes. A valid INIT may still be a recording, so the responder
//! treats the session as pending until the initiator uses it (`session.rs`): only a
//! holder of the initiator's ephemeral private key can. The RESPONSE proves the
//! responder's key and freshness to the initiator (it answers the initiator's own
//! ephemeral). `boot` is the sender's random id for its run: a different one means the
//! peer restarted. `number` counts A's handshakes within a run.

use super::keyrng::KeyRng;
use super::seal::{Aead, OpenError, Psk, Role};
use snow::resolvers::{CryptoResolver, DefaultResolver, FallbackResolver};
use snow::types::{Cipher, Dh, Hash, Random};

pub const INIT: u8 = 3;
pub const RESPONSE: u8 = 4;
pub const REQUEST: u8 = 5;
/// Type, flags, tag.
const HEAD: usize = 10;
pub const INIT_LEN: usize = HEAD + 32 + 16 + 16;
pub const RESPONSE_LEN: usize = HEAD + 32 + 8 + 16;
pub const REQUEST_LEN: usize = HEAD;

/// A session's keys, one per direction, and its id (the handshake hash's first bytes,
/// the same on both sides and new with every pair of ephemerals).
pub struct Keys {
    pub session: u64,
    pub send: [u8; 32],
    pub recv: [u8; 32],
}

/// What INIT carries: the initiator's run and its handshake number in that run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    pub boot: u64,
    pub number: u64,
}

/// snow's randomness from a seed of the core's (`KeyRng`); everything else is snow's own.
struct Seeded([u8; 32]);

impl CryptoResolver for Seeded {
    fn resolve_rng(&self) -> Option<Box<dyn Random>> {
        Some(Box::new(KeyRng::new(self.0)))
    }
    fn resolve_dh(&self, _: &snow::params::DHChoice) -> Option<Box<dyn Dh>> {
        None
    }
    fn resolve_hash(&self, _: &snow::params::HashChoice) -> Option<Box<dyn Hash>> {
        None
    }
    fn resolve_cipher(&self, _: &snow::params::CipherChoice) -> Option<Box<dyn Cipher>> {
        None
    }
}

fn flags(role: Role, aead: Aead) -> u8 {
    role.bit() | (aead.code() << 1)
}

fn head(ty: u8, role: Role, aead: Aead, tag: u64) -> [u8; HEAD] {
    let mut h = [0u8; HEAD];
    h[0] = ty;
    h[1] = flags(role, aead);
    h[2..].copy_from_slice(&tag.to_be_bytes());
    h
}

/// The Noise state for one handshake; deterministic given its arguments, so the
/// initiator can rebuild it instead of keeping a state a forged answer could spoil.
fn state(psk: &Psk, aead: Aead, tag: u64, seed: [u8; 32], initiator: bool) -> snow::HandshakeState {
    let name = match aead {
        Aead::ChaCha20Poly1305 => "Noise_NNpsk0_25519_ChaChaPoly_SHA256",
        Aead::Aes256Gcm => "Noise_NNpsk0_25519_AESGCM_SHA256",
    };
    let params = name.parse().expect("a valid Noise name");
    let resolver = FallbackResolver::new(Box::new(Seeded(seed)), Box::new(DefaultResolver));
    // The prologue binds the initiator's head (its flags and tag) and the AEAD.
    let prologue = head(INIT, Role::A, aead, tag);
    let b = snow::Builder::with_resolver(params, Box::new(resolver))
        .psk(0, psk.bytes())
        .and_then(|b| b.prologue(&prologue))
        .expect("one PSK and one prologue");
    if initiator {
        b.build_initiator()
    } else {
        b.build_responder()
    }
    .expect("every primitive is compiled in")
}

fn keys(hs: &mut snow::HandshakeState, initiator: bool) -> Keys {
    let session = u64::from_be_bytes(hs.get_handshake_hash()[..8].try_into().expect("8 bytes"));
    let (i2r, r2i) = hs.dangerously_get_raw_split();
    let (send, recv) = if initiator { (i2r, r2i) } else { (r2i, i2r) };
    Keys {
        session,
        send,
        recv,
    }
}

fn be(b: &[u8]) -> u64 {
    u64::from_be_bytes(b.try_into().expect("8 bytes"))
}

/// A's handshake in flight: its INIT (sent again, identical, until answered).
pub struct Initiation {
    pub tag: u64,
    pub hello: Hello,
    seed: [u8; 32],
    pub message: Vec<u8>,
}

impl Initiation {
    pub fn new(psk: &Psk, aead: Aead, rng: &mut KeyRng, hello: Hello) -> Initiation {
        let tag = rng.u64();
        let seed = rng.fork();
        let mut message = vec![0u8; INIT_LEN];
        let n = Self::write(psk, aead, tag, seed, hello, &mut message).1;
        debug_assert_eq!(n, INIT_LEN);
        Initiation {
            tag,
            hello,
            seed,
            message,
        }
    }

    fn write(
        psk: &Psk,
        aead: Aead,
        tag: u64,
        seed: [u8; 32],
        hello: Hello,
        out: &mut [u8],
    ) -> (snow::HandshakeState, usize) {
        let mut hs = state(psk, aead, tag, seed, true);
        out[..HEAD].copy_from_slice(&head(INIT, Role::A, aead, tag));
        let mut payload = [0u8; 16];
        payload[..8].copy_from_slice(&hello.boot.to_be_bytes());
        payload[8..].copy_from_slice(&hello.number.to_be_bytes());
        let n = hs
            .write_message(&payload, &mut out[HEAD..])
            .expect("INIT fits its buffer");
        (hs, HEAD + n)
    }

    /// B's RESPONSE to this INIT: the session's keys and B's boot id. Nothing changes
    /// on failure (the state is rebuilt from the seed for each try).
    pub fn finish(&self, psk: &Psk, aead: Aead, d: &[u8]) -> Result<(Keys, u64), OpenError> {
        if d.len() != RESPONSE_LEN || d[0] != RESPONSE || d[1] != flags(Role::B, aead) {
            return Err(OpenError::Handshake("malformed response"));
        }
        if be(&d[2..HEAD]) != self.tag {
            return Err(OpenError::Handshake("a response to no handshake in flight"));
        }
        let mut init = [0u8; INIT_LEN];
        let (mut hs, _) = Self::write(psk, aead, self.tag, self.seed, self.hello, &mut init);
        let mut payload = [0u8; RESPONSE_LEN];
        let n = hs
            .read_message(&d[HEAD..], &mut payload)
            .map_err(|_| OpenError::Forged)?;
        if n != 8 || !hs.is_handshake_finished() {
            return Err(OpenError::Handshake("response payload"));
        }
        Ok((keys(&mut hs, true), be(&payload[..8])))
    }
}

/// B: an INIT that authenticated (the PSK), not yet answered.
pub struct Inbound {
    hs: snow::HandshakeState,
    tag: u64,
    pub hello: Hello,
}

impl Inbound {
    /// Authenticates an INIT: hashes and one AEAD, no Diffie-Hellman.
    pub fn read(psk: &Psk, aead: Aead, seed: [u8; 32], d: &[u8]) -> Result<Inbound, OpenError> {
        if d.len() != INIT_LEN || d[0] != INIT || d[1] != flags(Role::A, aead) {
            return Err(OpenError::Handshake("malformed initiation"));
        }
        let tag = be(&d[2..HEAD]);
        let mut hs = state(psk, aead, tag, seed, false);
        let mut payload = [0u8; INIT_LEN];
        let n = hs
            .read_message(&d[HEAD..], &mut payload)
            .map_err(|_| OpenError::Forged)?;
        if n != 16 {
            return Err(OpenError::Handshake("initiation payload"));
        }
        let hello = Hello {
            boot: be(&payload[..8]),
            number: be(&payload[8..16]),
        };
        Ok(Inbound { hs, tag, hello })
    }

    /// The RESPONSE (B's ephemeral and the DH: the costly part) and the session's keys.
    pub fn reply(mut self, aead: Aead, boot: u64) -> (Keys, Vec<u8>) {
        let mut out = vec![0u8; RESPONSE_LEN];
        out[..HEAD].copy_from_slice(&head(RESPONSE, Role::B, aead, self.tag));
        let n = self
            .hs
            .write_message(&boot.to_be_bytes(), &mut out[HEAD..])
            .expect("RESPONSE fits its buffer");
        debug_assert_eq!(HEAD + n, RESPONSE_LEN);
        (keys(&mut self.hs, false), out)
    }
}

/// B's unauthenticated hint that it holds no session A uses: A may initiate.
pub fn request(aead: Aead) -> Vec<u8> {
    head(REQUEST, Role::B, aead, 0).to_vec()
}

/// Whether `d` is a REQUEST from B with this AEAD.
pub fn is_request(aead: Aead, d: &[u8]) -> bool {
    d.len() == REQUEST_LEN && d[0] == REQUEST && d[1] == flags(Role::B, aead)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_derive_the_same_session_and_crossed_keys() {
        for aead in [Aead::ChaCha20Poly1305, Aead::Aes256Gcm] {
            let psk = Psk::new([3; 32]);
            let mut ra = KeyRng::new([1; 32]);
            let mut rb = KeyRng::new([2; 32]);
            let hello = Hello {
                boot: 11,
                number: 1,
            };
            let init = Initiation::new(&psk, aead, &mut ra, hello);
            let inbound = Inbound::read(&psk, aead, rb.fork(), &init.message).unwrap();
            assert_eq!(inbound.hello, hello);
            let (kb, resp) = inbound.reply(aead, 22);
            let (ka, boot_b) = init.finish(&psk, aead, &resp).unwrap();
            assert_eq!(boot_b, 22);
            assert_eq!(ka.session, kb.session);
            assert_eq!((ka.send, ka.recv), (kb.recv, kb.send));
            assert_ne!(ka.send, ka.recv);
        }
    }

    #[test]
    fn the_wrong_psk_or_an_altered_byte_is_rejected() {
        let aead = Aead::ChaCha20Poly1305;
        let psk = Psk::new([3; 32]);
        let mut r = KeyRng::new([1; 32]);
        let init = Initiation::new(&psk, aead, &mut r, Hello { boot: 1, number: 1 });
        assert!(Inbound::read(&Psk::new([4; 32]), aead, [0; 32], &init.message).is_err());
        for i in 0..INIT_LEN {
            let mut m = init.message.clone();
            m[i] ^= 1;
            assert!(Inbound::read(&psk, aead, [0; 32], &m).is_err(), "byte {i}");
        }
        let (_, resp) = Inbound::read(&psk, aead, [0; 32], &init.message)
            .unwrap()
            .reply(aead, 5);
        for i in 0..RESPONSE_LEN {
            let mut m = resp.clone();
            m[i] ^= 1;
            assert!(init.finish(&psk, aead, &m).is_err(), "byte {i}");
        }
        assert!(
            init.finish(&psk, aead, &resp).is_ok(),
            "failures changed nothing"
        );
    }

    #[test]
    fn a_response_answers_only_its_own_initiation() {
        let aead = Aead::ChaCha20Poly1305;
        let psk = Psk::new([3; 32]);
        let mut r = KeyRng::new([1; 32]);
        let first = Initiation::new(&psk, aead, &mut r, Hello { boot: 1, number: 1 });
        let second = Initiation::new(&psk, aead, &mut r, Hello { boot: 1, number: 2 });
        let (_, resp) = Inbound::read(&psk, aead, [9; 32], &first.message)
            .unwrap()
            .reply(aead, 5);
        assert!(second.finish(&psk, aead, &resp).is_err());
    }
}

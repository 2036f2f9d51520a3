//! Gateway mode's key exchange: Noise `NNpsk0` (the Noise Protocol Framework, revision
//! 34, sections 7.5 and 9), through the `snow` crate, with X25519, SHA-256 and the
//! configured AEAD. Gateway A initiates; each side brings a fresh ephemeral key, so the
//! session's keys are new even if either side's state or clock is not.
//!
//! ```text
//! -> psk, e        INIT:     type=3 | flags | tag (8) | e (32) | {boot, number} (16+16)
//! <- e, ee         RESPONSE: type=4 | flags | tag (8) | e (32) | {boot} (8+16) | mac (16)
//!                  REQUEST:  type=5 | flags | 8 zero bytes | mac (16) (B asks A to initiate)
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
//!
//! Reading a RESPONSE costs A a Diffie-Hellman (about 90 µs), and anyone on the path
//! sees the tag it must bear, so B's messages end with a MAC under a key derived from
//! the PSK (as WireGuard's `mac1` is keyed by what the receiver is known by): a forged
//! RESPONSE or REQUEST is refused for one HMAC-SHA256.

use super::keyrng::KeyRng;
use super::seal::{Aead, OpenError, Psk, Role};
use hkdf::Hkdf;
use sha2::Sha256;
use snow::resolvers::{CryptoResolver, DefaultResolver, FallbackResolver};
use snow::types::{Cipher, Dh, Hash, Random};

pub const INIT: u8 = 3;
pub const RESPONSE: u8 = 4;
pub const REQUEST: u8 = 5;
/// Type, flags, tag.
const HEAD: usize = 10;
pub const INIT_LEN: usize = HEAD + 32 + 16 + 16;
/// B's messages' MAC.
const MAC: usize = 16;
pub const RESPONSE_LEN: usize = HEAD + 32 + 8 + 16 + MAC;
pub const REQUEST_LEN: usize = HEAD + MAC;

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

/// HMAC-SHA256 (HKDF-Extract is HMAC with the salt as key) of `bytes` under a key
/// derived from the PSK, cut to 16 bytes.
fn mac(psk: &Psk, bytes: &[u8]) -> [u8; MAC] {
    let mut key = [0u8; 32];
    Hkdf::<Sha256>::new(Some(b"hetpath-pep mac"), psk.bytes())
        .expand(b"b's handshake messages", &mut key)
        .expect("32 bytes is a valid HKDF-SHA256 length");
    let (prk, _) = Hkdf::<Sha256>::extract(Some(&key), bytes);
    prk[..MAC].try_into().expect("16 bytes")
}

/// Whether `d` ends with the MAC of the rest; in constant time.
fn mac_ok(psk: &Psk, d: &[u8]) -> bool {
    let (body, got) = d.split_at(d.len() - MAC);
    mac(psk, body)
        .iter()
        .zip(got)
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
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
        if !mac_ok(psk, d) {
            return Err(OpenError::Forged);
        }
        let mut init = [0u8; INIT_LEN];
        let (mut hs, _) = Self::write(psk, aead, self.tag, self.seed, self.hello, &mut init);
        let mut payload = [0u8; RESPONSE_LEN];
        let n = hs
            .read_message(&d[HEAD..RESPONSE_LEN - MAC], &mut payload)
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
    pub fn reply(mut self, psk: &Psk, aead: Aead, boot: u64) -> (Keys, Vec<u8>) {
        let mut out = vec![0u8; RESPONSE_LEN];
        out[..HEAD].copy_from_slice(&head(RESPONSE, Role::B, aead, self.tag));
        let n = self
            .hs
            .write_message(&boot.to_be_bytes(), &mut out[HEAD..RESPONSE_LEN - MAC])
            .expect("RESPONSE fits its buffer");
        debug_assert_eq!(HEAD + n + MAC, RESPONSE_LEN);
        let m = mac(psk, &out[..RESPONSE_LEN - MAC]);
        out[RESPONSE_LEN - MAC..].copy_from_slice(&m);
        (keys(&mut self.hs, false), out)
    }
}

/// B's hint that it holds no session A uses: A may initiate. Its MAC shows it came from
/// a holder of the PSK, though not when: a recording may be replayed.
pub fn request(psk: &Psk, aead: Aead) -> Vec<u8> {
    let mut d = head(REQUEST, Role::B, aead, 0).to_vec();
    let m = mac(psk, &d);
    d.extend_from_slice(&m);
    d
}

/// Whether `d` is a REQUEST from B with this AEAD and PSK.
pub fn is_request(psk: &Psk, aead: Aead, d: &[u8]) -> bool {
    d.len() == REQUEST_LEN && d[0] == REQUEST && d[1] == flags(Role::B, aead) && mac_ok(psk, d)
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
            let (kb, resp) = inbound.reply(&psk, aead, 22);
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
            .reply(&psk, aead, 5);
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
    fn a_request_needs_the_psk() {
        let (psk, aead) = (Psk::new([3; 32]), Aead::ChaCha20Poly1305);
        let r = request(&psk, aead);
        assert!(is_request(&psk, aead, &r));
        assert!(!is_request(&Psk::new([4; 32]), aead, &r));
        assert!(!is_request(&psk, Aead::Aes256Gcm, &r));
        let mut forged = r.clone();
        forged[REQUEST_LEN - 1] ^= 1;
        assert!(!is_request(&psk, aead, &forged));
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
            .reply(&psk, aead, 5);
        assert!(second.finish(&psk, aead, &resp).is_err());
    }
}

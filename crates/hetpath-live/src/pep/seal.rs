//! Gateway mode's datagrams: frames sealed with an AEAD (ChaCha20-Poly1305 or
//! AES-256-GCM, RustCrypto) under a pre-shared key (docs/live.md, "Gateway mode", "Datagrams").
//!
//! ```text
//! 0        1        2                10               18
//! +--------+--------+----------------+----------------+-------------------+-----+
//! | ver=1  | flags  | epoch (u64 BE) | number (u64 BE)| frames, encrypted | tag |
//! +--------+--------+----------------+----------------+-------------------+-----+
//! flags: bit 0 the sender's role (0 gateway A, 1 gateway B), bits 1-2 the AEAD
//! ```
//!
//! The 18-byte header is the AEAD's associated data, so it cannot be altered. Each
//! sender has an epoch, its start time in microseconds, and numbers its datagrams from 0
//! within it; the key of an epoch is HKDF-SHA256 of the pre-shared key with the epoch,
//! role and AEAD, and the nonce is the role and the number. So no (key, nonce) pair is
//! ever used twice, even across restarts or between the two gateways sharing one key.
//! The receiver keeps the peer's latest authenticated epoch: an older one is rejected,
//! a newer one (the peer restarted) replaces it, and within it a `ReplayWindow` accepts
//! each number once.

use super::replay::ReplayWindow;
use aes_gcm::Aes256Gcm;
use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::ChaCha20Poly1305;
use hkdf::Hkdf;
use sha2::Sha256;
use std::path::Path;

pub const VERSION: u8 = 1;
pub const HEADER: usize = 18;
pub const TAG: usize = 16;
/// Bytes a datagram adds to its frames.
pub const OVERHEAD: usize = HEADER + TAG;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aead {
    ChaCha20Poly1305,
    Aes256Gcm,
}

impl Aead {
    fn code(self) -> u8 {
        match self {
            Aead::ChaCha20Poly1305 => 0,
            Aead::Aes256Gcm => 1,
        }
    }

    pub fn parse(s: &str) -> Option<Aead> {
        match s {
            "chacha20-poly1305" => Some(Aead::ChaCha20Poly1305),
            "aes-256-gcm" => Some(Aead::Aes256Gcm),
            _ => None,
        }
    }
}

/// Which of the pair a gateway is; each seals as itself and opens the other's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    A,
    B,
}

impl Role {
    fn bit(self) -> u8 {
        match self {
            Role::A => 0,
            Role::B => 1,
        }
    }

    pub fn peer(self) -> Role {
        match self {
            Role::A => Role::B,
            Role::B => Role::A,
        }
    }
}

/// The pre-shared key: 32 bytes.
#[derive(Clone)]
pub struct Psk([u8; 32]);

impl Psk {
    pub fn new(bytes: [u8; 32]) -> Psk {
        Psk(bytes)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    #[error("{0}: expected 32 raw bytes or 64 hexadecimal digits")]
    Format(String),
    #[error("{0}: readable by group or others (mode {1:o}); chmod 600 it")]
    Exposed(String, u32),
}

/// Reads a key file: 64 hex digits (surrounding whitespace ignored) or 32 raw bytes,
/// readable by its owner only.
pub fn load_key(path: &Path) -> Result<Psk, KeyError> {
    let name = path.display().to_string();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|e| KeyError::Io(name.clone(), e))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(KeyError::Exposed(name, mode & 0o777));
        }
    }
    let bytes = std::fs::read(path).map_err(|e| KeyError::Io(name.clone(), e))?;
    parse_key(&bytes).ok_or(KeyError::Format(name))
}

/// 32 raw bytes, or 64 hex digits.
pub fn parse_key(bytes: &[u8]) -> Option<Psk> {
    if bytes.len() == 32 {
        return Some(Psk(bytes.try_into().expect("32 bytes")));
    }
    let text = std::str::from_utf8(bytes).ok()?.trim();
    if text.len() != 64 {
        return None;
    }
    let mut k = [0u8; 32];
    for (i, b) in k.iter_mut().enumerate() {
        *b = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(Psk(k))
}

enum Cipher {
    ChaCha(Box<ChaCha20Poly1305>),
    Aes(Box<Aes256Gcm>),
}

impl Cipher {
    fn derive(psk: &Psk, aead: Aead, role: Role, epoch: u64) -> Cipher {
        let mut info = *b"hetpath-pep datagram ..........";
        info[21] = aead.code();
        info[22] = role.bit();
        info[23..31].copy_from_slice(&epoch.to_be_bytes());
        let mut key = [0u8; 32];
        Hkdf::<Sha256>::new(Some(b"hetpath-pep v1"), &psk.0)
            .expand(&info, &mut key)
            .expect("32 bytes is a valid HKDF-SHA256 length");
        match aead {
            Aead::ChaCha20Poly1305 => Cipher::ChaCha(Box::new(ChaCha20Poly1305::new(&key.into()))),
            Aead::Aes256Gcm => Cipher::Aes(Box::new(Aes256Gcm::new(&key.into()))),
        }
    }

    fn nonce(role: Role, number: u64) -> [u8; 12] {
        let mut n = [0u8; 12];
        n[0] = role.bit();
        n[4..].copy_from_slice(&number.to_be_bytes());
        n
    }

    fn seal(&self, nonce: &[u8; 12], aad: &[u8], body: &mut [u8]) -> [u8; 16] {
        let r = match self {
            Cipher::ChaCha(c) => c.encrypt_in_place_detached(nonce.into(), aad, body),
            Cipher::Aes(c) => c.encrypt_in_place_detached(nonce.into(), aad, body),
        };
        r.expect("the body is far below the AEADs' limits").into()
    }

    fn open(&self, nonce: &[u8; 12], aad: &[u8], body: &mut [u8], tag: &[u8]) -> bool {
        let tag = aes_gcm::Tag::from_slice(tag);
        match self {
            Cipher::ChaCha(c) => c
                .decrypt_in_place_detached(nonce.into(), aad, body, tag)
                .is_ok(),
            Cipher::Aes(c) => c
                .decrypt_in_place_detached(nonce.into(), aad, body, tag)
                .is_ok(),
        }
    }
}

fn header(aead: Aead, role: Role, epoch: u64, number: u64) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[0] = VERSION;
    h[1] = role.bit() | (aead.code() << 1);
    h[2..10].copy_from_slice(&epoch.to_be_bytes());
    h[10..18].copy_from_slice(&number.to_be_bytes());
    h
}

/// Seals one gateway's datagrams.
pub struct Sealer {
    aead: Aead,
    role: Role,
    epoch: u64,
    next: u64,
    cipher: Cipher,
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    #[error("this epoch's datagram numbers are used up; restart the gateway")]
    Exhausted,
}

impl Sealer {
    /// A sender in `epoch`, which must be later than any epoch this key and role sealed
    /// in before (`epoch_now`).
    pub fn new(psk: &Psk, aead: Aead, role: Role, epoch: u64) -> Sealer {
        Sealer {
            aead,
            role,
            epoch,
            next: 0,
            cipher: Cipher::derive(psk, aead, role, epoch),
        }
    }

    /// Appends to `out` one datagram carrying `plaintext` (encoded frames).
    pub fn seal(&mut self, plaintext: &[u8], out: &mut Vec<u8>) -> Result<(), SealError> {
        let number = self.next;
        self.next = self.next.checked_add(1).ok_or(SealError::Exhausted)?;
        let h = header(self.aead, self.role, self.epoch, number);
        let start = out.len();
        out.extend_from_slice(&h);
        out.extend_from_slice(plaintext);
        let tag = self.cipher.seal(
            &Cipher::nonce(self.role, number),
            &h,
            &mut out[start + HEADER..],
        );
        out.extend_from_slice(&tag);
        Ok(())
    }
}

/// The sender's epoch for a gateway starting now: microseconds since 1970.
pub fn epoch_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_micros() as u64)
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error("datagram of {0} bytes is shorter than a header and a tag")]
    Short(usize),
    #[error("unknown version {0}")]
    Version(u8),
    #[error("sealed by this gateway's own role (both ends configured as the same role?)")]
    OwnRole,
    #[error("sealed with another AEAD than configured")]
    OtherAead,
    #[error("from an epoch older than the peer's current one")]
    Stale,
    #[error("replayed (or too old for the window)")]
    Replay,
    #[error("authentication failed (wrong key, or altered)")]
    Forged,
}

/// A datagram that authenticated.
#[derive(Debug, PartialEq, Eq)]
pub struct Opened {
    /// The decrypted frames' bytes.
    pub plaintext: Vec<u8>,
    /// The peer's epoch changed from an earlier one: it restarted, and every connection
    /// of its old epoch is gone.
    pub peer_restarted: bool,
}

/// Opens the peer's datagrams.
pub struct Opener {
    psk: Psk,
    aead: Aead,
    peer: Role,
    epoch: Option<(u64, Cipher)>,
    window: ReplayWindow,
}

impl Opener {
    pub fn new(psk: &Psk, aead: Aead, own: Role) -> Opener {
        Opener {
            psk: psk.clone(),
            aead,
            peer: own.peer(),
            epoch: None,
            window: ReplayWindow::default(),
        }
    }

    /// Authenticates and decrypts one datagram; nothing changes unless it authenticates.
    pub fn open(&mut self, datagram: &[u8]) -> Result<Opened, OpenError> {
        if datagram.len() < OVERHEAD {
            return Err(OpenError::Short(datagram.len()));
        }
        let (h, rest) = datagram.split_at(HEADER);
        if h[0] != VERSION {
            return Err(OpenError::Version(h[0]));
        }
        if h[1] & 1 != self.peer.bit() {
            return Err(OpenError::OwnRole);
        }
        if h[1] >> 1 != self.aead.code() {
            return Err(OpenError::OtherAead);
        }
        let epoch = u64::from_be_bytes(h[2..10].try_into().expect("8 bytes"));
        let number = u64::from_be_bytes(h[10..18].try_into().expect("8 bytes"));
        let current = self.epoch.as_ref().map(|(e, _)| *e);
        let fresh;
        let cipher = match &self.epoch {
            Some((e, _)) if epoch < *e => return Err(OpenError::Stale),
            Some((e, c)) if epoch == *e => {
                if !self.window.check(number) {
                    return Err(OpenError::Replay);
                }
                c
            }
            _ => {
                fresh = Cipher::derive(&self.psk, self.aead, self.peer, epoch);
                &fresh
            }
        };
        let (body, tag) = rest.split_at(rest.len() - TAG);
        let mut plaintext = body.to_vec();
        if !cipher.open(&Cipher::nonce(self.peer, number), h, &mut plaintext, tag) {
            return Err(OpenError::Forged);
        }
        let peer_restarted = current.is_some_and(|e| e != epoch);
        if current != Some(epoch) {
            let c = Cipher::derive(&self.psk, self.aead, self.peer, epoch);
            self.epoch = Some((epoch, c));
            self.window = ReplayWindow::default();
        }
        self.window.commit(number);
        Ok(Opened {
            plaintext,
            peer_restarted,
        })
    }
}

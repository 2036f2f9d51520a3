//! Gateway mode's data datagrams: frames sealed with an AEAD (ChaCha20-Poly1305 or
//! AES-256-GCM, RustCrypto) under one session's keys (docs/live.md, "Gateway mode",
//! "Datagrams").
//!
//! ```text
//! 0        1        2                  10               18
//! +--------+--------+------------------+----------------+-------------------+-----+
//! | type=2 | flags  | session (u64 BE) | number (u64 BE)| frames, encrypted | tag |
//! +--------+--------+------------------+----------------+-------------------+-----+
//! flags: bit 0 the sender's role (0 gateway A, 1 gateway B), bits 1-2 the AEAD
//! ```
//!
//! A session's keys come from a Noise handshake with fresh ephemerals on both sides
//! (`handshake.rs`): one key per direction, so the nonce, the datagram number, is never
//! used twice under a key. The 18-byte header is the AEAD's associated data. The
//! receiver finds the session by its id and accepts each number once (`ReplayWindow`);
//! a datagram of a session it does not hold (an earlier run of either gateway, a
//! retired session) cannot be opened at all. Freshness owes nothing to a clock.

use super::replay::ReplayWindow;
use aes_gcm::Aes256Gcm;
use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::ChaCha20Poly1305;
use std::path::Path;

/// The first byte of a data datagram (1 was the epoch format, no longer accepted).
pub const DATA: u8 = 2;
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
    pub fn code(self) -> u8 {
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
    pub fn bit(self) -> u8 {
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

    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
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
    fn new(aead: Aead, key: &[u8; 32]) -> Cipher {
        match aead {
            Aead::ChaCha20Poly1305 => Cipher::ChaCha(Box::new(ChaCha20Poly1305::new(key.into()))),
            Aead::Aes256Gcm => Cipher::Aes(Box::new(Aes256Gcm::new(key.into()))),
        }
    }

    fn nonce(number: u64) -> [u8; 12] {
        let mut n = [0u8; 12];
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

fn header(aead: Aead, role: Role, session: u64, number: u64) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[0] = DATA;
    h[1] = role.bit() | (aead.code() << 1);
    h[2..10].copy_from_slice(&session.to_be_bytes());
    h[10..18].copy_from_slice(&number.to_be_bytes());
    h
}

/// The session a data datagram names, if it is one.
pub fn session_of(datagram: &[u8]) -> Option<u64> {
    if datagram.len() < OVERHEAD || datagram[0] != DATA {
        return None;
    }
    Some(u64::from_be_bytes(
        datagram[2..10].try_into().expect("8 bytes"),
    ))
}

/// Seals one gateway's datagrams in one session.
pub struct Sealer {
    aead: Aead,
    role: Role,
    session: u64,
    next: u64,
    cipher: Cipher,
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    #[error("no session with the peer yet (handshake under way)")]
    NoSession,
    #[error("this session's datagram numbers are used up")]
    Exhausted,
}

impl Sealer {
    /// A sender in `session` with this direction's key.
    pub fn new(key: &[u8; 32], aead: Aead, role: Role, session: u64) -> Sealer {
        Sealer {
            aead,
            role,
            session,
            next: 0,
            cipher: Cipher::new(aead, key),
        }
    }

    /// Appends to `out` one datagram carrying `plaintext` (encoded frames).
    pub fn seal(&mut self, plaintext: &[u8], out: &mut Vec<u8>) -> Result<(), SealError> {
        let number = self.next;
        self.next = self.next.checked_add(1).ok_or(SealError::Exhausted)?;
        let h = header(self.aead, self.role, self.session, number);
        let start = out.len();
        out.extend_from_slice(&h);
        out.extend_from_slice(plaintext);
        let tag = self
            .cipher
            .seal(&Cipher::nonce(number), &h, &mut out[start + HEADER..]);
        out.extend_from_slice(&tag);
        Ok(())
    }
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error("datagram of {0} bytes is shorter than its header")]
    Short(usize),
    #[error("unknown datagram type {0}")]
    Version(u8),
    #[error("sealed by this gateway's own role (both ends configured as the same role?)")]
    OwnRole,
    #[error("sealed with another AEAD than configured")]
    OtherAead,
    #[error("of a session this gateway does not hold (the peer's, or its own, earlier run?)")]
    UnknownSession,
    #[error("replayed (or too old for the window)")]
    Replay,
    #[error("authentication failed (wrong key, or altered)")]
    Forged,
    #[error("handshake: {0}")]
    Handshake(&'static str),
}

/// Opens the peer's datagrams of one session.
pub struct Opener {
    aead: Aead,
    peer: Role,
    session: u64,
    cipher: Cipher,
    window: ReplayWindow,
}

impl Opener {
    /// The peer's direction of `session`, with its key.
    pub fn new(key: &[u8; 32], aead: Aead, own: Role, session: u64) -> Opener {
        Opener {
            aead,
            peer: own.peer(),
            session,
            cipher: Cipher::new(aead, key),
            window: ReplayWindow::default(),
        }
    }

    pub fn session(&self) -> u64 {
        self.session
    }

    /// Authenticates and decrypts one datagram; nothing changes unless it authenticates.
    pub fn open(&mut self, datagram: &[u8]) -> Result<Vec<u8>, OpenError> {
        if datagram.len() < OVERHEAD {
            return Err(OpenError::Short(datagram.len()));
        }
        let (h, rest) = datagram.split_at(HEADER);
        if h[0] != DATA {
            return Err(OpenError::Version(h[0]));
        }
        if h[1] & 1 != self.peer.bit() {
            return Err(OpenError::OwnRole);
        }
        if h[1] >> 1 != self.aead.code() {
            return Err(OpenError::OtherAead);
        }
        let session = u64::from_be_bytes(h[2..10].try_into().expect("8 bytes"));
        if session != self.session {
            return Err(OpenError::UnknownSession);
        }
        let number = u64::from_be_bytes(h[10..18].try_into().expect("8 bytes"));
        if !self.window.check(number) {
            return Err(OpenError::Replay);
        }
        let (body, tag) = rest.split_at(rest.len() - TAG);
        let mut plaintext = body.to_vec();
        if !self
            .cipher
            .open(&Cipher::nonce(number), h, &mut plaintext, tag)
        {
            return Err(OpenError::Forged);
        }
        self.window.commit(number);
        Ok(plaintext)
    }
}

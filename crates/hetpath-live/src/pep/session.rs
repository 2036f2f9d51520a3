//! `Sessions`: which keys a gateway seals and opens datagrams with, and the handshakes
//! that make them (docs/live.md, "Gateway mode", "Sessions and handshakes"). Sans IO,
//! time an argument, randomness from the core's seeded `KeyRng`.
//!
//! - **A initiates** (`handshake.rs`): at start, every `rekey_after`, and when B asks
//!   (a REQUEST: MAC'd under the PSK but replayable, so acted on at most once per
//!   `REQUEST_EVERY`). Its
//!   INIT is sent again, identical, every `HANDSHAKE_RETRY` until answered. B's
//!   RESPONSE confirms the session to A, which seals with it at once.
//! - **B confirms late.** A valid INIT may be a recording, so B answers it but keeps
//!   the session *pending*: it becomes current only when a data datagram sealed with
//!   it authenticates, which only the holder of that handshake's ephemeral key can
//!   produce. Until then B seals with, and opens, its current session, so a replayed or
//!   forged handshake never disturbs a live one. Nothing in a pending session's
//!   datagrams is acted on before they confirm it (the Opens they carry included).
//! - **The previous session** is still opened for `PREVIOUS_KEPT` after a re-key (its
//!   datagrams in flight), never sealed with, and dropped at once if the peer restarted.
//! - **Restarts.** Each run has a random boot id, carried in the handshake: a session
//!   with a peer of another boot id than the current one's means the peer restarted,
//!   and its old connections are gone (`take_restart`). Data of a session this side
//!   does not hold (the peer's, or its own, earlier run) cannot be opened; B answers it
//!   with a REQUEST, so A re-keys when B restarted.
//! - **Cheap to refuse.** A forged INIT costs hashes and one AEAD (no Diffie-Hellman).
//!   B remembers, per peer run it confirmed a session with (the last `RUNS_KEPT`), the
//!   highest handshake number: a replayed INIT of a done handshake is refused as cheaply.
//!   Answering a new INIT (an X25519 key pair and a DH) is rate-limited to a burst of
//!   `HANDSHAKE_BURST` and one per `HANDSHAKE_REFILL` after; B keeps `PENDING_KEPT`
//!   pending sessions, and a repeated INIT gets its cached RESPONSE again.

use super::handshake::{self, Hello, Inbound, Initiation, INIT, REQUEST, RESPONSE};
use super::keyrng::KeyRng;
use super::seal::{self, Aead, OpenError, Opener, Psk, Role, SealError, Sealer, DATA};
use hetpath_proto::time::{Dur, Time};
use std::collections::VecDeque;

/// How long A waits for a RESPONSE before sending its INIT again: a GEO round trip
/// (about 600 ms) with room.
pub const HANDSHAKE_RETRY: Dur = Dur::from_secs(1);
/// How long the previous session is still opened after a re-key.
pub const PREVIOUS_KEPT: Dur = Dur::from_secs(10);
/// B sends a REQUEST at most this often; A acts on one at most this often.
pub const REQUEST_EVERY: Dur = Dur::from_secs(1);
/// B answers at most this many new INITs at once, then one per `HANDSHAKE_REFILL`.
pub const HANDSHAKE_BURST: u32 = 4;
pub const HANDSHAKE_REFILL: Dur = Dur::from_millis(500);
const PENDING_KEPT: usize = 4;
const RUNS_KEPT: usize = 8;

/// Counters for the metrics and the warnings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Sessions confirmed.
    pub handshakes: u64,
    /// Handshake messages that failed to authenticate, and (A) INITs unanswered after
    /// `HANDSHAKE_RETRY`.
    pub handshake_failures: u64,
    /// B: INITs of handshakes already done (recordings), refused.
    pub handshakes_replayed: u64,
    /// B: INITs refused over the rate limit.
    pub handshakes_limited: u64,
    /// Data datagrams of a session this side does not hold.
    pub stale_datagrams: u64,
}

/// What an accepted datagram was.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    /// A data datagram's plaintext (its frames).
    Data(Vec<u8>),
    /// A handshake message or a REQUEST, consumed.
    Handshake,
}

struct Current {
    sealer: Sealer,
    opener: Opener,
    since: Time,
}

struct Pending {
    hello: Hello,
    sealer: Sealer,
    opener: Opener,
    response: Vec<u8>,
}

pub struct Sessions {
    role: Role,
    aead: Aead,
    psk: Psk,
    rekey_after: Dur,
    boot: u64,
    rng: KeyRng,
    current: Option<Current>,
    previous: Option<(Opener, Time)>,
    /// The boot id of the peer in the current session.
    peer_boot: Option<u64>,
    /// A: the handshake in flight and when its INIT last left.
    initiation: Option<(Initiation, Time)>,
    /// A: when the next handshake starts (none in flight).
    next_initiation: Time,
    /// A: handshakes begun in this run.
    number: u64,
    /// B: answered, not yet confirmed.
    pending: VecDeque<Pending>,
    /// B: (boot, highest confirmed handshake number) of the peer's runs, latest last.
    runs: VecDeque<(u64, u64)>,
    tokens: u32,
    refilled: Time,
    last_request: Option<Time>,
    outbox: VecDeque<Vec<u8>>,
    restarted: bool,
    started: bool,
    stats: SessionStats,
}

impl Sessions {
    pub fn new(role: Role, psk: Psk, aead: Aead, rekey_after: Dur, seed: [u8; 32]) -> Sessions {
        let mut rng = KeyRng::new(seed);
        Sessions {
            role,
            aead,
            psk,
            rekey_after,
            boot: rng.u64(),
            rng,
            current: None,
            previous: None,
            peer_boot: None,
            initiation: None,
            next_initiation: Time::ZERO,
            number: 0,
            pending: VecDeque::new(),
            runs: VecDeque::new(),
            tokens: HANDSHAKE_BURST,
            refilled: Time::ZERO,
            last_request: None,
            outbox: VecDeque::new(),
            restarted: false,
            started: false,
            stats: SessionStats::default(),
        }
    }

    pub fn stats(&self) -> SessionStats {
        self.stats
    }

    /// This run's random boot id.
    pub fn boot(&self) -> u64 {
        self.boot
    }

    pub fn rng(&mut self) -> &mut KeyRng {
        &mut self.rng
    }

    /// A session is confirmed: data can be sealed.
    pub fn can_send(&self) -> bool {
        self.current.is_some()
    }

    /// The current session's id, if any.
    pub fn current(&self) -> Option<u64> {
        self.current.as_ref().map(|c| c.opener.session())
    }

    /// The peer restarted since last asked: its connections are gone.
    pub fn take_restart(&mut self) -> bool {
        std::mem::take(&mut self.restarted)
    }

    /// A began a session since last asked: send on it at once, so B confirms it.
    pub fn take_started(&mut self) -> bool {
        std::mem::take(&mut self.started)
    }

    /// Appends one data datagram sealed in the current session.
    pub fn seal(&mut self, plaintext: &[u8], out: &mut Vec<u8>) -> Result<(), SealError> {
        match &mut self.current {
            Some(c) => c.sealer.seal(plaintext, out),
            None => Err(SealError::NoSession),
        }
    }

    /// A handshake message or REQUEST to send.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.outbox.pop_front()
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        let mut t = self.previous.as_ref().map(|p| p.1);
        let mut at = |d: Time| t = Some(t.map_or(d, |t| t.min(d)));
        match self.role {
            Role::A => match &self.initiation {
                Some((_, sent)) => at(*sent + HANDSHAKE_RETRY),
                None => at(self.next_initiation),
            },
            Role::B if self.current.is_none() => {
                at(self.last_request.map_or(Time::ZERO, |r| r + REQUEST_EVERY))
            }
            Role::B => {}
        }
        t
    }

    pub fn handle_timeout(&mut self, now: Time) {
        if self.previous.as_ref().is_some_and(|p| now >= p.1) {
            self.previous = None;
        }
        match self.role {
            Role::A => match &mut self.initiation {
                Some((init, sent)) if now >= *sent + HANDSHAKE_RETRY => {
                    self.stats.handshake_failures += 1;
                    *sent = now;
                    self.outbox.push_back(init.message.clone());
                }
                Some(_) => {}
                None if now >= self.next_initiation => {
                    self.number += 1;
                    let hello = Hello {
                        boot: self.boot,
                        number: self.number,
                    };
                    let init = Initiation::new(&self.psk, self.aead, &mut self.rng, hello);
                    self.outbox.push_back(init.message.clone());
                    self.initiation = Some((init, now));
                }
                None => {}
            },
            Role::B => {
                if self.current.is_none() {
                    self.request(now);
                }
            }
        }
    }

    /// B: asks A for a handshake, at most once per `REQUEST_EVERY`.
    fn request(&mut self, now: Time) {
        if self.last_request.is_none_or(|r| now >= r + REQUEST_EVERY) {
            self.last_request = Some(now);
            self.outbox
                .push_back(handshake::request(&self.psk, self.aead));
        }
    }

    /// One datagram from the peer. Nothing changes unless it authenticates (a REQUEST
    /// at most brings A's next handshake forward).
    pub fn receive(&mut self, now: Time, d: &[u8]) -> Result<Received, OpenError> {
        let Some(&ty) = d.first() else {
            return Err(OpenError::Short(0));
        };
        match (ty, self.role) {
            (DATA, _) => self.data(now, d).map(Received::Data),
            (INIT, Role::B) => self.on_init(now, d).map(|()| Received::Handshake),
            (RESPONSE, Role::A) => self.on_response(now, d).map(|()| Received::Handshake),
            (REQUEST, Role::A) if handshake::is_request(&self.psk, self.aead, d) => {
                self.on_request(now);
                Ok(Received::Handshake)
            }
            (ty, _) => Err(OpenError::Version(ty)),
        }
    }

    fn data(&mut self, now: Time, d: &[u8]) -> Result<Vec<u8>, OpenError> {
        let sid = seal::session_of(d).ok_or(OpenError::Short(d.len()))?;
        if let Some(c) = self.current.as_mut().filter(|c| c.opener.session() == sid) {
            return c.opener.open(d);
        }
        if let Some((o, _)) = self.previous.as_mut().filter(|p| p.0.session() == sid) {
            return o.open(d);
        }
        if let Some(i) = self.pending.iter().position(|p| p.opener.session() == sid) {
            let plain = self.pending[i].opener.open(d)?;
            // Sealed by the holder of the INIT's ephemeral key: the session is fresh.
            let p = self.pending.remove(i).expect("found");
            self.pending.clear();
            self.remember_run(p.hello);
            self.install(now, p.sealer, p.opener, p.hello.boot);
            return Ok(plain);
        }
        self.stats.stale_datagrams += 1;
        if self.role == Role::B {
            self.request(now);
        }
        Err(OpenError::UnknownSession)
    }

    /// A session is confirmed: it becomes current.
    fn install(&mut self, now: Time, sealer: Sealer, opener: Opener, peer_boot: u64) {
        let restarted = self.peer_boot.is_some_and(|b| b != peer_boot);
        let old = self.current.take();
        self.previous = if restarted {
            self.restarted = true;
            None
        } else {
            old.map(|c| (c.opener, now + PREVIOUS_KEPT))
        };
        self.current = Some(Current {
            sealer,
            opener,
            since: now,
        });
        self.peer_boot = Some(peer_boot);
        self.stats.handshakes += 1;
    }

    fn remember_run(&mut self, hello: Hello) {
        if let Some(r) = self.runs.iter_mut().find(|r| r.0 == hello.boot) {
            r.1 = r.1.max(hello.number);
            return;
        }
        if self.runs.len() == RUNS_KEPT {
            self.runs.pop_front();
        }
        self.runs.push_back((hello.boot, hello.number));
    }

    fn on_init(&mut self, now: Time, d: &[u8]) -> Result<(), OpenError> {
        let seed = self.rng.fork();
        let inbound = Inbound::read(&self.psk, self.aead, seed, d).inspect_err(|_| {
            self.stats.handshake_failures += 1;
        })?;
        let h = inbound.hello;
        if let Some(p) = self.pending.iter().find(|p| p.hello == h) {
            // A's INIT again: its RESPONSE was lost (or this is a copy). No new keys.
            self.outbox.push_back(p.response.clone());
            return Ok(());
        }
        if self
            .runs
            .iter()
            .any(|&(boot, n)| boot == h.boot && h.number <= n)
        {
            self.stats.handshakes_replayed += 1;
            return Err(OpenError::Handshake(
                "an initiation of a handshake already done",
            ));
        }
        if !self.take_token(now) {
            self.stats.handshakes_limited += 1;
            return Err(OpenError::Handshake("over the handshake rate limit"));
        }
        let (keys, response) = inbound.reply(&self.psk, self.aead, self.boot);
        if self.pending.len() == PENDING_KEPT {
            self.pending.pop_front();
        }
        self.outbox.push_back(response.clone());
        self.pending.push_back(Pending {
            hello: h,
            sealer: Sealer::new(&keys.send, self.aead, self.role, keys.session),
            opener: Opener::new(&keys.recv, self.aead, self.role, keys.session),
            response,
        });
        Ok(())
    }

    fn take_token(&mut self, now: Time) -> bool {
        let earned = now.since(self.refilled).0 / HANDSHAKE_REFILL.0;
        if earned > 0 {
            self.tokens = (self.tokens as u64 + earned).min(HANDSHAKE_BURST as u64) as u32;
            self.refilled = now;
        }
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }

    fn on_response(&mut self, now: Time, d: &[u8]) -> Result<(), OpenError> {
        let Some((init, _)) = &self.initiation else {
            return Err(OpenError::Handshake("a response to no handshake in flight"));
        };
        let (keys, peer_boot) = init.finish(&self.psk, self.aead, d).inspect_err(|e| {
            if *e == OpenError::Forged {
                self.stats.handshake_failures += 1;
            }
        })?;
        self.initiation = None;
        self.next_initiation = now + self.rekey_after;
        let sealer = Sealer::new(&keys.send, self.aead, self.role, keys.session);
        let opener = Opener::new(&keys.recv, self.aead, self.role, keys.session);
        self.install(now, sealer, opener, peer_boot);
        self.started = true;
        Ok(())
    }

    /// A: B asks for a handshake (it holds no session A uses). It may be a replay, so it
    /// only brings the next handshake forward, to no sooner than `REQUEST_EVERY` after
    /// the current session began.
    fn on_request(&mut self, now: Time) {
        if self.initiation.is_some() {
            return;
        }
        let earliest = self
            .current
            .as_ref()
            .map_or(now, |c| c.since + REQUEST_EVERY);
        self.next_initiation = self.next_initiation.min(earliest.max(now));
    }
}

//! `fec`: a Reed-Solomon RS(n, k) code over 8-bit symbols (bytes) with a block
//! interleaver of depth D, over an inner symbol-error process.
//!
//! Rate: the link carries n coded symbols per k data bytes, so `rate_factor` = k/n (the
//! simulator multiplies the link rate by it).
//!
//! Decoding: a codeword fails iff more than t = floor((n - k)/2) of its n symbols are in
//! error (errors, not erasures: the decoder does not know where they are). A failed
//! codeword loses every packet it carries.
//!
//! Geometry, per packet (the packet is coded on its own; codewords shared with the
//! neighbouring packets in a continuous stream are not modelled): its L bytes are dealt
//! round-robin over the D codewords of an interleaver frame, so it touches min(D, L)
//! codewords, and needs at least ceil(L/k) since each holds k data bytes:
//!     c(L) = max(ceil(L/k), min(D, L)) codewords.
//! They are sent as frames of D codewords (the last frame may hold fewer, w), each frame
//! interleaved symbol by symbol: symbol j of a frame belongs to codeword j mod w. The
//! packet's c n coded symbols are spread evenly over its transmission interval
//! [start, start + duration). With D = 1 there is no interleaving.
//!
//! Inner process, and what it steps on:
//!  * i.i.d. (`ber = ...`, or `inner = { model = "ber", ber = ... }`): symbol error
//!    probability p_s = 1 - (1 - ber)^8; a codeword fails with the exact binomial tail
//!    P_cw = P(Bin(n, p_s) > t), computed when the model is built (cached per n, t, p_s). A packet survives
//!    with probability (1 - P_cw)^c(L): one draw per packet (no per-symbol loop).
//!    Interleaving cannot help independent errors; it only changes c(L).
//!  * bursts (`inner = { model = "gilbert-elliott", ... }`): the time-driven process of
//!    `gilbert-elliott`, where `loss_good` / `loss_bad` are the error probabilities of a
//!    symbol sent in that state. Steps on: the process's periods and the codewords they
//!    hit. Each bad period overlapping the packet maps to a range of symbol indices (any
//!    symbol whose time slot overlaps the period); the range is spread over the frame's
//!    codewords by the interleaver (a burst of b symbols gives each codeword floor(b/w)
//!    or ceil(b/w) bad symbols, counted exactly per codeword). A codeword with β bad
//!    symbols fails with P(Bin(β, loss_bad) + Bin(n - β, loss_good) > t) from a table
//!    built once (cached per parameters); codewords no burst touched fail with P(Bin(n, loss_good) > t). One
//!    draw per packet on the product of the survival probabilities. Cost: O(periods
//!    overlapping the packet + D per frame a burst touches); nothing per symbol.

use super::ber::survival;
use super::fec_math::{cached_failure_table, cached_tail};
use super::gilbert_elliott::GeProcess;
use super::*;
use crate::rng::uniform;
use serde::Deserialize;
use std::sync::Arc;

/// `{ model = "fec", n = 255, k = 223, depth = 8, ber = 1e-4 }`, or with a bursty inner
/// process `{ model = "fec", n = 255, k = 223, depth = 8, inner = { model =
/// "gilbert-elliott", t_good = "10ms", t_bad = "50us" } }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FecSpec {
    /// Codeword length in symbols (bytes), 1..=255.
    pub n: u32,
    /// Data symbols per codeword, 0 < k < n.
    pub k: u32,
    /// Interleaving depth D in codewords (default 1: none).
    #[serde(default = "one")]
    pub depth: u32,
    /// Bit error rate of an i.i.d. inner channel (shorthand for `inner = { model = "ber" }`).
    pub ber: Option<f64>,
    /// The inner symbol-error process.
    pub inner: Option<FecInner>,
}

fn one() -> u32 {
    1
}

/// The process that corrupts symbols under the code.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum FecInner {
    Ber(BerSpec),
    GilbertElliott(GilbertElliottSpec),
}

/// The longest codeword: a Reed-Solomon code over 8-bit symbols (GF(2^8)) has at most
/// 2^8 - 1 = 255 symbols, as RS(255, 223).
pub const MAX_CODEWORD: u32 = 255;

/// An (n, k) block code's limits, shared by the `fec` model and `markov`'s `fec`:
/// 1 <= n <= 255 and 0 < k < n. `prefix` is the table holding `n` and `k`.
pub(super) fn check_code(prefix: &str, n: u32, k: u32) -> Result<(), ChannelError> {
    if !(1..=MAX_CODEWORD).contains(&n) {
        return Err(ChannelError::invalid(
            format!("{prefix}.n"),
            n,
            "expected a codeword length in 1..=255 (8-bit symbols)",
        ));
    }
    if k == 0 || k >= n {
        return Err(ChannelError::invalid(
            format!("{prefix}.k"),
            k,
            format!("expected 0 < k < n = {n}"),
        ));
    }
    Ok(())
}

impl FecSpec {
    pub(super) fn validate(&self, prefix: &str) -> Result<(), ChannelError> {
        let d = self.depth;
        check_code(prefix, self.n, self.k)?;
        if !(1..=65535).contains(&d) {
            return Err(ChannelError::invalid(
                format!("{prefix}.depth"),
                d,
                "expected an interleaving depth in 1..=65535",
            ));
        }
        match (self.ber, &self.inner) {
            (Some(ber), None) => BerSpec { ber }.validate(prefix),
            (None, Some(FecInner::Ber(b))) => b.validate(&format!("{prefix}.inner")),
            (None, Some(FecInner::GilbertElliott(g))) => g.validate(&format!("{prefix}.inner")),
            _ => Err(ChannelError::Shape {
                table: prefix.to_string(),
                what: "a fec channel needs exactly one of `ber` and `inner`",
            }),
        }
    }

    /// Errors the code corrects per codeword, t = floor((n - k)/2).
    pub fn t(&self) -> u32 {
        (self.n - self.k) / 2
    }

    /// Codewords carrying a packet of `bytes`: max(ceil(L/k), min(D, L)).
    pub fn codewords(&self, bytes: u32) -> u64 {
        u64::from(bytes.div_ceil(self.k).max(self.depth.min(bytes)))
    }

    /// The bit error rate of an i.i.d. inner process, if that is the inner process.
    fn iid_ber(&self) -> Option<f64> {
        match (&self.inner, self.ber) {
            (Some(FecInner::Ber(b)), _) => Some(b.ber),
            (None, ber) => Some(ber.unwrap_or(0.0)),
            (Some(FecInner::GilbertElliott(_)), _) => None,
        }
    }

    /// Codeword failure probability P(Bin(n, p_s) > t), p_s = 1 - (1 - ber)^8, for an
    /// i.i.d. inner process; `None` for a bursty one.
    pub fn codeword_failure(&self) -> Option<f64> {
        let p_s = -(8.0 * (-self.iid_ber()?).ln_1p()).exp_m1();
        Some(cached_tail(self.n, p_s, self.t()))
    }

    /// Long-run packet loss 1 - (1 - P_cw)^c(L) for an i.i.d. inner process.
    pub fn expected_loss(&self, bytes: u32) -> Option<f64> {
        let p_cw = self.codeword_failure()?;
        let c = self.codewords(bytes) as f64;
        Some(if c == 0.0 || p_cw == 0.0 {
            0.0
        } else {
            -(c * (-p_cw).ln_1p()).exp_m1()
        })
    }

    pub fn build(&self, rng: Rng) -> Fec {
        let inner = match &self.inner {
            Some(FecInner::GilbertElliott(g)) => {
                let fail = cached_failure_table(self.n, self.t(), g.loss_good, g.loss_bad);
                Inner::Bursty(Box::new(Bursty {
                    process: GeProcess::new(g, rng),
                    ln_ok_good: (-fail[0]).ln_1p(),
                    fail,
                    lanes: vec![0; self.depth as usize],
                }))
            }
            _ => {
                let p_cw = self.codeword_failure().unwrap_or(0.0);
                Inner::Iid {
                    rng,
                    ln_ok_cw: (-p_cw).ln_1p(),
                    last_bytes: 0,
                    last_ok: 1.0,
                }
            }
        };
        Fec {
            n: self.n,
            k: self.k,
            depth: self.depth,
            inner,
        }
    }
}

/// The running model: see the module docs.
#[derive(Debug, Clone)]
pub struct Fec {
    n: u32,
    k: u32,
    depth: u32,
    inner: Inner,
}

#[derive(Debug, Clone)]
enum Inner {
    Iid {
        rng: Rng,
        ln_ok_cw: f64,
        last_bytes: u32,
        last_ok: f64,
    },
    Bursty(Box<Bursty>),
}

#[derive(Debug, Clone)]
struct Bursty {
    process: GeProcess,
    /// Failure probability of a codeword by its number of bad-state symbols.
    fail: Arc<[f64]>,
    /// ln(1 - fail[0]): survival of a codeword no burst touched.
    ln_ok_good: f64,
    /// Bad-symbol count per codeword of the frame being tallied (all zero between uses).
    lanes: Vec<u16>,
}

/// Per-packet tally of bad symbols per codeword, frame by frame.
struct Tally<'a> {
    lanes: &'a mut [u16],
    fail: &'a [f64],
    n: u64,
    depth: u64,
    c: u64,
    /// Frame whose counts are pending in `lanes`, or `u64::MAX`.
    frame: u64,
    ok: f64,
    touched: u64,
}

impl Tally<'_> {
    /// Codewords in frame `f` (only the last frame may have fewer than D).
    fn width(&self, f: u64) -> u64 {
        self.depth.min(self.c - f * self.depth)
    }

    /// Marks the packet's coded symbols `[a, b)` as sent in the bad state.
    fn add(&mut self, mut a: u64, b: u64) {
        let frame_len = self.depth * self.n;
        while a < b {
            let f = a / frame_len;
            if f != self.frame {
                self.flush();
                self.frame = f;
            }
            let (w, first) = (self.width(f), f * frame_len);
            let end = b.min(first + w * self.n);
            let (off, len) = (a - first, end - a);
            let (full, rem) = (len / w, len % w);
            let lanes = &mut self.lanes[..w as usize];
            if full > 0 {
                lanes.iter_mut().for_each(|l| *l += full as u16);
            }
            for i in 0..rem {
                lanes[((off + i) % w) as usize] += 1;
            }
            a = end;
        }
    }

    /// Folds the pending frame's codewords into `ok` and clears their counts.
    fn flush(&mut self) {
        if self.frame == u64::MAX {
            return;
        }
        let w = self.width(self.frame) as usize;
        for l in &mut self.lanes[..w] {
            if *l > 0 {
                self.ok *= 1.0 - self.fail[*l as usize];
                self.touched += 1;
                *l = 0;
            }
        }
        self.frame = u64::MAX;
    }

    /// Probability that every codeword of the packet decodes.
    fn finish(mut self, ln_ok_good: f64) -> f64 {
        self.flush();
        self.ok * survival(ln_ok_good, self.c - self.touched)
    }
}

impl Bursty {
    fn transmit(&mut self, c: u64, n: u64, depth: u64, start: Time, duration: Dur) -> bool {
        let Bursty {
            process,
            fail,
            ln_ok_good,
            lanes,
        } = self;
        let symbols = u128::from(c * n);
        let (s, dur) = (start.0, duration.0.max(1));
        let e = s.saturating_add(dur);
        // Symbol j occupies [j, j + 1) * dur / symbols after `s`; the symbols overlapping
        // [x0, x1) are [floor(x0 symbols / dur), ceil(x1 symbols / dur)).
        let floor = |x: u64| (u128::from(x) * symbols / u128::from(dur)) as u64;
        let ceil = |x: u64| (u128::from(x) * symbols).div_ceil(u128::from(dur)) as u64;
        process.advance_to(s);
        let mut tally = Tally {
            lanes,
            fail,
            n,
            depth,
            c,
            frame: u64::MAX,
            ok: 1.0,
            touched: 0,
        };
        let (mut from, mut done) = (s, 0u64);
        loop {
            if process.bad {
                let a = floor(from - s).max(done);
                let b = ceil(process.until.min(e) - s).min(c * n);
                if a < b {
                    tally.add(a, b);
                    done = b;
                }
            }
            if process.until >= e {
                break;
            }
            from = process.until;
            process.next_period();
        }
        let ok = tally.finish(*ln_ok_good);
        ok >= 1.0 || process.uniform() < ok
    }
}

impl Channel for Fec {
    #[inline]
    fn transmit(&mut self, start: Time, duration: Dur, bytes: u32) -> bool {
        let c = u64::from(bytes.div_ceil(self.k).max(self.depth.min(bytes)));
        match &mut self.inner {
            Inner::Iid {
                rng,
                ln_ok_cw,
                last_bytes,
                last_ok,
            } => {
                if bytes != *last_bytes {
                    *last_bytes = bytes;
                    *last_ok = survival(*ln_ok_cw, c);
                }
                *last_ok >= 1.0 || uniform(rng) < *last_ok
            }
            Inner::Bursty(b) if c > 0 => {
                b.transmit(c, u64::from(self.n), u64::from(self.depth), start, duration)
            }
            Inner::Bursty(_) => true,
        }
    }
    fn rate_factor(&self) -> f64 {
        f64::from(self.k) / f64::from(self.n)
    }
    fn fork(&self) -> Option<Box<dyn Channel>> {
        Some(Box::new(self.clone()))
    }
    fn is_bad(&self) -> Option<bool> {
        match &self.inner {
            Inner::Bursty(b) => Some(b.process.bad),
            Inner::Iid { .. } => None,
        }
    }
}

#[cfg(test)]
#[path = "fec_tests.rs"]
mod tests;

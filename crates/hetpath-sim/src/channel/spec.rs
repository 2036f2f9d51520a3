//! `ChannelSpec`: the `channel = { model = "...", ... }` table of a scenario file.
//!
//! Parsing (serde) checks shapes and rejects unknown keys (every variant struct has
//! `deny_unknown_fields`; serde's internally tagged enums pass the remaining keys to the
//! variant, so this works without a hand-written deserialiser). `validate` checks ranges
//! and loads trace files; `build` turns a validated spec into a running model.

use super::*;
use crate::units::Duration;
use serde::Deserialize;
use std::fmt;
use std::path::Path;

/// One channel model with its parameters, as written in TOML. See docs/channels.md.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ChannelSpec {
    /// `{ model = "none" }`: a perfect channel. (A struct variant, so that extra keys are
    /// rejected; serde ignores them on unit variants.)
    None {},
    /// `{ model = "bernoulli", p = 0.01 }`
    Bernoulli(BernoulliSpec),
    /// `{ model = "markov", alpha = 0.01, beta = 0.1 }`
    Markov(MarkovSpec),
    /// `{ model = "gilbert-elliott", t_good = "1s", t_bad = "50ms" }`
    GilbertElliott(GilbertElliottSpec),
    /// `{ model = "ber", ber = 1e-6 }`
    Ber(BerSpec),
    /// `{ model = "fec", n = 255, k = 223, depth = 8, ber = 1e-4 }`
    Fec(FecSpec),
    /// `{ model = "trace", lost = [3, 17] }`
    Trace(TraceSpec),
}

impl Default for ChannelSpec {
    fn default() -> Self {
        ChannelSpec::None {}
    }
}

impl ChannelSpec {
    /// The model's name as written after `model =`.
    pub fn model(&self) -> &'static str {
        match self {
            ChannelSpec::None {} => "none",
            ChannelSpec::Bernoulli(_) => "bernoulli",
            ChannelSpec::Markov(_) => "markov",
            ChannelSpec::GilbertElliott(_) => "gilbert-elliott",
            ChannelSpec::Ber(_) => "ber",
            ChannelSpec::Fec(_) => "fec",
            ChannelSpec::Trace(_) => "trace",
        }
    }

    /// Checks every parameter's range, naming the key in the message
    /// (`channel.p = 1.5: expected a probability in [0, 1]`), and reads trace files,
    /// resolving a relative `file` against `base_dir` (the scenario file's directory).
    /// A file trace is kept in the spec, so `build` never touches the file system.
    pub fn validate(&self, base_dir: &Path) -> Result<(), ChannelError> {
        const P: &str = "channel";
        match self {
            ChannelSpec::None {} => Ok(()),
            ChannelSpec::Bernoulli(s) => s.validate(P),
            ChannelSpec::Markov(s) => s.validate(P),
            ChannelSpec::GilbertElliott(s) => s.validate(P),
            ChannelSpec::Ber(s) => s.validate(P),
            ChannelSpec::Fec(s) => s.validate(P),
            ChannelSpec::Trace(s) => s.validate(P, base_dir),
        }
    }

    /// Builds the model with its own random stream. Expects a validated spec: a `trace`
    /// with a `file` that `validate` did not load is read relative to the working
    /// directory, and panics if that fails (call `validate` first to get an error).
    pub fn build(&self, rng: Rng) -> Box<dyn Channel> {
        match self {
            ChannelSpec::None {} => Box::new(NoLoss),
            ChannelSpec::Bernoulli(s) => Box::new(s.build(rng)),
            ChannelSpec::Markov(s) => Box::new(s.build(rng)),
            ChannelSpec::GilbertElliott(s) => Box::new(s.build(rng)),
            ChannelSpec::Ber(s) => Box::new(s.build(rng)),
            ChannelSpec::Fec(s) => Box::new(s.build(rng)),
            ChannelSpec::Trace(s) => Box::new(s.build()),
        }
    }

    /// The analytic long-run loss probability of a packet of `bytes`, for models where it
    /// does not depend on timing: `None` for `gilbert-elliott` and `fec` with a
    /// Gilbert-Elliott inner process (see `expected_loss_during`) and for `trace`.
    pub fn expected_loss(&self, bytes: u32) -> Option<f64> {
        match self {
            ChannelSpec::None {} => Some(0.0),
            ChannelSpec::Bernoulli(s) => Some(s.expected_loss()),
            ChannelSpec::Markov(s) => Some(s.expected_loss()),
            ChannelSpec::GilbertElliott(_) => None,
            ChannelSpec::Ber(s) => Some(s.expected_loss(bytes)),
            ChannelSpec::Fec(s) => s.expected_loss(bytes),
            ChannelSpec::Trace(_) => None,
        }
    }

    /// Like `expected_loss`, for a packet whose transmission lasts `duration`; also covers
    /// `gilbert-elliott` (whose loss grows with the packet's duration, see its docs).
    pub fn expected_loss_during(&self, bytes: u32, duration: Dur) -> Option<f64> {
        match self {
            ChannelSpec::GilbertElliott(s) => Some(s.expected_loss(duration)),
            _ => self.expected_loss(bytes),
        }
    }
}

/// Why a channel table is unusable; each names its key (`channel.p`, `channel.inner.ber`)
/// and says what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChannelError {
    #[error("{key} = {value}: expected a probability in [0, 1]")]
    NotAProbability { key: String, value: f64 },
    #[error("{key} = \"{secs}s\": expected a positive duration")]
    NotPositive { key: String, secs: f64 },
    #[error("{key} = {value}: {what}")]
    Invalid {
        key: String,
        value: String,
        what: String,
    },
    /// Keys that go together are missing or clash.
    #[error("{table}: {what}")]
    Shape { table: String, what: &'static str },
}

impl ChannelError {
    pub(super) fn invalid(
        key: String,
        value: impl fmt::Display,
        what: impl Into<String>,
    ) -> ChannelError {
        ChannelError::Invalid {
            key,
            value: value.to_string(),
            what: what.into(),
        }
    }
}

/// `prefix.key = v: expected a probability in [0, 1]` unless `v` is in [0, 1].
pub(super) fn check_prob(prefix: &str, key: &str, v: f64) -> Result<(), ChannelError> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(ChannelError::NotAProbability {
            key: format!("{prefix}.{key}"),
            value: v,
        })
    }
}

/// `prefix.key = "0s": expected a positive duration` unless `d` > 0.
pub(super) fn check_positive(prefix: &str, key: &str, d: Duration) -> Result<(), ChannelError> {
    if d.0 > Dur::ZERO {
        Ok(())
    } else {
        Err(ChannelError::NotPositive {
            key: format!("{prefix}.{key}"),
            secs: d.0.as_secs_f64(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct W {
        channel: ChannelSpec,
    }

    fn parse(s: &str) -> Result<ChannelSpec, String> {
        toml::from_str::<W>(&format!("channel = {s}"))
            .map(|w| w.channel)
            .map_err(|e| e.to_string())
    }

    fn check(s: &str) -> Result<(), String> {
        parse(s)?
            .validate(Path::new("."))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn parses_every_model() {
        let ok = [
            r#"{ model = "none" }"#,
            r#"{ model = "bernoulli", p = 0.01 }"#,
            r#"{ model = "markov", alpha = 0.01, beta = 0.1 }"#,
            r#"{ model = "markov", alpha = 0.01, beta = 0.1, loss_good = 0.001, loss_bad = 0.5, initial = "bad" }"#,
            r#"{ model = "gilbert-elliott", t_good = "1s", t_bad = "50ms" }"#,
            r#"{ model = "gilbert-elliott", t_good = "1s", t_bad = "50ms", loss_bad = 0.9, initial = "good" }"#,
            r#"{ model = "ber", ber = 1e-6 }"#,
            r#"{ model = "fec", n = 255, k = 223, depth = 8, ber = 1e-4 }"#,
            r#"{ model = "fec", n = 255, k = 223, inner = { model = "ber", ber = 1e-4 } }"#,
            r#"{ model = "fec", n = 255, k = 223, depth = 4, inner = { model = "gilbert-elliott", t_good = "10ms", t_bad = "20us" } }"#,
            r#"{ model = "trace", lost = [3, 17] }"#,
            r#"{ model = "trace", bad = [["1s", "1.5s"], ["2s", "2100ms"]] }"#,
        ];
        for s in ok {
            let spec = parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            spec.validate(Path::new("."))
                .unwrap_or_else(|e| panic!("{s}: {e}"));
            let _ = spec.build(crate::rng::stream(1, "x"));
        }
        assert_eq!(
            parse(r#"{ model = "bernoulli", p = 1 }"#).unwrap(),
            ChannelSpec::Bernoulli(BernoulliSpec { p: 1.0 })
        );
        assert_eq!(
            ChannelSpec::default(),
            parse(r#"{ model = "none" }"#).unwrap()
        );
        assert_eq!(
            parse(r#"{ model = "gilbert-elliott", t_good = "1s", t_bad = "1s" }"#)
                .unwrap()
                .model(),
            "gilbert-elliott"
        );
    }

    #[test]
    fn unknown_keys_and_models_are_errors() {
        let bad = [
            (r#"{ model = "none", p = 0.1 }"#, "unknown field `p`"),
            (
                r#"{ model = "bernoulli", p = 0.1, q = 3 }"#,
                "unknown field `q`",
            ),
            (
                r#"{ model = "markov", alpha = 0.1, beta = 0.1, gamma = 1 }"#,
                "unknown field `gamma`",
            ),
            (
                r#"{ model = "gilbert-elliott", t_good = "1s", t_bad = "1s", p = 1 }"#,
                "unknown field `p`",
            ),
            (
                r#"{ model = "ber", ber = 1e-6, bits = 8 }"#,
                "unknown field `bits`",
            ),
            (
                r#"{ model = "fec", n = 255, k = 223, ber = 0.1, interleave = 2 }"#,
                "unknown field `interleave`",
            ),
            (
                r#"{ model = "fec", n = 255, k = 223, inner = { model = "ber", ber = 0.1, x = 1 } }"#,
                "unknown field `x`",
            ),
            (
                r#"{ model = "trace", lost = [1], lose = [2] }"#,
                "unknown field `lose`",
            ),
            (r#"{ model = "telepathy" }"#, "unknown variant `telepathy`"),
            (r#"{ p = 0.1 }"#, "missing field `model`"),
            (r#"{ model = "bernoulli" }"#, "missing field `p`"),
            (
                r#"{ model = "gilbert-elliott", t_good = "1", t_bad = "1s" }"#,
                "no unit",
            ),
            (
                r#"{ model = "markov", alpha = 0.1, beta = 0.1, initial = "ugly" }"#,
                "unknown variant `ugly`",
            ),
            (
                r#"{ model = "fec", n = 255, k = 223, inner = { model = "markov", alpha = 0.1, beta = 0.1 } }"#,
                "unknown variant `markov`",
            ),
        ];
        for (s, want) in bad {
            let e = parse(s).expect_err(s);
            assert!(e.contains(want), "{s}: got {e}");
        }
    }

    #[test]
    fn out_of_range_values_name_the_key() {
        let bad = [
            (
                r#"{ model = "bernoulli", p = 1.5 }"#,
                "channel.p = 1.5: expected a probability in [0, 1]",
            ),
            (r#"{ model = "bernoulli", p = -0.1 }"#, "channel.p = -0.1"),
            (
                r#"{ model = "markov", alpha = 0.0, beta = 0.0 }"#,
                "channel.alpha + channel.beta",
            ),
            (
                r#"{ model = "markov", alpha = 2, beta = 0.1 }"#,
                "channel.alpha = 2",
            ),
            (
                r#"{ model = "markov", alpha = 0.1, beta = 0.1, loss_bad = 7 }"#,
                "channel.loss_bad = 7",
            ),
            (
                r#"{ model = "gilbert-elliott", t_good = "0s", t_bad = "1s" }"#,
                "channel.t_good",
            ),
            (
                r#"{ model = "gilbert-elliott", t_good = "1s", t_bad = "1s", loss_good = 2 }"#,
                "channel.loss_good = 2",
            ),
            (r#"{ model = "ber", ber = 1.01 }"#, "channel.ber = 1.01"),
            (
                r#"{ model = "fec", n = 255, k = 255, ber = 0.1 }"#,
                "channel.k = 255",
            ),
            (
                r#"{ model = "fec", n = 300, k = 223, ber = 0.1 }"#,
                "channel.n = 300",
            ),
            (
                r#"{ model = "fec", n = 255, k = 0, ber = 0.1 }"#,
                "channel.k = 0",
            ),
            (
                r#"{ model = "fec", n = 255, k = 223, depth = 0, ber = 0.1 }"#,
                "channel.depth = 0",
            ),
            (r#"{ model = "fec", n = 255, k = 223 }"#, "exactly one of"),
            (
                r#"{ model = "fec", n = 255, k = 223, ber = 2 }"#,
                "channel.ber = 2",
            ),
            (
                r#"{ model = "fec", n = 255, k = 223, inner = { model = "gilbert-elliott", t_good = "1s", t_bad = "0ms" } }"#,
                "channel.inner.t_bad",
            ),
            (
                r#"{ model = "markov", alpha = 0.1, beta = 0.1, fec = { n = 300, k = 223 } }"#,
                "channel.fec.n = 300: expected a codeword length in 1..=255",
            ),
            (
                r#"{ model = "fec", n = 256, k = 223, ber = 0.1 }"#,
                "channel.n = 256: expected a codeword length in 1..=255",
            ),
            (
                r#"{ model = "markov", alpha = 0.1, beta = 0.1, fec = { n = 255, k = 255 } }"#,
                "channel.fec.k = 255: expected 0 < k < n = 255",
            ),
            (
                r#"{ model = "fec", n = 255, k = 255, ber = 0.1 }"#,
                "channel.k = 255: expected 0 < k < n = 255",
            ),
            (
                r#"{ model = "trace", file = "x.csv", max_file_size = "0B" }"#,
                "channel.max_file_size",
            ),
            (r#"{ model = "trace" }"#, "exactly one of"),
            (
                r#"{ model = "trace", lost = [1], bad = [["1s", "2s"]] }"#,
                "exactly one of",
            ),
            (
                r#"{ model = "trace", bad = [["2s", "1s"]] }"#,
                "channel.bad[0]",
            ),
            (
                r#"{ model = "trace", file = "no/such/trace.csv" }"#,
                "no/such/trace.csv",
            ),
        ];
        for (s, want) in bad {
            let e = check(s).expect_err(s);
            assert!(e.contains(want), "{s}: got {e}");
        }
    }

    #[test]
    fn expected_loss_where_analytic() {
        let el = |s: &str| parse(s).unwrap().expected_loss(1500);
        assert_eq!(el(r#"{ model = "none" }"#), Some(0.0));
        assert_eq!(el(r#"{ model = "bernoulli", p = 0.25 }"#), Some(0.25));
        let m = el(r#"{ model = "markov", alpha = 0.01, beta = 0.09, loss_good = 0.1 }"#).unwrap();
        assert!((m - (0.9 * 0.1 + 0.1 * 1.0)).abs() < 1e-12);
        let b = el(r#"{ model = "ber", ber = 1e-6 }"#).unwrap();
        assert!((b - (1.0 - (1.0f64 - 1e-6).powi(12000))).abs() < 1e-12);
        assert_eq!(
            el(r#"{ model = "gilbert-elliott", t_good = "1s", t_bad = "1s" }"#),
            None
        );
        let ge = parse(r#"{ model = "gilbert-elliott", t_good = "1s", t_bad = "1s" }"#).unwrap();
        assert_eq!(ge.expected_loss_during(1500, Dur::ZERO), Some(0.5));
        assert_eq!(el(r#"{ model = "trace", lost = [1] }"#), None);
        assert_eq!(
            el(r#"{ model = "fec", n = 255, k = 223, ber = 0 }"#),
            Some(0.0)
        );
    }
}

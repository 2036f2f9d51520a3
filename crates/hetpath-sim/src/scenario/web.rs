//! `[flow.web]`: a web flow, a browser on `to` fetching pages from a server on `from`
//! (`traffic::web`), with the page model of seed 001's Table I unless overridden.
//!
//! Over TCP each channel is a connection; over SCTP (seed 001 section IV) each is a
//! stream of the one association that serves the flow, so `parallel` defaults to the
//! association's streams, may not exceed them, and `persistent = false` has no meaning.

use super::error::{KeyError, ScenarioError};
use super::spec::{FlowSpec, Transport};
use crate::rng::{self, Rng};
use crate::traffic::http::{Dist, HttpModel, Pages};
use crate::traffic::web::WebConfig;
use serde::Deserialize;

/// `[flow.web]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSpec {
    /// Pages to fetch; absent: until the run ends.
    pub pages: Option<u64>,
    /// HTTP/1.1 persistent connections (default true).
    pub persistent: Option<bool>,
    /// Connections per page (default 2, RFC 2616 section 8.1.4); over SCTP, streams used
    /// at once (default: all of `[flow.sctp] streams`).
    pub parallel: Option<u32>,
    /// Bytes of a request (default 300).
    pub request: Option<u64>,
    /// Think time between pages (default true).
    pub think: Option<bool>,
    pub main_size: Option<DistSpec>,
    pub inline_count: Option<DistSpec>,
    pub inline_size: Option<DistSpec>,
    pub think_time: Option<DistSpec>,
}

/// `{ dist = "lognormal", mean = .., std = .. }` or `{ dist = "constant", value = .. }`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistSpec {
    pub dist: DistKind,
    pub mean: Option<f64>,
    pub std: Option<f64>,
    pub value: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DistKind {
    Lognormal,
    Gamma,
    Weibull,
    Constant,
}

impl DistSpec {
    fn dist(&self, key: &str) -> Result<Dist, KeyError> {
        let need = |v: Option<f64>, name: &str| {
            v.ok_or_else(|| KeyError::new(format!("{key}.{name}"), "missing"))
        };
        let unexpected = |name: &str, why: &str| {
            Err(KeyError::new(
                format!("{key}.{name}"),
                format!("not used {why}"),
            ))
        };
        Ok(match self.dist {
            DistKind::Constant => {
                if self.mean.is_some() {
                    return unexpected("mean", "by dist = \"constant\" (give `value`)");
                }
                if self.std.is_some() {
                    return unexpected("std", "by dist = \"constant\"");
                }
                Dist::Constant {
                    value: need(self.value, "value")?,
                }
            }
            kind => {
                if self.value.is_some() {
                    return unexpected("value", "by this dist (give `mean` and `std`)");
                }
                let (mean, std) = (need(self.mean, "mean")?, need(self.std, "std")?);
                match kind {
                    DistKind::Lognormal => Dist::LogNormal { mean, std },
                    DistKind::Gamma => Dist::Gamma { mean, std },
                    _ => Dist::Weibull { mean, std },
                }
            }
        })
    }
}

impl WebSpec {
    /// The browser's settings and the page model, checked (keys relative to the table).
    pub fn resolve(&self) -> Result<(WebConfig, HttpModel), KeyError> {
        let d = WebConfig::default();
        let cfg = WebConfig {
            pages: self.pages,
            persistent: self.persistent.unwrap_or(d.persistent),
            parallel: self.parallel.unwrap_or(d.parallel),
            request: self.request.unwrap_or(d.request),
            think: self.think.unwrap_or(d.think),
        };
        if cfg.pages == Some(0) {
            return Err(KeyError::new(
                "pages",
                "must be at least 1 (omit it to fetch until the run ends)",
            ));
        }
        if cfg.parallel == 0 {
            return Err(KeyError::new("parallel", "must be at least 1"));
        }
        if cfg.request == 0 {
            return Err(KeyError::new("request", "must be at least 1 byte"));
        }
        let t = HttpModel::TABLE_I;
        let pick = |s: &Option<DistSpec>, key: &str, default: Dist| {
            s.as_ref().map_or(Ok(default), |s| s.dist(key))
        };
        let model = HttpModel {
            main_size: pick(&self.main_size, "main_size", t.main_size)?,
            inline_count: pick(&self.inline_count, "inline_count", t.inline_count)?,
            inline_size: pick(&self.inline_size, "inline_size", t.inline_size)?,
            think_time: pick(&self.think_time, "think_time", t.think_time)?,
        };
        model.pages().map_err(|(key, e)| KeyError::new(key, e))?;
        Ok((cfg, model))
    }
}

/// The flow's `[flow.web]`, if any, checked against the flow's other keys: the browser's
/// settings, the page source and the flow's own stream of draws (`flow/<name>/web`).
/// `sctp_streams`: the association's streams, for a flow over SCTP.
pub(super) fn check(
    f: &FlowSpec,
    place: &str,
    file: &str,
    seed: u64,
    sctp_streams: Option<u16>,
) -> Result<Option<(WebConfig, Pages, Rng)>, ScenarioError> {
    let Some(w) = &f.web else {
        return Ok(None);
    };
    let err = |key: &str, msg: &str| Err(ScenarioError::new(file, format!("{place}.{key}"), msg));
    if f.size.is_some() {
        return err(
            "size",
            "not with [flow.web]: a web flow's bytes are its pages",
        );
    }
    if !matches!(f.transport, Transport::Tcp | Transport::Sctp) {
        return err(
            "web",
            "a web flow runs over transport = \"tcp\" or \"sctp\"",
        );
    }
    let (mut cfg, model) = w
        .resolve()
        .map_err(|e| ScenarioError::at(file, place, e.under("web")))?;
    if let Some(streams) = sctp_streams {
        if !cfg.persistent {
            return err(
                "web.persistent",
                "must be true over SCTP: one association serves the whole flow, its \
                 streams are the channels",
            );
        }
        cfg.parallel = w.parallel.unwrap_or(streams as u32);
        if cfg.parallel > streams as u32 {
            return err(
                "web.parallel",
                &format!(
                    "{} is more than the association's {streams} streams ([flow.sctp] \
                     streams)",
                    cfg.parallel
                ),
            );
        }
    }
    let pages = model.pages().expect("checked by resolve");
    let rng = rng::stream(seed, &format!("flow/{}/web", f.name));
    Ok(Some((cfg, pages, rng)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Result<(WebConfig, HttpModel), KeyError> {
        toml::from_str::<WebSpec>(text).unwrap().resolve()
    }

    #[test]
    fn defaults_are_table_i_and_http_1_1() {
        let (cfg, model) = spec("").unwrap();
        assert_eq!(cfg, WebConfig::default());
        assert_eq!(model, HttpModel::TABLE_I);
        let (_, m) = spec("main_size = { dist = \"constant\", value = 5000 }").unwrap();
        assert_eq!(m.main_size, Dist::Constant { value: 5000.0 });
    }

    #[test]
    fn bad_values_name_their_key() {
        let key = |t: &str| spec(t).unwrap_err().key;

        assert_eq!(key("pages = 0"), "pages");
        assert_eq!(
            key("think_time = { dist = \"weibull\", mean = -1.0, std = 2.0 }"),
            "think_time"
        );
        assert_eq!(
            key("main_size = { dist = \"gamma\", mean = 1.0 }"),
            "main_size.std"
        );
        assert_eq!(
            key("main_size = { dist = \"constant\", value = 1, mean = 2.0 }"),
            "main_size.mean"
        );
    }
}

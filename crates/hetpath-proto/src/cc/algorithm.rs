//! The controller factory: which algorithm, with its own parameters. An `Algorithm` is
//! plain data (it can be compared, cloned, printed), so a listener can build a fresh
//! controller for every connection it accepts.

use super::*;

/// The controller names accepted by `Algorithm::by_name`, in documentation order.
pub const NAMES: &[&str] = &[
    "tahoe",
    "reno",
    "newreno",
    "westwood+",
    "cubic",
    "hybla",
    "tcp-radio",
    "xcp",
    "vcp",
    "mpcp",
    "xcp-pep",
    "mpcp-pep",
    "satpep",
];

/// One congestion-control algorithm and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum Algorithm {
    Tahoe,
    Reno,
    NewReno,
    /// Westwood+ (cc/westwood.rs). `count_twice`: ns-3's bandwidth-sample accounting,
    /// SACKed (duplicate-ACKed) data counted again when the cumulative ACK covers it;
    /// `false` is the MobiCom 2001 / Linux accounting, each segment once.
    /// `filter_stages`: cascaded 7/8 filter stages, 2 (Linux) or 1.
    WestwoodPlus {
        count_twice: bool,
        filter_stages: u8,
    },
    Cubic(CubicConfig),
    Hybla(HyblaConfig),
    TcpRadio(RadioConfig),
    Xcp,
    Vcp,
    Mpcp(MpcpConfig),
    /// RAPPEP's controllers (seed 004 section III-B): feedback from the machine's traffic
    /// monitor, nothing on the wire, and losses do not shrink the window.
    XcpPep,
    MpcpPep,
    /// SaTPEP's satellite protocol (seed 000 section IV.B): paced at a given rate, the
    /// window never limits nor shrinks, losses repaired by SACK (cc/satpep.rs).
    Satpep(SatpepConfig),
}

/// The traffic monitor a RAPPEP split PEP runs on its outgoing link for its legs'
/// controllers (seed 004 section III-B).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RapMonitor {
    /// XCP's efficiency and fairness controllers.
    Xcp,
    /// The load-factor monitor of VCP and MPCP.
    Load,
}

impl Algorithm {
    /// The algorithm called `name`, with its default parameters.
    pub fn by_name(name: &str) -> Option<Algorithm> {
        Some(match name {
            "tahoe" => Algorithm::Tahoe,
            "reno" => Algorithm::Reno,
            "newreno" => Algorithm::NewReno,
            "westwood+" | "westwoodplus" | "westwood" => Algorithm::westwood_plus(),
            "cubic" => Algorithm::Cubic(CubicConfig::default()),
            "hybla" => Algorithm::Hybla(HyblaConfig::default()),
            "tcp-radio" => Algorithm::TcpRadio(RadioConfig::default()),
            "xcp" => Algorithm::Xcp,
            "vcp" => Algorithm::Vcp,
            "mpcp" => Algorithm::Mpcp(MpcpConfig::default()),
            "xcp-pep" => Algorithm::XcpPep,
            "mpcp-pep" => Algorithm::MpcpPep,
            "satpep" => Algorithm::Satpep(SatpepConfig::default()),
            _ => return None,
        })
    }

    /// Westwood+ with its default parameters.
    pub fn westwood_plus() -> Algorithm {
        Algorithm::WestwoodPlus {
            count_twice: false,
            filter_stages: westwood::DEFAULT_FILTER_STAGES,
        }
    }

    /// The scenario name (one of `NAMES`).
    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Tahoe => "tahoe",
            Algorithm::Reno => "reno",
            Algorithm::NewReno => "newreno",
            Algorithm::WestwoodPlus { .. } => "westwood+",
            Algorithm::Cubic(_) => "cubic",
            Algorithm::Hybla(_) => "hybla",
            Algorithm::TcpRadio(_) => "tcp-radio",
            Algorithm::Xcp => "xcp",
            Algorithm::Vcp => "vcp",
            Algorithm::Mpcp(_) => "mpcp",
            Algorithm::XcpPep => "xcp-pep",
            Algorithm::MpcpPep => "mpcp-pep",
            Algorithm::Satpep(_) => "satpep",
        }
    }

    /// A controller for one connection.
    pub fn build(&self, cfg: CcConfig) -> Box<dyn CongestionControl> {
        match self {
            Algorithm::Tahoe => Box::new(Tahoe::new(cfg)),
            Algorithm::Reno => Box::new(Reno::new(cfg)),
            Algorithm::NewReno => Box::new(NewReno::new(cfg)),
            Algorithm::WestwoodPlus {
                count_twice,
                filter_stages,
            } => Box::new(WestwoodPlus::with_options(
                cfg,
                *count_twice,
                *filter_stages,
            )),
            Algorithm::Cubic(c) => Box::new(Cubic::with_config(cfg, *c)),
            Algorithm::Hybla(h) => Box::new(Hybla::with_config(cfg, *h)),
            Algorithm::TcpRadio(r) => Box::new(TcpRadio::with_config(cfg, *r)),
            Algorithm::Xcp => Box::new(Xcp::new(cfg)),
            Algorithm::Vcp => Box::new(Vcp::new(cfg)),
            Algorithm::Mpcp(m) => Box::new(Mpcp::with_config(cfg, *m)),
            Algorithm::XcpPep => Box::new(Xcp::pep(cfg)),
            Algorithm::MpcpPep => Box::new(Mpcp::pep(cfg)),
            Algorithm::Satpep(s) => Box::new(Satpep::new(cfg, *s)),
        }
    }

    /// The traffic monitor a split PEP running this controller needs, if any.
    pub fn rap_monitor(&self) -> Option<RapMonitor> {
        match self {
            Algorithm::XcpPep => Some(RapMonitor::Xcp),
            Algorithm::MpcpPep => Some(RapMonitor::Load),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_builds_and_names_itself() {
        for n in NAMES {
            let a = Algorithm::by_name(n).unwrap();
            assert_eq!(a.name(), *n);
            let cc = a.build(CcConfig::new(1460));
            // SaTPEP is rate-based: its window never limits, from the start.
            let iw = match a {
                Algorithm::Satpep(_) => UNLIMITED_WINDOW,
                _ => rfc5681_initial_window(1460),
            };
            assert_eq!(cc.cwnd(), iw, "{n}");
            assert_eq!(cc.name(), *n);
            assert_eq!(cc.pacing_rate().is_some(), *n == "satpep", "{n}");
        }
        assert_eq!(
            Algorithm::by_name("westwood"),
            Some(Algorithm::westwood_plus())
        );
        assert!(Algorithm::by_name("vegas").is_none());
    }

    #[test]
    fn only_rappep_controllers_need_a_monitor() {
        let monitored: Vec<&str> = NAMES
            .iter()
            .filter(|n| Algorithm::by_name(n).unwrap().rap_monitor().is_some())
            .copied()
            .collect();
        assert_eq!(monitored, ["xcp-pep", "mpcp-pep"]);
    }
}

//! A stack's TCP settings: the user's keys over a profile's over the RFC defaults
//! (`TcpConfig::new`), and the controller that goes with them.

use super::cc::CcSpec;
use super::error::KeyError;
use super::profiles::{self, Profile};
use super::spec::{
    AbcCountsSpec, AbcSpec, DelayedAckSpec, ExitCreditSpec, HandshakeAckSpec, HystartSpec, IlcSpec,
    LocalQueueSpec, LostRetransmitSpec, NewRenoTimerSpec, PacingName, PacingSpec, QuickAckSpec,
    RecoverySpec, RestoreSpec, RtoFormula, SackResendSpec, SsthreshFromSpec, TcpSpec,
    ZeroWindowSpec,
};
use hetpath_proto::cc::{Algorithm, Hystart};
use hetpath_proto::machine::LocalQueue;
use hetpath_proto::tcp::{
    AbcCounts, DelayedAck, ExitCredit, HandshakeAck, LostRetransmit, NewRenoTimer, Pacing,
    QuickAck, Recovery, RestoreMode, SackResend, SsthreshFrom, TcpConfig, ZeroWindow,
};
use hetpath_proto::Dur;

pub use super::spec::IwSpec;

/// One stack's resolved settings.
#[derive(Debug, Clone)]
pub struct Stack {
    /// The keys in force: the profile's, overridden by the user's.
    pub spec: TcpSpec,
    pub tcp: TcpConfig,
    pub cc: Algorithm,
}

/// Resolves a stack's keys: `general` (`[tcp]`) and `own` (the flow's or the machine's
/// `tcp` table), the controller `cc` (default `default_cc`), and the profile one of them
/// names, or that `cc` implies. A profile sits just below the table that names it: the
/// keys of that table and of more specific ones override it, those of a more general one
/// do not (an implied profile belongs to the flow's own table). Errors name keys under
/// `tcp` or `cc`.
pub fn resolve(
    general: &TcpSpec,
    own: &TcpSpec,
    cc: Option<&CcSpec>,
    default_cc: &str,
) -> Result<Stack, KeyError> {
    let named = |name: &String| {
        profiles::by_name(name).ok_or_else(|| {
            KeyError::new(
                "tcp.profile",
                format!(
                    "unknown profile '{name}'; expected one of {}",
                    profiles::names()
                ),
            )
        })
    };
    let general_profile = general.profile.as_ref().map(named).transpose()?;
    let own_profile = match &own.profile {
        Some(name) => Some(named(name)?),
        None if general_profile.is_none() => cc.and_then(|c| profiles::implied_by(c.name())),
        None => None,
    };
    let profile: Option<&Profile> = own_profile.or(general_profile);
    let under = |name: &str| {
        let name = Algorithm::by_name(name).map(|a| a.name())?;
        profile.and_then(|p| p.cc_keys_for(name))
    };
    let cc = match cc {
        Some(c) => c
            .algorithm_under(under(c.name()))
            .map_err(|e| e.under("cc"))?,
        None => {
            let name = profile.and_then(|p| p.cc).unwrap_or(default_cc);
            CcSpec::Name(name.to_string())
                .algorithm_under(under(name))
                .expect("profiles and defaults name real controllers")
        }
    };
    let spec = match (own_profile, general_profile) {
        (Some(p), _) => general.overridden_by(&p.spec(cc.name())).overridden_by(own),
        (None, Some(p)) => p.spec(cc.name()).overridden_by(general).overridden_by(own),
        (None, None) => general.overridden_by(own),
    };
    let tcp = tcp_config(&spec).map_err(|e| e.under("tcp"))?;
    Ok(Stack { spec, tcp, cc })
}

/// Applies a TCP spec over the RFC defaults of `TcpConfig::new`. `iw = "bdp"` needs the
/// path: the caller sets it.
pub fn tcp_config(t: &TcpSpec) -> Result<TcpConfig, KeyError> {
    let mss = t.mss.unwrap_or(1460);
    if !(64..=65_495).contains(&mss) {
        return Err(KeyError::new(
            "mss",
            format!("{mss} is out of range; expected 64 to 65495 bytes"),
        ));
    }
    let mut c = TcpConfig::new(mss);
    match t.iw {
        Some(IwSpec::Segments(0)) => return Err(KeyError::new("iw", "must be at least 1 segment")),
        Some(IwSpec::Segments(iw)) => c.initial_window = iw as u64 * mss as u64,
        // Needs the path: `build` sets it per flow.
        Some(IwSpec::Bdp) | None => {}
    }
    if matches!(t.ilc, Some(IlcSpec::LinkOnly | IlcSpec::LinkIp)) {
        c.ilc = Some(match t.ilc_restore {
            Some(RestoreSpec::FirstSegment) => RestoreMode::FirstSegment,
            Some(RestoreSpec::GoBackN) | None => RestoreMode::GoBackN,
        });
    }
    if let Some(s) = t.initial_ssthresh {
        c.initial_ssthresh = s.0.max(2 * mss as u64);
    }
    if let Some(s) = t.sack {
        c.sack = s;
    }
    match t.delayed_ack {
        Some(DelayedAckSpec::Enabled(false)) => c.delayed_ack = None,
        Some(DelayedAckSpec::Enabled(true)) | None => {}
        Some(DelayedAckSpec::Params(p)) => {
            let d = c.delayed_ack.unwrap_or(DelayedAck {
                count: 2,
                timeout: Dur::from_millis(200),
            });
            let count = p.count.unwrap_or(d.count);
            if count == 0 {
                return Err(KeyError::new("delayed_ack.count", "must be at least 1"));
            }
            c.delayed_ack = Some(DelayedAck {
                count,
                timeout: p.timeout.map_or(d.timeout, |x| x.0),
            });
        }
    }
    if let Some(q) = t.quick_ack {
        c.quick_ack = match q {
            QuickAckSpec::Off => QuickAck::Off,
            QuickAckSpec::Linux => QuickAck::Linux,
        };
    }
    match t.abc {
        Some(AbcSpec::Enabled(false)) => c.abc_limit = None,
        Some(AbcSpec::Enabled(true)) | None => {}
        Some(AbcSpec::Limit(0)) => {
            return Err(KeyError::new(
                "abc",
                "the ABC limit L must be at least 1 (or false)",
            ))
        }
        Some(AbcSpec::Limit(l)) => c.abc_limit = Some(l),
    }
    if let Some(d) = t.dupthresh {
        if d == 0 {
            return Err(KeyError::new("dupthresh", "must be at least 1"));
        }
        c.dupthresh = d;
    }
    if let Some(d) = t.initial_rto {
        c.rto.initial = d.0;
    }
    if let Some(d) = t.min_rto {
        c.rto.min = d.0;
    }
    if let Some(d) = t.max_rto {
        c.rto.max = d.0;
    }
    if c.rto.max == Dur::ZERO {
        return Err(KeyError::new("max_rto", "must be greater than zero"));
    }
    if c.rto.initial == Dur::ZERO {
        return Err(KeyError::new("initial_rto", "must be greater than zero"));
    }
    if c.rto.min > c.rto.max {
        let (min, max) = (c.rto.min.as_secs_f64(), c.rto.max.as_secs_f64());
        return Err(KeyError::new(
            "min_rto",
            format!("{min} s is above max_rto ({max} s)"),
        ));
    }
    if let Some(b) = t.rto_backoff {
        c.rto.backoff = b;
    }
    if let Some(f) = t.rto_formula {
        c.rto.formula = match f {
            RtoFormula::Rfc6298 => hetpath_proto::tcp::RtoFormula::Rfc6298,
            RtoFormula::Linux22 => hetpath_proto::tcp::RtoFormula::Linux22,
            RtoFormula::Linux => hetpath_proto::tcp::RtoFormula::Linux,
        };
    }
    if let Some(n) = t.syn_retries {
        c.rto.syn_retries = n;
    }
    if let Some(n) = t.data_retries {
        c.rto.data_retries = n;
    }
    if let Some(b) = t.recv_buffer {
        if b.0 < mss as u64 {
            return Err(KeyError::new(
                "recv_buffer",
                "must hold at least one segment",
            ));
        }
        c.recv_buffer = b.0.min(1 << 30);
    }
    if let Some(d) = t.time_wait {
        c.time_wait = d.0;
    }
    sender_keys(t, &mut c)?;
    Ok(c)
}

/// `persist_min` and `persist_max`: the persist timer's interval stays within them.
fn persist_keys(t: &TcpSpec, c: &mut TcpConfig) -> Result<(), KeyError> {
    if let Some(d) = t.persist_min {
        c.persist_min = d.0;
    }
    if let Some(d) = t.persist_max {
        if d.0 == Dur::ZERO {
            return Err(KeyError::new("persist_max", "must be greater than zero"));
        }
        c.persist_max = d.0;
    }
    if c.persist_min > c.persist_max {
        // Nanoseconds divided, not multiplied by 1e-9: whole seconds print whole.
        let (min, max) = (c.persist_min.0 as f64 / 1e9, c.persist_max.0 as f64 / 1e9);
        return Err(KeyError::new(
            "persist_min",
            format!("{min} s is above persist_max ({max} s)"),
        ));
    }
    Ok(())
}

/// The keys that choose among the behaviours real stacks differ on (docs/model-notes.md,
/// "Sender behaviour").
fn sender_keys(t: &TcpSpec, c: &mut TcpConfig) -> Result<(), KeyError> {
    if let Some(q) = t.local_queue {
        c.local_queue = match q {
            LocalQueueSpec::Wait => LocalQueue::Wait,
            LocalQueueSpec::Cwr => LocalQueue::Cwr,
            LocalQueueSpec::Drop => LocalQueue::Drop,
        };
    }
    c.pacing = match t.pacing {
        None | Some(PacingSpec::Enabled(false)) => None,
        Some(PacingSpec::Enabled(true) | PacingSpec::Named(PacingName::Fq)) => Some(Pacing::LINUX),
        Some(PacingSpec::Named(PacingName::Hybla)) => Some(Pacing::HYBLA),
    };
    for (key, ratio) in [
        ("pacing_ss_ratio", t.pacing_ss_ratio),
        ("pacing_ca_ratio", t.pacing_ca_ratio),
    ] {
        let Some(r) = ratio else { continue };
        let Some(p) = c.pacing.as_mut() else {
            return Err(KeyError::new(key, "needs pacing = true"));
        };
        if !(1..=10_000).contains(&r) {
            return Err(KeyError::new(
                key,
                format!("{r} is out of range; expected a percentage from 1 to 10000"),
            ));
        }
        if key == "pacing_ss_ratio" {
            p.ss_ratio = r;
        } else {
            p.ca_ratio = r;
        }
    }
    if let Some(a) = t.abc_counts {
        c.abc_counts = match a {
            AbcCountsSpec::Acked => AbcCounts::Acked,
            AbcCountsSpec::Delivered => AbcCounts::Delivered,
        };
    }
    if let Some(e) = t.exit_credit {
        c.exit_credit = match e {
            ExitCreditSpec::None => ExitCredit::None,
            ExitCreditSpec::Acked => ExitCredit::Acked,
        };
    }
    if let Some(f) = t.ssthresh_from {
        c.ssthresh_from = match f {
            SsthreshFromSpec::Flightsize => SsthreshFrom::FlightSize,
            SsthreshFromSpec::Pipe => SsthreshFrom::Pipe,
            SsthreshFromSpec::Cwnd => SsthreshFrom::Cwnd,
        };
    }
    if let Some(r) = t.recovery {
        c.recovery = match r {
            RecoverySpec::Rfc6675 => Recovery::Rfc6675,
            RecoverySpec::Prr => Recovery::PrrSsrb,
            RecoverySpec::PrrCrb => Recovery::PrrCrb,
        };
    }
    if let Some(b) = t.timestamps {
        c.timestamps = b;
    }
    if let Some(h) = t.handshake_ack {
        c.handshake_ack = match h {
            HandshakeAckSpec::Piggyback => HandshakeAck::Piggyback,
            HandshakeAckSpec::Separate => HandshakeAck::Separate,
        };
    }
    if let Some(h) = t.hystart {
        c.hystart = match h {
            HystartSpec::Off => Hystart::Off,
            HystartSpec::Classic => Hystart::Classic,
            HystartSpec::Rfc9406 => Hystart::Rfc9406,
            HystartSpec::Ns3 => Hystart::Ns3,
        };
    }
    if let Some(b) = t.cwnd_validation {
        c.cwnd_validation = b;
    }
    if let Some(z) = t.zero_window {
        c.zero_window = match z {
            ZeroWindowSpec::Retransmit => ZeroWindow::Retransmit,
            ZeroWindowSpec::Freeze => ZeroWindow::Freeze,
        };
    }
    persist_keys(t, c)?;
    if let Some(r) = t.sack_resend {
        c.sack_resend = match r {
            SackResendSpec::Head => SackResend::Head,
            SackResendSpec::Lost => SackResend::Lost,
        };
    }
    if let Some(b) = t.rto_restart_on_resend {
        c.rto_restart_on_resend = b;
    }
    if let Some(l) = t.lost_retransmit {
        c.lost_retransmit = match l {
            LostRetransmitSpec::Timeout => LostRetransmit::Timeout,
            LostRetransmitSpec::Rack => LostRetransmit::Rack,
        };
    }
    if let Some(n) = t.newreno_timer {
        c.newreno_timer = match n {
            NewRenoTimerSpec::SlowButSteady => NewRenoTimer::SlowButSteady,
            NewRenoTimerSpec::Impatient => NewRenoTimer::Impatient,
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> TcpSpec {
        toml::from_str(text).unwrap()
    }

    fn stack(general: &str, own: &str, cc: Option<&str>) -> Stack {
        let cc = cc.map(|c| CcSpec::Name(c.into()));
        resolve(&spec(general), &spec(own), cc.as_ref(), "newreno").unwrap()
    }

    #[test]
    fn a_controller_alone_brings_its_papers_profile() {
        let s = stack("", "", Some("tcp-radio"));
        assert_eq!(s.cc.name(), "tcp-radio");
        assert_eq!((s.spec.iw, s.tcp.dupthresh), (Some(IwSpec::Bdp), 1));
        assert_eq!(s.tcp.recv_buffer, 4_000_000);
        // Other controllers bring none.
        assert_eq!(stack("", "", Some("cubic")).tcp.dupthresh, 3);
    }

    #[test]
    fn the_persist_bounds_are_read_and_checked() {
        let c = tcp_config(&spec("persist_min = \"5s\"\npersist_max = \"120s\"")).unwrap();
        assert_eq!(
            (c.persist_min, c.persist_max),
            (Dur::from_secs(5), Dur::from_secs(120))
        );
        let d = tcp_config(&spec("")).unwrap();
        assert_eq!(
            (d.persist_min, d.persist_max),
            (Dur::ZERO, Dur::from_secs(60))
        );
        let e = tcp_config(&spec("persist_max = \"0s\"")).unwrap_err();
        assert_eq!(e.key, "persist_max");
        let e = tcp_config(&spec("persist_min = \"61s\"")).unwrap_err();
        assert_eq!(e.key, "persist_min");
        assert_eq!(e.message, "61 s is above persist_max (60 s)");
    }

    #[test]
    fn a_profile_sits_just_below_the_table_that_names_it() {
        let secs = |s: &Stack| s.tcp.rto.max.as_secs_f64().round();
        // Named by the flow: over the general table, under the flow's own keys.
        let s = stack("max_rto = \"120s\"", "profile = \"tcp-radio-newrto\"", None);
        assert_eq!((secs(&s), s.cc.name()), (12.0, "tcp-radio"));
        let s = stack(
            "",
            "profile = \"tcp-radio-newrto\"\nmax_rto = \"30s\"",
            None,
        );
        assert_eq!(secs(&s), 30.0);
        // Named by [tcp]: under [tcp]'s own keys, and a flow's controller still wins.
        let s = stack(
            "profile = \"tcp-radio-newrto\"\nmax_rto = \"30s\"",
            "",
            Some("cubic"),
        );
        assert_eq!((secs(&s), s.cc.name(), s.tcp.dupthresh), (30.0, "cubic", 1));
    }

    #[test]
    fn an_unknown_profile_names_the_key() {
        let e = resolve(
            &TcpSpec::default(),
            &spec("profile = \"bsd\""),
            None,
            "newreno",
        )
        .unwrap_err();
        assert_eq!(e.key, "tcp.profile");
        assert!(e
            .message
            .contains("expected one of rfc, linux, ns3, tcp-radio, tcp-radio-newrto"));
    }

    #[test]
    fn time_wait_defaults_to_two_msl_and_is_a_key() {
        assert_eq!(stack("", "", None).tcp.time_wait, Dur::from_secs(240));
        let s = stack("time_wait = \"30s\"", "", None);
        assert_eq!(s.tcp.time_wait, Dur::from_secs(30));
    }
}

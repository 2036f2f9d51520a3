//! Profiles: the published TCP variants as named sets of `[tcp]` keys. A profile is a
//! set of defaults: `profile = "tcp-radio-newrto"` in `[tcp]` or `[flow.tcp]` sets every
//! key the paper sets, and the controller if the flow names none. It sits just below the
//! table that names it: keys written beside it, or in a more specific table, still win
//! (`tcp::resolve`). A controller can imply its paper's profile: `cc = "tcp-radio"` alone
//! is seed 003's TCP-radio. Where a reference stack's controllers differ in a key (ns-3's
//! CUBIC counts acked segments, its NewReno counts ACKs), the profile holds the
//! difference per controller (`per_cc`), over its own keys.

use super::spec::TcpSpec;

pub struct Profile {
    pub name: &'static str,
    /// Where its values come from.
    pub source: &'static str,
    /// The controller it runs, unless the flow names one.
    pub cc: Option<&'static str>,
    /// Its keys, as they would be written in `[tcp]`.
    pub keys: &'static str,
    /// (controller, keys) that hold for that controller only, over `keys`.
    pub per_cc: &'static [(&'static str, &'static str)],
    /// (controller, keys of its `cc` table) that hold for that controller under this
    /// profile, below the keys the scenario writes in its `cc` table.
    pub cc_keys: &'static [(&'static str, &'static str)],
}

/// Every profile, in documentation order.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "rfc",
        source: "the RFC defaults hetpath runs when no profile is named: IW from RFC 5681 \
                 section 3.1, delayed ACK 2 / 200 ms (RFC 1122 4.2.3.2), ABC L = 2 (RFC 3465), \
                 SACK recovery (RFC 6675), ssthresh from FlightSize (RFC 5681 eq. 4), RTO 1 s \
                 minimum (RFC 6298), no timestamps, no pacing, no HyStart; a host's packets \
                 wait at a full first-hop queue (docs/model-notes.md, \"Sender behaviour\")",
        cc: None,
        keys: "",
        per_cc: &[],
        cc_keys: &[],
    },
    Profile {
        name: "linux",
        source: "Linux 6.x defaults: IW 10 (TCP_INIT_CWND, RFC 6928); timestamps on \
                 (net.ipv4.tcp_timestamps = 1); PRR recovery (tcp_cwnd_reduction, RFC 6937); \
                 ssthresh = cwnd / 2 (tcp_reno_ssthresh); slow start counts every delivered \
                 segment, newly acked or newly SACKed (tcp_cong_avoid's acked_sacked, \
                 tcp_slow_start, no ABC limit); HyStart in CUBIC (tcp_cubic.c \
                 hystart = 1); pacing at 200% / 120% of cwnd/srtt with the fq qdisc \
                 (tcp_pacing_ss_ratio, tcp_pacing_ca_ratio); a sender waits at its own full \
                 queue (TCP Small Queues); no growth unless cwnd-limited (tcp_is_cwnd_limited); \
                 RTO = SRTT + max(4 RTTVAR, 200 ms) (tcp_rtt_estimator, TCP_RTO_MIN), at most \
                 120 s (TCP_RTO_MAX), restarted when the first unacknowledged segment is \
                 retransmitted (tcp_xmit_retransmit_queue); SACK recovery resends only what \
                 its scoreboard deems lost, never a retransmission in flight \
                 (tcp_fastretrans_alert, TCPCB_SACKED_RETRANS), and a retransmission is \
                 deemed lost again once a segment sent after it is SACKed (RACK, \
                 tcp_recovery = 1, RFC 8985 section 6.2); delayed ACK \
                 40 ms (TCP_DELACK_MIN) after every second segment, but at once for the \
                 first 16 segments and while the receive window opens (quick-ACK mode: \
                 tcp_incr_quickack, tcp_grow_window); a pure ACK answers the \
                 SYN-ACK (tcp_rcv_synsent_state_process); tcp_syn_retries 6, tcp_retries2 15; \
                 CUBIC by tcp_cubic.c's rules (cc key linux = true: the Reno-friendly \
                 estimate always grows by 3(1-beta)/(1+beta) per RTT, the target looks ahead \
                 by the minimum RTT); Hybla by tcp_hybla.c's rules (cc key linux = true: growth per ACK, a \
                 65535-segment clamp, rho from the smallest srtt, Reno's growth outside \
                 TCP_CA_Open, rho segments at establishment)",
        cc: Some("cubic"),
        keys: "iw = 10\ntimestamps = true\nrecovery = \"prr\"\nssthresh_from = \"cwnd\"\n\
               abc = 65535\nabc_counts = \"delivered\"\nhystart = \"classic\"\npacing = true\nlocal_queue = \"wait\"\n\
               cwnd_validation = true\nmin_rto = \"200ms\"\nrto_formula = \"linux\"\nmax_rto = \"120s\"\n\
               delayed_ack = { count = 2, timeout = \"40ms\" }\nquick_ack = \"linux\"\n\
               handshake_ack = \"separate\"\nsyn_retries = 6\ndata_retries = 15\nsack_resend = \"lost\"\nrto_restart_on_resend = true\n\
               lost_retransmit = \"rack\"\n",
        per_cc: &[],
        cc_keys: &[("hybla", "linux = true\n"), ("cubic", "linux = true\n")],
    },
    Profile {
        name: "ns3",
        source: "ns-3.44 defaults: TcpSocket InitialCwnd 10, DelAckCount 2, DelAckTimeout \
                 200 ms, ConnCount 6, DataRetries 6; TcpSocketBase Timestamp true, Sack true, \
                 MinRto 1 s, ReTxThreshold 3; RecoveryType TcpPrrRecovery (its \
                 DoRecovery bounds by CRB and adds one MSS when retransmitted data is \
                 cumulatively acked: closest to prr's SSRB, not the same); ssthresh from \
                 BytesInFlight, the RFC 6675 pipe (TcpNewReno::GetSsThresh), but from cwnd \
                 for TcpLinuxReno (cwnd/2) and TcpCubic (cwnd x 0.7, which hetpath's CUBIC \
                 does anyway); one segment per ACK (TcpNewReno::SlowStart and \
                 CongestionAvoidance, also Westwood+'s and Hybla's), but delivered segments \
                 (ProcessAck's currentDelivered: newly acked or newly SACKed) counted by \
                 TcpCubic::IncreaseWindow and TcpLinuxReno, except on the ACK that ends \
                 fast recovery, which passes its whole cumulative advance to \
                 IncreaseWindow; TcpCubic grows only \
                 when m_isCwndLimited; TcpCubic HyStart true, ns-3's variant (hystart = \
                 ns3: TcpCubic::HystartUpdate on the smoothed RTT, threshold clamp(delay_min, \
                 4 ms, 1 s), train over the whole delay_min); no \
                 pacing (TcpSocketState EnablePacing false); a packet its full queue refuses \
                 is dropped and TCP does not react; a pure ACK answers the SYN-ACK \
                 (TcpSocketBase::ProcessSynSent); the data RTO before a sample is 1 s \
                 (RttEstimator InitialEstimation; ConnTimeout's 3 s is the SYN timer, not \
                 modelled apart); TcpCubic is the default (TcpL4Protocol SocketType). \
                 Checked against the installed ns3 3.44 wheel by bench/compare_ns3.py",
        cc: Some("cubic"),
        keys: "iw = 10\ntimestamps = true\nsack = true\nrecovery = \"prr\"\n\
               ssthresh_from = \"pipe\"\nabc = false\nabc_counts = \"delivered\"\nexit_credit = \"acked\"\n\
               hystart = \"ns3\"\n\
               local_queue = \"drop\"\nmin_rto = \"1s\"\n\
               delayed_ack = { count = 2, timeout = \"200ms\" }\ndupthresh = 3\n\
               handshake_ack = \"separate\"\nsyn_retries = 6\ndata_retries = 6\n",
        per_cc: &[
            ("cubic", "abc = 65535\nssthresh_from = \"cwnd\"\ncwnd_validation = true\n"),
            ("reno", "abc = 65535\nssthresh_from = \"cwnd\"\n"),
        ],
        cc_keys: &[],
    },
    Profile {
        name: "tcp-radio",
        source: "seed 003 section 5.2, Table 3 (IW = BDP, ssthresh infinite, MAX_RTO 120 s, \
                 SYN_RETRIES 10, TCP_RETRIES2 15, fast retransmit on 1 duplicate ACK, \
                 buffers tuned above the BDP)",
        cc: Some("tcp-radio"),
        keys: "iw = \"bdp\"\ninitial_ssthresh = \"inf\"\nmax_rto = \"120s\"\nsyn_retries = 10\n\
               data_retries = 15\ndupthresh = 1\nrecv_buffer = \"4MB\"\n",
        per_cc: &[],
        cc_keys: &[],
    },
    Profile {
        name: "tcp-radio-newrto",
        source: "seed 003 section 5.2, Table 4 (TCP-radio with RTO = min(RTO, MAX_RTO) and no \
                 backoff, MAX_RTO 12 s, SYN_RETRIES and TCP_RETRIES2 500)",
        cc: Some("tcp-radio"),
        keys: "iw = \"bdp\"\ninitial_ssthresh = \"inf\"\nmax_rto = \"12s\"\nrto_backoff = false\n\
               syn_retries = 500\ndata_retries = 500\ndupthresh = 1\nrecv_buffer = \"4MB\"\n",
        per_cc: &[],
        cc_keys: &[],
    },
];

impl Profile {
    /// Its keys as a spec, with those it holds for controller `cc` over them.
    pub fn spec(&self, cc: &str) -> TcpSpec {
        let parse = |keys| toml::from_str(keys).expect("profiles are valid [tcp] tables (tested)");
        let base: TcpSpec = parse(self.keys);
        match self.per_cc.iter().find(|(name, _)| *name == cc) {
            Some((_, keys)) => base.overridden_by(&parse(keys)),
            None => base,
        }
    }
}

impl Profile {
    /// The keys it gives controller `cc`'s table, if any.
    pub fn cc_keys_for(&self, cc: &str) -> Option<&'static str> {
        self.cc_keys.iter().find(|(n, _)| *n == cc).map(|(_, k)| *k)
    }
}

pub fn by_name(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// The profile a controller stands for when no profile is named.
pub fn implied_by(cc: &str) -> Option<&'static Profile> {
    match cc {
        "tcp-radio" => by_name("tcp-radio"),
        _ => None,
    }
}

/// The names, for error messages.
pub fn names() -> String {
    PROFILES
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::tcp::tcp_config;

    #[test]
    fn every_profile_is_a_valid_tcp_table() {
        for p in PROFILES {
            let spec = p.spec("cubic");
            for (cc, _) in p.per_cc {
                tcp_config(&p.spec(cc)).unwrap_or_else(|e| panic!("{} {cc}: {e}", p.name));
            }
            assert!(spec.profile.is_none(), "{}", p.name);
            tcp_config(&spec).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        }
    }

    #[test]
    fn every_profiles_cc_keys_make_a_valid_table() {
        use crate::scenario::cc::CcSpec;
        for p in PROFILES {
            for (cc, _) in p.cc_keys {
                CcSpec::Name(cc.to_string())
                    .algorithm_under(p.cc_keys_for(cc))
                    .unwrap_or_else(|e| panic!("{} {cc}: {e}", p.name));
            }
        }
    }

    #[test]
    fn linux_runs_hybla_by_the_kernels_rules_unless_the_table_says_otherwise() {
        use crate::scenario::cc::CcSpec;
        use crate::scenario::tcp::resolve;
        use hetpath_proto::cc::{Algorithm, HyblaConfig};
        use hetpath_proto::Dur;
        let hybla = |general: &str, cc: &str| {
            let general: TcpSpec = toml::from_str(general).unwrap();
            let cc: CcSpec = toml::from_str::<toml::Table>(&format!("cc = {cc}"))
                .unwrap()
                .remove("cc")
                .unwrap()
                .try_into()
                .unwrap();
            let s = resolve(&general, &TcpSpec::default(), Some(&cc), "newreno").unwrap();
            match s.cc {
                Algorithm::Hybla(h) => h,
                other => panic!("{other:?}"),
            }
        };
        let linux = "profile = \"linux\"";
        let ms = Dur::from_millis;
        assert!(hybla(linux, "\"hybla\"").linux);
        assert!(!hybla("", "\"hybla\"").linux);
        assert!(!hybla("profile = \"ns3\"", "\"hybla\"").linux);
        // A table's own keys sit over the profile's.
        assert_eq!(
            hybla(linux, "{ name = \"hybla\", rtt0 = \"50ms\" }"),
            HyblaConfig {
                rtt0: ms(50),
                linux: true
            }
        );
        assert!(!hybla(linux, "{ name = \"hybla\", linux = false }").linux);
        assert!(hybla("", "{ name = \"hybla\", linux = true }").linux);
    }

    #[test]
    fn linux_receives_and_recovers_as_the_kernel_does_and_the_rfcs_do_not() {
        use crate::scenario::cc::CcSpec;
        use hetpath_proto::cc::Algorithm;
        use hetpath_proto::tcp::{LostRetransmit, QuickAck};
        let linux = tcp_config(&by_name("linux").unwrap().spec("cubic")).unwrap();
        let rfc = tcp_config(&TcpSpec::default()).unwrap();
        assert_eq!(
            (linux.quick_ack, linux.lost_retransmit),
            (QuickAck::Linux, LostRetransmit::Rack)
        );
        assert_eq!(
            (rfc.quick_ack, rfc.lost_retransmit),
            (QuickAck::Off, LostRetransmit::Timeout)
        );
        let cubic = |p: &str| {
            let keys = by_name(p).unwrap().cc_keys_for("cubic");
            match CcSpec::Name("cubic".into()).algorithm_under(keys) {
                Ok(Algorithm::Cubic(c)) => c.linux,
                other => panic!("{other:?}"),
            }
        };
        assert!(cubic("linux") && !cubic("ns3") && !cubic("rfc"));
    }

    #[test]
    fn ns3_counts_as_each_ns3_controller_does() {
        let ns3 = by_name("ns3").unwrap();
        let abc = |cc| tcp_config(&ns3.spec(cc)).unwrap().abc_limit;
        // TcpNewReno grows one segment per ACK; TcpCubic counts the segments acked.
        assert_eq!((abc("newreno"), abc("cubic")), (None, Some(65535)));
        assert!(tcp_config(&ns3.spec("cubic")).unwrap().cwnd_validation);
    }

    #[test]
    fn newrto_is_tcp_radio_with_the_timer_of_table_4() {
        let (radio, newrto) = (
            tcp_config(&by_name("tcp-radio").unwrap().spec("tcp-radio")).unwrap(),
            tcp_config(&by_name("tcp-radio-newrto").unwrap().spec("tcp-radio")).unwrap(),
        );
        assert!(radio.rto.backoff && !newrto.rto.backoff);
        assert_eq!(
            (
                newrto.rto.max.as_secs_f64().round(),
                newrto.rto.syn_retries,
                newrto.rto.data_retries
            ),
            (12.0, 500, 500)
        );
        assert_eq!(
            (
                radio.rto.max.as_secs_f64().round(),
                radio.rto.syn_retries,
                radio.rto.data_retries
            ),
            (120.0, 10, 15)
        );
        assert_eq!((radio.dupthresh, newrto.dupthresh), (1, 1));
    }
}

//! One property test over every controller (as s2n-quic fuzzes each of its congestion
//! controllers): random sequences of what a sender feeds its controller (sends,
//! cumulative ACKs, ACKs in recovery, duplicate ACKs, losses, timeouts, idle periods,
//! RTT samples, router feedback), for every name in `NAMES` and every setting of a
//! parameter that changes a controller's rules. Whatever the sequence:
//!
//! - nothing panics, and the window never wraps: an ACK that lets the window grow never
//!   leaves it smaller, unless the controller heard an overload reading (VCP and MPCP cut
//!   it on such ACKs);
//! - the window never falls below the controller's `min_window`;
//! - an ACK that says the sender is not cwnd-limited never grows it, nor does router
//!   feedback after such an ACK, nor an ACK during fast recovery (RFC 7661 section 4.3;
//!   the trait's doc).

use super::*;
use crate::rap::load::OVERLOAD;
use proptest::collection::vec;
use proptest::prelude::*;

/// Every registered controller with its default parameters, and the other settings of
/// each parameter that changes its rules. The match is exhaustive, so a new variant must
/// say which settings it has.
fn registry() -> Vec<Algorithm> {
    let mut all = Vec::new();
    for n in NAMES {
        let a = Algorithm::by_name(n).expect("NAMES are registered");
        let more = match &a {
            Algorithm::Hybla(h) => vec![
                Algorithm::Hybla(HyblaConfig { linux: true, ..*h }),
                Algorithm::Hybla(HyblaConfig {
                    rtt0: Dur(1),
                    linux: true,
                }),
            ],
            Algorithm::TcpRadio(_) => vec![Algorithm::TcpRadio(RadioConfig { growth: true })],
            Algorithm::WestwoodPlus { .. } => vec![Algorithm::WestwoodPlus {
                count_twice: true,
                filter_stages: 1,
            }],
            Algorithm::Cubic(_) => vec![
                Algorithm::Cubic(CubicConfig {
                    c: 40.0,
                    beta: 0.1,
                    linux: false,
                }),
                Algorithm::Cubic(CubicConfig {
                    linux: true,
                    ..CubicConfig::default()
                }),
            ],
            Algorithm::Mpcp(_) => vec![Algorithm::Mpcp(MpcpConfig { packets: 3 })],
            Algorithm::Satpep(_) => vec![Algorithm::Satpep(SatpepConfig { rate_bps: 1 })],
            Algorithm::Tahoe
            | Algorithm::Reno
            | Algorithm::NewReno
            | Algorithm::Xcp
            | Algorithm::Vcp
            | Algorithm::XcpPep
            | Algorithm::MpcpPep => Vec::new(),
        };
        all.push(a);
        all.extend(more);
    }
    all
}

/// One input to the controller; times are offsets from the previous input.
#[derive(Clone, Debug)]
enum Op {
    Sent {
        bytes: u64,
        in_flight: u64,
    },
    Ack {
        bytes: u64,
        /// Credit as one MSS (per-ACK counting) or the bytes acked (byte counting).
        per_ack: bool,
        rtt_us: Option<u64>,
        in_flight: u64,
        cwnd_limited: bool,
        open: bool,
    },
    RecoveryAck {
        bytes: u64,
        rtt_us: Option<u64>,
    },
    DupAck,
    Loss {
        flight: u64,
    },
    RecoveryExit,
    Rto {
        flight: u64,
        repeat: bool,
    },
    Idle {
        ms: u64,
    },
    Feedback(Feedback),
}

fn arb_bytes() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 0u64..20_000,
        2 => 0u64..10_000_000,
        1 => Just(u64::MAX / 2),
        1 => any::<u64>(),
    ]
}

/// Bytes one ACK covers: at most 4 GiB, above anything a sender can have in flight (the
/// receive buffer is capped at 1 GiB), so that growth loops stay bounded.
fn arb_acked() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 0u64..20_000,
        2 => 0u64..10_000_000,
        1 => Just(1u64 << 32),
    ]
}

fn arb_rtt() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![
        1 => Just(None),
        6 => (1u64..2_000_000).prop_map(Some),
        1 => (0u64..u64::MAX / 1_000_000).prop_map(Some),
    ]
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (arb_bytes(), arb_bytes()).prop_map(|(bytes, in_flight)| Op::Sent { bytes, in_flight }),
        8 => (arb_acked(), any::<bool>(), arb_rtt(), arb_bytes(), any::<bool>(), prop::bool::weighted(0.8))
            .prop_map(|(bytes, per_ack, rtt_us, in_flight, cwnd_limited, open)| Op::Ack {
                bytes, per_ack, rtt_us, in_flight, cwnd_limited, open,
            }),
        1 => (arb_acked(), arb_rtt()).prop_map(|(bytes, rtt_us)| Op::RecoveryAck { bytes, rtt_us }),
        2 => Just(Op::DupAck),
        1 => arb_bytes().prop_map(|flight| Op::Loss { flight }),
        1 => Just(Op::RecoveryExit),
        1 => (arb_bytes(), any::<bool>()).prop_map(|(flight, repeat)| Op::Rto { flight, repeat }),
        1 => prop_oneof![0u64..5_000, Just(u64::MAX / 2_000_000)].prop_map(|ms| Op::Idle { ms }),
        1 => prop_oneof![
            any::<i64>().prop_map(Feedback::Window),
            (-20_000i64..20_000).prop_map(Feedback::Window),
            (0.0f64..2.0).prop_map(Feedback::Load),
            any::<f64>().prop_map(Feedback::Load),
        ]
        .prop_map(Op::Feedback),
    ]
}

fn arb_config() -> impl Strategy<Value = CcConfig> {
    (
        prop_oneof![Just(1460u32), Just(1448), 1u32..=65_535],
        1u64..=100,
        prop_oneof![Just(u64::MAX), 2u64..1_000],
        prop_oneof![
            Just(Hystart::Off),
            Just(Hystart::Classic),
            Just(Hystart::Rfc9406),
            Just(Hystart::Ns3)
        ],
        any::<bool>(),
    )
        .prop_map(|(mss, iw, ssthresh_segs, hystart, paced)| CcConfig {
            mss,
            initial_window: iw * mss as u64,
            initial_ssthresh: ssthresh_segs.saturating_mul(mss as u64),
            hystart,
            paced,
        })
}

/// What the sender would tell the controller: the clock, and the RTT estimate the
/// samples make (RFC 6298 smoothing, enough for the controllers' use).
struct Feed {
    now: Time,
    srtt: Dur,
    min_rtt: Dur,
}

impl Feed {
    fn sample(&mut self, rtt_us: Option<u64>) -> Option<Dur> {
        let rtt = Dur(rtt_us?.saturating_mul(1_000));
        self.srtt = if self.srtt == Dur::ZERO {
            rtt
        } else {
            Dur(self.srtt.0 / 8 * 7 + rtt.0 / 8)
        };
        if self.min_rtt == Dur::ZERO || rtt < self.min_rtt {
            self.min_rtt = rtt;
        }
        Some(rtt)
    }

    fn congestion(&self, flight: u64, repeat: bool) -> CongestionEvent {
        CongestionEvent {
            now: self.now,
            bytes_in_flight: flight,
            srtt: self.srtt,
            min_rtt: self.min_rtt,
            repeat,
        }
    }
}

/// Runs `ops` on a fresh controller; an error names the step and what broke.
fn check(a: &Algorithm, cfg: CcConfig, init: Option<u64>, ops: &[Op]) -> Result<(), String> {
    let mut cc = a.build(cfg);
    let mut feed = Feed {
        now: Time(0),
        srtt: Dur::ZERO,
        min_rtt: Dur::ZERO,
    };
    if let Some(ms) = init {
        feed.sample(Some(ms * 1_000));
        cc.on_init(feed.srtt);
    }
    let min = cc.min_window();
    if cc.cwnd() < min {
        return Err(format!("initial window {} < minimum {min}", cc.cwnd()));
    }
    let mut limited = true;
    let mut overload = false;
    for (i, op) in ops.iter().enumerate() {
        feed.now += Dur::from_micros(100);
        let before = cc.cwnd();
        // Whether the window may grow on this input, and whether it must not shrink.
        let (may_grow, monotone) = match *op {
            Op::Sent { bytes, in_flight } => {
                cc.on_sent(feed.now, bytes, in_flight);
                (true, false)
            }
            Op::Ack {
                bytes,
                per_ack,
                rtt_us,
                in_flight,
                cwnd_limited,
                open,
            } => {
                let rtt = feed.sample(rtt_us);
                limited = cwnd_limited;
                cc.on_ack(&AckSample {
                    now: feed.now,
                    bytes_acked: bytes,
                    credit: if per_ack { cfg.mss as u64 } else { bytes },
                    rtt,
                    srtt: feed.srtt,
                    min_rtt: feed.min_rtt,
                    bytes_in_flight: in_flight,
                    cwnd_limited,
                    open,
                });
                (cwnd_limited, cwnd_limited && !overload)
            }
            Op::RecoveryAck { bytes, rtt_us } => {
                let rtt = feed.sample(rtt_us);
                cc.on_recovery_ack(&AckSample {
                    now: feed.now,
                    bytes_acked: bytes,
                    credit: bytes,
                    rtt,
                    srtt: feed.srtt,
                    min_rtt: feed.min_rtt,
                    bytes_in_flight: 0,
                    cwnd_limited: limited,
                    open: false,
                });
                (false, false)
            }
            Op::DupAck => {
                cc.on_dup_ack(feed.now, cfg.mss);
                (true, false)
            }
            Op::Loss { flight } => {
                cc.on_congestion_event(&feed.congestion(flight, false));
                (true, false)
            }
            Op::RecoveryExit => {
                cc.on_recovery_exit(feed.now);
                (true, false)
            }
            Op::Rto { flight, repeat } => {
                cc.on_rto(&feed.congestion(flight, repeat));
                (true, false)
            }
            Op::Idle { ms } => {
                feed.now += Dur::from_millis(ms);
                (true, false)
            }
            Op::Feedback(fb) => {
                overload |= matches!(fb, Feedback::Load(x) if x >= OVERLOAD);
                let _ = cc.request(feed.srtt);
                cc.on_feedback(feed.now, fb);
                (limited, false)
            }
        };
        let after = cc.cwnd();
        let at = || format!("step {i} {op:?}: cwnd {before} -> {after}");
        if after < min {
            return Err(format!("{}, below the minimum {min}", at()));
        }
        if !may_grow && after > before {
            return Err(format!("{}: grew while not allowed to", at()));
        }
        if monotone && after < before {
            return Err(format!("{}: shrank on a growing ACK (overflow?)", at()));
        }
        let _ = cc.ssthresh();
        let _ = cc.pacing_rate();
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn every_controller_keeps_its_window_rules(
        cfg in arb_config(),
        init in prop::option::of(1u64..2_000),
        ops in vec(arb_op(), 0..120),
    ) {
        for a in registry() {
            if let Err(e) = check(&a, cfg, init, &ops) {
                return Err(TestCaseError::fail(format!("{a:?}: {e}")));
            }
        }
    }
}

#[test]
fn the_registry_covers_every_name() {
    let names: Vec<&str> = registry().iter().map(|a| a.name()).collect();
    for n in NAMES {
        assert!(names.contains(n), "{n}");
    }
}

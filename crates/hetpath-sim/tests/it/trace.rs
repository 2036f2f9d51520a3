//! The event trace: it changes nothing, and what it records adds up to the counters.

use crate::common;

use common::{flow, pep, satellite, two_node};
use hetpath_sim::load;

/// Two NewReno flows over a lossy, shallow-queued link that goes down for a second.
fn scenario() -> String {
    let link = "rate = \"2Mbps\"\ndelay = \"50ms\"\nqueue = \"12pkt\"\n\
                ab = { channel = { model = \"bernoulli\", p = 0.02 }, outages = [{ down = \"3s\", up = \"4s\" }] }";
    // The hosts drop what their own full queue refuses, so that queue drops are traced.
    let flows = flow(
        "f1",
        "newreno",
        "size = \"1MB\"\ntcp = { local_queue = \"drop\" }",
    ) + &flow(
        "f2",
        "newreno",
        "size = \"1MB\"\nstart = \"0.5s\"\ntcp = { local_queue = \"drop\" }",
    );
    two_node("60s", link, &flows)
}

fn run(trace: bool) -> hetpath_sim::Simulation {
    let mut sim = load(&scenario(), "trace.toml", Some(1)).unwrap();
    if trace {
        sim.enable_trace();
    }
    assert!(sim.run(&mut |_, _| true));
    sim
}

#[test]
fn tracing_changes_no_result() {
    let (plain, traced) = (run(false), run(true));
    assert!(plain.trace().is_none());
    assert_eq!(plain.summary(0.0), traced.summary(0.0));
    assert_eq!(plain.events_executed(), traced.events_executed());
    // Debug text, as the series hold NaN (which is never equal to itself).
    let text = |s: &hetpath_sim::Simulation| format!("{:?}", s.series());
    assert!(text(&plain) == text(&traced), "the series differ");
}

#[test]
fn the_trace_adds_up_to_the_counters() {
    let sim = run(true);
    let (s, t) = (sim.summary(0.0), sim.trace().unwrap());
    let count = |event: &str, keep: &dyn Fn(usize) -> bool| {
        (0..t.len())
            .filter(|&i| t.event[i] == event && keep(i))
            .count() as u64
    };
    let ab = &s.links[0].stats;
    let on_ab = |i: usize| t.link[i].is_some_and(|d| d.0 == 0);
    assert!(ab.drops > 0 && ab.lost_packets > 0, "{ab:?}");
    assert_eq!(count("link.queue_drop", &on_ab), ab.drops);
    assert_eq!(
        count("link.channel_loss", &on_ab) + count("link.outage_loss", &on_ab),
        ab.lost_packets
    );
    assert_eq!(count("link.down", &on_ab), 1);
    assert_eq!(count("link.up", &on_ab), 1);
    let mut attributed = 0;
    for (k, f) in s.flows.iter().enumerate() {
        let of = |i: usize| t.flow[i].is_some_and(|x| x.0 as usize == k);
        assert!(f.timeouts > 0 && f.fast_retransmits > 0, "{f:?}");
        assert_eq!(count("tcp.rto", &of), f.timeouts, "{}", f.name);
        assert_eq!(
            count("tcp.fast_retransmit", &of),
            f.fast_retransmits,
            "{}",
            f.name
        );
        // Every retransmission is an event, in recovery or after a timeout.
        let resent = count("tcp.retransmit.recovery", &of) + count("tcp.retransmit.timeout", &of);
        assert_eq!(resent, f.retransmissions, "{}", f.name);
        assert!(count("tcp.retransmit.timeout", &of) > 0, "{}", f.name);
        assert_eq!(count("flow.delivered", &of), 1);
        attributed += count("link.queue_drop", &|i| on_ab(i) && of(i));
    }
    // Every data packet dropped on the way there is attributed to its flow.
    assert_eq!(attributed, ab.drops);
    assert!(
        t.time_s.windows(2).all(|w| w[0] <= w[1]),
        "in the order they happened"
    );
}

#[test]
fn a_peps_legs_report_their_tcp_events_to_the_trace() {
    // One flow split at r: the PEP's far leg recovers the hop's losses; its events are
    // the flow's, at r, and add up to that leg's counters.
    // The run goes on after the flow completes, so the far leg hears its last ACK.
    let sat = "rate = \"5Mbps\"\ndelay = \"250ms\"\nab = { channel = { model = \"bernoulli\", p = 0.01 } }";
    let text = satellite("3MB", sat, &pep("r1", "hybla")).replace("stop_when_done = true", "");
    let mut sim = load(&text, "pep.toml", Some(1)).unwrap();
    sim.enable_trace();
    assert!(sim.run(&mut |_, _| true));
    let (s, t) = (sim.summary(0.0), sim.trace().unwrap());
    let sat = &s.legs[1];
    assert_eq!((sat.from.as_str(), sat.cc.as_str()), ("r1", "hybla"));
    assert!(sat.fast_retransmits > 0);
    let at_r = |e: &str| {
        (0..t.len())
            .filter(|&i| t.event[i] == e && t.node[i].0 == 1 && t.flow[i].is_some_and(|f| f.0 == 0))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        at_r("tcp.fast_retransmit").len() as u64,
        sat.fast_retransmits
    );
    assert_eq!(at_r("tcp.rto").len() as u64, sat.timeouts);
    // Each carries the leg's window just after the response.
    for i in at_r("tcp.fast_retransmit") {
        assert!(t.cwnd_bytes[i].is_some() && t.ssthresh_bytes[i].is_some());
    }
}

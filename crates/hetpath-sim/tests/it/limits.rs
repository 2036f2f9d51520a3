//! Times that would overflow and time series that would not fit in memory are
//! scenario errors naming the key, and the sampler cannot spin at the end of time.

use crate::common;

use hetpath_proto::Dur;
use hetpath_sim::scenario::load_with;
use hetpath_sim::{load, Simulation};

fn scenario(head: &str) -> String {
    common::two_node("1s", "rate = \"1Mbps\"\ndelay = \"1ms\"", "")
        .replace("duration = \"1s\"", head)
}

fn error(text: &str) -> hetpath_sim::ScenarioError {
    match load(text, "big.toml", None) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

#[test]
fn a_duration_past_the_limit_on_times_is_an_error() {
    // 317 years: a time in nanoseconds, but past the 100-year limit.
    let e = error(&scenario("duration = \"10000000000s\""));
    assert_eq!(e.place, "scenario.duration", "{e}");
    assert!(!e.to_string().contains('\n'));
    let e = error(&scenario(
        "duration = \"10s\"\nsample_interval = \"10000000000s\"",
    ));
    assert_eq!(e.place, "scenario.sample_interval", "{e}");
    // Past 2^64 ns the value itself is refused where it is read.
    let e = error(&scenario("duration = \"1000000000000s\""));
    let text = e.to_string();
    assert!(
        text.contains("duration") && text.contains("too large") && !text.contains('\n'),
        "{e}"
    );
}

#[test]
fn a_flow_start_past_the_limit_is_an_error() {
    let text = common::two_node(
        "10s",
        "rate = \"1Mbps\"\ndelay = \"1ms\"",
        &common::flow("f", "reno", "start = \"10000000000s\""),
    );
    assert_eq!(error(&text).place, "flow[0] 'f'.start");
}

#[test]
fn a_series_larger_than_max_samples_is_an_error_up_front() {
    // 100 million samples of two link directions.
    let e = error(&scenario("duration = \"10000000s\""));
    assert_eq!(e.place, "scenario.max_samples", "{e}");
    assert!(e.message.contains("sample_interval"), "{e}");
    let e = error(&scenario("duration = \"100s\"\nmax_samples = 1000"));
    assert_eq!(e.place, "scenario.max_samples", "{e}");
    // Within the bound, or with a longer period, it loads.
    load(
        &scenario("duration = \"100s\"\nmax_samples = 2002"),
        "ok.toml",
        None,
    )
    .unwrap();
    load(
        &scenario("duration = \"10000000s\"\nsample_interval = \"10s\""),
        "ok.toml",
        None,
    )
    .unwrap();
    // A run without series (a sweep, a summary alone) samples nothing: no bound.
    let mut sim = load_with(
        &scenario("duration = \"10000000s\""),
        "ok.toml",
        None,
        false,
    )
    .unwrap();
    assert!(sim.run(&mut |_, _| true));
    assert!(sim.series().links.time_s.is_empty());
}

#[test]
fn the_sampler_stops_at_the_end_of_time() {
    // Built directly, past the loader's limits: samples at 0, 2^63 ns, and the last
    // representable instant, where the next one saturates.
    let mut sim = Simulation::new("end", 1, Dur(u64::MAX), Dur(1 << 63));
    assert!(sim.run(&mut |_, _| true));
    assert_eq!(sim.events_executed(), 3);
}

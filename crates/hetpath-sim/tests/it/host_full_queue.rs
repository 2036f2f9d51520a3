//! Many connections of one host waiting at its full interface queue (`local_queue =
//! "wait"`, the default): a connection whose delayed-ACK timer came due while its host was
//! held re-armed that timer for the same instant each time it fired, and simulated time
//! stopped there for good. Both runs that showed it must end; each is bounded by a budget
//! of progress calls, so that it fails rather than hangs if time stops again.

use hetpath_sim::{load, Summary};

/// Progress calls allowed: one per 1% of simulated time and one per 4096 events, so
/// about 1.2 million events here, a hundred times what either run needs.
const CALLS: u32 = 400;

fn run_bounded(text: &str) -> Summary {
    let mut sim = load(text, "zero_time.toml", None).unwrap_or_else(|e| panic!("{e}"));
    let mut calls = 0;
    let finished = sim.run(&mut |_, _| {
        calls += 1;
        calls < CALLS
    });
    assert!(
        finished,
        "stopped at {} s after {} events ({:?})",
        sim.now().as_secs_f64(),
        sim.events_executed(),
        sim.failure()
    );
    sim.summary(0.0)
}

/// One host `a` sending over a 10 Mbit/s link with the default 100-packet queue.
fn pair(rest: &str) -> String {
    format!(
        "[scenario]\nname = \"burst\"\nduration = \"60s\"\nstop_when_done = true\n\
         [[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
         [[link]]\nname = \"l\"\na = \"a\"\nb = \"b\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\n{rest}"
    )
}

#[test]
fn nine_hundred_small_flows_from_one_host_at_time_zero_all_complete() {
    let flows: String = (0..900)
        .map(|i| format!("[[flow]]\nname = \"f{i}\"\nfrom = \"a\"\nto = \"b\"\nsize = \"300B\"\n"))
        .collect();
    let s = run_bounded(&pair(&flows));
    assert!(s.sim_time_s < 1.0, "{}", s.sim_time_s);
    for f in &s.flows {
        assert_eq!(f.bytes_delivered, 300, "{f:?}");
        assert!(
            f.completion_s.is_some() && f.sender_done_s.is_some(),
            "{f:?}"
        );
    }
}

#[test]
fn a_web_page_over_a_thousand_parallel_connections_completes() {
    let web = "[[flow]]\nname = \"w\"\nfrom = \"a\"\nto = \"b\"\n[flow.web]\npages = 1\n\
               think = false\nparallel = 1000\n\
               main_size = { dist = \"constant\", value = 1000 }\n\
               inline_count = { dist = \"constant\", value = 1000 }\n\
               inline_size = { dist = \"constant\", value = 300 }\n";
    let s = run_bounded(&pair(web));
    assert_eq!(s.flows[0].pages, Some(1));
    let page = &s.pages[0];
    assert_eq!((page.objects, page.bytes), (1001, 1000 + 1000 * 300));
}

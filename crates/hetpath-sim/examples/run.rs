//! Runs a scenario file and prints the summary: `cargo run --release --example run -- FILE
//! [SEED] [--trace] [--check]` (`--trace` keeps the event trace, to measure what it
//! costs; `--check` checks the run's invariants at the end, exit status 1 if one fails). The
//! user-facing command is the Python `hetpath run`; this is for engine work.

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let trace = args.iter().any(|a| a == "--trace");
    let check = args.iter().any(|a| a == "--check");
    args.retain(|a| a != "--trace" && a != "--check");
    let path = args
        .first()
        .expect("usage: run FILE [SEED] [--trace] [--check]")
        .clone();
    let seed = args.get(1).map(|s| s.parse().expect("seed"));
    let text = std::fs::read_to_string(&path).expect("read scenario");
    let mut sim = match hetpath_sim::load(&text, &path, seed) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if trace {
        sim.enable_trace();
    }
    sim.check = check;
    let t0 = std::time::Instant::now();
    if !sim.run(&mut |_, _| true) {
        match sim.failure() {
            Some(e) => eprintln!("{path}: {e}"),
            None => eprintln!("{path}: the run was stopped"),
        }
        std::process::exit(1);
    }
    let s = sim.summary(t0.elapsed().as_secs_f64());
    println!(
        "{} seed={} sim={}s wall={:.3}s events={} ({:.1} M events/s)",
        s.scenario,
        s.seed,
        s.sim_time_s,
        s.wall_time_s,
        s.events,
        s.events as f64 / s.wall_time_s / 1e6
    );
    for f in &s.flows {
        println!(
            "  flow {:10} {:9} delivered={:>11} goodput={:8.3} Mbit/s completion={:?} rtx={} frtx={} rto={} freezes={} aborted={}",
            f.name, f.cc, f.bytes_delivered, f.goodput_bps / 1e6, f.completion_s, f.retransmissions, f.fast_retransmits, f.timeouts, f.freezes, f.aborted
        );
    }
    for l in &s.links {
        println!(
            "  link {}:{}->{} util={:.4} drops={} lost={} maxq={}",
            l.name,
            l.from,
            l.to,
            l.utilization,
            l.stats.drops,
            l.stats.lost_packets,
            l.stats.max_queue_pkts
        );
    }
    for m in &s.machines {
        println!("  {} {} {}={}", m.node, m.machine, m.counter, m.value);
    }
    if let Some(t) = sim.trace() {
        println!("  trace: {} events", t.len());
    }
    if let Err(v) = sim.checked() {
        eprintln!("run: error: {v}");
        std::process::exit(1);
    }
}

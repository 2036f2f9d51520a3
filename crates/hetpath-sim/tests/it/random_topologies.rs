//! Random small topologies run with the run-time checks on (`Simulation::check`): two to
//! six nodes joined by a random tree and a few extra links of random rates, delays,
//! queues, channels and outages, sometimes an ESW link or a WLAN, and a few flows of
//! random controllers and transports. Whatever the draw, the run must not panic and
//! every invariant (`sim/invariants.rs`) must hold at its end.

use hetpath_sim::load;
use proptest::prelude::*;
use std::fmt::Write;

/// A small deterministic generator, so one `u64` from proptest draws a whole scenario
/// (printed whole when a case fails).
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        // SplitMix64.
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    fn int(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.int(1, 100) <= percent
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.int(0, from.len() as u64 - 1) as usize]
    }
}

const CONTROLLERS: &[&str] = &[
    "newreno",
    "reno",
    "tahoe",
    "cubic",
    "hybla",
    "westwood+",
    "tcp-radio",
];

fn channel(d: &mut Draw) -> String {
    match d.int(0, 5) {
        0 | 1 => "{ model = \"none\" }".into(),
        2 => format!(
            "{{ model = \"bernoulli\", p = {} }}",
            d.int(0, 50) as f64 / 1000.0
        ),
        3 => format!(
            "{{ model = \"gilbert-elliott\", t_good = \"{}ms\", t_bad = \"{}ms\" }}",
            d.int(100, 3000),
            d.int(1, 300)
        ),
        4 => format!(
            "{{ model = \"fec\", n = 255, k = {}, depth = {}, ber = {:e} }}",
            d.int(191, 239),
            d.int(1, 8),
            d.int(1, 50) as f64 * 1e-5
        ),
        _ => format!(
            "{{ model = \"markov\", alpha = {}, beta = {}, loss_bad = 0.5 }}",
            d.int(1, 20) as f64 / 100.0,
            d.int(10, 80) as f64 / 100.0
        ),
    }
}

fn outages(d: &mut Draw, duration_ms: u64) -> String {
    let n = d.int(0, 2);
    let mut out = Vec::new();
    let mut at = 0;
    for _ in 0..n {
        let down = at + d.int(1, duration_ms / 2);
        let up = down + d.int(1, 2000);
        out.push(format!("{{ down = \"{down}ms\", up = \"{up}ms\" }}"));
        at = up;
    }
    format!("[{}]", out.join(", "))
}

/// A scenario drawn from `seed`.
fn scenario(seed: u64) -> String {
    let mut d = Draw(seed);
    let duration_ms = d.int(2000, 8000);
    let mut s = format!(
        "[scenario]\nname = \"random\"\nduration = \"{duration_ms}ms\"\nseed = {}\n",
        d.int(0, 1000)
    );
    let wired = d.int(2, 6);
    // A WLAN adds stations behind one of the wired nodes, up to six nodes in all.
    let stations = if wired < 6 && d.chance(25) {
        d.int(1, 6 - wired)
    } else {
        0
    };
    let nodes = wired + stations;
    for i in 0..nodes {
        writeln!(s, "[[node]]\nname = \"n{i}\"").unwrap();
    }
    let mut links = Vec::new();
    for i in 1..wired {
        links.push((d.int(0, i - 1), i));
    }
    for _ in 0..d.int(0, 2) {
        let (a, b) = (d.int(0, wired - 1), d.int(0, wired - 1));
        if a != b {
            links.push((a, b));
        }
    }
    let esw = d
        .chance(20)
        .then(|| d.int(0, links.len() as u64 - 1) as usize);
    for (k, (a, b)) in links.iter().enumerate() {
        write!(
            s,
            "[[link]]\nname = \"l{k}\"\na = \"n{a}\"\nb = \"n{b}\"\nrate = \"{}kbps\"\n\
             delay = \"{}ms\"\nqueue = \"{}\"\nchannel = {}\n",
            d.int(64, 20_000),
            d.int(0, 300),
            if d.chance(50) {
                format!("{}pkt", d.int(1, 200))
            } else {
                format!("{}B", d.int(600, 150_000))
            },
            channel(&mut d)
        )
        .unwrap();
        if esw == Some(k) {
            writeln!(s, "layer = \"esw\"\n[link.esw]\narq = {}", d.chance(70)).unwrap();
        } else if d.chance(40) {
            writeln!(s, "outages = {}", outages(&mut d, duration_ms)).unwrap();
        }
        if esw != Some(k) && d.chance(20) {
            writeln!(s, "ab = {{ outages = {} }}", outages(&mut d, duration_ms)).unwrap();
        }
    }
    if stations > 0 {
        let ap = d.int(0, wired - 1);
        let names: Vec<String> = (wired..nodes).map(|i| format!("\"n{i}\"")).collect();
        write!(
            s,
            "[[wlan]]\nname = \"air\"\nap = \"n{ap}\"\nstations = [{}]\nqueue = \"{}pkt\"\n",
            names.join(", "),
            d.int(1, 50)
        )
        .unwrap();
        if d.chance(50) {
            writeln!(s, "channel = {}", channel(&mut d)).unwrap();
        }
    }
    for f in 0..d.int(1, 3) {
        let from = d.int(0, nodes - 1);
        let to = (from + d.int(1, nodes - 1)) % nodes;
        let size = d.chance(70).then(|| d.int(1, 400) * 1000);
        write!(
            s,
            "[[flow]]\nname = \"f{f}\"\nfrom = \"n{from}\"\nto = \"n{to}\"\nstart = \"{}ms\"\n",
            d.int(0, 1000)
        )
        .unwrap();
        match d.int(0, 9) {
            0 if size.is_some() => writeln!(s, "transport = \"ideal\"").unwrap(),
            1 => writeln!(s, "transport = \"sctp\"").unwrap(),
            _ => {
                writeln!(s, "cc = \"{}\"", d.pick(CONTROLLERS)).unwrap();
                if d.chance(15) {
                    writeln!(s, "ipsec = true").unwrap();
                }
            }
        }
        if let Some(n) = size {
            writeln!(s, "size = \"{n}B\"").unwrap();
        }
    }
    s
}

/// Progress calls a case may take (one per 1% of simulated time or 4096 events): a few
/// hundred thousand events at most, so that a slow draw stays cheap.
const PROGRESS_CALLS: u32 = 150;

/// The watchdog's limit in these runs: below what `PROGRESS_CALLS` lets run, so that a
/// zero-time loop fails the property instead of passing as a run stopped early. (These
/// small scenarios never run more than a few hundred events at one instant.)
const EVENTS_PER_INSTANT: u64 = 100_000;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_topologies_keep_every_invariant(seed in any::<u64>()) {
        let text = scenario(seed);
        // A draw the loader refuses (an SCTP flow it cannot place, say) is skipped: the
        // loader's own tests cover refusals.
        let Ok(mut sim) = load(&text, "random.toml", None) else {
            return Ok(());
        };
        sim.check = true;
        sim.max_events_per_instant = EVENTS_PER_INSTANT;
        // A bounded run: the balances hold at any instant, so a run stopped early is
        // checked as well as a finished one. (Progress is called every few thousand
        // events at most.)
        let mut calls = 0;
        sim.run(&mut |_, _| {
            calls += 1;
            calls < PROGRESS_CALLS
        });
        if let Some(e) = sim.failure() {
            panic!("{e}\n--- scenario (seed {seed}) ---\n{text}");
        }
        if let Err(v) = sim.checked() {
            panic!("{v}\n--- scenario (seed {seed}) ---\n{text}");
        }
    }
}

/// The generator draws scenarios the loader takes (most of them), so the property above
/// exercises runs rather than refusals.
#[test]
fn most_draws_load() {
    let loaded = (0..64u64)
        .filter(|&i| load(&scenario(i), "random.toml", None).is_ok())
        .count();
    assert!(loaded >= 48, "only {loaded} of 64 random scenarios load");
}

/// Found by the property above (a draw reduced by hand): host `n4` sends bulk data over
/// `l3`, whose byte-limited queue is full, and receives flow `f1`'s data. Its data packet
/// waits for room (the slot's blocked frame) while `f1`'s receiving connection has a
/// deadline due (an ACK to send): the connection's timer is armed again at the same
/// instant, forever, and simulated time stopped at 1.08 s (the driver of a held host now
/// takes a deadline already due at once: `sim/machines.rs`).
#[test]
fn a_held_host_with_a_due_deadline_lets_time_move() {
    let text = r#"
[scenario]
name = "held"
duration = "6482ms"
[[node]]
name = "n1"
[[node]]
name = "n2"
[[node]]
name = "n4"
[[link]]
name = "l1"
a = "n1"
b = "n2"
rate = "14042kbps"
delay = "237ms"
queue = "26pkt"
[[link]]
name = "l3"
a = "n1"
b = "n4"
rate = "18111kbps"
delay = "56ms"
queue = "38750B"
[[flow]]
name = "f0"
from = "n4"
to = "n1"
cc = "cubic"
[[flow]]
name = "f1"
from = "n2"
to = "n4"
cc = "reno"
"#;
    let mut sim = load(text, "held.toml", None).expect("loads");
    let mut calls = 0;
    sim.run(&mut |_, _| {
        calls += 1;
        calls < 1000
    });
    assert_eq!(sim.now().as_secs_f64(), 6.482, "the clock stopped");
}

//! The core against a fake clock and fake packet I/O: times are chosen by the test,
//! packets are byte vectors, and the observer records what a driver would write.

use super::*;
use crate::fate::Outcome;
use hetpath_proto::Dur;
use hetpath_sim::channel::{Channel, NoLoss};
use hetpath_sim::ids::NodeId;
use hetpath_sim::link::LinkParams;

#[derive(Default)]
struct Record {
    started: Vec<(Time, Dir, Vec<u8>)>,
    fates: Vec<Fate>,
    samples: Vec<(Time, Dir, LinkSample)>,
}

impl Observer for Record {
    fn started(&mut self, t: Time, dir: Dir, bytes: &[u8]) {
        self.started.push((t, dir, bytes.to_vec()));
    }
    fn fate(&mut self, f: &Fate) {
        self.fates.push(*f);
    }
    fn sample(&mut self, t: Time, dir: Dir, s: &LinkSample) {
        self.samples.push((t, dir, *s));
    }
}

const MS: u64 = 1_000_000;

fn dir(rate_bps: u64, delay: Dur, queue: u64, ch: Box<dyn Channel>) -> DetachedDir {
    DetachedDir {
        params: LinkParams {
            name: "l".into(),
            from: NodeId(0),
            to: NodeId(1),
            rate_bps,
            delay,
            queue: QueueLimit::Packets(queue),
        },
        channel: ch,
        changes: Vec::new(),
    }
}

/// 10 Mbit/s, 20 ms each way: a 1250-byte packet takes exactly 1 ms to serialise.
fn link(queue: u64) -> Emulator<Record> {
    let d = || dir(10_000_000, Dur::from_millis(20), queue, Box::new(NoLoss));
    Emulator::new([d(), d()], Record::default())
}

fn packet(i: u32, len: usize) -> Vec<u8> {
    let mut p = vec![0u8; len];
    p[..4].copy_from_slice(&i.to_be_bytes());
    p
}

/// Runs the core until nothing is left, waking `late` after each deadline (a fake
/// scheduler's latency), and returns what was written out, with the wake-up times.
fn drain(e: &mut Emulator<Record>, late: impl Fn(u64) -> u64) -> Vec<(Time, Dir, Vec<u8>)> {
    let mut out = Vec::new();
    let mut k = 0;
    while let Some(t) = e.poll_timeout() {
        let now = Time(t.0 + late(k));
        k += 1;
        e.handle_timeout(now);
        while let Some((d, s)) = e.poll_transmit() {
            out.push((now, d, e.packet(s).to_vec()));
            e.release(s);
        }
    }
    out
}

#[test]
fn a_burst_leaves_at_exactly_the_link_rate_after_the_delay() {
    let mut e = link(1000);
    for i in 0..500 {
        e.handle_datagram(Time::ZERO, Dir::Ab, &packet(i, 1250));
    }
    let out = drain(&mut e, |_| 0);
    assert_eq!(out.len(), 500);
    let fates = &e.observer().fates;
    for (i, f) in fates.iter().enumerate() {
        assert_eq!(f.outcome, Outcome::Delivered);
        assert_eq!(f.seq, i as u64);
        assert_eq!(f.transmission, Some(i as u64));
        // Packet i finishes serialising at (i + 1) ms and arrives 20 ms later.
        assert_eq!(f.left, Time((i as u64 + 1) * MS + 20 * MS), "packet {i}");
    }
    // In order, bytes intact.
    for (i, (_, d, p)) in out.iter().enumerate() {
        assert_eq!(*d, Dir::Ab);
        assert_eq!(*p, packet(i as u32, 1250));
    }
    assert_eq!(e.stats(Dir::Ab).tx_bytes, 500 * 1250);
    assert_eq!(
        e.slots() - e.bufs.in_use(),
        e.slots(),
        "every slot given back"
    );
}

#[test]
fn late_wakeups_delay_the_writes_but_not_the_schedule() {
    let mut on_time = link(1000);
    let mut late = link(1000);
    for i in 0..200 {
        // Packets trickle in faster than the link drains them.
        let t = Time(i as u64 * MS / 2);
        on_time.handle_datagram(t, Dir::Ab, &packet(i, 1250));
        late.handle_datagram(t, Dir::Ab, &packet(i, 1250));
    }
    drain(&mut on_time, |_| 0);
    // A scheduler that wakes 0 to 3 ms late, changing from wake to wake.
    let out = drain(&mut late, |k| (k * 7919 % 4) * MS);
    assert_eq!(out.len(), 200);
    let left = |e: &mut Emulator<Record>| {
        e.observer()
            .fates
            .iter()
            .map(|f| f.left)
            .collect::<Vec<_>>()
    };
    assert_eq!(left(&mut on_time), left(&mut late));
    assert!(out.iter().zip(left(&mut late)).all(|(o, l)| o.0 >= l));
}

#[test]
fn the_two_directions_are_independent() {
    let mut e = link(10);
    e.handle_datagram(Time::ZERO, Dir::Ab, &packet(1, 1250));
    e.handle_datagram(Time::ZERO, Dir::Ba, &packet(2, 625));
    let out = drain(&mut e, |_| 0);
    assert_eq!(out[0].1, Dir::Ba);
    assert_eq!(out[0].0, Time(MS / 2 + 20 * MS));
    assert_eq!(out[1].1, Dir::Ab);
    assert_eq!(out[1].0, Time(MS + 20 * MS));
}

#[test]
fn a_full_queue_drops_and_the_packet_in_the_transmitter_does_not_count() {
    let mut e = link(2);
    for i in 0..5 {
        e.handle_datagram(Time::ZERO, Dir::Ab, &packet(i, 1250));
    }
    drain(&mut e, |_| 0);
    let outcomes: Vec<Outcome> = e.observer().fates.iter().map(|f| f.outcome).collect();
    use Outcome::*;
    // Fates are reported when settled: the drops at once, the deliveries later.
    assert_eq!(outcomes, [Queue, Queue, Delivered, Delivered, Delivered]);
    assert_eq!(e.stats(Dir::Ab).drops, 2);
}

#[test]
fn an_outage_loses_the_wire_and_the_transmitter_and_the_queue_resumes() {
    let mut d = dir(10_000_000, Dur::from_millis(20), 100, Box::new(NoLoss));
    d.changes = vec![
        (Time(5 * MS + MS / 2), StateChange::Down),
        (Time(30 * MS), StateChange::Up),
    ];
    let back = dir(10_000_000, Dur::from_millis(20), 100, Box::new(NoLoss));
    let mut e = Emulator::new([d, back], Record::default());
    for i in 0..10 {
        e.handle_datagram(Time::ZERO, Dir::Ab, &packet(i, 1250));
    }
    drain(&mut e, |_| 0);
    let f = &e.observer().fates;
    // Packets 0-4 had left the transmitter and were on the wire; 5 was being sent.
    let lost: Vec<u64> = f
        .iter()
        .filter(|f| f.outcome == Outcome::Outage)
        .map(|f| f.seq)
        .collect();
    assert_eq!(lost, [0, 1, 2, 3, 4, 5]);
    assert!(f
        .iter()
        .filter(|f| f.outcome == Outcome::Outage)
        .all(|f| f.left == Time(5 * MS + MS / 2)));
    // 6-9 waited in the queue and go out from 30 ms on, at the link rate.
    let delivered: Vec<(u64, Time)> = f
        .iter()
        .filter(|f| f.outcome == Outcome::Delivered)
        .map(|f| (f.seq, f.left))
        .collect();
    let want: Vec<(u64, Time)> = (6..10).map(|i| (i, Time((30 + i - 5 + 20) * MS))).collect();
    assert_eq!(delivered, want);
}

#[test]
fn a_detach_also_drops_the_queue() {
    let mut d = dir(10_000_000, Dur::from_millis(20), 100, Box::new(NoLoss));
    d.changes = vec![
        (Time(MS / 2), StateChange::Detach),
        (Time(10 * MS), StateChange::Up),
    ];
    let back = dir(10_000_000, Dur::from_millis(20), 100, Box::new(NoLoss));
    let mut e = Emulator::new([d, back], Record::default());
    for i in 0..3 {
        e.handle_datagram(Time::ZERO, Dir::Ab, &packet(i, 1250));
    }
    drain(&mut e, |_| 0);
    assert!(e
        .observer()
        .fates
        .iter()
        .all(|f| f.outcome == Outcome::Outage));
}

#[test]
fn packets_still_inside_at_the_end_are_reported_in_flight() {
    let mut e = link(100);
    for i in 0..3 {
        e.handle_datagram(Time::ZERO, Dir::Ab, &packet(i, 1250));
    }
    e.handle_timeout(Time(21 * MS + 1)); // the first is delivered, not yet written out
    e.finish();
    let f = &e.observer().fates;
    assert_eq!(f.len(), 3);
    assert_eq!(f[0].outcome, Outcome::Delivered);
    assert_eq!(
        f.iter().filter(|f| f.outcome == Outcome::InFlight).count(),
        2
    );
}

#[test]
fn with_no_slot_free_a_packet_is_dropped_and_reported() {
    let d = || dir(10_000_000, Dur::from_millis(20), 100, Box::new(NoLoss));
    let mut e = Emulator::with_slots([d(), d()], Record::default(), 4);
    let n = e.slots();
    for i in 0..n + 3 {
        e.handle_datagram(Time::ZERO, Dir::Ab, &packet(i as u32, 100));
    }
    assert_eq!(e.no_buffer(Dir::Ab), 3);
    assert_eq!(
        e.observer()
            .fates
            .iter()
            .filter(|f| f.outcome == Outcome::NoBuffer)
            .count(),
        3
    );
}

/// A loss pattern recorded live replays exactly through the `trace` channel: the
/// transmission indices of the channel's losses are the trace.
#[test]
fn channel_losses_replay_through_a_trace_channel() {
    let text = r#"
[scenario]
name = "x"
duration = "10s"
seed = 7
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "l"
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
channel = { model = "gilbert-elliott", t_good = "20ms", t_bad = "5ms", loss_bad = 0.8 }
"#;
    let run = |link: [DetachedDir; 2]| {
        let mut e = Emulator::new(link, Record::default());
        for i in 0..3000u32 {
            e.handle_datagram(
                Time(i as u64 * MS / 2),
                Dir::Ab,
                &packet(i, 500 + (i % 7) as usize * 100),
            );
        }
        drain(&mut e, |_| 0);
        e.observer().fates.clone()
    };
    let load = || {
        crate::scenario::load_link(text, "x.toml", None, "l")
            .unwrap()
            .dirs
    };
    let live = run(load());
    assert_eq!(live, run(load()), "same scenario and seed, same fates");
    let lost: Vec<u64> = live
        .iter()
        .filter(|f| f.outcome == Outcome::Channel)
        .map(|f| f.transmission.unwrap())
        .collect();
    assert!(lost.len() > 100, "{} losses", lost.len());
    // The same scenario with the a -> b channel replaced by the recorded losses.
    let list: Vec<String> = lost.iter().map(u64::to_string).collect();
    let replay_text = format!(
        "{text}[link.ab]\nchannel = {{ model = \"trace\", lost = [{}] }}\n",
        list.join(", ")
    );
    let replay = crate::scenario::load_link(&replay_text, "x.toml", None, "l").unwrap();
    assert_eq!(run(replay.dirs), live);
}

/// Outages and the mobile host's association reach the core as the simulation has them.
#[test]
fn a_detached_link_brings_its_outages() {
    let text = r#"
[scenario]
name = "x"
duration = "10s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "l"
a = "a"
b = "b"
rate = "1Mbps"
delay = "5ms"
[[link.ab.outages]]
down = "1s"
up = "2s"
"#;
    let link = crate::scenario::load_link(text, "x.toml", None, "l").unwrap();
    let s = 1_000_000_000;
    assert_eq!(
        link.dirs[0].changes,
        [(Time(s), StateChange::Down), (Time(2 * s), StateChange::Up)]
    );
    assert!(link.dirs[1].changes.is_empty());
    assert_eq!(link.nodes, ["a", "b"]);
    let e = crate::scenario::load_link(text, "x.toml", None, "m")
        .err()
        .unwrap();
    assert_eq!(e.to_string(), "x.toml: link: no link named 'm'; links: l");
}

/// Runs every deadline up to `end` (sampling never runs out of them), waking `late`
/// after each, and writes out what is delivered.
fn run_until(e: &mut Emulator<Record>, end: Time, late: impl Fn(u64) -> u64) -> usize {
    let mut written = 0;
    let mut k = 0;
    while let Some(t) = e.poll_timeout().filter(|t| *t <= end) {
        e.handle_timeout(Time(t.0 + late(k)));
        k += 1;
        while let Some((_, s)) = e.poll_transmit() {
            e.release(s);
            written += 1;
        }
    }
    written
}

#[test]
fn samples_sit_on_the_grid_and_see_what_happened_at_their_time() {
    let mut e = link(100);
    e.set_sampling(Some(Dur::from_millis(10)));
    for i in 0..50 {
        e.handle_datagram(Time::ZERO, Dir::Ab, &packet(i, 1250));
    }
    assert_eq!(run_until(&mut e, Time(100 * MS), |_| 0), 50);
    let ab: Vec<(Time, LinkSample)> = e
        .observer()
        .samples
        .iter()
        .filter(|s| s.1 == Dir::Ab)
        .map(|s| (s.0, s.2))
        .collect();
    assert_eq!(ab.len(), 11, "0, 10, ..., 100 ms");
    for (k, (t, s)) in ab.iter().enumerate() {
        assert_eq!(*t, Time(k as u64 * 10 * MS));
        // At 10k ms the transmission ending then is over and the next has started (the
        // sample runs after the link's events of its instant): 10k + 1 started.
        let started = if k == 0 {
            0
        } else {
            (10 * k as u64 + 1).min(50)
        };
        let queued = if k == 0 { 0 } else { 50 - started };
        assert_eq!(s.tx_bytes, started * 1250, "at {k}0 ms");
        assert_eq!(s.queue_pkts, queued, "at {k}0 ms");
        assert_eq!(s.queue_bytes, queued * 1250, "at {k}0 ms");
    }
    // The idle direction is sampled too, a then b at each time.
    let order: Vec<Dir> = e.observer().samples.iter().take(4).map(|s| s.1).collect();
    assert_eq!(order, [Dir::Ab, Dir::Ba, Dir::Ab, Dir::Ba]);
    assert!(e
        .observer()
        .samples
        .iter()
        .filter(|s| s.1 == Dir::Ba)
        .all(|s| s.2 == LinkSample::default()));
}

#[test]
fn late_wakeups_do_not_move_the_samples() {
    let feed = |e: &mut Emulator<Record>| {
        e.set_sampling(Some(Dur::from_millis(7)));
        for i in 0..80 {
            e.handle_datagram(
                Time(i as u64 * MS / 3),
                Dir::Ab,
                &packet(i, 1000 + i as usize),
            );
        }
    };
    let (mut on_time, mut late) = (link(30), link(30));
    feed(&mut on_time);
    feed(&mut late);
    run_until(&mut on_time, Time(200 * MS), |_| 0);
    run_until(&mut late, Time(200 * MS), |k| (k * 7919 % 4) * MS);
    assert!(on_time.observer().samples.len() >= 2 * 28);
    let n = on_time
        .observer()
        .samples
        .len()
        .min(late.observer().samples.len());
    assert_eq!(
        on_time.observer().samples[..n],
        late.observer().samples[..n]
    );
}

#[test]
fn without_sampling_there_is_no_series_and_no_deadline() {
    let mut e = link(10);
    assert_eq!(e.poll_timeout(), None);
    e.handle_datagram(Time::ZERO, Dir::Ab, &packet(0, 100));
    drain(&mut e, |_| 0);
    assert!(e.observer().samples.is_empty());
}

#[test]
fn the_sampling_interval_is_the_scenarios() {
    let text = |extra: &str| {
        format!(
            "[scenario]\nname = \"x\"\nduration = \"10s\"\n{extra}\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
             [[link]]\nname = \"l\"\na = \"a\"\nb = \"b\"\nrate = \"1Mbps\"\ndelay = \"5ms\"\n"
        )
    };
    let load = |t: &str| crate::scenario::load_link(t, "x.toml", None, "l").unwrap();
    assert_eq!(
        load(&text("sample_interval = \"250ms\"")).sample_interval,
        Dur::from_millis(250)
    );
    assert_eq!(
        load(&text("")).sample_interval,
        hetpath_sim::scenario::DEFAULT_SAMPLE_INTERVAL
    );
    assert_eq!(load(&text("")).name, "l");
}

/// An Ethernet frame: two MAC addresses, `ethertype`, then `ip` bytes of payload whose
/// first four carry `i`.
fn frame(i: u32, ethertype: u16, ip: usize) -> Vec<u8> {
    let mut f = vec![0xaau8; 12];
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(&packet(i, ip));
    f
}

#[test]
fn ethernet_frames_are_sized_and_captured_by_their_ip_packet_and_forwarded_whole() {
    let mut e = link(1000);
    e.set_link_header(14);
    // 1264-byte frames carry 1250-byte IP packets: 1 ms each at 10 Mbit/s, as in TUN mode.
    for i in 0..10 {
        e.handle_datagram(Time::ZERO, Dir::Ab, &frame(i, 0x0800, 1250));
    }
    // An ARP frame (28 bytes behind the header) and an IPv6 one cross too.
    e.handle_datagram(Time::ZERO, Dir::Ab, &frame(10, 0x0806, 28));
    e.handle_datagram(Time::ZERO, Dir::Ab, &frame(11, 0x86dd, 1250));
    let out = drain(&mut e, |_| 0);
    assert_eq!(out.len(), 12);
    for (k, (t, d, bytes)) in out.iter().enumerate().take(10) {
        assert_eq!(*d, Dir::Ab);
        assert_eq!(
            *bytes,
            frame(k as u32, 0x0800, 1250),
            "the frame leaves whole"
        );
        assert_eq!(
            t.0,
            (k as u64 + 1) * MS + 20 * MS,
            "serialised by its IP size"
        );
    }
    assert_eq!(out[10].2, frame(10, 0x0806, 28));
    // 28 bytes take 22.4 us after the tenth packet.
    assert_eq!(out[10].0 .0, 10 * MS + 22_400 + 20 * MS);
    let rec = e.observer();
    let sizes: Vec<u32> = rec.fates.iter().map(|f| f.bytes).collect();
    assert_eq!(sizes[..10], [1250; 10]);
    assert_eq!(sizes[10..], [28, 1250]);
    // The capture holds IP packets alone: the ARP frame is not in it.
    assert_eq!(rec.started.len(), 11);
    assert!(rec.started.iter().all(|(_, _, b)| b.len() == 1250));
    assert_eq!(rec.started[0].2, packet(0, 1250));
    assert_eq!(e.stats(Dir::Ab).tx_bytes, 11 * 1250 + 28);
}

#[test]
fn a_vlan_tagged_frame_is_sized_and_captured_without_its_tag() {
    let mut e = link(10);
    e.set_link_header(14);
    let mut f = vec![0xaau8; 12];
    f.extend_from_slice(&[0x81, 0x00, 0x00, 0x64, 0x08, 0x00]); // VLAN 100, then IPv4
    f.extend_from_slice(&packet(7, 1250));
    e.handle_datagram(Time::ZERO, Dir::Ba, &f);
    let out = drain(&mut e, |_| 0);
    assert_eq!(out[0].2, f, "forwarded with its tag");
    assert_eq!(out[0].0 .0, MS + 20 * MS, "1250 bytes at 10 Mbit/s");
    let rec = e.observer();
    assert_eq!(rec.fates[0].bytes, 1250);
    assert_eq!(rec.started[0].2, packet(7, 1250));
}

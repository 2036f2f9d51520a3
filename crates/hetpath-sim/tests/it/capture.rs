//! Captures read back as Wireshark reads them: the window field, scaled by the shift its
//! sender announced in its SYN, is that sender's real window, also where a split PEP's
//! legs announce other shifts than the flow's end hosts.

use hetpath_proto::packet::TcpFlags;
use hetpath_proto::wire::{PacketRepr, PcapReader};
use hetpath_proto::Addr;
use hetpath_sim::sim::{DirId, Simulation};
use hetpath_sim::{capture, load};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// lan -- gw == sat == ground -- server, a PEP at each end of the satellite hop. The end
/// hosts' 16 MB buffers announce shift 9; the PEP legs' 6 MB buffers announce 7.
const SCENARIO: &str = r#"
[scenario]
name = "pep-capture"
duration = "30s"
stop_when_done = true
[tcp]
recv_buffer = "16MB"
[[node]]
name = "lan"
[[node]]
name = "gw"
[[node]]
name = "ground"
[[node]]
name = "server"
[[link]]
name = "lan"
a = "lan"
b = "gw"
rate = "100Mbps"
delay = "1ms"
[[link]]
name = "sat"
a = "gw"
b = "ground"
rate = "10Mbps"
delay = "250ms"
[[link]]
name = "wan"
a = "ground"
b = "server"
rate = "100Mbps"
delay = "1ms"
[[flow]]
name = "f"
from = "lan"
to = "server"
size = "2MB"
[[agent]]
kind = "split-pep"
node = "gw"
cc = "hybla"
[[agent]]
kind = "split-pep"
node = "ground"
cc = "hybla"
"#;

fn sim() -> Simulation {
    load(SCENARIO, "pep-capture.toml", None).unwrap()
}

/// The sat link's gw -> ground and ground -> gw directions.
const SAT: [DirId; 2] = [DirId(2), DirId(3)];

#[test]
fn the_window_field_decodes_to_the_senders_real_window() {
    // First run: the real (unscaled) window of every TCP packet on the satellite hop.
    let mut first = sim();
    let real: Arc<Mutex<Vec<Vec<u64>>>> = Arc::new(Mutex::new(vec![Vec::new(); 2]));
    for (k, d) in SAT.into_iter().enumerate() {
        let tap = real.clone();
        first.dir_mut(d).capture = Some(Box::new(move |_, f| {
            if let Some(s) = f.packet.as_tcp() {
                tap.lock().unwrap()[k].push(s.window);
            }
        }));
    }
    assert!(first.run(&mut |_, _| true));
    // Second run, identical: the captures.
    let dir = scratch("pep");
    let mut second = sim();
    let files = capture::attach(&mut second, &dir).unwrap();
    assert!(second.run(&mut |_, _| true));
    let paths = files.finish().unwrap();
    let real = real.lock().unwrap();
    let mut checked = 0;
    for (k, d) in SAT.into_iter().enumerate() {
        let name = capture::file_name(&second, d);
        let path = paths.iter().find(|p| p.ends_with(&name)).unwrap();
        let bytes = std::fs::read(path).unwrap();
        // Each sender's shift, from the SYN it sent (RFC 7323 section 2.2).
        let mut shift: HashMap<(Addr, u16), u8> = HashMap::new();
        let records = PcapReader::new(&bytes).unwrap().map(Result::unwrap);
        for (i, rec) in records.enumerate() {
            let p = PacketRepr::parse(rec.data).unwrap();
            let tcp = p.tcp.expect("only TCP crosses the hop");
            let from = (p.ip.src, tcp.src_port);
            if tcp.flags.contains(TcpFlags::SYN) {
                shift.insert(from, tcp.options.window_scale.unwrap_or(0));
                continue;
            }
            let s = shift[&from];
            let want = real[k][i];
            assert_eq!(
                (tcp.window as u64) << s,
                (want >> s << s).min(65_535 << s),
                "{name} packet {i}: shift {s}"
            );
            checked += 1;
        }
        // The PEP legs announced their own shift, not the end hosts'.
        assert!(shift.values().all(|&s| s == 7), "{shift:?}");
    }
    assert!(checked > 1000);
    std::fs::remove_dir_all(&dir).ok();
}

/// A line of three nodes whose names (and link names) sanitise to the same text: `λ`,
/// `μ` and `ν` are all one non-Latin character, and `x/y` and `x_y` differ only in a
/// character a file name cannot hold.
const ALIKE: &str = r#"
[scenario]
name = "alike"
duration = "5s"
stop_when_done = true
[[node]]
name = "λ"
[[node]]
name = "μ"
[[node]]
name = "ν"
[[link]]
name = "x/y"
a = "λ"
b = "μ"
rate = "10Mbps"
delay = "5ms"
[[link]]
name = "x_y"
a = "μ"
b = "ν"
rate = "10Mbps"
delay = "5ms"
[[flow]]
name = "f"
from = "λ"
to = "ν"
size = "200KB"
"#;

fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hetpath-capture-{tag}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    dir
}

#[test]
fn names_that_sanitise_alike_never_share_a_file() {
    let mut sim = load(ALIKE, "alike.toml", None).unwrap();
    let dir = scratch("alike");
    let files = capture::attach(&mut sim, &dir).unwrap();
    assert!(sim.run(&mut |_, _| true));
    let paths = files.finish().unwrap();
    let dirs: Vec<DirId> = sim.dirs().map(|(d, _)| d).collect();
    assert_eq!(paths.len(), dirs.len());
    let mut names: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names.dedup();
    assert_eq!(
        names.len(),
        dirs.len(),
        "two directions share a file: {names:?}"
    );
    assert_eq!(
        names,
        [
            "00_x_y__-_.pcap",
            "01_x_y__-_.pcap",
            "02_x_y__-_.pcap",
            "03_x_y__-_.pcap"
        ]
    );
    // Every file is a whole capture holding exactly its own direction's packets.
    for d in dirs {
        let name = capture::file_name(&sim, d);
        let path = paths.iter().find(|p| p.ends_with(&name)).unwrap();
        assert_eq!(path.parent(), Some(dir.as_path()));
        let bytes = std::fs::read(path).unwrap();
        let mut n = 0u64;
        for r in PcapReader::new(&bytes).unwrap() {
            PacketRepr::parse(r.unwrap().data).unwrap();
            n += 1;
        }
        assert_eq!(n, sim.dir(d).stats.tx_packets, "{name}");
        assert!(n > 0, "{name}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_existing_capture_file_is_an_error_naming_it() {
    let dir = scratch("exists");
    let mut first = load(ALIKE, "alike.toml", None).unwrap();
    capture::attach(&mut first, &dir).unwrap().finish().unwrap();
    let mut second = load(ALIKE, "alike.toml", None).unwrap();
    let e = capture::attach(&mut second, &dir)
        .err()
        .expect("overwrote a capture");
    let msg = e.to_string();
    assert!(
        msg.contains("00_x_y__-_.pcap") && msg.contains("exists"),
        "{msg}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn long_names_still_make_a_file_name_a_file_system_takes() {
    let long = "n".repeat(300);
    let text = ALIKE.replace("\"λ\"", &format!("\"{long}\""));
    let mut sim = load(&text, "long.toml", None).unwrap();
    let dir = scratch("long");
    let paths = capture::attach(&mut sim, &dir).unwrap().finish().unwrap();
    assert_eq!(paths.len(), 4);
    for p in &paths {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.len() < 255, "{name}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

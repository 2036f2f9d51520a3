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
    let dir = std::env::temp_dir().join(format!("hetpath-capture-{}", std::process::id()));
    let mut second = sim();
    let files = capture::attach(&mut second, &dir).unwrap();
    assert!(second.run(&mut |_, _| true));
    let paths = files.finish().unwrap();
    let real = real.lock().unwrap();
    let mut checked = 0;
    for (k, d) in SAT.into_iter().enumerate() {
        let link = &second.dir(d).params;
        let name = capture::file_name(
            &link.name,
            second.node_name(link.from),
            second.node_name(link.to),
        );
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

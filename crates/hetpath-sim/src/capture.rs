//! Packet capture: one pcap file per link direction, fed by the links' taps. The files
//! are opened here, outside the engine; the engine only calls the tap.

use crate::sim::Simulation;
use hetpath_proto::wire::{PcapWriter, WireCtx};
use hetpath_proto::{Addr, Packet, Time};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

type Writer = Arc<Mutex<(PcapWriter<BufWriter<File>>, Option<String>)>>;

/// The open capture files of a run; call `finish` after the run to flush them.
pub struct Captures {
    files: Vec<(PathBuf, Writer)>,
}

/// File name of a link direction's capture: `<link>_<from>-<to>.pcap`.
pub fn file_name(link: &str, from: &str, to: &str) -> String {
    let clean = |s: &str| {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.+".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>()
    };
    format!("{}_{}-{}.pcap", clean(link), clean(from), clean(to))
}

/// Creates `dir` and attaches a pcap writer to every link direction of `sim`.
pub fn attach(sim: &mut Simulation, dir: &Path) -> io::Result<Captures> {
    std::fs::create_dir_all(dir)?;
    let scales: Arc<HashMap<(Addr, u16), u8>> = Arc::new(sim.window_scales());
    let mut files = Vec::new();
    for i in 0..sim.links().len() {
        let l = &sim.links()[i].params;
        let path = dir.join(file_name(
            &l.name,
            sim.node_name(l.from),
            sim.node_name(l.to),
        ));
        let w = PcapWriter::new(BufWriter::new(File::create(&path)?))?;
        let writer: Writer = Arc::new(Mutex::new((w, None)));
        let (tap, scales) = (writer.clone(), scales.clone());
        sim.link_mut(i).capture = Some(Box::new(move |t: Time, p: &Packet| {
            let wscale = p
                .as_tcp()
                .and_then(|s| scales.get(&(p.ip.src, s.src_port)))
                .copied()
                .unwrap_or(0);
            let mut g = tap.lock().unwrap_or_else(|e| e.into_inner());
            if g.1.is_none() {
                if let Err(e) = g.0.write_packet(t, p, &WireCtx::new(0, 0, wscale)) {
                    g.1 = Some(e.to_string());
                }
            }
        }));
        files.push((path, writer));
    }
    Ok(Captures { files })
}

impl Captures {
    /// Flushes every file; the first write error (with its file) is returned.
    pub fn finish(self) -> Result<Vec<PathBuf>, String> {
        let mut paths = Vec::new();
        for (path, w) in self.files {
            let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(e) = g.1.take() {
                return Err(format!("{}: {e}", path.display()));
            }
            g.0.flush()
                .map_err(|e| format!("{}: {e}", path.display()))?;
            paths.push(path);
        }
        Ok(paths)
    }
}

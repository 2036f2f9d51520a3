//! Packet capture: one pcap file per link direction, fed by the links' taps. The files
//! are opened here, outside the engine; the engine only calls the tap. Each TCP segment
//! carries the window shift its sender applies, so the window field is written as that
//! sender (a host, or a PEP's leg) would write it.

use crate::link::Frame;
use crate::sim::Simulation;
use hetpath_proto::wire::{PcapWriter, WireCtx};
use hetpath_proto::Time;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

type Writer = Arc<Mutex<(PcapWriter<BufWriter<File>>, Option<String>)>>;

/// The open capture files of a run; call `finish` after the run to flush them.
pub struct Captures {
    files: Vec<(PathBuf, Writer)>,
}

/// File name of a link direction's capture (stub).
pub fn file_name(sim: &Simulation, d: crate::sim::DirId) -> String {
    let l = &sim.dir(d).params;
    old_name(&l.name, sim.node_name(l.from), sim.node_name(l.to))
}

fn old_name(link: &str, from: &str, to: &str) -> String {
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

/// The encoding context of one captured packet.
fn wire_ctx(f: &Frame) -> WireCtx {
    let wscale = f.packet.as_tcp().map_or(0, |s| s.wscale);
    WireCtx::new(0, 0, wscale).with_ident(f.uid as u16)
}

/// Creates `dir` and attaches a pcap writer to every link direction of `sim`.
pub fn attach(sim: &mut Simulation, dir: &Path) -> io::Result<Captures> {
    std::fs::create_dir_all(dir)?;
    let mut files = Vec::new();
    let dirs: Vec<_> = sim.dirs().map(|(d, l)| (d, l.params.clone())).collect();
    for (d, l) in dirs {
        let path = dir.join(old_name(&l.name, sim.node_name(l.from), sim.node_name(l.to)));
        let w = PcapWriter::new(BufWriter::new(File::create(&path)?))?;
        let writer: Writer = Arc::new(Mutex::new((w, None)));
        let tap = writer.clone();
        sim.dir_mut(d).capture = Some(Box::new(move |t: Time, f: &Frame| {
            let mut g = tap.lock().unwrap_or_else(|e| e.into_inner());
            if g.1.is_none() {
                if let Err(e) = g.0.write_packet(t, &f.packet, &wire_ctx(f)) {
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

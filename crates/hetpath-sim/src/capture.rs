//! Packet capture: one pcap file per link direction, fed by the links' taps. The files
//! are opened here, outside the engine; the engine only calls the tap. Each TCP segment
//! carries the window shift its sender applies, so the window field is written as that
//! sender (a host, or a PEP's leg) would write it. `PcapFile` is one such file, also
//! used by the live emulator (`hetpath-live`'s `output.rs`) for real packets' bytes.

use crate::link::Frame;
use crate::sim::{DirId, Simulation};
use hetpath_proto::packet::Packet;
use hetpath_proto::wire::{PcapError, PcapWriter, WireCtx};
use hetpath_proto::Time;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

type Writer = Arc<Mutex<PcapFile>>;

/// One capture file being written. A tap cannot stop the run for a write error, so the
/// first one is kept (and later packets skipped) until `finish` reports it with the file.
pub struct PcapFile {
    path: PathBuf,
    w: PcapWriter<BufWriter<File>>,
    error: Option<String>,
}

impl PcapFile {
    /// Creates `path` with the pcap header. A file is never overwritten: one that already
    /// exists is an error; every error names the file.
    pub fn create(path: PathBuf) -> io::Result<PcapFile> {
        let named = |e: io::Error| {
            let what = if e.kind() == io::ErrorKind::AlreadyExists {
                "exists; a capture is never overwritten".to_string()
            } else {
                e.to_string()
            };
            io::Error::new(e.kind(), format!("{}: {what}", path.display()))
        };
        let file = File::create_new(&path).map_err(named)?;
        let w = PcapWriter::new(BufWriter::with_capacity(1 << 16, file)).map_err(named)?;
        Ok(PcapFile {
            path,
            w,
            error: None,
        })
    }

    /// Writes a simulator packet seen at `t`, encoded with `ctx`.
    pub fn write_packet(&mut self, t: Time, p: &Packet, ctx: &WireCtx) {
        if self.error.is_none() {
            let r = self.w.write_packet(t, p, ctx);
            self.keep(r);
        }
    }

    /// Writes a packet's bytes, as read from a real interface, seen at `t`.
    pub fn write_bytes(&mut self, t: Time, bytes: &[u8]) {
        if self.error.is_none() {
            let r = self.w.write_bytes(t, bytes);
            self.keep(r);
        }
    }

    fn keep(&mut self, r: Result<(), PcapError>) {
        if let Err(e) = r {
            self.error = Some(e.to_string());
        }
    }

    /// Flushes the file; the first write error, with the file's name.
    pub fn finish(&mut self) -> Result<&Path, String> {
        if let Some(e) = self.error.take() {
            return Err(format!("{}: {e}", self.path.display()));
        }
        self.w
            .flush()
            .map_err(|e| format!("{}: {e}", self.path.display()))?;
        Ok(&self.path)
    }
}

/// The open capture files of a run; call `finish` after the run to flush them.
pub struct Captures {
    files: Vec<Writer>,
}

/// File name of link direction `d`'s capture: `<index>_<link>_<from>-<to>.pcap`.
///
/// The index is the direction's (`DirId`), zero-padded to at least two digits and to the
/// width of the largest index, so that names sort in direction order. It alone makes the
/// name unique: the link and node names only help a reader, with every character
/// outside `A-Z a-z 0-9 - _ . +` replaced by `_` (so `λ` and `μ`, or `a/b` and `a_b`,
/// read alike, and no name can leave the directory), each cut to 60 characters.
pub fn file_name(sim: &Simulation, d: DirId) -> String {
    named(sim, d, index_width(sim))
}

/// The digits of the largest direction index, at least 2.
fn index_width(sim: &Simulation) -> usize {
    let last = sim.dirs().count().saturating_sub(1);
    last.to_string().len().max(2)
}

/// `file_name` with the index width computed once per run.
fn named(sim: &Simulation, d: DirId, width: usize) -> String {
    let l = &sim.dir(d).params;
    // At most 60 characters of each name, so that a file name stays under the 255
    // bytes file systems allow; the index keeps it unique.
    let clean = |s: &str| {
        s.chars()
            .take(60)
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.+".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>()
    };
    format!(
        "{:0width$}_{}_{}-{}.pcap",
        d.index(),
        clean(&l.name),
        clean(sim.node_name(l.from)),
        clean(sim.node_name(l.to)),
    )
}

/// The encoding context of one captured packet.
fn wire_ctx(f: &Frame) -> WireCtx {
    let wscale = f.packet.as_tcp().map_or(0, |s| s.wscale);
    WireCtx::new(0, 0, wscale).with_ident(f.uid as u16)
}

/// Creates `dir` and attaches a pcap writer to every link direction of `sim`. A file is
/// never overwritten: one that already exists is an error naming it.
pub fn attach(sim: &mut Simulation, dir: &Path) -> io::Result<Captures> {
    std::fs::create_dir_all(dir)?;
    let mut files = Vec::new();
    let width = index_width(sim);
    let paths: Vec<(DirId, PathBuf)> = sim
        .dirs()
        .map(|(d, _)| (d, dir.join(named(sim, d, width))))
        .collect();
    // Look before creating any, so that a clash leaves no new files behind; opening
    // with `create_new` still refuses a file that appears in between.
    if let Some((_, p)) = paths.iter().find(|(_, p)| p.symlink_metadata().is_ok()) {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{}: exists; a capture is never overwritten", p.display()),
        ));
    }
    for (d, path) in paths {
        let writer: Writer = Arc::new(Mutex::new(PcapFile::create(path)?));
        let tap = writer.clone();
        sim.dir_mut(d).capture = Some(Box::new(move |t: Time, f: &Frame| {
            let mut g = tap.lock().unwrap_or_else(|e| e.into_inner());
            g.write_packet(t, &f.packet, &wire_ctx(f));
        }));
        files.push(writer);
    }
    Ok(Captures { files })
}

impl Captures {
    /// Flushes every file; the first write error (with its file) is returned.
    pub fn finish(self) -> Result<Vec<PathBuf>, String> {
        let mut paths = Vec::new();
        for w in self.files {
            let mut g = w.lock().unwrap_or_else(|e| e.into_inner());
            paths.push(g.finish()?.to_path_buf());
        }
        Ok(paths)
    }
}

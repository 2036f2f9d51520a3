//! The files a live run leaves, written as the core reports (`Observer`):
//!
//! - one pcap per direction, named as `hetpath run --pcap` names them, each packet as
//!   its transmission starts (times from the emulator's start, as the simulator's);
//! - `fates.csv`: every packet read, in the order its fate was settled;
//! - `loss-ab.trace`, `loss-ba.trace`: the transmission indices the channel lost, one per
//!   line, a `trace` channel file (`channel = { model = "trace", file = ... }`) that
//!   replays the run's channel losses in the simulator;
//! - `summary.json` at the end: the two directions' counters as `hetpath run`'s `links`.

use crate::fate::{Dir, Fate, Observer, Outcome};
use hetpath_proto::wire::PcapWriter;
use hetpath_proto::Time;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Why an output file could not be written: the file and the error.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct OutputError {
    pub path: PathBuf,
    pub source: io::Error,
}

struct Out {
    path: PathBuf,
    w: BufWriter<File>,
}

fn create(path: PathBuf) -> Result<Out, OutputError> {
    match File::create(&path) {
        Ok(f) => Ok(Out {
            w: BufWriter::with_capacity(1 << 16, f),
            path,
        }),
        Err(source) => Err(OutputError { path, source }),
    }
}

/// The files of one run in a directory. Write errors are kept, not raised (the core
/// cannot stop for them): the first one is reported by `finish`.
pub struct Files {
    pcaps: Option<[(PathBuf, PcapWriter<BufWriter<File>>); 2]>,
    fates: Out,
    losses: [Out; 2],
    error: Option<OutputError>,
}

impl Files {
    /// Creates the files in `dir` (which must exist); `pcap_names` `None`: no capture.
    pub fn create(dir: &Path, pcap_names: Option<&[String; 2]>) -> Result<Files, OutputError> {
        let pcaps = match pcap_names {
            None => None,
            Some([ab, ba]) => {
                let open = |name: &String| {
                    let o = create(dir.join(name))?;
                    PcapWriter::new(o.w)
                        .map(|w| (o.path.clone(), w))
                        .map_err(|source| OutputError {
                            path: o.path,
                            source,
                        })
                };
                Some([open(ab)?, open(ba)?])
            }
        };
        let mut fates = create(dir.join("fates.csv"))?;
        let header = "dir,seq,transmission,bytes,entered_s,left_s,outcome\n";
        write(&mut fates, header.as_bytes())?;
        let mut losses = [
            create(dir.join("loss-ab.trace"))?,
            create(dir.join("loss-ba.trace"))?,
        ];
        for (o, d) in losses.iter_mut().zip(Dir::BOTH) {
            let text = format!(
                "# hetpath emulate: the transmission indices the channel lost on direction {}\n",
                d.name()
            );
            write(o, text.as_bytes())?;
        }
        Ok(Files {
            pcaps,
            fates,
            losses,
            error: None,
        })
    }

    fn keep(&mut self, r: Result<(), OutputError>) {
        if let (Err(e), None) = (r, &self.error) {
            self.error = Some(e);
        }
    }

    /// Flushes every file; the first write error of the run, if any.
    pub fn finish(mut self) -> Result<(), OutputError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for (path, w) in self.pcaps.iter_mut().flatten() {
            w.flush().map_err(|source| OutputError {
                path: path.clone(),
                source,
            })?;
        }
        for o in std::iter::once(&mut self.fates).chain(self.losses.iter_mut()) {
            o.w.flush().map_err(|source| OutputError {
                path: o.path.clone(),
                source,
            })?;
        }
        Ok(())
    }
}

fn write(o: &mut Out, bytes: &[u8]) -> Result<(), OutputError> {
    o.w.write_all(bytes).map_err(|source| OutputError {
        path: o.path.clone(),
        source,
    })
}

fn secs(t: Time) -> String {
    format!("{}.{:09}", t.0 / 1_000_000_000, t.0 % 1_000_000_000)
}

impl Observer for Files {
    fn started(&mut self, t: Time, dir: Dir, bytes: &[u8]) {
        if let Some(pcaps) = &mut self.pcaps {
            let (path, w) = &mut pcaps[dir.index()];
            let r = w.write_bytes(t, bytes).map_err(|e| OutputError {
                path: path.clone(),
                source: io::Error::other(e.to_string()),
            });
            self.keep(r);
        }
    }

    fn fate(&mut self, f: &Fate) {
        let line = format!(
            "{},{},{},{},{},{},{}\n",
            f.dir.name(),
            f.seq,
            f.transmission.map_or(String::new(), |i| i.to_string()),
            f.bytes,
            secs(f.entered),
            secs(f.left),
            f.outcome.name()
        );
        let r = write(&mut self.fates, line.as_bytes());
        self.keep(r);
        if f.outcome == Outcome::Channel {
            let i = f.transmission.expect("a channel loss was transmitted");
            let r = write(&mut self.losses[f.dir.index()], format!("{i}\n").as_bytes());
            self.keep(r);
        }
    }
}

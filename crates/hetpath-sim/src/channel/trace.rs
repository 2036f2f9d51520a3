//! `trace`: replays a recorded loss trace, with no randomness.
//!
//! Two kinds of trace:
//!  * lost packet indices (`lost = [3, 17]`): steps on transmissions. Transmissions on
//!    this link direction are counted from 0 (retransmissions count: the index is of the
//!    transmission, not of the segment); transmission i is lost iff i is listed.
//!  * bad time intervals (`bad = [["1s", "1.5s"]]`): steps on time. A packet is lost iff
//!    its transmission interval [start, start + duration) overlaps a bad interval
//!    [from, to) (a zero-length transmission: iff `start` lies in one).
//!
//! After the last listed loss the channel is perfect. `file = "trace.csv"` reads either
//! kind from a file (one index per line, or `start,end` in seconds per line, units such
//! as "1500ms" also accepted; blank lines and lines starting with `#` are skipped),
//! resolved against the scenario's directory when the spec is validated: `transmit`
//! never reads files. Indices are sorted and deduplicated, intervals sorted and merged,
//! so each transmission costs O(1) amortised (a cursor that only moves forward).

use super::*;
use crate::units::{Bytes, Duration};
use serde::Deserialize;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// `{ model = "trace", lost = [3, 17] }`, `{ model = "trace", bad = [["1s", "1.5s"]] }` or
/// `{ model = "trace", file = "loss.csv" }`: exactly one of the three keys.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// 0-based indices of the transmissions to lose.
    pub lost: Option<Vec<u64>>,
    /// Bad time intervals [start, end).
    pub bad: Option<Vec<(Duration, Duration)>>,
    /// A trace file, relative to the scenario file's directory.
    pub file: Option<String>,
    /// The largest trace file read, in bytes (default 1 GB).
    pub max_file_size: Option<Bytes>,
    /// The trace, loaded (and a file read) by `validate`.
    #[serde(skip)]
    loaded: OnceLock<Arc<TraceData>>,
}

impl PartialEq for TraceSpec {
    fn eq(&self, o: &Self) -> bool {
        (&self.lost, &self.bad, &self.file, self.max_file_size)
            == (&o.lost, &o.bad, &o.file, o.max_file_size)
    }
}

/// A normalised trace: sorted, deduplicated indices, or sorted, merged intervals (ns).
#[derive(Debug, Clone, PartialEq)]
pub enum TraceData {
    Lost(Vec<u64>),
    Bad(Vec<(u64, u64)>),
}

impl TraceData {
    fn lost(mut v: Vec<u64>) -> TraceData {
        v.sort_unstable();
        v.dedup();
        TraceData::Lost(v)
    }

    fn bad(mut v: Vec<(u64, u64)>) -> TraceData {
        v.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(v.len());
        for (a, b) in v {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        TraceData::Bad(merged)
    }
}

impl TraceSpec {
    /// A spec replaying the given lost transmission indices.
    pub fn with_lost(lost: Vec<u64>) -> TraceSpec {
        TraceSpec {
            lost: Some(lost),
            ..TraceSpec::default()
        }
    }

    pub(super) fn validate(&self, prefix: &str, base_dir: &Path) -> Result<(), ChannelError> {
        let data = self.load(prefix, base_dir)?;
        let _ = self.loaded.set(data); // a second validate keeps the first load
        Ok(())
    }

    /// Reads and normalises the trace (inline, or from `file` under `base_dir`).
    pub fn load(&self, prefix: &str, base_dir: &Path) -> Result<Arc<TraceData>, ChannelError> {
        if self.max_file_size.is_some() && self.file.is_none() {
            return Err(ChannelError::Shape {
                table: prefix.to_string(),
                what: "`max_file_size` applies only to a trace `file`",
            });
        }
        let data = match (&self.lost, &self.bad, &self.file) {
            (Some(v), None, None) => TraceData::lost(v.clone()),
            (None, Some(v), None) => {
                let mut ns = Vec::with_capacity(v.len());
                for (i, (a, b)) in v.iter().enumerate() {
                    let (a, b) = (a.0.as_nanos(), b.0.as_nanos());
                    if b <= a {
                        return Err(ChannelError::invalid(
                            format!("{prefix}.bad[{i}]"),
                            format!("[\"{}s\", \"{}s\"]", a as f64 * 1e-9, b as f64 * 1e-9),
                            "the end must be after the start",
                        ));
                    }
                    ns.push((a, b));
                }
                TraceData::bad(ns)
            }
            (None, None, Some(f)) => {
                let max = match self.max_file_size {
                    None => DEFAULT_MAX_FILE_SIZE,
                    Some(Bytes(0)) => {
                        return Err(ChannelError::invalid(
                            format!("{prefix}.max_file_size"),
                            "\"0B\"",
                            "expected a positive size",
                        ))
                    }
                    Some(Bytes(b)) => b,
                };
                read_file(&base_dir.join(f), max).map_err(|e| {
                    ChannelError::invalid(
                        format!("{prefix}.file"),
                        format!("\"{f}\""),
                        e.to_string(),
                    )
                })?
            }
            _ => {
                return Err(ChannelError::Shape {
                    table: prefix.to_string(),
                    what: "a trace needs exactly one of `lost`, `bad` and `file`",
                })
            }
        };
        Ok(Arc::new(data))
    }

    /// Builds the replay. Uses the trace `validate` loaded; an unvalidated inline trace
    /// is loaded here, an unvalidated file relative to the working directory (panics if
    /// that fails: validate first to get the error as a value).
    pub fn build(&self) -> Trace {
        let data = match self.loaded.get() {
            Some(d) => d.clone(),
            None => self
                .load("channel", Path::new("."))
                .unwrap_or_else(|e| panic!("unvalidated channel spec: {e}")),
        };
        Trace {
            data,
            next: 0,
            count: 0,
        }
    }
}

/// The default `max_file_size`.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1_000_000_000;

/// Why a trace file could not be read. No message quotes the file's content: a trace
/// path may name any file (`../../etc/passwd`), and its lines are not the user's to see
/// through an error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceFileError {
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
    /// A directory, a device, a FIFO or a socket: only regular files are read.
    #[error("{path} is not a regular file")]
    NotRegular { path: String },
    #[error("{path} is {len} bytes, above max_file_size ({max} bytes)")]
    TooLarge { path: String, len: u64, max: u64 },
    #[error("{path} is not UTF-8 text")]
    NotText { path: String },
    /// A bad line: `file:line: what`.
    #[error("{at}: {what}")]
    Line { at: String, what: &'static str },
}

/// Reads a regular file of at most `max` bytes. The type is checked before the file is
/// opened (opening a FIFO would block) and again on the open file.
fn read_regular(path: &Path, max: u64) -> Result<String, TraceFileError> {
    let p = || path.display().to_string();
    let cannot = |e: std::io::Error| TraceFileError::Read {
        path: p(),
        reason: e.to_string(),
    };
    let check = |m: std::fs::Metadata| {
        if !m.is_file() {
            Err(TraceFileError::NotRegular { path: p() })
        } else if m.len() > max {
            Err(TraceFileError::TooLarge {
                path: p(),
                len: m.len(),
                max,
            })
        } else {
            Ok(())
        }
    };
    check(std::fs::metadata(path).map_err(cannot)?)?;
    let file = std::fs::File::open(path).map_err(cannot)?;
    check(file.metadata().map_err(cannot)?)?;
    // A file that grows while it is read stops at one byte past the limit.
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, max.saturating_add(1)),
        &mut bytes,
    )
    .map_err(cannot)?;
    if bytes.len() as u64 > max {
        return Err(TraceFileError::TooLarge {
            path: p(),
            len: bytes.len() as u64,
            max,
        });
    }
    String::from_utf8(bytes).map_err(|_| TraceFileError::NotText { path: p() })
}

/// Parses a trace file: indices, or `start,end` pairs in seconds, one per line.
fn read_file(path: &Path, max: u64) -> Result<TraceData, TraceFileError> {
    let text = read_regular(path, max)?;
    let (mut lost, mut bad) = (Vec::new(), Vec::new());
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad_line = |what: &'static str| TraceFileError::Line {
            at: format!("{}:{}", path.display(), i + 1),
            what,
        };
        if let Some((a, b)) = line.split_once(',') {
            let (a, b) = (seconds(a).map_err(bad_line)?, seconds(b).map_err(bad_line)?);
            if b <= a {
                return Err(bad_line("the end must be after the start"));
            }
            bad.push((a, b));
        } else {
            let n = line.parse::<u64>().map_err(|_| {
                bad_line(
                    "neither a packet index (a whole number >= 0) nor a 'start,end' pair in seconds",
                )
            })?;
            lost.push(n);
        }
        if !lost.is_empty() && !bad.is_empty() {
            return Err(bad_line(
                "mixes packet indices and time intervals; use one kind per file",
            ));
        }
    }
    Ok(if bad.is_empty() {
        TraceData::lost(lost)
    } else {
        TraceData::bad(bad)
    })
}

/// A time in a trace file, in ns: seconds ("1.5") or with a unit ("1500ms"); the error
/// says why not, without quoting the text.
fn seconds(s: &str) -> Result<u64, &'static str> {
    const TOO_LARGE: &str = "a time too large (above 2^64 ns, about 584 years)";
    let s = s.trim();
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => {
            if v * 1e9 >= u64::MAX as f64 {
                Err(TOO_LARGE)
            } else {
                Ok(Dur::from_secs_f64(v).as_nanos())
            }
        }
        Ok(_) => Err("not a time (expected seconds >= 0)"),
        Err(_) => match s.parse::<Duration>() {
            Ok(d) => Ok(d.0.as_nanos()),
            Err(crate::units::UnitError::TooLarge { .. }) => Err(TOO_LARGE),
            Err(_) => Err("not a time in seconds (or with a unit such as '1500ms')"),
        },
    }
}

/// The running replay: see the module docs.
#[derive(Debug, Clone)]
pub struct Trace {
    data: Arc<TraceData>,
    /// Cursor: first index or interval not yet behind us.
    next: usize,
    /// Transmissions so far.
    count: u64,
}

impl Channel for Trace {
    #[inline]
    fn transmit(&mut self, start: Time, duration: Dur, _: u32) -> bool {
        match &*self.data {
            TraceData::Lost(v) => {
                let i = self.count;
                self.count += 1;
                while self.next < v.len() && v[self.next] < i {
                    self.next += 1;
                }
                v.get(self.next) != Some(&i)
            }
            TraceData::Bad(v) => {
                let s = start.0;
                while self.next < v.len() && v[self.next].1 <= s {
                    self.next += 1;
                }
                // v[next] ends after `start`; it overlaps iff it begins before the end
                // (a zero-length packet is the instant `start`).
                let end = s.saturating_add(duration.0.max(1));
                v.get(self.next).is_none_or(|&(a, _)| a >= end)
            }
        }
    }
    fn fork(&self) -> Option<Box<dyn Channel>> {
        Some(Box::new(self.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lost_set(ch: &mut dyn Channel, n: u64) -> Vec<u64> {
        (0..n)
            .filter(|&i| !ch.transmit(Time(i * 1_000_000), Dur(500_000), 100))
            .collect()
    }

    #[test]
    fn trace_replays_indices_exactly() {
        let s = TraceSpec::with_lost(vec![17, 3, 3, 0, 99]);
        s.validate("channel", Path::new(".")).unwrap();
        assert_eq!(lost_set(&mut s.build(), 100), vec![0, 3, 17, 99]);
        assert_eq!(lost_set(&mut s.build(), 50), vec![0, 3, 17]);
        // A fork continues from the same transmission count.
        let mut m = s.build();
        lost_set(&mut m, 10);
        assert_eq!(
            lost_set(m.fork().unwrap().as_mut(), 90),
            lost_set(&mut m, 90)
        );
    }

    #[test]
    fn trace_replays_intervals_by_overlap() {
        let ms = |a: u64, b: u64| (Duration(Dur::from_millis(a)), Duration(Dur::from_millis(b)));
        let s = TraceSpec {
            bad: Some(vec![ms(10, 20), ms(15, 25), ms(40, 41)]),
            ..TraceSpec::default()
        };
        s.validate("channel", Path::new(".")).unwrap();
        let mut m = s.build();
        let mut at = |start_ms: f64, dur_ms: f64| {
            m.transmit(
                Time::from_secs_f64(start_ms * 1e-3),
                Dur::from_secs_f64(dur_ms * 1e-3),
                1,
            )
        };
        assert!(at(0.0, 9.0));
        assert!(!at(9.5, 1.0), "ends inside [10, 25)");
        assert!(!at(24.0, 0.0), "instant inside the merged interval");
        assert!(at(25.0, 14.0), "[25, 39) touches nothing");
        assert!(!at(39.5, 0.6), "straddles [40, 41)");
        assert!(at(41.0, 0.0), "the end is exclusive");
        assert!(at(1e6, 1.0));
    }

    #[test]
    fn trace_reads_files_relative_to_base_dir() {
        let dir = std::env::temp_dir().join(format!("hetpath-trace-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("idx.csv"), "# lost transmissions\n2\n\n5\n").unwrap();
        std::fs::write(
            dir.join("bad.csv"),
            "# start,end in s\n0.001, 0.002\n3ms,4ms\n",
        )
        .unwrap();
        std::fs::write(dir.join("junk.csv"), "1\n2\nthree\n").unwrap();
        std::fs::write(dir.join("mixed.csv"), "1\n0.5,0.6\n").unwrap();
        std::fs::write(dir.join("back.csv"), "# c\n2,1\n").unwrap();
        let file = |f: &str| TraceSpec {
            file: Some(f.into()),
            ..TraceSpec::default()
        };

        let s = file("idx.csv");
        s.validate("channel", &dir).unwrap();
        assert_eq!(lost_set(&mut s.build(), 10), vec![2, 5]);
        let s = file("bad.csv");
        s.validate("channel", &dir).unwrap();
        assert_eq!(lost_set(&mut s.build(), 10), vec![1, 3]);

        let err = |f: &str| file(f).validate("channel", &dir).unwrap_err().to_string();
        let e = err("junk.csv");
        assert!(e.contains("junk.csv:3") && !e.contains("three"), "{e}");
        assert!(e.starts_with("channel.file = \"junk.csv\""), "{e}");
        assert!(
            err("mixed.csv").contains("mixed.csv:2: mixes"),
            "{}",
            err("mixed.csv")
        );
        assert!(
            err("back.csv").contains("back.csv:2"),
            "{}",
            err("back.csv")
        );
        let e = err("missing.csv");
        assert!(
            e.contains("cannot read") && e.contains("missing.csv"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Reads `file` from `dir` on another thread; `None` if that did not return in 10 s.
    fn validate_within(dir: &Path, spec: TraceSpec) -> Option<Result<(), String>> {
        let dir = dir.to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(spec.validate("channel", &dir).map_err(|e| e.to_string()));
        });
        rx.recv_timeout(std::time::Duration::from_secs(10)).ok()
    }

    #[test]
    fn trace_files_must_be_regular_and_small_and_are_never_echoed() {
        let dir =
            std::env::temp_dir().join(format!("hetpath-trace-hostile-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        let file = |f: &str| TraceSpec {
            file: Some(f.into()),
            ..TraceSpec::default()
        };
        let err = |spec: TraceSpec| {
            validate_within(&dir, spec)
                .expect("reading the trace blocked")
                .unwrap_err()
        };
        // Content is never echoed: a password file's first line, a bad time, a mix.
        std::fs::write(dir.join("passwd"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
        std::fs::write(dir.join("times.csv"), "1,2\nsecret-token,3\n").unwrap();
        std::fs::write(dir.join("back.csv"), "7s,1s\n").unwrap();
        for (f, at) in [
            ("passwd", "passwd:1"),
            ("times.csv", "times.csv:2"),
            ("back.csv", "back.csv:1"),
        ] {
            let e = err(file(f));
            assert!(e.contains(at), "{e}");
            for secret in ["root:x", "/bin/bash", "secret-token", "7s,1s"] {
                assert!(!e.contains(secret), "echoes the file: {e}");
            }
        }
        // Times beyond 2^64 ns are an error, not a clamp.
        std::fs::write(dir.join("huge.csv"), "1,1e30\n").unwrap();
        let e = err(file("huge.csv"));
        assert!(e.contains("huge.csv:1") && e.contains("too large"), "{e}");
        // Only regular files: not a directory, a device or a FIFO (which must not block).
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        for f in [".", "/dev/zero", "fifo"] {
            let e = err(file(f));
            assert!(e.contains("not a regular file"), "{f}: {e}");
        }
        // A size limit, `max_file_size` (default 1 GB).
        std::fs::write(dir.join("big.csv"), "1\n".repeat(50)).unwrap();
        let limited = |max: &str| TraceSpec {
            max_file_size: Some(max.parse().unwrap()),
            ..file("big.csv")
        };
        let e = err(limited("99B"));
        assert!(
            e.contains("max_file_size") && e.contains("100 bytes"),
            "{e}"
        );
        assert!(validate_within(&dir, limited("100B")).unwrap().is_ok());
        assert!(validate_within(&dir, file("big.csv")).unwrap().is_ok());
        assert_eq!(DEFAULT_MAX_FILE_SIZE, 1_000_000_000);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn trace_empty_is_perfect() {
        let s = TraceSpec::with_lost(vec![]);
        assert!(lost_set(&mut s.build(), 100).is_empty());
    }
}

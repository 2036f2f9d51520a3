//! The files a live run leaves, written as the core reports (`Observer`):
//!
//! - one pcap per direction, named as `hetpath run --pcap` names them, each packet as
//!   its transmission starts (times from the emulator's start, as the simulator's), in
//!   the simulator's own capture file (`hetpath_sim::capture::PcapFile`);
//! - `fates.csv`: every packet read, in the order its fate was settled;
//! - `loss-ab.trace`, `loss-ba.trace`: the transmission indices the channel lost, one per
//!   line, a `trace` channel file (`channel = { model = "trace", file = ... }`) that
//!   replays the run's channel losses in the simulator;
//! - `link_series.csv`: `hetpath run`'s link series, its columns
//!   (`LinkSeries::columns`) in its order, one row per direction per sampling time;
//! - `flow_series.csv`: `hetpath run`'s flow series for the kernel's connections
//!   (`flow_row`), written by `sys::flow_sampler`;
//! - `summary.json` at the end (`main.rs`): the directions' counters as `hetpath run`'s
//!   `links`.

use crate::fate::{Dir, Fate, LinkSample, Observer, Outcome};
use crate::tcp_diag::TcpSample;
use hetpath_proto::Time;
use hetpath_sim::capture::PcapFile;
use hetpath_sim::results::{sample_time, FlowSeries, LinkSeries};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Why an output file could not be written, naming the file.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OutputError(String);

impl OutputError {
    pub(crate) fn new(message: String) -> OutputError {
        OutputError(message)
    }
    fn at(path: &Path, e: io::Error) -> OutputError {
        OutputError(format!("{}: {e}", path.display()))
    }
}

/// A file being written, with its path for errors.
pub struct Out {
    path: PathBuf,
    w: BufWriter<File>,
}

impl Out {
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), OutputError> {
        self.w
            .write_all(bytes)
            .map_err(|e| OutputError::at(&self.path, e))
    }
    pub fn flush(&mut self) -> Result<(), OutputError> {
        self.w.flush().map_err(|e| OutputError::at(&self.path, e))
    }
}

pub fn create(path: PathBuf) -> Result<Out, OutputError> {
    match File::create(&path) {
        Ok(f) => Ok(Out {
            w: BufWriter::with_capacity(1 << 16, f),
            path,
        }),
        Err(e) => Err(OutputError::at(&path, e)),
    }
}

/// What names a link direction's rows in the series: the link, its from and to nodes.
#[derive(Clone, Debug)]
pub struct SeriesNames {
    pub link: String,
    /// Per direction, a -> b first: (from, to).
    pub ends: [(String, String); 2],
}

/// The files of one run in a directory. Write errors are kept, not raised (the core
/// cannot stop for them): the first one is reported by `finish`.
pub struct Files {
    pcaps: Option<[PcapFile; 2]>,
    fates: Out,
    losses: [Out; 2],
    /// The series file and, per direction, its link, from and to fields.
    series: Option<(Out, [[String; 3]; 2])>,
    error: Option<OutputError>,
}

impl Files {
    /// Creates the files in `dir` (which must exist); `pcap_names` `None`: no capture;
    /// `series` `None`: no link series. A capture file is never overwritten (as
    /// `hetpath run --pcap`'s); the others are.
    pub fn create(
        dir: &Path,
        pcap_names: Option<&[String; 2]>,
        series: Option<&SeriesNames>,
    ) -> Result<Files, OutputError> {
        let pcaps = match pcap_names {
            None => None,
            Some([ab, ba]) => {
                // PcapFile's errors already name the file.
                let open = |name: &String| {
                    PcapFile::create(dir.join(name)).map_err(|e| OutputError(e.to_string()))
                };
                Some([open(ab)?, open(ba)?])
            }
        };
        let mut fates = create(dir.join("fates.csv"))?;
        let header = "dir,seq,transmission,bytes,entered_s,left_s,outcome\n";
        fates.write(header.as_bytes())?;
        let mut losses = [
            create(dir.join("loss-ab.trace"))?,
            create(dir.join("loss-ba.trace"))?,
        ];
        for (o, d) in losses.iter_mut().zip(Dir::BOTH) {
            let text = format!(
                "# hetpath emulate: the transmission indices the channel lost on direction {}\n",
                d.name()
            );
            o.write(text.as_bytes())?;
        }
        let series = match series {
            None => None,
            Some(names) => {
                let mut o = create(dir.join("link_series.csv"))?;
                let header: Vec<&str> = LinkSeries::default()
                    .columns()
                    .iter()
                    .map(|(name, _)| *name)
                    .collect();
                o.write(format!("{}\n", header.join(",")).as_bytes())?;
                let fields = names
                    .ends
                    .clone()
                    .map(|(from, to)| [csv_field(&names.link), csv_field(&from), csv_field(&to)]);
                Some((o, fields))
            }
        };
        Ok(Files {
            pcaps,
            fates,
            losses,
            series,
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
        for p in self.pcaps.iter_mut().flatten() {
            p.finish().map_err(OutputError)?;
        }
        let series = self.series.iter_mut().map(|s| &mut s.0);
        for o in std::iter::once(&mut self.fates)
            .chain(self.losses.iter_mut())
            .chain(series)
        {
            o.flush()?;
        }
        Ok(())
    }
}

fn secs(t: Time) -> String {
    format!("{}.{:09}", t.0 / 1_000_000_000, t.0 % 1_000_000_000)
}

/// A CSV field as pandas' `to_csv` writes it: quoted only if it holds a comma, a quote
/// or a line break, with quotes doubled.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One row of the link series, in `LinkSeries::columns`'s order. A column this core
/// cannot produce would be left empty (NaN to pandas); `output_tests` keeps that set
/// empty, so a new column of the simulator's is a decision here, not a silent gap.
fn series_row(t: Time, names: &[String; 3], v: &LinkSample) -> String {
    let mut fields = Vec::with_capacity(8);
    for (name, _) in LinkSeries::default().columns().iter() {
        fields.push(match *name {
            // Debug prints a float as Python's repr does on this grid (0.0, 0.1, 12.3).
            "time_s" => format!("{:?}", sample_time(t)),
            "link" => names[0].clone(),
            "from" => names[1].clone(),
            "to" => names[2].clone(),
            "queue_pkts" => v.queue_pkts.to_string(),
            "queue_bytes" => v.queue_bytes.to_string(),
            "tx_bytes" => v.tx_bytes.to_string(),
            _ => String::new(),
        });
    }
    fields.join(",") + "\n"
}

/// The flow series' header: `FlowSeries::columns`' names, in its order.
pub fn flow_header() -> String {
    let names: Vec<&str> = FlowSeries::default()
        .columns()
        .iter()
        .map(|c| c.0)
        .collect();
    names.join(",") + "\n"
}

/// One row of the flow series for a kernel connection's sending side, named
/// `local->remote`, in `FlowSeries::columns`'s order; NaN is left empty, as pandas
/// writes it. As in `series_row`, a column not produced here would be empty, and
/// `output_tests` keeps that set empty.
pub fn flow_row(t: Time, s: &TcpSample) -> String {
    let float = |v: f64| {
        if v.is_nan() {
            String::new()
        } else {
            format!("{v:?}")
        }
    };
    let mut fields = Vec::with_capacity(9);
    for (name, _) in FlowSeries::default().columns().iter() {
        fields.push(match *name {
            "time_s" => format!("{:?}", sample_time(t)),
            "flow" => csv_field(&format!("{}->{}", s.local, s.remote)),
            "leg" => "0".to_string(),
            "cwnd_bytes" => s.cwnd_bytes.to_string(),
            "ssthresh_bytes" => float(s.ssthresh_bytes),
            "srtt_s" => float(s.srtt_s),
            "rto_s" => float(s.rto_s),
            "in_flight_bytes" => s.in_flight_bytes.to_string(),
            "bytes_delivered" => s.bytes_delivered.to_string(),
            _ => String::new(),
        });
    }
    fields.join(",") + "\n"
}

impl Observer for Files {
    fn started(&mut self, t: Time, dir: Dir, bytes: &[u8]) {
        if let Some(pcaps) = &mut self.pcaps {
            pcaps[dir.index()].write_bytes(t, bytes);
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
        let r = self.fates.write(line.as_bytes());
        self.keep(r);
        if f.outcome == Outcome::Channel {
            let i = f.transmission.expect("a channel loss was transmitted");
            let r = self.losses[f.dir.index()].write(format!("{i}\n").as_bytes());
            self.keep(r);
        }
    }

    fn sample(&mut self, t: Time, dir: Dir, v: &LinkSample) {
        let Some((o, names)) = &mut self.series else {
            return;
        };
        let r = o.write(series_row(t, &names[dir.index()], v).as_bytes());
        self.keep(r);
    }
}

#[cfg(test)]
mod output_tests {
    use super::*;

    #[test]
    fn every_column_of_the_simulators_link_series_is_produced() {
        let names = ["sat".to_string(), "gw".to_string(), "t".to_string()];
        let v = LinkSample {
            queue_pkts: 3,
            queue_bytes: 4500,
            tx_bytes: 90_000,
        };
        let row = series_row(Time(300_000_000), &names, &v);
        assert_eq!(row, "0.3,sat,gw,t,3,4500,90000\n");
        let n = LinkSeries::default().columns().len();
        assert_eq!(row.trim_end().split(',').count(), n);
        assert!(row.trim_end().split(',').all(|f| !f.is_empty()));
        assert_eq!(
            series_row(Time::ZERO, &names, &v).split(',').next(),
            Some("0.0")
        );
    }

    #[test]
    fn every_column_of_the_simulators_flow_series_is_produced() {
        let s = TcpSample {
            local: "10.77.0.1:40000".parse().unwrap(),
            remote: "10.77.0.2:5001".parse().unwrap(),
            cwnd_bytes: 14480,
            ssthresh_bytes: f64::NAN,
            srtt_s: 0.0205,
            rto_s: 0.224,
            in_flight_bytes: 2896,
            bytes_delivered: 123,
        };
        let row = flow_row(Time(200_000_000), &s);
        assert_eq!(
            row,
            "0.2,10.77.0.1:40000->10.77.0.2:5001,0,14480,,0.0205,0.224,2896,123\n"
        );
        let n = FlowSeries::default().columns().len();
        assert_eq!(flow_header().trim_end().split(',').count(), n);
        let filled = TcpSample {
            ssthresh_bytes: 28960.0,
            ..s
        };
        let row = flow_row(Time::ZERO, &filled);
        assert_eq!(row.trim_end().split(',').count(), n);
        assert!(row.trim_end().split(',').all(|f| !f.is_empty()));
    }

    #[test]
    fn a_name_with_a_comma_or_quote_is_quoted_as_pandas_does() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn the_series_file_has_the_simulators_header_and_one_row_per_direction() {
        let dir = std::env::temp_dir().join(format!("hetpath-live-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let names = SeriesNames {
            link: "sat,1".into(),
            ends: [("gw".into(), "t".into()), ("t".into(), "gw".into())],
        };
        let mut f = Files::create(&dir, None, Some(&names)).unwrap();
        for d in Dir::BOTH {
            f.sample(Time(100_000_000), d, &LinkSample::default());
        }
        f.finish().unwrap();
        let text = std::fs::read_to_string(dir.join("link_series.csv")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let header: Vec<&str> = LinkSeries::default()
            .columns()
            .iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(
            text,
            format!(
                "{}\n0.1,\"sat,1\",gw,t,0,0,0\n0.1,\"sat,1\",t,gw,0,0,0\n",
                header.join(",")
            )
        );
    }
}

//! `flow_series.csv`: the kernel's TCP connections in the emulated link's namespaces,
//! one row per connection's sending side every `sample_interval`, in `hetpath run`'s flow
//! columns (`output::flow_row`). A thread of the core takes the samples on the link
//! series' schedule (time 0, then every interval from the core's start), apart from the
//! link loop, which it never delays: a dump is a netlink round trip per namespace.

use super::sock_diag::DiagSocket;
use crate::output::{create, flow_header, flow_row, Out, OutputError};
use crate::tcp_diag::TcpSample;
use hetpath_proto::{Dur, Time};
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub struct FlowSampler {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<Result<(), OutputError>>,
}

impl FlowSampler {
    /// Creates `path` and starts sampling the namespaces of `sockets` every `interval`.
    pub fn start(
        sockets: Vec<DiagSocket>,
        interval: Dur,
        path: PathBuf,
    ) -> Result<FlowSampler, OutputError> {
        let mut out = create(path)?;
        out.write(flow_header().as_bytes())?;
        let (stop, stopped) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("flow-sampler".into())
            .spawn(move || {
                super::event_loop::block_stop_signals()
                    .map_err(|e| OutputError::new(format!("flow sampler: {e}")))?;
                sample(sockets, interval, out, stopped)
            })
            .map_err(|e| OutputError::new(format!("cannot start the flow sampler: {e}")))?;
        Ok(FlowSampler { stop, thread })
    }

    /// Stops sampling and flushes the file; the first write error, if any.
    pub fn finish(self) -> Result<(), OutputError> {
        let _ = self.stop.send(());
        self.thread
            .join()
            .unwrap_or_else(|_| Err(OutputError::new("the flow sampler panicked".into())))
    }
}

fn sample(
    mut sockets: Vec<DiagSocket>,
    interval: Dur,
    mut out: Out,
    stopped: mpsc::Receiver<()>,
) -> Result<(), OutputError> {
    let start = Instant::now();
    let step = Duration::from_nanos(interval.0.max(1));
    let mut samples: Vec<TcpSample> = Vec::new();
    let mut k: u32 = 0;
    loop {
        let due = start + step * k;
        match stopped.recv_timeout(due.saturating_duration_since(Instant::now())) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
        }
        let t = Time(interval.0.saturating_mul(u64::from(k)));
        let mut failed = Vec::new();
        for (i, s) in sockets.iter_mut().enumerate() {
            match s.dump(&mut samples) {
                Ok(()) => {
                    for c in &samples {
                        out.write(flow_row(t, c).as_bytes())?;
                    }
                }
                Err(e) => {
                    // Say so once and stop asking: the link itself runs on.
                    eprintln!("hetpath-live: warning: flow series: sock_diag: {e}");
                    failed.push(i);
                }
            }
        }
        for i in failed.into_iter().rev() {
            sockets.remove(i);
        }
        // A sample taken late does not make the next ones crowd in: skip to the next
        // sampling time still ahead.
        let behind = (start.elapsed().as_nanos() / step.as_nanos()) as u32;
        k = (k + 1).max(behind + 1);
    }
    out.flush()
}

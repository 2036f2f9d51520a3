//! `hetpath-live emulate`: runs one scenario link between two TUN devices (`--tun-a`,
//! `--tun-b`), or as a bump in the wire between two Ethernet interfaces over AF_PACKET
//! (`--if-a`, `--if-b`), until SIGINT or SIGTERM (or `--duration`), then writes the
//! run's files. `hetpath emulate` (Python) starts it with the devices inside the
//! namespaces it made (or given); it prints `ready` on stdout once the devices are open. Exit status: 0 done, 2 bad input, 1 a failure while running.
//! `hetpath-live pep` is the PEP daemon (`hetpath_live::pep::cli`).

#[cfg(target_os = "linux")]
fn main() {
    // Both commands stop cleanly on SIGTERM (the link core writes its files, the PEP
    // removes its rules): have it sent if the parent dies first.
    // SAFETY: prctl with a valid option and signal number.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) };
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("pep") {
        std::process::exit(hetpath_live::pep::cli::main(args[1..].to_vec()));
    }
    std::process::exit(linux::main(args));
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("hetpath-live: error: the link emulator runs on Linux only");
    std::process::exit(1);
}

#[cfg(target_os = "linux")]
mod linux {
    use hetpath_live::emulator::Emulator;
    use hetpath_live::fate::Dir;
    use hetpath_live::output::{Files, OutputError, SeriesNames};
    use hetpath_live::scenario::load_link;
    use hetpath_live::sys::event_loop::{block_stop_signals, run, LoopOptions, LoopReport};
    use hetpath_live::sys::flow_sampler::FlowSampler;
    use hetpath_live::sys::packet::{PacketPort, ETH_HEADER};
    use hetpath_live::sys::port::Port;
    use hetpath_live::sys::sock_diag::DiagSocket;
    use hetpath_live::sys::tun::Tun;
    use hetpath_live::Observer;
    use hetpath_proto::Dur;
    use hetpath_sim::results::LinkResult;
    use std::io::Write;
    use std::path::{Path, PathBuf};

    const USAGE: &str = "usage: hetpath-live emulate --scenario FILE --link NAME \
(--tun-a DEV --tun-b DEV | --if-a DEV --if-b DEV) [--netns-a PATH] [--netns-b PATH] [--seed N] [--out DIR] [--no-pcap] [--duration SECONDS] [--no-realtime]";

    #[derive(Default)]
    struct Args {
        scenario: String,
        link: String,
        tun: [String; 2],
        /// Packet mode: the two Ethernet interfaces.
        ifs: [String; 2],
        netns: [Option<PathBuf>; 2],
        seed: Option<u64>,
        out: Option<PathBuf>,
        pcap: bool,
        duration: Option<Dur>,
        realtime: bool,
    }

    fn parse(args: Vec<String>) -> Result<Args, String> {
        let mut it = args.into_iter();
        if it.next().as_deref() != Some("emulate") {
            return Err(USAGE.into());
        }
        let mut a = Args {
            pcap: true,
            realtime: true,
            ..Args::default()
        };
        while let Some(flag) = it.next() {
            let mut value = || it.next().ok_or(format!("{flag} needs a value"));
            match flag.as_str() {
                "--scenario" => a.scenario = value()?,
                "--link" => a.link = value()?,
                "--tun-a" => a.tun[0] = value()?,
                "--tun-b" => a.tun[1] = value()?,
                "--if-a" => a.ifs[0] = value()?,
                "--if-b" => a.ifs[1] = value()?,
                "--netns-a" => a.netns[0] = Some(value()?.into()),
                "--netns-b" => a.netns[1] = Some(value()?.into()),
                "--seed" => {
                    let v = value()?;
                    a.seed = Some(v.parse().map_err(|_| {
                        format!("--seed: expected a non-negative integer, got '{v}'")
                    })?);
                }
                "--out" => a.out = Some(value()?.into()),
                "--no-pcap" => a.pcap = false,
                "--no-realtime" => a.realtime = false,
                "--duration" => {
                    let v = value()?;
                    let s: f64 = v
                        .parse()
                        .map_err(|_| format!("--duration: expected seconds, got '{v}'"))?;
                    if !(s > 0.0 && s < 1e9) {
                        return Err(format!(
                            "--duration: expected a positive number of seconds, got '{v}'"
                        ));
                    }
                    a.duration = Some(Dur::from_secs_f64(s));
                }
                _ => return Err(format!("unknown option '{flag}'\n{USAGE}")),
            }
        }
        let packet = !a.ifs[0].is_empty() || !a.ifs[1].is_empty();
        if packet && (!a.tun[0].is_empty() || !a.tun[1].is_empty()) {
            return Err(format!(
                "--tun-a/--tun-b (TUN mode) and --if-a/--if-b (packet mode) exclude each other\n{USAGE}"
            ));
        }
        if packet && a.ifs[0] == a.ifs[1] && a.netns[0] == a.netns[1] {
            return Err(format!(
                "--if-a and --if-b are the same interface ('{}'); packet mode bridges two",
                a.ifs[0]
            ));
        }
        let devices = if packet {
            [(&a.ifs[0], "--if-a"), (&a.ifs[1], "--if-b")]
        } else {
            [(&a.tun[0], "--tun-a"), (&a.tun[1], "--tun-b")]
        };
        for (v, name) in [(&a.scenario, "--scenario"), (&a.link, "--link")]
            .into_iter()
            .chain(devices)
        {
            if v.is_empty() {
                return Err(format!("{name} is required\n{USAGE}"));
            }
        }
        Ok(a)
    }

    fn packet_mode(a: &Args) -> bool {
        !a.ifs[0].is_empty()
    }

    /// Where the kernel connections are sampled (`flow_series.csv`): a sock_diag socket
    /// per namespace named on the command line; none without one.
    struct Flows {
        sockets: Vec<DiagSocket>,
        interval: Dur,
        path: PathBuf,
    }

    fn flows(a: &Args, out: &Path, interval: Dur) -> Flows {
        let mut sockets = Vec::new();
        for ns in a.netns.iter().flatten() {
            match DiagSocket::open(Some(ns)) {
                Ok(s) => sockets.push(s),
                Err(e) => eprintln!(
                    "hetpath-live: warning: no flow series for {}: {e}",
                    ns.display()
                ),
            }
        }
        Flows {
            sockets,
            interval,
            path: out.join("flow_series.csv"),
        }
    }

    /// Runs the link loop, with the flow sampler beside it when there is a namespace to
    /// sample; the loop's report, then the sampler's outcome.
    fn drive<P: Port, O: Observer>(
        emu: &mut Emulator<O>,
        ports: &(P, P),
        opts: &LoopOptions,
        flows: Flows,
    ) -> (std::io::Result<LoopReport>, Result<(), OutputError>) {
        if let Err(e) = block_stop_signals() {
            return (Err(e), Ok(()));
        }
        let mut sampler = None;
        if !flows.sockets.is_empty() {
            match FlowSampler::start(flows.sockets, flows.interval, flows.path) {
                Ok(s) => sampler = Some(s),
                Err(e) => return (Ok(LoopReport::default()), Err(e)),
            }
        }
        println!("ready");
        let _ = std::io::stdout().flush();
        let report = run(emu, &ports.0, &ports.1, opts);
        (report, sampler.map_or(Ok(()), FlowSampler::finish))
    }

    fn open(name: &str, netns: &Option<PathBuf>) -> std::io::Result<Tun> {
        match netns {
            Some(ns) => Tun::open_in(name, ns),
            None => Tun::open(name),
        }
    }

    pub fn main(args: Vec<String>) -> i32 {
        let a = match parse(args) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("hetpath-live: error: {e}");
                return 2;
            }
        };
        let text = match std::fs::read_to_string(&a.scenario) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("hetpath-live: error: {}: {e}", a.scenario);
                return 2;
            }
        };
        let link = match load_link(&text, &a.scenario, a.seed, &a.link) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("hetpath-live: error: {e}");
                return 2;
            }
        };
        let out = a.out.clone().unwrap_or_else(|| PathBuf::from("."));
        let names = SeriesNames {
            link: link.name.clone(),
            ends: [
                (link.nodes[0].clone(), link.nodes[1].clone()),
                (link.nodes[1].clone(), link.nodes[0].clone()),
            ],
        };
        let files = match Files::create(&out, a.pcap.then_some(&link.pcap_names), Some(&names)) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("hetpath-live: error: {e}");
                return 1;
            }
        };
        let params = [link.dirs[0].params.clone(), link.dirs[1].params.clone()];
        let opts = LoopOptions {
            realtime: a.realtime,
            duration: a.duration,
            ..LoopOptions::default()
        };
        let mut extra = serde_json::Map::new();
        let (mut emu, report) = if packet_mode(&a) {
            let open = |i: usize| PacketPort::open(&a.ifs[i], a.netns[i].as_deref());
            let ports = match (open(0), open(1)) {
                (Ok(x), Ok(y)) => (x, y),
                (Err(e), _) | (_, Err(e)) => {
                    eprintln!("hetpath-live: error: {e}");
                    return if e.input { 2 } else { 1 };
                }
            };
            for (p, name) in [(&ports.0, &a.ifs[0]), (&ports.1, &a.ifs[1])] {
                if !p.stuck_offloads().is_empty() {
                    eprintln!(
                        "hetpath-live: warning: {name}: could not turn off {}; frames above the MTU are dropped",
                        p.stuck_offloads().join(", ")
                    );
                }
            }
            let mut emu = Emulator::new(link.dirs, files);
            emu.set_sampling(Some(link.sample_interval));
            emu.set_link_header(ETH_HEADER);
            let report = drive(
                &mut emu,
                &ports,
                &opts,
                flows(&a, &out, link.sample_interval),
            );
            extra.insert("mode".into(), "packet".into());
            extra.insert("interfaces".into(), serde_json::json!([a.ifs[0], a.ifs[1]]));
            extra.insert(
                "mtu".into(),
                serde_json::json!([ports.0.mtu(), ports.1.mtu()]),
            );
            extra.insert(
                "oversize_drops".into(),
                serde_json::json!([ports.0.oversize(), ports.1.oversize()]),
            );
            extra.insert(
                "offloads_stuck".into(),
                serde_json::json!([ports.0.stuck_offloads(), ports.1.stuck_offloads()]),
            );
            (emu, report)
        } else {
            let tuns = (open(&a.tun[0], &a.netns[0]), open(&a.tun[1], &a.netns[1]));
            let ports = match tuns {
                (Ok(x), Ok(y)) => (x, y),
                (Err(e), _) | (_, Err(e)) => {
                    eprintln!("hetpath-live: error: cannot open the TUN devices: {e}");
                    return 1;
                }
            };
            let mut emu = Emulator::new(link.dirs, files);
            emu.set_sampling(Some(link.sample_interval));
            let report = drive(
                &mut emu,
                &ports,
                &opts,
                flows(&a, &out, link.sample_interval),
            );
            extra.insert("mode".into(), "tun".into());
            (emu, report)
        };
        let report = match report {
            (Ok(r), Ok(())) => r,
            (Err(e), _) => {
                eprintln!("hetpath-live: error: the link loop failed: {e}");
                return 1;
            }
            (_, Err(e)) => {
                eprintln!("hetpath-live: error: {e}");
                return 1;
            }
        };
        emu.finish();
        let links: Vec<LinkResult> = Dir::BOTH
            .iter()
            .map(|&d| {
                let p = &params[d.index()];
                let stats = *emu.stats(d);
                let (from, to) = match d {
                    Dir::Ab => (&link.nodes[0], &link.nodes[1]),
                    Dir::Ba => (&link.nodes[1], &link.nodes[0]),
                };
                let span = report.elapsed.as_secs_f64();
                LinkResult::new(p, from, to, stats, stats.busy, span)
            })
            .collect();
        let mut summary = serde_json::json!({
            "scenario": a.scenario,
            "link": a.link,
            "seed": link.seed,
            "elapsed_s": report.elapsed.as_secs_f64(),
            "realtime": report.realtime,
            "wakeups": report.wakeups,
            "write_drops": report.write_drops,
            "no_buffer": [emu.no_buffer(Dir::Ab), emu.no_buffer(Dir::Ba)],
            "slots": emu.slots(),
            "links": links,
        });
        summary.as_object_mut().expect("an object").extend(extra);
        let files = emu.into_observer();
        if let Err(e) = files.finish() {
            eprintln!("hetpath-live: error: {e}");
            return 1;
        }
        let path = out.join("summary.json");
        let text = serde_json::to_string_pretty(&summary).expect("plain values") + "\n";
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("hetpath-live: error: {}: {e}", path.display());
            return 1;
        }
        0
    }
}

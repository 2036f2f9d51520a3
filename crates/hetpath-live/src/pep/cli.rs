//! `hetpath-live pep --config FILE [--print-rules]`: loads and checks the configuration,
//! then either prints the interception rules or installs them, serves the metrics,
//! prints `ready` and relays until SIGINT or SIGTERM, and removes the rules on the way
//! out. Exit status: 0 done, 2 bad input (configuration, arguments), 1 a failure while
//! setting up or running.

use super::config::{Config, LogLevel};
use super::daemon::Daemon;
use super::log::{log, set_level};
use super::metrics::{self, Metrics};
use super::{rules, sock};
use std::io::Write;

const USAGE: &str = "usage: hetpath-live pep --config FILE [--print-rules]";

/// Runs the subcommand; `args` start after `pep`. Returns the exit status.
pub fn main(args: Vec<String>) -> i32 {
    let mut config = None;
    let mut print = false;
    let mut it = args.into_iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--config" => match it.next() {
                Some(v) => config = Some(v),
                None => return usage("--config needs a value"),
            },
            "--print-rules" => print = true,
            _ => return usage(&format!("unknown option '{flag}'")),
        }
    }
    let Some(file) = config else {
        return usage("--config is required");
    };
    let cfg = match std::fs::read_to_string(&file) {
        Ok(text) => match Config::parse(&text, &file) {
            Ok(c) => c,
            Err(e) => return fail(2, &e.to_string()),
        },
        Err(e) => return fail(2, &format!("{file}: {e}")),
    };
    if print {
        print!("{}", rules::print_rules(&cfg));
        return 0;
    }
    let available = sock::available_congestion();
    for (key, cc) in [
        ("server_congestion", &cfg.server_congestion),
        ("client_congestion", &cfg.client_congestion),
    ] {
        if let Some(cc) = cc {
            if !available.is_empty() && !available.contains(cc) {
                return fail(
                    2,
                    &format!("{file}: {key}: expected one of this kernel's congestion controls ({}), got '{cc}'", available.join(", ")),
                );
            }
        }
    }
    set_level(cfg.log);
    // Block SIGINT and SIGTERM before any thread starts, so that only the signalfd sees them.
    let signals = match crate::sys::event_loop::signal_fd() {
        Ok(s) => s,
        Err(e) => return fail(1, &format!("signalfd: {e}")),
    };
    let listener = match sock::listener(cfg.listen_port, 1024) {
        Ok(l) => l,
        Err(e) => {
            return fail(
                1,
                &format!(
                    "cannot listen on port {} with IP_TRANSPARENT: {e}",
                    cfg.listen_port
                ),
            )
        }
    };
    let metrics = Metrics::new();
    if let Some(addr) = cfg.metrics {
        match std::net::TcpListener::bind(addr) {
            Ok(l) => metrics::serve(l, metrics.clone()),
            Err(e) => return fail(1, &format!("metrics endpoint {addr}: {e}")),
        }
    }
    let mut installed = match rules::install(&cfg) {
        Ok(i) => i,
        Err(e) => return fail(1, &format!("cannot install the interception rules: {e}")),
    };
    log(
        LogLevel::Info,
        format_args!(
            "intercepting TCP to ports {:?} from {:?} on :{} (table ip {})",
            cfg.matching
                .ports
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>(),
            cfg.matching
                .sources
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>(),
            cfg.listen_port,
            cfg.nft.table
        ),
    );
    println!("ready");
    let _ = std::io::stdout().flush();
    let status = match Daemon::new(cfg, listener, metrics.clone()).and_then(|mut d| d.run(&signals))
    {
        Ok(()) => 0,
        Err(e) => {
            log(LogLevel::Error, format_args!("the relay loop failed: {e}"));
            1
        }
    };
    if let Err(e) = installed.remove() {
        log(LogLevel::Error, format_args!("removing the rules: {e}"));
        return 1;
    }
    log(LogLevel::Info, format_args!("stopped; rules removed"));
    status
}

fn usage(msg: &str) -> i32 {
    fail(2, &format!("{msg}\n{USAGE}"))
}

fn fail(code: i32, msg: &str) -> i32 {
    eprintln!("hetpath-live pep: error: {msg}");
    code
}

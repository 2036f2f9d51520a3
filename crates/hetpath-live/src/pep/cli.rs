//! `hetpath-live pep --config FILE [--print-rules]`: loads and checks the configuration,
//! then either prints the interception rules or installs them, serves the metrics,
//! prints `ready` and relays until SIGINT or SIGTERM, and removes the rules on the way
//! out. Exit status: 0 done, 2 bad input (configuration, arguments), 1 a failure while
//! setting up or running.

use super::config::{Config, LogLevel, Mode};
use super::daemon::Daemon;
use super::gateway::{Gateway, GatewayConfig};
use super::gateway_daemon::GatewayDaemon;
use super::keyrng::KeyRng;
use super::log::{log, set_level};
use super::metrics::Metrics;
use super::metrics_http;
use super::seal;
use super::{nofile, rules, sock};
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
    // The descriptors the cap needs, against the limit raised as far as allowed.
    match nofile::raise() {
        Ok(limit) => {
            if let Some(msg) = nofile::check(&cfg, limit, &file) {
                return fail(2, &msg);
            }
        }
        Err(e) => return fail(1, &format!("RLIMIT_NOFILE: {e}")),
    }
    // Gateway mode's key, checked before anything is set up.
    let key = match &cfg.gateway {
        Some(g) => match seal::load_key(&g.key_file) {
            Ok(k) => Some(k),
            Err(e) => return fail(2, &format!("{file}: gateway.key_file: {e}")),
        },
        None => None,
    };
    // The core's randomness (ephemeral keys, boot id, connection ids), from the kernel.
    let seed = match KeyRng::os_seed() {
        Ok(s) => s,
        Err(e) => return fail(1, &format!("/dev/urandom: {e}")),
    };
    set_level(cfg.log);
    // Block SIGINT and SIGTERM before any thread starts, so that only the signalfd sees them.
    let signals = match crate::sys::event_loop::signal_fd() {
        Ok(s) => s,
        Err(e) => return fail(1, &format!("signalfd: {e}")),
    };
    let listener = if cfg.is_gateway_b() {
        None
    } else {
        match sock::listener(cfg.listen_port, 1024) {
            Ok(l) => Some(l),
            Err(e) => {
                return fail(
                    1,
                    &format!(
                        "cannot listen on port {} with IP_TRANSPARENT: {e}",
                        cfg.listen_port
                    ),
                )
            }
        }
    };
    let udp = match &cfg.gateway {
        Some(g) => match std::net::UdpSocket::bind(g.listen) {
            Ok(u) => {
                let _ = u.set_nonblocking(true);
                Some(mio::net::UdpSocket::from_std(u))
            }
            Err(e) => {
                return fail(
                    1,
                    &format!("cannot bind the gateway's UDP socket {}: {e}", g.listen),
                )
            }
        },
        None => None,
    };
    let metrics = Metrics::new();
    if let Some(addr) = cfg.metrics {
        match std::net::TcpListener::bind(addr) {
            Ok(l) => {
                if let Err(e) = metrics_http::serve(l, metrics.clone()) {
                    return fail(1, &format!("metrics endpoint {addr}: {e}"));
                }
            }
            Err(e) => return fail(1, &format!("metrics endpoint {addr}: {e}")),
        }
    }
    let mut installed = match rules::install(&cfg) {
        Ok(i) => i,
        Err(e) => return fail(1, &format!("cannot install the interception rules: {e}")),
    };
    if let Some(g) = &cfg.gateway {
        log(
            LogLevel::Info,
            format_args!(
                "gateway {:?}: UDP {} <-> peer {}, {} paced {}, {:?}",
                g.role,
                g.listen,
                g.peer,
                g.cc.name(),
                if g.tcp.pacing.is_some() { "on" } else { "off" },
                g.aead
            ),
        );
    }
    if !cfg.is_gateway_b() {
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
    }
    println!("ready");
    let _ = std::io::stdout().flush();
    let run = match (cfg.mode, udp, key) {
        (Mode::Gateway, Some(udp), Some(key)) => {
            let g = cfg.gateway.clone().expect("gateway mode");
            let core_cfg = GatewayConfig {
                role: g.role,
                psk: key,
                aead: g.aead,
                seed,
                rekey_after: g.rekey_after,
                cc: g.cc.clone(),
                tcp: g.tcp,
                buffer: cfg.buffer_bytes,
                max_datagram: g.max_datagram,
                max_connections: cfg.max_connections,
                keepalive: g.keepalive,
                peer_timeout: g.peer_timeout,
                rate_bps: g.rate_bps,
                monitor_interval: g.rtt,
                allow: cfg.is_gateway_b().then(|| cfg.matching.clone()),
            };
            let core = Gateway::new(core_cfg, hetpath_proto::time::Time::ZERO);
            GatewayDaemon::new(cfg, core, listener, udp, metrics.clone())
                .and_then(|mut d| d.run(&signals))
        }
        _ => {
            let listener = listener.expect("integrated mode listens");
            Daemon::new(cfg, listener, metrics.clone()).and_then(|mut d| d.run(&signals))
        }
    };
    let status = match run {
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

//! `RLIMIT_NOFILE` against `max_connections`, at start: the soft limit is raised to the
//! hard one, and a configuration whose connections need more descriptors than that is
//! refused, so the cap the operator set is one the daemon can honour instead of a
//! promise broken by EMFILE under load.

use super::config::{Config, Mode};
use std::io;

/// Descriptors the daemon keeps besides its connections' sockets: stdio, epoll, the
/// signalfd, the listener, the UDP socket and timerfd, the metrics listener and the
/// scrapes it holds (`metrics_http::MAX_HELD`), the spare of `fd_reserve`, and slack for
/// the netlink sockets and files opened while it runs.
pub const OWN_DESCRIPTORS: u64 = 64;

/// Kernel sockets per relayed connection: a client and a server leg in integrated mode;
/// one local socket in gateway mode (the satellite leg shares the one UDP socket).
pub fn per_connection(mode: Mode) -> u64 {
    match mode {
        Mode::Integrated => 2,
        Mode::Gateway => 1,
    }
}

/// The descriptors `cfg` needs at its cap.
pub fn needed(cfg: &Config) -> u64 {
    cfg.max_connections as u64 * per_connection(cfg.mode) + OWN_DESCRIPTORS
}

/// The most connections `limit` descriptors hold in `mode`.
pub fn connections_within(limit: u64, mode: Mode) -> u64 {
    limit.saturating_sub(OWN_DESCRIPTORS) / per_connection(mode)
}

/// Raises the soft limit to the hard one and returns it.
pub fn raise() -> io::Result<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid rlimit for the kernel to fill.
    crate::sys::check(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) })?;
    if r.rlim_cur < r.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: r.rlim_max,
            rlim_max: r.rlim_max,
        };
        // SAFETY: as above; raising the soft limit up to the hard one needs no privilege.
        crate::sys::check(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) })?;
        r.rlim_cur = r.rlim_max;
    }
    Ok(r.rlim_cur)
}

/// Why `cfg` does not fit `limit` descriptors (one line, naming the key and the fix),
/// or `None` if it does.
pub fn check(cfg: &Config, limit: u64, file: &str) -> Option<String> {
    let need = needed(cfg);
    (need > limit).then(|| {
        format!(
            "{file}: max_connections: {} connections need {need} descriptors ({} each plus {OWN_DESCRIPTORS} of the daemon's own) but RLIMIT_NOFILE allows {limit}; lower max_connections to at most {} or raise the limit (systemd: LimitNOFILE=)",
            cfg.max_connections,
            per_connection(cfg.mode),
            connections_within(limit, cfg.mode)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(extra: &str) -> Config {
        let text = format!(
            "mode = \"integrated\"\nlisten_port = 7070\n{extra}\n[match]\nsources = [\"10.1.0.0/24\"]\nports = [80]\n"
        );
        Config::parse(&text, "pep.toml").unwrap()
    }

    #[test]
    fn a_cap_over_the_limit_is_refused_naming_the_key_and_both_numbers() {
        let c = cfg("max_connections = 40000\nmemory_limit = \"32GiB\"");
        let e = check(&c, 65_536, "pep.toml").unwrap();
        assert!(
            e.starts_with("pep.toml: max_connections: 40000 connections need 80064 descriptors"),
            "{e}"
        );
        assert!(
            e.contains("allows 65536") && e.contains("at most 32736"),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }

    #[test]
    fn the_contrib_unit_s_limit_fits_the_default_cap() {
        assert_eq!(check(&cfg(""), 65_536, "pep.toml"), None);
        assert_eq!(connections_within(65_536, Mode::Gateway), 65_472);
    }
}

//! The interception the daemon installs and removes: one nftables table of its own, with
//! a TPROXY rule for the configured sources, destinations and ports only, and the policy
//! route that delivers marked packets to local sockets. Everything else (other ports,
//! ESP, IKE on UDP, ICMP) matches no rule and is routed untouched, and so is what a
//! `match.except` entry covers (an `accept` ahead of the TPROXY rules): TPROXY in
//! prerouting hands an intercepted connection to a local socket, so the `forward` hook
//! never sees it, and an exception is how a connection stays under the forward chain. `--print-rules` shows
//! exactly what `install` does. The table is programmed over netlink (`nftnl`, no `nft`
//! program needed); the policy route with iproute2's `ip`.

pub mod nftnl;

use super::config::Config;
use super::matching::Selector;
use std::process::{Command, Stdio};

fn set<T: ToString>(items: &[T]) -> String {
    let v: Vec<String> = items.iter().map(T::to_string).collect();
    format!("{{ {} }}", v.join(", "))
}

/// The nft script: the table is made (so that the delete cannot fail), deleted and made
/// again in one transaction, so a table left by a killed daemon is replaced, never doubled.
///
/// Gateway B intercepts nothing: it only needs its transparent server legs' replies
/// (addressed to the clients) delivered to its sockets, so its table has no TPROXY rule.
pub fn nft_script(c: &Config) -> String {
    let t = &c.nft.table;
    let m = c.nft.mark;
    let mm = &c.matching;
    let intercept = if c.is_gateway_b() {
        "\t\t# gateway B: connections come from gateway A over UDP; nothing is intercepted\n"
            .to_string()
    } else {
        format!(
            "\t\t# new connections to proxy: these sources, destinations and ports only\n\
             \t\tip saddr {src} ip daddr {dst} tcp dport {ports} tproxy to :{port} meta mark set {m:#x} accept\n",
            src = set(&mm.sources),
            dst = set(&mm.destinations),
            ports = set(&mm.ports),
            port = c.listen_port,
        )
    };
    let mut exceptions = String::new();
    if !c.is_gateway_b() {
        for e in &mm.except {
            exceptions += &format!(
                "\t\t# match.except: never intercepted; routed, so the forward chain decides it\n\t\t{}accept\n",
                selector(e)
            );
        }
        for e in &mm.deny {
            exceptions += &format!(
                "\t\t# match.deny (intercepted, then reset by the daemon): {}\n",
                selector(e).trim_end()
            );
        }
    }
    format!(
        "table ip {t} {{}}\n\
         delete table ip {t}\n\
         table ip {t} {{\n\
         \tchain prerouting {{\n\
         \t\ttype filter hook prerouting priority mangle; policy accept;\n\
         \t\t# packets of connections the PEP already holds (both legs are transparent sockets)\n\
         \t\tmeta l4proto tcp socket transparent 1 meta mark set {m:#x} accept\n\
         \t\t# traffic for this host itself is never intercepted\n\
         \t\tfib daddr type local accept\n\
         {exceptions}\
         {intercept}\
         \t}}\n\
         }}\n",
    )
}

/// An except or deny entry's matches in nft syntax, each followed by a space (an
/// omitted list matches anything and is left out).
fn selector(e: &Selector) -> String {
    let mut s = String::new();
    if !e.sources.is_empty() {
        s += &format!("ip saddr {} ", set(&e.sources));
    }
    if !e.destinations.is_empty() {
        s += &format!("ip daddr {} ", set(&e.destinations));
    }
    if !e.ports.is_empty() {
        s += &format!("tcp dport {} ", set(&e.ports));
    }
    s
}

/// The policy routing: marked packets are local (`ip rule` and a `local` route).
pub fn route_commands(c: &Config) -> [Vec<String>; 2] {
    let (m, t) = (c.nft.mark.to_string(), c.nft.route_table.to_string());
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    [
        v(&["ip", "-4", "rule", "add", "fwmark", &m, "lookup", &t]),
        v(&[
            "ip",
            "-4",
            "route",
            "add",
            "local",
            "0.0.0.0/0",
            "dev",
            "lo",
            "table",
            &t,
        ]),
    ]
}

fn removal_commands(c: &Config) -> [Vec<String>; 3] {
    let (m, t) = (c.nft.mark.to_string(), c.nft.route_table.to_string());
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    [
        v(&["nft", "delete", "table", "ip", &c.nft.table]),
        v(&["ip", "-4", "rule", "del", "fwmark", &m, "lookup", &t]),
        v(&["ip", "-4", "route", "flush", "table", &t]),
    ]
}

/// What `--print-rules` prints: a shell script doing what `install` does (`install`
/// sends the table over netlink, expanding the sets into one rule per combination, see
/// `nftnl`; the `nft` program is not needed).
pub fn print_rules(c: &Config) -> String {
    let mut s = String::from(
        "# installed by hetpath-live pep on start, removed on exit\nnft -f - <<'EOF'\n",
    );
    s += &nft_script(c);
    s += "EOF\n";
    for cmd in route_commands(c) {
        s += &cmd.join(" ");
        s.push('\n');
    }
    s += "# removed with:\n";
    for cmd in removal_commands(c) {
        s += "# ";
        s += &cmd.join(" ");
        s.push('\n');
    }
    s
}

fn run(cmd: &[String]) -> Result<(), String> {
    let child = Command::new(&cmd[0])
        .args(&cmd[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", cmd[0]))?;
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{}: {e}", cmd[0]))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}: {}",
            cmd.join(" "),
            String::from_utf8_lossy(&out.stderr)
                .trim()
                .replace('\n', "; ")
        ))
    }
}

/// A batch's first sequence number: distinct per call, so acknowledgements never mix.
fn seq() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32);
    t.wrapping_add(NEXT.fetch_add(1 << 16, Ordering::Relaxed))
}

/// The installed rules; removed by `remove` or on drop.
pub struct Installed {
    config: Config,
    removed: bool,
}

/// Installs the table and the policy route (replacing leftovers of a killed run).
pub fn install(c: &Config) -> Result<Installed, String> {
    let mut done = Installed {
        config: c.clone(),
        removed: false,
    };
    // A killed daemon's rule and route would be doubled: clear them first.
    for cmd in &removal_commands(c)[1..] {
        let _ = run(cmd);
    }
    nftnl::send(&nftnl::install_batch(c, seq())?)?;
    for cmd in route_commands(c) {
        if let Err(e) = run(&cmd) {
            let _ = done.remove();
            return Err(e);
        }
    }
    Ok(done)
}

impl Installed {
    /// Removes the table, the rule and the route; reports the first failure.
    pub fn remove(&mut self) -> Result<(), String> {
        if std::mem::replace(&mut self.removed, true) {
            return Ok(());
        }
        let mut first = nftnl::send(&nftnl::remove_batch(&self.config, seq()));
        for cmd in &removal_commands(&self.config)[1..] {
            if let Err(e) = run(cmd) {
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_names_only_the_configured_traffic() {
        let c = Config::parse(
            "mode = \"integrated\"\nlisten_port = 7070\n[match]\nsources = [\"10.1.0.0/24\", \"10.3.0.5\"]\nports = [5001, \"8000-8100\"]\n",
            "t.toml",
        )
        .unwrap();
        let s = nft_script(&c);
        assert!(s.contains(
            "ip saddr { 10.1.0.0/24, 10.3.0.5/32 } ip daddr { 0.0.0.0/0 } tcp dport { 5001, 8000-8100 } tproxy to :7070 meta mark set 0x4850 accept"
        ), "{s}");
        assert!(s.contains("table ip hetpath_pep {"));
        let p = print_rules(&c);
        assert!(p.contains("ip -4 route add local 0.0.0.0/0 dev lo table 4850"));
        assert!(p.contains("# nft delete table ip hetpath_pep"));
    }

    #[test]
    fn exceptions_are_routed_before_the_tproxy_rules_and_deny_entries_noted() {
        let c = Config::parse(
            "mode = \"integrated\"\nlisten_port = 7070\n[match]\nsources = [\"10.1.0.0/24\"]\nports = [8000]\n[[match.except]]\ndestinations = [\"10.2.0.2\", \"10.2.1.0/24\"]\nports = [8000]\n[[match.deny]]\nsources = [\"10.1.0.7\"]\n",
            "t.toml",
        )
        .unwrap();
        let s = nft_script(&c);
        let except = s
            .find("\t\tip daddr { 10.2.0.2/32, 10.2.1.0/24 } tcp dport { 8000 } accept\n")
            .expect(&s);
        assert!(except > s.find("fib daddr type local accept").unwrap());
        assert!(except < s.find("tproxy to :7070").unwrap(), "{s}");
        assert!(
            s.contains(
                "# match.deny (intercepted, then reset by the daemon): ip saddr { 10.1.0.7/32 }\n"
            ),
            "{s}"
        );
        // Gateway B intercepts nothing, so it routes nothing past an interception either.
        let b = Config::parse(
            "mode = \"gateway\"\nrole = \"b\"\n[match]\nsources = [\"10.1.0.0/24\"]\nports = [8000]\n[[match.except]]\nports = [8000]\n[gateway]\npeer = \"192.0.2.1:4850\"\nlisten = \"0.0.0.0:4850\"\nkey_file = \"k\"\n",
            "b.toml",
        )
        .unwrap();
        assert!(!nft_script(&b).contains("match.except"));
        assert!(nftnl::exceptions(&b).unwrap().is_empty());
    }

    /// `nft_script` with its sets expanded as `nftnl` expands them.
    fn expanded_script(c: &Config) -> String {
        let mut rules = String::new();
        for (s, d, p) in nftnl::intercepts(c).unwrap() {
            rules += &format!(
                "\t\tip saddr {s} ip daddr {d} tcp dport {p} tproxy to :{} meta mark set {:#x} accept\n",
                c.listen_port, c.nft.mark
            );
        }
        let mut exceptions = String::new();
        for (s, d, p) in nftnl::exceptions(c).unwrap() {
            exceptions += "\t\t";
            if let Some(s) = s {
                exceptions += &format!("ip saddr {s} ");
            }
            if let Some(d) = d {
                exceptions += &format!("ip daddr {d} ");
            }
            if let Some(p) = p {
                exceptions += &format!("tcp dport {p} ");
            }
            exceptions += "accept\n";
        }
        let script = nft_script(c);
        let mut out = String::new();
        let mut excepted = false;
        for line in script.lines() {
            if line.contains("tproxy to") {
                out += &rules;
            } else if line.ends_with(" accept") && line.contains('{') {
                // The exception rules, one line per entry, are expanded in one go.
                if !std::mem::replace(&mut excepted, true) {
                    out += &exceptions;
                }
            } else {
                out += line;
                out.push('\n');
            }
        }
        out
    }

    fn nft(args: &[&str], stdin: Option<&str>) -> String {
        use std::io::Write;
        let mut child = Command::new("nft")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("nft (needed for verification only)");
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
        drop(pipe);
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
    }

    /// Why this machine cannot run a test in network namespaces (not root, no `nft`), or
    /// None. The test then passes with a note, except under `HETPATH_REQUIRE_LIVE=1`
    /// (scripts/test.sh under CI, where the machine can), where that is a failure.
    #[cfg(target_os = "linux")]
    fn namespaces_unavailable() -> Option<&'static str> {
        // SAFETY: geteuid takes nothing and cannot fail.
        let why = if unsafe { libc::geteuid() } != 0 {
            Some("needs root")
        } else if Command::new("nft").arg("--version").output().is_err() {
            Some("needs nft (nftables)")
        } else {
            None
        };
        if let Some(why) = why {
            let required = std::env::var("HETPATH_REQUIRE_LIVE").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "a live test could not run: {why} (HETPATH_REQUIRE_LIVE=1)"
            );
            eprintln!("not run: {why}");
        }
        why
    }

    /// Root and `nft` (for verification only): in fresh network namespaces, the table
    /// `install` sends over netlink lists exactly as the (expanded) `nft_script` does when
    /// loaded by `nft`, a second install replaces it, and `remove` leaves no table.
    #[test]
    #[cfg(target_os = "linux")]
    fn netlink_table_equals_the_nft_script() {
        if namespaces_unavailable().is_some() {
            return;
        }
        // SAFETY: unshare takes no pointer; it moves this test's thread into a new
        // network namespace.
        let fresh = || assert_eq!(unsafe { libc::unshare(libc::CLONE_NEWNET) }, 0, "unshare");
        for text in [
            "mode = \"integrated\"\nlisten_port = 7070\n[match]\nsources = [\"10.1.0.0/24\", \"10.3.0.5\"]\ndestinations = [\"0.0.0.0/0\", \"192.168.7.0/25\"]\nports = [5001, \"8000-8100\"]\n",
            "mode = \"integrated\"\nlisten_port = 9000\n[match]\nsources = [\"0.0.0.0/0\"]\nports = [\"1-8999\"]\n[nft]\ntable = \"other\"\nmark = 7\n",
            "mode = \"integrated\"\nlisten_port = 7070\n[match]\nsources = [\"10.1.0.0/24\"]\nports = [\"8000-8100\"]\n[[match.except]]\nsources = [\"10.1.0.7\", \"10.1.0.64/26\"]\ndestinations = [\"10.2.0.0/16\"]\nports = [8000, \"8050-8060\"]\n[[match.except]]\nports = [8080]\n[[match.except]]\ndestinations = [\"10.9.0.1\"]\n[[match.deny]]\nports = [8081]\n",
        ] {
            let c = Config::parse(text, "t.toml").unwrap();
            let list = ["list", "table", "ip", &c.nft.table];
            fresh();
            let r = nft(&["-f", "-"], Some(&expanded_script(&c)));
            assert_eq!(r, "", "nft -f");
            let want = nft(&list, None);
            assert!(want.contains("tproxy to :"), "{want}");
            fresh();
            nftnl::send(&nftnl::install_batch(&c, 1).unwrap()).unwrap();
            nftnl::send(&nftnl::install_batch(&c, 1000).unwrap()).unwrap();
            assert_eq!(nft(&list, None), want);
            nftnl::send(&nftnl::remove_batch(&c, 2000)).unwrap();
            assert!(nft(&list, None).contains("No such file"), "removed");
            let e = nftnl::send(&nftnl::remove_batch(&c, 3000)).unwrap_err();
            assert_eq!(e, "nf_tables: DELTABLE failed: No such file or directory (ENOENT)");
        }
    }
}

//! nf_tables over netlink (`NETLINK_NETFILTER`), so the daemon needs no `nft` program:
//! an encoder for exactly the table `rules::nft_script` describes, sent as one nfnetlink
//! batch transaction, and its removal. The expressions are those `nft --debug=netlink`
//! shows for the script's rules, with one difference: `nft_script`'s anonymous sets of
//! sources, destinations and ports are expanded into one rule per source × destination ×
//! port range (a prefix is `payload` + `bitwise` + `cmp`, a range `cmp gte` + `cmp lte`),
//! so the number of TPROXY rules is the product of the three list lengths, bounded by
//! [`MAX_INTERCEPT_RULES`] (a larger product is refused with a clear error). Each
//! `[[match.except]]` entry is expanded the same way into `accept` rules placed before
//! the TPROXY rules (an omitted list matches anything and emits no expression), at most
//! [`MAX_EXCEPT_RULES`] in all.
//!
//! The socket is opened by the calling process, so the table lands in the network
//! namespace the daemon runs in (`ip netns exec`, `--netns`).

use crate::netlink::{messages, NLM_F_ACK, NLM_F_REQUEST};
use crate::pep::config::{Config, Ports, Subnet};

/// The most TPROXY rules one table may hold (sources × destinations × port ranges).
pub const MAX_INTERCEPT_RULES: usize = 128;

/// The most exception rules one table may hold (summed over `match.except`).
pub const MAX_EXCEPT_RULES: usize = 128;

// Netlink and nfnetlink (libc has these).
const NLM_F_CREATE: u16 = 0x400;
const NLM_F_APPEND: u16 = 0x800;
const NLA_F_NESTED: u16 = 0x8000;
const NFNL_MSG_BATCH_BEGIN: u16 = 0x10;
const NFNL_MSG_BATCH_END: u16 = 0x11;
const NFNL_SUBSYS_NFTABLES: u16 = 10;
const NFPROTO_IPV4: u8 = 2;
const AF_UNSPEC: u8 = 0;
pub const NFT_MSG_NEWTABLE: u16 = 0;
pub const NFT_MSG_DELTABLE: u16 = 2;
pub const NFT_MSG_NEWCHAIN: u16 = 3;
pub const NFT_MSG_NEWRULE: u16 = 6;

// Attribute numbers from linux/netfilter/nf_tables.h (not in libc).
const NFTA_TABLE_NAME: u16 = 1;
const NFTA_CHAIN_TABLE: u16 = 1;
const NFTA_CHAIN_NAME: u16 = 3;
const NFTA_CHAIN_HOOK: u16 = 4;
const NFTA_CHAIN_POLICY: u16 = 5;
const NFTA_CHAIN_TYPE: u16 = 7;
const NFTA_HOOK_HOOKNUM: u16 = 1;
const NFTA_HOOK_PRIORITY: u16 = 2;
const NFTA_RULE_TABLE: u16 = 1;
const NFTA_RULE_CHAIN: u16 = 2;
pub const NFTA_RULE_EXPRESSIONS: u16 = 4;
pub const NFTA_LIST_ELEM: u16 = 1;
pub const NFTA_EXPR_NAME: u16 = 1;
const NFTA_EXPR_DATA: u16 = 2;
const NFTA_DATA_VALUE: u16 = 1;
const NFTA_DATA_VERDICT: u16 = 2;
const NFTA_VERDICT_CODE: u16 = 1;
const NFTA_IMMEDIATE_DREG: u16 = 1;
const NFTA_IMMEDIATE_DATA: u16 = 2;
const NFTA_META_DREG: u16 = 1;
const NFTA_META_KEY: u16 = 2;
const NFTA_META_SREG: u16 = 3;
const NFTA_CMP_SREG: u16 = 1;
const NFTA_CMP_OP: u16 = 2;
const NFTA_CMP_DATA: u16 = 3;
const NFTA_PAYLOAD_DREG: u16 = 1;
const NFTA_PAYLOAD_BASE: u16 = 2;
const NFTA_PAYLOAD_OFFSET: u16 = 3;
const NFTA_PAYLOAD_LEN: u16 = 4;
const NFTA_BITWISE_SREG: u16 = 1;
const NFTA_BITWISE_DREG: u16 = 2;
const NFTA_BITWISE_LEN: u16 = 3;
const NFTA_BITWISE_MASK: u16 = 4;
const NFTA_BITWISE_XOR: u16 = 5;
const NFTA_SOCKET_KEY: u16 = 1;
const NFTA_SOCKET_DREG: u16 = 2;
const NFTA_FIB_DREG: u16 = 1;
const NFTA_FIB_RESULT: u16 = 2;
const NFTA_FIB_FLAGS: u16 = 3;
const NFTA_TPROXY_FAMILY: u16 = 1;
const NFTA_TPROXY_REG_PORT: u16 = 3;

// Values.
const NF_INET_PRE_ROUTING: u32 = 0;
const NF_ACCEPT: u32 = 1;
const NF_IP_PRI_MANGLE: i32 = -150;
const NFT_REG_VERDICT: u32 = 0;
const NFT_REG_1: u32 = 1;
const NFT_META_MARK: u32 = 3;
const NFT_META_L4PROTO: u32 = 16;
const NFT_CMP_EQ: u32 = 0;
const NFT_CMP_LTE: u32 = 3;
const NFT_CMP_GTE: u32 = 5;
const NFT_PAYLOAD_NETWORK_HEADER: u32 = 1;
const NFT_PAYLOAD_TRANSPORT_HEADER: u32 = 2;
const NFT_SOCKET_TRANSPARENT: u32 = 0;
const NFT_FIB_RESULT_ADDRTYPE: u32 = 3;
const NFTA_FIB_F_DADDR: u32 = 1 << 1;
const RTN_LOCAL: u32 = 2;
const IPPROTO_TCP: u8 = 6;

/// One netlink message under construction: header, nfgenmsg, attributes.
struct Msg {
    b: Vec<u8>,
    nests: Vec<usize>,
}

impl Msg {
    fn new(ty: u16, flags: u16, seq: u32, family: u8, res_id: u16) -> Msg {
        let mut b = Vec::with_capacity(256);
        b.extend_from_slice(&0u32.to_ne_bytes()); // nlmsg_len, set by `finish`
        b.extend_from_slice(&ty.to_ne_bytes());
        b.extend_from_slice(&flags.to_ne_bytes());
        b.extend_from_slice(&seq.to_ne_bytes());
        b.extend_from_slice(&0u32.to_ne_bytes()); // nlmsg_pid: the kernel
        b.push(family);
        b.push(0); // NFNETLINK_V0
        b.extend_from_slice(&res_id.to_be_bytes());
        Msg {
            b,
            nests: Vec::new(),
        }
    }

    fn pad(&mut self) {
        while !self.b.len().is_multiple_of(4) {
            self.b.push(0);
        }
    }

    fn put(&mut self, ty: u16, data: &[u8]) -> &mut Self {
        self.b
            .extend_from_slice(&((4 + data.len()) as u16).to_ne_bytes());
        self.b.extend_from_slice(&ty.to_ne_bytes());
        self.b.extend_from_slice(data);
        self.pad();
        self
    }

    fn str(&mut self, ty: u16, s: &str) -> &mut Self {
        let mut v = s.as_bytes().to_vec();
        v.push(0);
        self.put(ty, &v)
    }

    fn be32(&mut self, ty: u16, v: u32) -> &mut Self {
        self.put(ty, &v.to_be_bytes())
    }

    fn begin(&mut self, ty: u16) -> &mut Self {
        self.nests.push(self.b.len());
        self.b.extend_from_slice(&0u16.to_ne_bytes());
        self.b.extend_from_slice(&(ty | NLA_F_NESTED).to_ne_bytes());
        self
    }

    fn end(&mut self) -> &mut Self {
        let at = self.nests.pop().expect("unbalanced nest");
        let len = (self.b.len() - at) as u16;
        self.b[at..at + 2].copy_from_slice(&len.to_ne_bytes());
        self
    }

    /// `ty` holding a nested `NFTA_DATA_VALUE`.
    fn value(&mut self, ty: u16, data: &[u8]) -> &mut Self {
        self.begin(ty).put(NFTA_DATA_VALUE, data).end()
    }

    fn finish(mut self) -> Vec<u8> {
        assert!(self.nests.is_empty(), "unbalanced nest");
        let len = self.b.len() as u32;
        self.b[0..4].copy_from_slice(&len.to_ne_bytes());
        self.b
    }

    /// One expression: `NFTA_LIST_ELEM { NAME, DATA { .. } }`.
    fn expr(&mut self, name: &str, data: impl FnOnce(&mut Msg)) -> &mut Self {
        self.begin(NFTA_LIST_ELEM).str(NFTA_EXPR_NAME, name);
        self.begin(NFTA_EXPR_DATA);
        data(self);
        self.end().end()
    }

    // The expressions, named as `nft --debug=netlink` prints them.

    /// `[ meta load KEY => reg 1 ]`
    fn meta_load(&mut self, key: u32) -> &mut Self {
        self.expr("meta", |m| {
            m.be32(NFTA_META_KEY, key).be32(NFTA_META_DREG, NFT_REG_1);
        })
    }

    /// `[ meta set KEY with reg 1 ]`
    fn meta_set(&mut self, key: u32) -> &mut Self {
        self.expr("meta", |m| {
            m.be32(NFTA_META_KEY, key).be32(NFTA_META_SREG, NFT_REG_1);
        })
    }

    /// `[ cmp OP reg 1 DATA ]`
    fn cmp(&mut self, op: u32, data: &[u8]) -> &mut Self {
        self.expr("cmp", |m| {
            m.be32(NFTA_CMP_SREG, NFT_REG_1)
                .be32(NFTA_CMP_OP, op)
                .value(NFTA_CMP_DATA, data);
        })
    }

    /// `[ payload load LENb @ BASE header + OFFSET => reg 1 ]`
    fn payload(&mut self, base: u32, offset: u32, len: u32) -> &mut Self {
        self.expr("payload", |m| {
            m.be32(NFTA_PAYLOAD_DREG, NFT_REG_1)
                .be32(NFTA_PAYLOAD_BASE, base)
                .be32(NFTA_PAYLOAD_OFFSET, offset)
                .be32(NFTA_PAYLOAD_LEN, len);
        })
    }

    /// `[ bitwise reg 1 = ( reg 1 & MASK ) ^ 0 ]`
    fn bitwise_and(&mut self, mask: &[u8]) -> &mut Self {
        self.expr("bitwise", |m| {
            m.be32(NFTA_BITWISE_SREG, NFT_REG_1)
                .be32(NFTA_BITWISE_DREG, NFT_REG_1)
                .be32(NFTA_BITWISE_LEN, mask.len() as u32)
                .value(NFTA_BITWISE_MASK, mask)
                .value(NFTA_BITWISE_XOR, &vec![0; mask.len()]);
        })
    }

    /// `[ immediate reg 1 DATA ]`
    fn immediate(&mut self, data: &[u8]) -> &mut Self {
        self.expr("immediate", |m| {
            m.be32(NFTA_IMMEDIATE_DREG, NFT_REG_1)
                .value(NFTA_IMMEDIATE_DATA, data);
        })
    }

    /// `[ immediate reg 0 accept ]`
    fn accept(&mut self) -> &mut Self {
        self.expr("immediate", |m| {
            m.be32(NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT)
                .begin(NFTA_IMMEDIATE_DATA)
                .begin(NFTA_DATA_VERDICT)
                .be32(NFTA_VERDICT_CODE, NF_ACCEPT)
                .end()
                .end();
        })
    }

    /// `ip saddr|daddr SUBNET`: a /32 is one compare, anything shorter is masked first
    /// (as nft does for `0.0.0.0/0`).
    fn subnet(&mut self, offset: u32, s: &Subnet) -> &mut Self {
        let mask = if s.prefix == 0 {
            0
        } else {
            u32::MAX << (32 - s.prefix)
        };
        self.payload(NFT_PAYLOAD_NETWORK_HEADER, offset, 4);
        if s.prefix < 32 {
            self.bitwise_and(&mask.to_be_bytes());
        }
        self.cmp(NFT_CMP_EQ, &(u32::from(s.addr) & mask).to_be_bytes())
    }

    /// `tcp dport P` or `tcp dport LO-HI` (after `meta l4proto tcp`).
    fn dport(&mut self, p: &Ports) -> &mut Self {
        self.meta_load(NFT_META_L4PROTO)
            .cmp(NFT_CMP_EQ, &[IPPROTO_TCP])
            .payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
        if p.lo == p.hi {
            self.cmp(NFT_CMP_EQ, &p.lo.to_be_bytes())
        } else {
            self.cmp(NFT_CMP_GTE, &p.lo.to_be_bytes())
                .cmp(NFT_CMP_LTE, &p.hi.to_be_bytes())
        }
    }
}

/// A batch: its bytes and, for each message that asks for an acknowledgement, its
/// sequence number and what it is (for error messages).
pub struct Batch {
    pub bytes: Vec<u8>,
    pub labels: Vec<(u32, String)>,
}

struct Builder {
    bytes: Vec<u8>,
    labels: Vec<(u32, String)>,
    seq: u32,
}

impl Builder {
    fn new(seq: u32) -> Builder {
        let mut b = Builder {
            bytes: Vec::new(),
            labels: Vec::new(),
            seq,
        };
        let m = Msg::new(
            NFNL_MSG_BATCH_BEGIN,
            NLM_F_REQUEST,
            b.next(),
            AF_UNSPEC,
            NFNL_SUBSYS_NFTABLES,
        );
        b.bytes.extend(m.finish());
        b
    }

    fn next(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    fn msg(&mut self, ty: u16, flags: u16) -> Msg {
        let seq = self.next();
        Msg::new(
            (NFNL_SUBSYS_NFTABLES << 8) | ty,
            NLM_F_REQUEST | NLM_F_ACK | flags,
            seq,
            NFPROTO_IPV4,
            0,
        )
    }

    fn push(&mut self, m: Msg, label: String) {
        let seq = u32::from_ne_bytes(m.b[8..12].try_into().unwrap());
        self.labels.push((seq, label));
        self.bytes.extend(m.finish());
    }

    fn table(&mut self, ty: u16, flags: u16, name: &str, label: &str) {
        let mut m = self.msg(ty, flags);
        m.str(NFTA_TABLE_NAME, name);
        self.push(m, label.into());
    }

    fn rule(&mut self, c: &Config, label: &str, exprs: impl FnOnce(&mut Msg)) {
        let mut m = self.msg(NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
        m.str(NFTA_RULE_TABLE, &c.nft.table)
            .str(NFTA_RULE_CHAIN, "prerouting")
            .begin(NFTA_RULE_EXPRESSIONS);
        exprs(&mut m);
        m.end();
        self.push(m, format!("NEWRULE ({label})"));
    }

    fn finish(mut self) -> Batch {
        let m = Msg::new(
            NFNL_MSG_BATCH_END,
            NLM_F_REQUEST,
            self.next(),
            AF_UNSPEC,
            NFNL_SUBSYS_NFTABLES,
        );
        self.bytes.extend(m.finish());
        Batch {
            bytes: self.bytes,
            labels: self.labels,
        }
    }
}

/// The combinations the TPROXY rules match (none on gateway B), refused past the bound.
pub fn intercepts(c: &Config) -> Result<Vec<(Subnet, Subnet, Ports)>, String> {
    if c.is_gateway_b() {
        return Ok(Vec::new());
    }
    let mm = &c.matching;
    let n = mm.sources.len() * mm.destinations.len() * mm.ports.len();
    if n > MAX_INTERCEPT_RULES {
        return Err(format!(
            "nf_tables: {} sources x {} destinations x {} port ranges = {n} TPROXY rules, more than {MAX_INTERCEPT_RULES}; use fewer, wider subnets or ranges",
            mm.sources.len(),
            mm.destinations.len(),
            mm.ports.len()
        ));
    }
    let mut v = Vec::with_capacity(n);
    for s in &mm.sources {
        for d in &mm.destinations {
            for p in &mm.ports {
                v.push((*s, *d, *p));
            }
        }
    }
    Ok(v)
}

/// One exception rule: source, destination and port range, `None` for any.
pub type Exception = (Option<Subnet>, Option<Subnet>, Option<Ports>);

/// The `match.except` entries expanded into rules (none on gateway B, which intercepts
/// nothing), refused past the bound.
pub fn exceptions(c: &Config) -> Result<Vec<Exception>, String> {
    if c.is_gateway_b() {
        return Ok(Vec::new());
    }
    fn any<T: Copy>(v: &[T]) -> Vec<Option<T>> {
        if v.is_empty() {
            vec![None]
        } else {
            v.iter().copied().map(Some).collect()
        }
    }
    let mut v = Vec::new();
    for e in &c.matching.except {
        for s in any(&e.sources) {
            for d in any(&e.destinations) {
                for p in any(&e.ports) {
                    v.push((s, d, p));
                }
            }
        }
        if v.len() > MAX_EXCEPT_RULES {
            return Err(format!(
                "nf_tables: match.except expands into more than {MAX_EXCEPT_RULES} rules (sources x destinations x port ranges per entry); use fewer, wider subnets or ranges"
            ));
        }
    }
    Ok(v)
}

/// A rule label's name for an exception's part (`any` when omitted).
fn or_any<T: std::fmt::Display>(x: &Option<T>) -> String {
    x.as_ref().map_or("any".into(), T::to_string)
}

/// The install transaction: NEWTABLE, DELTABLE, NEWTABLE (a table left by a killed
/// daemon is replaced, never doubled), NEWCHAIN `prerouting`, then the rules.
pub fn install_batch(c: &Config, seq: u32) -> Result<Batch, String> {
    let t = &c.nft.table;
    let mark = c.nft.mark.to_ne_bytes();
    let mut b = Builder::new(seq);
    b.table(NFT_MSG_NEWTABLE, NLM_F_CREATE, t, "NEWTABLE");
    b.table(NFT_MSG_DELTABLE, 0, t, "DELTABLE");
    b.table(NFT_MSG_NEWTABLE, NLM_F_CREATE, t, "NEWTABLE");
    let mut m = b.msg(NFT_MSG_NEWCHAIN, NLM_F_CREATE);
    m.str(NFTA_CHAIN_TABLE, t)
        .str(NFTA_CHAIN_NAME, "prerouting")
        .begin(NFTA_CHAIN_HOOK)
        .be32(NFTA_HOOK_HOOKNUM, NF_INET_PRE_ROUTING)
        .be32(NFTA_HOOK_PRIORITY, NF_IP_PRI_MANGLE as u32)
        .end()
        .be32(NFTA_CHAIN_POLICY, NF_ACCEPT)
        .str(NFTA_CHAIN_TYPE, "filter");
    b.push(m, "NEWCHAIN (prerouting)".into());
    // meta l4proto tcp socket transparent 1 meta mark set MARK accept
    b.rule(c, "socket transparent", |m| {
        m.meta_load(NFT_META_L4PROTO)
            .cmp(NFT_CMP_EQ, &[IPPROTO_TCP])
            .expr("socket", |m| {
                m.be32(NFTA_SOCKET_KEY, NFT_SOCKET_TRANSPARENT)
                    .be32(NFTA_SOCKET_DREG, NFT_REG_1);
            })
            .cmp(NFT_CMP_EQ, &[1])
            .immediate(&mark)
            .meta_set(NFT_META_MARK)
            .accept();
    });
    // fib daddr type local accept
    b.rule(c, "fib daddr type local", |m| {
        m.expr("fib", |m| {
            m.be32(NFTA_FIB_DREG, NFT_REG_1)
                .be32(NFTA_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE)
                .be32(NFTA_FIB_FLAGS, NFTA_FIB_F_DADDR);
        })
        .cmp(NFT_CMP_EQ, &RTN_LOCAL.to_ne_bytes())
        .accept();
    });
    // [ip saddr S] [ip daddr D] [tcp dport P] accept: routed, never intercepted
    for (s, d, p) in exceptions(c)? {
        let label = format!(
            "except {} -> {} port {}",
            or_any(&s),
            or_any(&d),
            or_any(&p)
        );
        b.rule(c, &label, |m| {
            if let Some(s) = &s {
                m.subnet(12, s);
            }
            if let Some(d) = &d {
                m.subnet(16, d);
            }
            if let Some(p) = &p {
                m.dport(p);
            }
            m.accept();
        });
    }
    // ip saddr S ip daddr D tcp dport P tproxy to :PORT meta mark set MARK accept
    for (s, d, p) in intercepts(c)? {
        b.rule(c, &format!("tproxy {s} -> {d} port {p}"), |m| {
            m.subnet(12, &s)
                .subnet(16, &d)
                .dport(&p)
                .immediate(&c.listen_port.to_be_bytes())
                .expr("tproxy", |m| {
                    m.be32(NFTA_TPROXY_FAMILY, NFPROTO_IPV4 as u32)
                        .be32(NFTA_TPROXY_REG_PORT, NFT_REG_1);
                })
                .immediate(&mark)
                .meta_set(NFT_META_MARK)
                .accept();
        });
    }
    Ok(b.finish())
}

/// The removal transaction: DELTABLE.
pub fn remove_batch(c: &Config, seq: u32) -> Batch {
    let mut b = Builder::new(seq);
    b.table(NFT_MSG_DELTABLE, 0, &c.nft.table, "DELTABLE");
    b.finish()
}

/// The kernel module an expression's failure most likely points at.
fn hint(label: &str, errno: i32) -> String {
    let module = [
        ("socket", "nft_socket"),
        ("fib", "nft_fib_ipv4"),
        ("tproxy", "nft_tproxy"),
    ]
    .iter()
    .find(|(k, _)| label.contains(&format!("({k}")));
    match (errno, module) {
        (libc_errno::EPERM, _) => " (needs CAP_NET_ADMIN in this network namespace)".into(),
        (libc_errno::EOPNOTSUPP | libc_errno::ENOENT, Some((_, m))) => {
            format!(" (is {m} in the kernel?)")
        }
        (libc_errno::EOPNOTSUPP | libc_errno::EAFNOSUPPORT, None) => {
            " (is nf_tables in the kernel?)".into()
        }
        _ => String::new(),
    }
}

mod libc_errno {
    pub const EPERM: i32 = 1;
    pub const ENOENT: i32 = 2;
    pub const EAFNOSUPPORT: i32 = 97;
    pub const EOPNOTSUPP: i32 = 95;
}

fn errno_name(e: i32) -> &'static str {
    match e {
        1 => "EPERM",
        2 => "ENOENT",
        12 => "ENOMEM",
        16 => "EBUSY",
        17 => "EEXIST",
        22 => "EINVAL",
        28 => "ENOSPC",
        34 => "ERANGE",
        90 => "EMSGSIZE",
        93 => "EPROTONOSUPPORT",
        95 => "EOPNOTSUPP",
        97 => "EAFNOSUPPORT",
        105 => "ENOBUFS",
        _ => "errno",
    }
}

/// "nf_tables: NEWRULE (tproxy …) failed: Operation not supported (EOPNOTSUPP) (is
/// nft_tproxy in the kernel?)"
pub fn describe(label: &str, errno: i32) -> String {
    format!(
        "nf_tables: {label} failed: {} ({}){}",
        std::io::Error::from_raw_os_error(errno)
            .to_string()
            .split(" (os error")
            .next()
            .unwrap_or(""),
        errno_name(errno),
        hint(label, errno)
    )
}

/// Sends `batch` on a fresh `NETLINK_NETFILTER` socket and checks every acknowledgement.
/// The kernel handles a batch within `sendto`, so every answer is queued when it returns.
#[cfg(target_os = "linux")]
pub fn send(batch: &Batch) -> Result<(), String> {
    use std::io::Error;
    let fail = |what: &str| format!("nf_tables: {what}: {}", Error::last_os_error());
    // SAFETY: plain socket calls on a descriptor this function owns and closes.
    unsafe {
        let fd = libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_NETFILTER,
        );
        if fd < 0 {
            return Err(fail("netlink socket"));
        }
        struct Fd(i32);
        impl Drop for Fd {
            fn drop(&mut self) {
                // SAFETY: the descriptor is ours.
                unsafe { libc::close(self.0) };
            }
        }
        let fd = Fd(fd);
        // Acknowledgements without the request echoed back.
        let one: libc::c_int = 1;
        libc::setsockopt(
            fd.0,
            libc::SOL_NETLINK,
            libc::NETLINK_CAP_ACK,
            &one as *const _ as *const libc::c_void,
            size_of::<libc::c_int>() as u32,
        );
        let mut addr: libc::sockaddr_nl = std::mem::zeroed();
        addr.nl_family = libc::AF_NETLINK as u16;
        let n = libc::sendto(
            fd.0,
            batch.bytes.as_ptr() as *const libc::c_void,
            batch.bytes.len(),
            0,
            &addr as *const _ as *const libc::sockaddr,
            size_of::<libc::sockaddr_nl>() as u32,
        );
        if n < 0 || n as usize != batch.bytes.len() {
            return Err(fail("sending the batch"));
        }
        let mut answered: Vec<(u32, i32)> = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = libc::recv(
                fd.0,
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
                libc::MSG_DONTWAIT,
            );
            if n < 0 {
                let e = Error::last_os_error();
                if e.kind() == std::io::ErrorKind::WouldBlock {
                    break;
                }
                return Err(format!("nf_tables: reading acknowledgements: {e}"));
            }
            answered.extend(acks(&buf[..n as usize]));
        }
        check(batch, &answered)
    }
}

/// The `(seq, error)` of each `NLMSG_ERROR` (an acknowledgement when the error is 0), up
/// to the first malformed message.
pub fn acks(b: &[u8]) -> Vec<(u32, i32)> {
    messages(b)
        .map_while(Result::ok)
        .filter_map(|m| Some((m.seq, m.error()?)))
        .collect()
}

/// The first failure in batch order, or a message nobody acknowledged.
pub fn check(batch: &Batch, answered: &[(u32, i32)]) -> Result<(), String> {
    for (seq, label) in &batch.labels {
        if let Some(&(_, e)) = answered.iter().find(|(s, e)| s == seq && *e != 0) {
            return Err(describe(label, e));
        }
    }
    for (seq, label) in &batch.labels {
        if !answered.iter().any(|(s, _)| s == seq) {
            return Err(format!(
                "nf_tables: {label}: no acknowledgement from the kernel"
            ));
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub fn send(_: &Batch) -> Result<(), String> {
    Err("nf_tables: netlink needs Linux".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netlink::NLMSG_ERROR;

    /// `(type, payload)` of each attribute in `b`.
    fn attrs(mut b: &[u8]) -> Vec<(u16, &[u8])> {
        let mut v = Vec::new();
        while b.len() >= 4 {
            let len = u16::from_ne_bytes([b[0], b[1]]) as usize;
            let ty = u16::from_ne_bytes([b[2], b[3]]) & !NLA_F_NESTED;
            assert!(len >= 4 && len <= b.len(), "bad attribute length {len}");
            v.push((ty, &b[4..len]));
            b = &b[((len + 3) & !3).min(b.len())..];
        }
        v
    }

    fn msgs(mut b: &[u8]) -> Vec<(u16, u16, u32, u8, &[u8])> {
        let mut v = Vec::new();
        while !b.is_empty() {
            let len = u32::from_ne_bytes(b[0..4].try_into().unwrap()) as usize;
            assert!(len >= 20 && len <= b.len() && len.is_multiple_of(4));
            let ty = u16::from_ne_bytes([b[4], b[5]]);
            let flags = u16::from_ne_bytes([b[6], b[7]]);
            let seq = u32::from_ne_bytes(b[8..12].try_into().unwrap());
            v.push((ty, flags, seq, b[16], &b[20..len]));
            b = &b[len..];
        }
        v
    }

    /// The expression names of a NEWRULE's payload, with each `cmp`'s data.
    fn exprs(payload: &[u8]) -> Vec<String> {
        let (_, list) = attrs(payload)
            .into_iter()
            .find(|(t, _)| *t == NFTA_RULE_EXPRESSIONS)
            .unwrap();
        attrs(list)
            .into_iter()
            .map(|(t, elem)| {
                assert_eq!(t, NFTA_LIST_ELEM);
                let a = attrs(elem);
                let name = std::str::from_utf8(a[0].1).unwrap();
                name.trim_end_matches('\0').to_string()
            })
            .collect()
    }

    fn config(extra: &str) -> Config {
        Config::parse(
            &format!("mode = \"integrated\"\nlisten_port = 7070\n[match]\nsources = [\"10.1.0.0/24\", \"10.3.0.5\"]\nports = [5001, \"8000-8100\"]\n{extra}"),
            "t.toml",
        )
        .unwrap()
    }

    #[test]
    fn the_batch_is_one_transaction_of_the_scripts_rules() {
        let c = config("");
        let b = install_batch(&c, 100).unwrap();
        let m = msgs(&b.bytes);
        let sub = |t: u16| (NFNL_SUBSYS_NFTABLES << 8) | t;
        let types: Vec<u16> = m.iter().map(|x| x.0).collect();
        let mut want = vec![
            NFNL_MSG_BATCH_BEGIN,
            sub(NFT_MSG_NEWTABLE),
            sub(NFT_MSG_DELTABLE),
            sub(NFT_MSG_NEWTABLE),
            sub(NFT_MSG_NEWCHAIN),
            sub(NFT_MSG_NEWRULE),
            sub(NFT_MSG_NEWRULE),
        ];
        // 2 sources x 1 destination x 2 port ranges.
        want.extend([sub(NFT_MSG_NEWRULE); 4]);
        want.push(NFNL_MSG_BATCH_END);
        assert_eq!(types, want);
        // Begin and end carry the subsystem in res_id; the rest ask for an ack.
        assert_eq!(&b.bytes[18..20], &NFNL_SUBSYS_NFTABLES.to_be_bytes());
        for (i, x) in m.iter().enumerate() {
            assert_eq!(x.2, 101 + i as u32, "sequence numbers run on");
            if i == 0 || i == m.len() - 1 {
                assert_eq!(x.1, NLM_F_REQUEST);
                assert_eq!(x.3, AF_UNSPEC);
            } else {
                assert_ne!(x.1 & NLM_F_ACK, 0);
                assert_eq!(x.3, NFPROTO_IPV4);
            }
        }
        assert_eq!(
            m[5].1,
            NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_APPEND
        );
        assert_eq!(b.labels.len(), m.len() - 2);
        // The table name and the chain's hook.
        let t = attrs(m[1].4);
        assert_eq!(t, vec![(NFTA_TABLE_NAME, &b"hetpath_pep\0"[..])]);
        let ch = attrs(m[4].4);
        let hook = attrs(ch.iter().find(|a| a.0 == NFTA_CHAIN_HOOK).unwrap().1);
        assert_eq!(hook[1], (NFTA_HOOK_PRIORITY, &(-150i32).to_be_bytes()[..]));
        assert!(ch.contains(&(NFTA_CHAIN_TYPE, &b"filter\0"[..])));
        assert!(ch.contains(&(NFTA_CHAIN_POLICY, &1u32.to_be_bytes()[..])));
        // The rules' expressions, as `nft --debug=netlink` lists them.
        let tail = ["immediate", "meta", "immediate"];
        let mut socket = vec!["meta", "cmp", "socket", "cmp"];
        socket.extend(tail);
        assert_eq!(exprs(m[5].4), socket);
        assert_eq!(exprs(m[6].4), ["fib", "cmp", "immediate"]);
        let head = |src: &[&'static str], port: &[&'static str]| {
            let mut v = vec!["payload"];
            v.extend(src);
            v.extend(["payload", "bitwise", "cmp", "meta", "cmp", "payload"]);
            v.extend(port);
            v.extend(["immediate", "tproxy"]);
            v.extend(tail);
            v
        };
        // 10.1.0.0/24 is masked, 10.3.0.5 compared whole; 5001 one cmp, 8000-8100 two.
        assert_eq!(exprs(m[7].4), head(&["bitwise", "cmp"], &["cmp"]));
        assert_eq!(exprs(m[8].4), head(&["bitwise", "cmp"], &["cmp", "cmp"]));
        assert_eq!(exprs(m[9].4), head(&["cmp"], &["cmp"]));
        assert_eq!(exprs(m[10].4), head(&["cmp"], &["cmp", "cmp"]));
        // The last rule's labels say what it is.
        assert_eq!(
            b.labels.last().unwrap().1,
            "NEWRULE (tproxy 10.3.0.5/32 -> 0.0.0.0/0 port 8000-8100)"
        );
    }

    #[test]
    fn exceptions_are_accept_rules_ahead_of_the_tproxy_rules() {
        let c = config(
            "[[match.except]]\nsources = [\"10.1.0.7\"]\ndestinations = [\"10.2.0.0/16\", \"10.4.0.1\"]\nports = [8000]\n[[match.except]]\nports = [\"8050-8060\"]\n[[match.deny]]\nports = [5001]\n",
        );
        let b = install_batch(&c, 0).unwrap();
        let m = msgs(&b.bytes);
        let labels: Vec<&str> = b.labels.iter().map(|(_, l)| l.as_str()).collect();
        // After the socket and fib rules: 1 x 2 x 1 + 1 exception rules, then the 4
        // TPROXY rules; the deny entry is the daemon's, no rule.
        assert_eq!(
            labels[6..9],
            [
                "NEWRULE (except 10.1.0.7/32 -> 10.2.0.0/16 port 8000)",
                "NEWRULE (except 10.1.0.7/32 -> 10.4.0.1/32 port 8000)",
                "NEWRULE (except any -> any port 8050-8060)",
            ]
        );
        assert!(labels[9..].iter().all(|l| l.starts_with("NEWRULE (tproxy")));
        assert_eq!(labels.len(), 9 + 4);
        let src_dst_port = [
            "payload",
            "cmp",
            "payload",
            "bitwise",
            "cmp",
            "meta",
            "cmp",
            "payload",
            "cmp",
            "immediate",
        ];
        assert_eq!(exprs(m[7].4), src_dst_port);
        assert_eq!(
            exprs(m[8].4)[2..],
            [
                "payload",
                "cmp",
                "meta",
                "cmp",
                "payload",
                "cmp",
                "immediate"
            ]
        );
        // A port range alone: no address match at all.
        assert_eq!(
            exprs(m[9].4),
            ["meta", "cmp", "payload", "cmp", "cmp", "immediate"]
        );
        // Past the bound.
        let ports: Vec<String> = (0..=MAX_EXCEPT_RULES)
            .map(|i| (1000 + i).to_string())
            .collect();
        let c = config(&format!(
            "[[match.except]]\nports = [{}]\n",
            ports.join(", ")
        ));
        let e = install_batch(&c, 0).err().unwrap();
        assert!(
            e.contains("match.except expands into more than 128 rules"),
            "{e}"
        );
    }

    #[test]
    fn removal_is_one_deltable() {
        let c = config("");
        let m = msgs(&remove_batch(&c, 0).bytes)
            .iter()
            .map(|x| x.0)
            .collect::<Vec<_>>();
        assert_eq!(
            m,
            [
                NFNL_MSG_BATCH_BEGIN,
                (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELTABLE,
                NFNL_MSG_BATCH_END
            ]
        );
    }

    #[test]
    fn too_many_combinations_are_refused() {
        let ports: Vec<String> = (0..MAX_INTERCEPT_RULES)
            .map(|i| (1000 + i).to_string())
            .collect();
        let c = Config::parse(
            &format!("mode = \"integrated\"\nlisten_port = 7070\n[match]\nsources = [\"10.1.0.0/24\", \"10.3.0.5\"]\nports = [{}]\n", ports.join(", ")),
            "t.toml",
        )
        .unwrap();
        let e = install_batch(&c, 0).err().unwrap();
        assert!(e.contains("256 TPROXY rules, more than 128"), "{e}");
    }

    #[test]
    fn errors_name_the_message_and_the_errno() {
        let b = Batch {
            bytes: Vec::new(),
            labels: vec![(1, "NEWTABLE".into()), (2, "NEWRULE (tproxy x)".into())],
        };
        assert_eq!(check(&b, &[(1, 0), (2, 0)]), Ok(()));
        assert_eq!(
            check(&b, &[(1, 0), (2, 95)]).unwrap_err(),
            "nf_tables: NEWRULE (tproxy x) failed: Operation not supported (EOPNOTSUPP) (is nft_tproxy in the kernel?)"
        );
        assert!(check(&b, &[(1, 0)])
            .unwrap_err()
            .contains("no acknowledgement"));
        // An ack as the kernel sends it: nlmsghdr, then the (negative) error.
        let mut ack = Vec::new();
        ack.extend(36u32.to_ne_bytes());
        ack.extend(NLMSG_ERROR.to_ne_bytes());
        ack.extend(0u16.to_ne_bytes());
        ack.extend(7u32.to_ne_bytes());
        ack.extend(0u32.to_ne_bytes());
        ack.extend((-1i32).to_ne_bytes());
        ack.extend([0u8; 16]);
        assert_eq!(acks(&ack), [(7, 1)]);
    }
}

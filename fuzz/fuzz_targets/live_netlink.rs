//! The link core's netlink decoders on arbitrary bytes: the sock_diag dump of the kernel's
//! TCP connections (`tcp_diag::decode`) and the PEP's nf_tables acknowledgements
//! (`nftnl::acks`), both over `netlink::messages`.
#![no_main]
use hetpath_live::pep::rules::nftnl;
use hetpath_live::tcp_diag;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut out = Vec::new();
    let _ = tcp_diag::decode(data, &mut out);
    let _ = nftnl::acks(data);
});

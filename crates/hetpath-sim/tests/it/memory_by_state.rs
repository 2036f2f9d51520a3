//! Memory follows what is in flight, not what is configured: a message far larger than
//! memory goes over SCTP as its window allows; an APOHN buffer the booster could not
//! hold is refused at load. (Mobile IP's advertisement period: `mobile_queue.rs`.)

use crate::common::{self, run};
use hetpath_sim::{load, Summary};

/// Two nodes and one bulk SCTP flow whose source writes messages of `message`.
fn sctp(message: &str) -> String {
    common::two_node(
        "3s",
        "rate = \"10Mbps\"\ndelay = \"20ms\"",
        &format!(
            "[[flow]]\nname = \"f\"\nfrom = \"a\"\nto = \"b\"\ntransport = \"sctp\"\nsctp = {{ message = \"{message}\" }}"
        ),
    )
}

/// The counter `name` of the SCTP endpoint on `node`.
fn counter(s: &Summary, node: &str, name: &str) -> u64 {
    common::machine_counter(s, "sctp", node, name)
}

/// A petabyte message: cut into chunks as they are sent (it used to be cut whole when
/// queued, a multi-terabyte allocation that aborted the process).
#[test]
fn a_petabyte_sctp_message_goes_as_the_window_allows() {
    let (s, _) = run(&sctp("1000000GB"), None);
    let sent = counter(&s, "a", "data_bytes_sent");
    // Most of 3 s at 10 Mbit/s.
    assert!(sent > 1_500_000, "{sent} bytes sent");
    assert_eq!(counter(&s, "a", "aborted"), 0);
    assert!(s.flows[0].completion_s.is_none());
}

/// The APOHN example with `buffer` on its agent.
fn apohn(buffer: &str) -> String {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/examples/geo-wlan-apohn.toml"
    ))
    .unwrap();
    format!("{text}\nbuffer = {buffer}\nwindow = \"fixed\"\n")
}

#[test]
fn an_apohn_buffer_past_what_can_be_held_is_refused_at_load() {
    for buffer in ["4294967296", "10000000", "1000001"] {
        let e = load(&apohn(buffer), "apohn.toml", None)
            .err()
            .unwrap_or_else(|| panic!("accepted buffer = {buffer}"))
            .to_string();
        assert!(
            e.contains("apohn.toml") && e.contains("buffer") && e.contains("at most 1000000"),
            "{buffer}: {e}"
        );
    }
    assert!(load(&apohn("1000000"), "apohn.toml", None).is_ok());
}

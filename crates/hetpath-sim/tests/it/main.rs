//! The integration tests of hetpath-sim, one module per concern, linked as one binary
//! (a test binary per file linked the crate 26 times). `common` holds the
//! helpers that write a scenario, run it and read its results.

mod agents;
mod apohn;
mod capacity;
mod capture;
mod cc_bounds;
mod common;
mod determinism;
mod ephemeral_ports;
mod esw_link;
mod event_queue_candidates;
mod host_full_queue;
mod ilc_tcp;
mod lift;
mod limits;
mod loss_models;
mod machine_contract;
mod memory_by_state;
mod mobile_queue;
mod mobile_wlan;
mod progress;
mod random_topologies;
mod router_validation;
mod satpep;
mod scaling;
mod scenario_errors;
mod scenario_fuzz;
mod sctp;
mod semantic_checks;
mod sender_choices;
mod tcp_radio;
mod trace;
mod ttl_and_no_route;
mod watchdog;
mod web;
mod web_sctp;
mod wlan;
mod wlan_extremes;

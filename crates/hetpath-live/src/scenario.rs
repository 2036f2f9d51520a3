//! A scenario's link, ready to emulate: the scenario is loaded exactly as `hetpath run`
//! loads it (the same checks, the same seeded channel streams), and the named link is
//! detached from it (`Simulation::detach`) with its outages. Nothing about links or
//! channels is built here: there is one implementation, the simulator's.

use hetpath_proto::Dur;
use hetpath_sim::capture;
use hetpath_sim::scenario::{load_with, parse, ScenarioError, DEFAULT_SAMPLE_INTERVAL};
use hetpath_sim::sim::DetachedDir;

/// The link to emulate, a -> b first.
pub struct LiveLink {
    pub dirs: [DetachedDir; 2],
    /// The link's name as the scenario gives it.
    pub name: String,
    /// The names `hetpath run --pcap` gives the two directions' captures.
    pub pcap_names: [String; 2],
    /// The node names at its ends, a then b.
    pub nodes: [String; 2],
    /// The seed the channels were built with (the scenario's, or the override).
    pub seed: u64,
    /// `scenario.sample_interval`, or `hetpath run`'s default: the link series' period.
    pub sample_interval: Dur,
}

/// Loads scenario `text` (named `file` in errors; relative trace files resolve against
/// its directory) and detaches link `link`. A link that is unknown or cannot be emulated
/// is reported as a scenario error on the key `link`, naming the links there are.
pub fn load_link(
    text: &str,
    file: &str,
    seed: Option<u64>,
    link: &str,
) -> Result<LiveLink, ScenarioError> {
    let sim = load_with(text, file, seed, false)?;
    // Valid by now: load_with parsed the same text.
    let sample_interval = parse(text, file)?
        .scenario
        .sample_interval
        .map_or(DEFAULT_SAMPLE_INTERVAL, |d| d.0);
    let seed = sim.seed;
    let at_link =
        |e: hetpath_sim::sim::DetachError| ScenarioError::new(file, "link", e.to_string());
    let [ab, ba] = sim.find_link(link).map_err(at_link)?;
    let pcap_names = [capture::file_name(&sim, ab), capture::file_name(&sim, ba)];
    let params = &sim.dir(ab).params;
    let nodes = [
        sim.node_name(params.from).to_string(),
        sim.node_name(params.to).to_string(),
    ];
    let name = params.name.clone();
    let dirs = sim.detach([ab, ba]).map_err(at_link)?;
    Ok(LiveLink {
        dirs,
        name,
        pcap_names,
        nodes,
        seed,
        sample_interval,
    })
}

//! A scenario's link, ready to emulate: the scenario is loaded exactly as `hetpath run`
//! loads it (the same checks, the same seeded channel streams), and the named link is
//! detached from it (`Simulation::detach_link`) with its outages. Nothing about links or
//! channels is built here: there is one implementation, the simulator's.

use hetpath_sim::capture;
use hetpath_sim::scenario::{load_with, ScenarioError};
use hetpath_sim::sim::DetachedDir;

/// The link to emulate, a -> b first.
pub struct LiveLink {
    pub dirs: [DetachedDir; 2],
    /// The names `hetpath run --pcap` gives the two directions' captures.
    pub pcap_names: [String; 2],
    /// The node names at its ends, a then b.
    pub nodes: [String; 2],
    /// The seed the channels were built with (the scenario's, or the override).
    pub seed: u64,
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
    let seed = sim.seed;
    let found = sim
        .dirs()
        .filter(|(_, d)| d.params.name == link)
        .map(|(id, d)| (id, d.params.from, d.params.to))
        .take(2)
        .collect::<Vec<_>>();
    let pcap_names = match found.as_slice() {
        [(ab, from, to), (ba, ..)] => Some((
            [capture::file_name(&sim, *ab), capture::file_name(&sim, *ba)],
            [
                sim.node_name(*from).to_string(),
                sim.node_name(*to).to_string(),
            ],
        )),
        _ => None,
    };
    let dirs = sim
        .detach_link(link)
        .map_err(|e| ScenarioError::new(file, "link", e.to_string()))?;
    let (pcap_names, nodes) = pcap_names.expect("a detached link has two directions");
    Ok(LiveLink {
        dirs,
        pcap_names,
        nodes,
        seed,
    })
}

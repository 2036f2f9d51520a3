//! Issue 17: scenarios that would run and report wrong results are errors: a
//! router-assisted controller with no router of its kind on the flow's path, and a split
//! PEP on a flow's own end (it delivered 0 bytes while the sender was told it was done).

use hetpath_sim::load;

use crate::common;

/// a - r - b, one flow a -> b with `cc`, and the given agents.
fn line(cc: &str, agents: &str) -> String {
    let flow = common::flow("f", cc, "size = \"100kB\"");
    common::router_line("5s", "delay = \"20ms\"", &(flow + agents))
}

fn agent(kind: &str, node: &str, link: &str) -> String {
    let link = if link.is_empty() {
        String::new()
    } else {
        format!("link = \"{link}\"\n")
    };
    format!("[[agent]]\nkind = \"{kind}\"\nnode = \"{node}\"\n{link}")
}

fn place_of_error(text: &str) -> String {
    match load(text, "x.toml", None) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            assert!(!e.to_string().contains('\n'));
            e.place
        }
    }
}

#[test]
fn a_router_assisted_controller_needs_its_router_on_the_path() {
    for cc in ["xcp", "vcp", "mpcp"] {
        assert_eq!(place_of_error(&line(cc, "")), "flow[0] 'f'.cc", "{cc}");
    }
    // A router of another kind, or on the way back only, does not count.
    assert_eq!(
        place_of_error(&line("xcp", &agent("vcp-router", "r", "bn"))),
        "flow[0] 'f'.cc"
    );
    assert_eq!(
        place_of_error(&line("xcp", &agent("xcp-router", "r", "in"))),
        "flow[0] 'f'.cc"
    );
    for (cc, kind) in [
        ("xcp", "xcp-router"),
        ("vcp", "vcp-router"),
        ("mpcp", "mpcp-router"),
        ("vcp", "mpcp-router"),
    ] {
        let text = line(cc, &agent(kind, "r", "bn"));
        load(&text, "x.toml", None).unwrap_or_else(|e| panic!("{cc} {kind}: {e}"));
    }
}

#[test]
fn a_split_pep_on_a_flows_end_is_an_error_naming_the_agent() {
    for node in ["b", "a"] {
        let text = line("cubic", &agent("split-pep", node, ""));
        assert_eq!(place_of_error(&text), "agent[0].node", "on {node}");
    }
    let text = line("cubic", &agent("split-pep", "r", ""));
    let mut sim = load(&text, "x.toml", None).unwrap();
    assert!(sim.run(&mut |_, _| true));
    assert_eq!(sim.summary(0.0).flows[0].bytes_delivered, 100_000);
}

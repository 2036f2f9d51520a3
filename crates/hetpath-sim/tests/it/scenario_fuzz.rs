//! The scenario loader never panics, whatever the text (docs/architecture.md, convention
//! 9): random bytes, and valid scenarios with one value or key mutated.

use hetpath_sim::load;
use proptest::prelude::*;

const BASE: &str = include_str!("../../../../scenarios/examples/geo-loss.toml");

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,400}") {
        let _ = load(&text, "fuzz.toml", None);
    }

    #[test]
    fn mutated_scenarios_never_panic(at in 0usize..BASE.len(), cut in 0usize..40, insert in prop::sample::select(vec![
        "", "-1", "\"-5Mbps\"", "0", "\"0s\"", "1e309", "\"\"", "[[flow]]", "= 3", "\"1e-9ms\"",
        "{ model = \"markov\", alpha = 0.0, beta = 0.0 }", "\"inf\"", "\"99999999999GB\"", "nan",
    ])) {
        let mut at = at;
        while !BASE.is_char_boundary(at) { at -= 1; }
        let mut end = (at + cut).min(BASE.len());
        while !BASE.is_char_boundary(end) { end -= 1; }
        let text = format!("{}{}{}", &BASE[..at], insert, &BASE[end..]);
        if let Ok(mut sim) = load(&text, "fuzz.toml", None) {
            // Whatever loads must also run; keep runs short.
            let mut budget = 3;
            sim.run(&mut |_, _| { budget -= 1; budget > 0 });
        }
    }
}

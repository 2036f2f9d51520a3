//! Nothing to link: this crate holds hetpath-sim's criterion benchmarks (`benches/`),
//! apart from hetpath-sim so that testing the workspace never builds criterion.

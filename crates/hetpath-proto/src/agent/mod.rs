//! Agents beside or inside the stack that are not TCP endpoints: cross-layer managers and
//! (later) proxies. Each is a sans-IO machine like `tcp::Connection`.

pub mod state_manager;

pub use state_manager::{Collaboration, StateManager};

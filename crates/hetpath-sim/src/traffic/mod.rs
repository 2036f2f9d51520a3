//! Traffic sources that any scenario can use: what the applications on the hosts ask
//! their transports to carry, and when.
//!
//! - `http`: web pages (main object, in-line objects, think time), seed 001's Table I.
//! - `web`: a browser fetching those pages over channels of any transport.

pub mod http;
pub mod web;

//! Bathtub's reliability engine. Pure Rust: no Python types anywhere, so `cargo test`
//! covers it and other front ends can reuse it.

pub mod diagram;
pub mod dist;
pub mod error;
pub mod rng;

/// Version of the engine, reported with every simulation result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

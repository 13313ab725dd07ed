//! Bathtub's reliability engine. Pure Rust: no Python types anywhere, so `cargo test`
//! covers it and other front ends can reuse it.
//!
//! `dist` (life and repair distributions), `diagram` (spec form and compiled form),
//! `sim` (the event core; `plain` its core path as one loop), `availability` and `mission` (the two run kinds with their
//! mergeable accumulators), `parallel` (rayon over replications), `rng` (streams),
//! `decisions` (what to improve and interval search: candidate designs on common random numbers),
//! `rare` (steady-state unavailability of Markovian diagrams by failure biasing),
//! `sort` (life data's packed keys), `variance` (variance reduction of availability runs).

pub mod agenda;
pub mod alt;
pub mod attribution;
pub mod availability;
pub mod decisions;
pub mod diagram;
pub mod dist;
pub mod error;
#[cfg(test)]
mod fixtures;
pub mod mission;
pub mod parallel;
mod plain;
pub mod rare;
pub mod rng;
pub mod sim;
pub mod sort;
pub mod stats;
pub mod variance;

/// Version of the engine, reported with every simulation result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

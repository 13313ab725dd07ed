//! The physical-limit baseline of the engine benchmark: the same plant as `two_trains` (two
//! parallel trains of `n` exponential blocks in series, MTTF 1000 h, MTTR 10 h, 10,000 h),
//! simulated with nothing but the event loop — the same random streams and the same
//! ziggurat exponential draws as the engine, the next event found by a scan, an event count and the system's up
//! time. No diagram structure, no grid, no accumulators, no allocation inside a replication.
//! What the engine spends above this per event is what its generality costs.
//!
//! `cargo run --release --example bare_loop -- [n] [reps] [threads]` prints the same line
//! shape as `two_trains`; `threads` is accepted for symmetry and must be 1 (the limit is a
//! per-core figure).
use bathtub_engine::dist::ziggurat::{Tables, tables};
use bathtub_engine::rng::Stream;
use std::time::Instant;

const MTTF: f64 = 1000.0;
const MTTR: f64 = 10.0;
const HORIZON: f64 = 10_000.0;

/// One replication: returns (events, system up time). Trains are up when all their blocks
/// are up, kept as a count of failed blocks per train so the system state is O(1) per event.
fn replication(
    z: &Tables,
    per_train: usize,
    rng: &mut Stream,
    next: &mut [f64],
    up: &mut [bool],
) -> (u64, f64) {
    for (t, u) in next.iter_mut().zip(up.iter_mut()) {
        *t = MTTF * z.exp1(rng);
        *u = true;
    }
    let mut down = [0usize; 2];
    let (mut now, mut up_time, mut events) = (0.0f64, 0.0f64, 0u64);
    loop {
        let (mut i, mut t) = (0usize, next[0]);
        for (j, &tj) in next.iter().enumerate().skip(1) {
            if tj < t {
                (i, t) = (j, tj);
            }
        }
        let system_up = down[0] == 0 || down[1] == 0;
        if t >= HORIZON {
            if system_up {
                up_time += HORIZON - now;
            }
            return (events, up_time);
        }
        if system_up {
            up_time += t - now;
        }
        now = t;
        events += 1;
        let train = i / per_train;
        if up[i] {
            up[i] = false;
            down[train] += 1;
            next[i] = t + MTTR * z.exp1(rng);
        } else {
            up[i] = true;
            down[train] -= 1;
            next[i] = t + MTTF * z.exp1(rng);
        }
    }
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let per_train = args.first().copied().unwrap_or(5);
    let reps = args.get(1).copied().unwrap_or(2000) as u64;
    assert_eq!(args.get(2).copied().unwrap_or(1), 1, "the bare loop is a one-thread baseline");
    let mut next = vec![0.0; 2 * per_train];
    let mut up = vec![true; 2 * per_train];
    let z = tables();
    let t = Instant::now();
    let (mut events, mut up_sum, mut up_sq) = (0u64, 0.0f64, 0.0f64);
    for r in 0..reps {
        let mut rng = Stream::new(1, r);
        let (e, u) = replication(z, per_train, &mut rng, &mut next, &mut up);
        events += e;
        let a = u / HORIZON;
        up_sum += a;
        up_sq += a * a;
    }
    let dt = t.elapsed().as_secs_f64();
    let n = reps as f64;
    let mean = up_sum / n;
    let se = ((up_sq / n - mean * mean).max(0.0) / (n - 1.0).max(1.0)).sqrt();
    println!(
        "blocks {} reps {} events {} in {:.3}s: {:.2} M events/s, A = {:.6} +- {:.6}",
        2 * per_train,
        reps,
        events,
        dt,
        events as f64 / dt / 1e6,
        mean,
        1.96 * se
    );
}

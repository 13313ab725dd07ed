//! The benchmark plant without Python: two parallel trains of `n` exponential blocks in
//! series (MTTF 1000 h, MTTR 10 h), 10,000 h. `cargo run --release --example two_trains -- [n] [reps] [threads]`.
use bathtub_engine::availability::{AvailabilityOptions, run};
use bathtub_engine::diagram::{Compiled, DiagramSpec, EdgeSpec, NodeSpec};
use bathtub_engine::dist::DistSpec;
use std::time::Instant;

fn exp(rate: f64) -> DistSpec {
    DistSpec {
        distribution_id: "exponential".into(),
        params: [("failure_rate".to_string(), rate)].into(),
        base_distribution_id: None,
        table: None,
        path: None,
    }
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let per_train = args.first().copied().unwrap_or(5);
    let reps = args.get(1).copied().unwrap_or(2000) as u64;
    let threads = args.get(2).copied();
    let mut nodes = vec![
        NodeSpec {
            id: "in".into(),
            kind: "input".into(),
            ..Default::default()
        },
        NodeSpec {
            id: "out".into(),
            kind: "output".into(),
            ..Default::default()
        },
    ];
    let mut edges = vec![];
    for t in ["a", "b"] {
        let mut prev = "in".to_string();
        for i in 0..per_train {
            let id = format!("{t}{i}");
            nodes.push(NodeSpec {
                id: id.clone(),
                kind: "component".into(),
                model: Some(exp(1e-3)),
                repair: Some(exp(0.1)),
                ..Default::default()
            });
            edges.push(EdgeSpec {
                source: prev,
                target: id.clone(),
            });
            prev = id;
        }
        edges.push(EdgeSpec {
            source: prev,
            target: "out".into(),
        });
    }
    let c = Compiled::new(&DiagramSpec {
        nodes,
        edges,
        ..Default::default()
    })
    .expect("a valid plant");
    let o = AvailabilityOptions {
        horizon: 10_000.0,
        grid: 101,
        crews: 0,
        seed: 1,
    };
    let t = Instant::now();
    let acc = run(&c, &o, 0, reps, threads).expect("runs");
    let dt = t.elapsed().as_secs_f64();
    let s = acc.summary();
    println!(
        "blocks {} reps {} events {} in {:.3}s: {:.2} M events/s, A = {:.6} +- {:.6}",
        2 * per_train,
        reps,
        s.events,
        dt,
        s.events as f64 / dt / 1e6,
        s.mean_availability,
        1.96 * s.mean_availability_std_error
    );
}

use super::*;
use crate::diagram::{DiagramSpec, NodeSpec};
use crate::dist::DistSpec;
use crate::fixtures::{edges, exp, node};

fn comp(id: &str, life: DistSpec, repair: DistSpec) -> NodeSpec {
    NodeSpec {
        model: Some(life),
        repair: Some(repair),
        ..node(id, "component")
    }
}

/// Two identical units in parallel (rates l, m).
fn pair(l: f64, m: f64) -> DiagramSpec {
    DiagramSpec {
        nodes: vec![
            node("in", "input"),
            comp("A", exp(l), exp(m)),
            comp("B", exp(l), exp(m)),
            node("out", "output"),
        ],
        edges: edges(&[("in", "A"), ("in", "B"), ("A", "out"), ("B", "out")]),
        ..Default::default()
    }
}

fn run(d: &DiagramSpec, crews: u32, seed: u64, n: u64, threads: Option<usize>) -> RareAcc {
    let c = Compiled::new(d).unwrap();
    run_with(
        &c,
        &RareOptions { crews, seed },
        0,
        n,
        threads,
        &Control::new(),
    )
    .unwrap()
}

#[test]
fn parallel_pair_matches_its_closed_forms() {
    // Birth-death chain on the number failed, rho = l / m: unlimited crews
    // U = (l / (l + m))^2; one crew U = 2 rho^2 / (1 + 2 rho + 2 rho^2).
    let (l, m) = (1e-3, 1.0);
    let rho: f64 = l / m;
    for (crews, exact) in [
        (0, (l / (l + m)).powi(2)),
        (1, 2.0 * rho * rho / (1.0 + 2.0 * rho + 2.0 * rho * rho)),
    ] {
        let s = run(&pair(l, m), crews, 11, 20_000, None).summary();
        assert!(
            s.unavailability_lower <= exact && exact <= s.unavailability_upper,
            "crews {crews}: {exact} outside {s:?}"
        );
        assert!(s.relative_half_width.unwrap() < 0.05, "{s:?}");
        // System failures per unit time: from one down, the other fails.
        let one_down = if crews == 0 {
            2.0 * rho / (1.0 + rho).powi(2)
        } else {
            2.0 * rho / (1.0 + 2.0 * rho + 2.0 * rho * rho)
        };
        let freq = one_down * l;
        assert!(
            s.failure_frequency_lower <= freq && freq <= s.failure_frequency_upper,
            "{freq} {s:?}"
        );
    }
}

#[test]
fn same_seed_same_numbers_at_any_thread_count_and_split() {
    let d = pair(1e-4, 1.0);
    let a = run(&d, 1, 5, 3000, Some(1));
    let b = run(&d, 1, 5, 3000, Some(3));
    assert_eq!(a, b);
    let c = Compiled::new(&d).unwrap();
    let o = RareOptions { crews: 1, seed: 5 };
    let lo = run_with(&c, &o, 0, 1234, Some(2), &Control::new()).unwrap();
    let hi = run_with(&c, &o, 1234, 3000 - 1234, Some(2), &Control::new()).unwrap();
    assert_eq!(hi.merge(&lo).unwrap(), a);
    assert_ne!(run(&d, 1, 6, 3000, Some(2)), a);
}

#[test]
fn precision_runs_until_the_target() {
    let c = Compiled::new(&pair(1e-3, 1.0)).unwrap();
    let o = RareOptions { crews: 0, seed: 3 };
    let p = Precision::Target {
        relative_half_width: 0.02,
        max_replications: 1_000_000,
    };
    let acc = run_to_precision_with(&c, &o, 0, p, None, &Control::new()).unwrap();
    assert!(acc.relative_half_width() <= 0.02);
    assert!(acc.replication_count > 1000);
}

#[test]
fn refuses_what_is_not_markovian() {
    let weibull = DistSpec {
        distribution_id: "weibull".into(),
        params: [("alpha".to_string(), 10.0), ("beta".to_string(), 2.0)].into(),
        base_distribution_id: None,
        table: None,
        path: None,
    };
    let mut d = pair(1e-3, 1.0);
    d.nodes[1].model = Some(weibull.clone());
    let e = check(&Compiled::new(&d).unwrap(), 0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("\"A\"") && e.contains("life must be exponential"),
        "{e}"
    );
    let mut d = pair(1e-3, 1.0);
    d.nodes[2].repair = Some(weibull);
    let e = check(&Compiled::new(&d).unwrap(), 0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("\"B\"") && e.contains("repair must be exponential"),
        "{e}"
    );
    let mut d = pair(1e-3, 1.0);
    let mut shifted = exp(1.0);
    shifted.params.insert("gamma".into(), 0.5);
    d.nodes[2].repair = Some(shifted);
    assert!(check(&Compiled::new(&d).unwrap(), 0).is_err());
    let mut d = pair(1e-3, 1.0);
    d.nodes[1].instant_repair = Some(true);
    let e = check(&Compiled::new(&d).unwrap(), 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("instant repair"), "{e}");
    let mut d = pair(1e-3, 1.0);
    d.ccf = vec![crate::diagram::CcfSpec {
        members: vec!["A".into(), "B".into()],
        beta: 0.1,
        ..Default::default()
    }];
    let e = check(&Compiled::new(&d).unwrap(), 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("common-cause"), "{e}");
}

#[test]
fn standby_pair_matches_its_birth_death_chain() {
    // One running unit and one warm spare (dormancy 0.5), one crew: from 0 down the rate
    // of a failure is l (1 + 0.5), from 1 down it is l; repairs at m one at a time.
    let (l, m) = (2e-3, 1.0);
    let d = DiagramSpec {
        nodes: vec![
            node("in", "input"),
            NodeSpec {
                model: Some(exp(l)),
                repair: Some(exp(m)),
                k: Some(1),
                spares: Some(1),
                dormancy: Some(0.5),
                ..node("S", "standby")
            },
            node("out", "output"),
        ],
        edges: edges(&[("in", "S"), ("S", "out")]),
        ..Default::default()
    };
    let (a, b) = (1.5 * l / m, l / m);
    let exact = a * b / (1.0 + a + a * b);
    let s = run(&d, 1, 2, 20_000, None).summary();
    assert!(
        s.unavailability_lower <= exact && exact <= s.unavailability_upper,
        "{exact} {s:?}"
    );
}

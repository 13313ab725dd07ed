//! The checks every family passes, on lives under covariate paths (path.rs's own tests pin
//! the path's arithmetic against closed forms; these check sampling, identities, extremes).
use super::testkit::*;
use super::{Dist, Gamma, Lifetime, LogNormal, PathLife, PathSpec, Table, Weibull};

fn path(base: Dist, starts: &[f64], factors: &[f64], period: Option<f64>, scale: &str) -> Dist {
    let spec = PathSpec {
        starts: starts.to_vec(),
        factors: factors.to_vec(),
        period,
        scale: scale.into(),
    };
    Dist::Path(Box::new(PathLife::new(base, &spec).unwrap()))
}

fn wb(alpha: f64, beta: f64) -> Dist {
    Dist::Weibull(Weibull::new(alpha, beta, 0.0).unwrap())
}

/// Each case with points inside its segments (the density jumps at a change) and whether
/// its density is bounded. Proportional hazards in three segments; periodic phases;
/// a faster clock; a periodic clock on a lognormal; a table base with mass that never
/// fails; a gamma base of shape 0.5.
fn cases() -> Vec<(Dist, Vec<f64>, bool)> {
    let table = Dist::Table(Table::new(&[[0.0, 0.0], [50.0, 0.5], [100.0, 0.9]]).unwrap());
    vec![
        (
            path(
                wb(100.0, 1.7),
                &[0.0, 40.0, 90.0],
                &[1.0, 2.5, 0.4],
                None,
                "hazard",
            ),
            vec![20.0, 60.0, 150.0],
            true,
        ),
        (
            path(
                wb(50.0, 2.0),
                &[0.0, 3.0],
                &[0.5, 4.0],
                Some(10.0),
                "hazard",
            ),
            vec![1.5, 6.5, 21.5, 26.5],
            true,
        ),
        (
            path(wb(30.0, 1.3), &[0.0, 20.0], &[0.5, 2.0], None, "time"),
            vec![10.0, 30.0, 60.0],
            true,
        ),
        (
            path(
                Dist::LogNormal(LogNormal::new(3.0, 0.6, 0.0).unwrap()),
                &[0.0, 5.0],
                &[1.5, 0.7],
                Some(12.0),
                "time",
            ),
            vec![2.5, 8.5, 14.5, 20.5],
            true,
        ),
        (
            path(table, &[0.0, 30.0], &[1.0, 2.0], None, "hazard"),
            vec![15.0, 40.0, 75.0],
            true,
        ),
        (
            path(
                Dist::Gamma(Gamma::new(0.5, 20.0, 0.0).unwrap()),
                &[0.0, 10.0],
                &[1.0, 3.0],
                None,
                "hazard",
            ),
            vec![5.0, 20.0, 50.0],
            false,
        ),
    ]
}

#[test]
fn draws_are_pinned() {
    let c = cases();
    assert_pinned(
        &draws(&c[0].0, 42, 4),
        &[
            76.57943793065056,
            84.12784990478734,
            51.058361653233234,
            30.59154582876894,
        ],
    );
    assert_pinned(
        &draws(&c[1].0, 7, 4),
        &[
            23.654269162857013,
            47.390678719480874,
            18.99308955180906,
            14.402104659514015,
        ],
    );
    assert_pinned(
        &draws(&c[3].0, 7, 3),
        &[16.229828516353475, 47.37852976571049, 14.771366372362538],
    );
    assert_pinned(
        &first_residuals(&c[1].0, 13.0, 42, 3),
        &[22.24877281373881, 24.609869778499174, 11.140563583213126],
    );
}

#[test]
fn draws_fit_the_cdf() {
    for (i, (d, _, _)) in cases().iter().enumerate() {
        let xs = assert_fits(d, 100 + i as u64);
        if d.mean().is_finite() {
            assert_mean_of(d, &xs);
        }
    }
    // a factor 10% larger in one segment is seen
    let moved = path(
        wb(100.0, 1.7),
        &[0.0, 40.0, 90.0],
        &[1.0, 2.75, 0.4],
        None,
        "hazard",
    );
    assert_misfits(&cases()[0].0, &moved, 7);
}

#[test]
fn residual_lives_follow_the_conditional_cdf() {
    for (i, (d, ts, _)) in cases().iter().enumerate() {
        assert_residual_fits(d, 0.0, 200 + i as u64);
        // ages inside segments and phases, past changes still to come
        for &a in ts.iter().take(2) {
            assert_residual_fits(d, a, 300 + i as u64);
        }
    }
}

#[test]
fn identities_hold_at_extreme_arguments() {
    for (d, ts, bounded) in cases() {
        assert_sane(&d, bounded);
        assert_starts_at(&d, 0.0);
        // one inversion of the base inside a segment: the base's accuracy (erfc: 1e-10)
        assert_quantiles(&d, 1e-10, true);
        assert_inverts(&d, 1e-10);
        assert_density(&d, &ts, 0.0, 1.0, 1e-11);
    }
}

//! Student's t distribution: the quantile the sequential intervals need (no statistics crate).
//!
//! The upper tail is `P(T > t) = I_x(ν/2, 1/2) / 2` with `x = ν / (ν + t²)`, the regularized
//! incomplete beta function by its continued fraction (Numerical Recipes' `betai`, modified
//! Lentz); the quantile inverts it by Newton's method, which, started left of the root, climbs
//! to it monotonically because the tail is convex for `t > 0`.

/// `ln Γ(x)` for `x > 0` (Lanczos, Numerical Recipes' `gammln`: absolute error below 2e-10).
fn ln_gamma(x: f64) -> f64 {
    const COF: [f64; 6] = [
        76.180_091_729_471_46,
        -86.505_320_329_416_77,
        24.014_098_240_830_91,
        -1.231_739_572_450_155,
        0.120_865_097_386_617_9e-2,
        -0.539_523_938_495_3e-5,
    ];
    let tmp = x + 5.5;
    let tmp = tmp - (x + 0.5) * tmp.ln();
    let (mut y, mut ser) = (x, 1.000_000_000_190_015);
    for c in COF {
        y += 1.0;
        ser += c / y;
    }
    -tmp + (2.506_628_274_631_000_5 * ser / x).ln()
}

/// Continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..=500 {
        let (m, m2) = (f64::from(m), f64::from(2 * m));
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / guard(1.0 + aa * d);
        c = guard(1.0 + aa / c);
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / guard(1.0 + aa * d);
        c = guard(1.0 + aa / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// Regularized incomplete beta function `I_x(a, b)`, `a, b > 0`.
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// `P(T > t)` for `t ≥ 0` and `df > 0` degrees of freedom.
pub(crate) fn upper_tail(t: f64, df: f64) -> f64 {
    0.5 * inc_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// Density of Student's t at `t`.
fn density(t: f64, df: f64) -> f64 {
    let log_norm =
        ln_gamma((df + 1.0) / 2.0) - ln_gamma(df / 2.0) - 0.5 * (df * std::f64::consts::PI).ln();
    (log_norm - (df + 1.0) / 2.0 * (t * t / df).ln_1p()).exp()
}

/// The `t ≥ 0` with `P(T > t) = tail`, for `tail` in (0, 0.5] and `df ≥ 1` (degrees of freedom
/// are clamped to `1..=1e6`; a tail outside (0, 0.5] gives infinity or 0).
pub(crate) fn quantile_upper(tail: f64, df: f64) -> f64 {
    if tail.is_nan() || tail <= 0.0 {
        return f64::INFINITY;
    }
    if tail >= 0.5 {
        return 0.0;
    }
    let df = if df.is_nan() { 1.0 } else { df.clamp(1.0, 1e6) };
    // From t = 0 (left of the root) Newton's steps on the convex tail never overshoot.
    let mut t = 0.0_f64;
    for _ in 0..500 {
        let step = (upper_tail(t, df) - tail) / density(t, df);
        t += step;
        if !t.is_finite() {
            return f64::INFINITY;
        }
        if step <= 1e-12 * t.max(1.0) {
            break;
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn student_quantiles_match_tables() {
        // Two-sided 95 %, 99 % and 99.9 % points from standard tables.
        #[rustfmt::skip]
        let known = [
            (0.025, 1.0, 12.706_205), (0.025, 2.0, 4.302_653), (0.025, 4.0, 2.776_445),
            (0.025, 10.0, 2.228_139), (0.025, 30.0, 2.042_272), (0.005, 3.0, 5.840_909),
            (0.005, 20.0, 2.845_340), (0.0005, 5.0, 6.868_827), (0.0005, 60.0, 3.460_200),
            (0.025, 1e6, 1.959_966), (0.0005, 1e6, 3.290_532),
        ];
        for (tail, df, want) in known {
            let got = quantile_upper(tail, df);
            assert!(
                (got - want).abs() < 1e-5 * want,
                "tail {tail} df {df}: {got} vs {want}"
            );
        }
        // df = 2 has a closed form: t = (2p - 1) / sqrt(2 p (1 - p)), p = 1 - tail.
        let p: f64 = 1.0 - 0.003_125;
        let exact = (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt();
        assert!((quantile_upper(0.003_125, 2.0) - exact).abs() < 1e-8 * exact);
        assert_eq!(quantile_upper(0.0, 5.0), f64::INFINITY);
        assert_eq!(quantile_upper(0.7, 5.0), 0.0);
        assert!(quantile_upper(0.01, f64::NAN).is_finite());
        assert!(quantile_upper(1e-300, 1.0) > 1e100);
    }
}

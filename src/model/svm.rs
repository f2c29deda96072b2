//! libsvm's epsilon/nu support-vector regression with an RBF kernel: the
//! model text format libvmaf embeds in its JSON files, and `svm_predict`.
//!
//! Support vectors are stored densely (a missing sparse index is 0). That is
//! bit-identical to libsvm's sparse merge: where only one side has an entry
//! libsvm adds `v * v`, and `(v - 0.0)^2` is exactly that.

/// A parsed libsvm regression model.
#[derive(Debug, Clone)]
pub struct Svr {
    gamma: f64,
    rho: f64,
    /// Values per support vector (`dim` each, row after row).
    support: Vec<f64>,
    coefficients: Vec<f64>,
    dim: usize,
}

impl Svr {
    /// Parses libsvm's model text (`svm_type nu_svr ... SV ...`) for a model
    /// reading `n_features` features. Every number must be finite, and
    /// every count is checked against the data present before anything is
    /// sized from it.
    pub fn parse(text: &str, n_features: usize) -> Result<Self, String> {
        let mut lines = text.lines();
        let mut gamma = None;
        let mut rho = None;
        let mut total_sv = None;
        let mut nr_class = 2usize;
        let mut in_header = true;
        while in_header {
            let line = lines.next().ok_or("libsvm model: no 'SV' line")?;
            let mut words = line.split_whitespace();
            let Some(key) = words.next() else { continue };
            let value = words.next();
            let bad = |what: &str| format!("libsvm model: bad {what} '{}'", value.unwrap_or(""));
            let number = |what: &str| {
                value
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| bad(what))
            };
            let count = |what: &str| {
                value
                    .and_then(|v| v.parse::<usize>().ok())
                    .ok_or_else(|| bad(what))
            };
            match key {
                "svm_type" => match value {
                    Some("nu_svr") | Some("epsilon_svr") => {}
                    other => {
                        return Err(format!(
                            "libsvm model: svm_type '{}' is not a regression (nu_svr, epsilon_svr)",
                            other.unwrap_or("")
                        ))
                    }
                },
                "kernel_type" => {
                    if value != Some("rbf") {
                        return Err(format!(
                            "libsvm model: kernel_type '{}' is not supported (only rbf)",
                            value.unwrap_or("")
                        ));
                    }
                }
                "gamma" => gamma = Some(number("gamma")?),
                "rho" => rho = Some(number("rho")?),
                "nr_class" => nr_class = count("nr_class")?,
                "total_sv" => total_sv = Some(count("total_sv")?),
                // Present in some files, unused by regression.
                "degree" | "coef0" | "label" | "nr_sv" | "probA" | "probB" => {}
                "SV" => in_header = false,
                other => return Err(format!("libsvm model: unknown header line '{other}'")),
            }
        }
        if nr_class != 2 {
            return Err(format!(
                "libsvm model: nr_class {nr_class} (regression has 2)"
            ));
        }
        let gamma = gamma.ok_or("libsvm model: no gamma")?;
        if gamma <= 0.0 {
            return Err(format!(
                "libsvm model: gamma {gamma} (the RBF kernel needs gamma > 0)"
            ));
        }
        let rho = rho.ok_or("libsvm model: no rho")?;
        let total_sv = total_sv.ok_or("libsvm model: no total_sv")?;

        // Sized by the lines present, never by total_sv.
        let mut sparse: Vec<(f64, Vec<(usize, f64)>)> = Vec::new();
        let mut dim = 0;
        for line in lines {
            let mut words = line.split_whitespace();
            let Some(coef) = words.next() else { continue };
            let coef: f64 = coef
                .parse()
                .ok()
                .filter(|c: &f64| c.is_finite())
                .ok_or_else(|| format!("libsvm model: bad coefficient '{coef}'"))?;
            let mut entries = Vec::new();
            for word in words {
                let entry = word
                    .split_once(':')
                    .and_then(|(i, v)| Some((i.parse::<usize>().ok()?, v.parse::<f64>().ok()?)))
                    .filter(|&(i, v)| i >= 1 && v.is_finite())
                    .ok_or_else(|| format!("libsvm model: bad node '{word}'"))?;
                if entry.0 > n_features {
                    return Err(format!(
                        "libsvm model: node '{word}' is past the model's {n_features} features"
                    ));
                }
                if entries.last().is_some_and(|&(last, _)| entry.0 <= last) {
                    return Err(format!(
                        "libsvm model: node indices not increasing at '{word}'"
                    ));
                }
                dim = dim.max(entry.0);
                entries.push(entry);
            }
            sparse.push((coef, entries));
        }
        if sparse.len() != total_sv {
            return Err(format!(
                "libsvm model: total_sv is {total_sv} but {} support vectors follow",
                sparse.len()
            ));
        }

        let mut support = vec![0.0; total_sv * dim];
        let mut coefficients = Vec::with_capacity(total_sv);
        for (row, (coef, entries)) in sparse.iter().enumerate() {
            coefficients.push(*coef);
            for &(index, value) in entries {
                support[row * dim + index - 1] = value;
            }
        }
        Ok(Self {
            gamma,
            rho,
            support,
            coefficients,
            dim,
        })
    }

    /// libsvm's `svm_predict` for regression: `sum_i coef_i * K(x, sv_i) - rho`
    /// with `K = exp(-gamma * |x - sv|^2)`, accumulated in libsvm's order.
    /// Positions of `x` past the support vectors' width count as `x^2`, as
    /// libsvm's sparse merge does.
    pub fn predict(&self, x: &[f64]) -> f64 {
        let (shared, extra) = x.split_at(x.len().min(self.dim));
        let mut sum = 0.0;
        for (row, &coef) in self.coefficients.iter().enumerate() {
            let sv = &self.support[row * self.dim..(row + 1) * self.dim];
            let mut distance = 0.0;
            for (&a, &b) in shared.iter().zip(sv) {
                let d = a - b;
                distance += d * d;
            }
            for &b in &sv[shared.len()..] {
                distance += b * b;
            }
            for &a in extra {
                distance += a * a;
            }
            sum += coef * (-self.gamma * distance).exp();
        }
        sum - self.rho
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_SV: &str = "svm_type nu_svr\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho -1.5\nSV\n2 1:0.5 2:1 \n-1 2:0.25 \n";

    #[test]
    fn predicts_rbf_sum() {
        let svr = Svr::parse(TWO_SV, 2).unwrap();
        assert_eq!(svr.dim, 2);
        let x = [0.25, 0.75];
        let k1 = (-0.5f64 * (0.0625 + 0.0625)).exp();
        // Second vector has no index 1: libsvm adds x1^2 there.
        let k2 = (-0.5f64 * (0.0625 + 0.25)).exp();
        assert_eq!(svr.predict(&x), 2.0 * k1 - k2 + 1.5);
    }

    #[test]
    fn rejects_malformed_models() {
        assert!(Svr::parse("svm_type c_svc\nSV\n", 2)
            .unwrap_err()
            .contains("svm_type"));
        assert!(Svr::parse("kernel_type linear\nSV\n", 2)
            .unwrap_err()
            .contains("kernel_type"));
        let short = TWO_SV.replace("total_sv 2", "total_sv 3");
        assert!(Svr::parse(&short, 2).unwrap_err().contains("total_sv"));
        let bad = TWO_SV.replace("2:0.25", "2:x");
        assert!(Svr::parse(&bad, 2).unwrap_err().contains("bad node"));
        assert!(Svr::parse("gamma 1\n", 2).unwrap_err().contains("SV"));
    }
}

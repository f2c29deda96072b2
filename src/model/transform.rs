//! The arithmetic around the SVM: feature normalisation, the optional score
//! transform (polynomial, piecewise-linear knots, rectification) and the
//! score clip, in libvmaf's `predict.c` order and operation order.

/// How features are scaled before the SVM and the prediction after it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Normalization {
    None,
    /// `x' = slope * x + intercept` per feature; the prediction is mapped
    /// back with the model's own slope and intercept.
    LinearRescale,
}

/// A slope/intercept pair.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Linear {
    pub slope: f64,
    pub intercept: f64,
}

impl Normalization {
    pub fn normalize(self, scale: Linear, value: f64) -> f64 {
        match self {
            Normalization::None => value,
            Normalization::LinearRescale => scale.slope * value + scale.intercept,
        }
    }

    pub fn denormalize(self, scale: Linear, value: f64) -> f64 {
        match self {
            Normalization::None => value,
            Normalization::LinearRescale => (value - scale.intercept) / scale.slope,
        }
    }
}

/// A knot of the piecewise-linear mapping.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Knot {
    pub x: f64,
    pub y: f64,
}

/// libvmaf's `score_transform` (applied only when enabled, by the model's
/// `"enabled": true` or by `enable_transform`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScoreTransform {
    pub p0: Option<f64>,
    pub p1: Option<f64>,
    pub p2: Option<f64>,
    /// At least two knots, x strictly and y weakly increasing (checked when
    /// the model is read).
    pub knots: Option<Vec<Knot>>,
    /// Output at most the input.
    pub out_lte_in: bool,
    /// Output at least the input.
    pub out_gte_in: bool,
}

impl ScoreTransform {
    pub fn apply(&self, y_in: f64) -> f64 {
        let polynomial = if self.p0.is_some() || self.p1.is_some() || self.p2.is_some() {
            let mut y = 0.0;
            if let Some(p0) = self.p0 {
                y += p0;
            }
            if let Some(p1) = self.p1 {
                y += p1 * y_in;
            }
            if let Some(p2) = self.p2 {
                y += p2 * y_in * y_in;
            }
            y
        } else {
            y_in
        };
        let mut y_out = match &self.knots {
            Some(knots) => piecewise_linear(polynomial, knots),
            None => polynomial,
        };
        // Rectification compares with the transform's input, not with the
        // polynomial's output.
        if self.out_lte_in && y_out > y_in {
            y_out = y_in;
        }
        if self.out_gte_in && y_out < y_in {
            y_out = y_in;
        }
        y_out
    }

    /// Checks what `piecewise_linear` relies on; `Err` says what is wrong.
    pub fn check_knots(knots: &[Knot]) -> Result<(), String> {
        if knots.len() < 2 {
            return Err(format!(
                "score_transform: {} knot(s), need at least 2",
                knots.len()
            ));
        }
        for pair in knots.windows(2) {
            if !(pair[0].x < pair[1].x && pair[0].y <= pair[1].y) {
                return Err(format!(
                    "score_transform: knots [{}, {}] and [{}, {}] do not increase",
                    pair[0].x, pair[0].y, pair[1].x, pair[1].y
                ));
            }
        }
        Ok(())
    }
}

/// The line through two knots as (slope, offset), as libvmaf derives it.
fn line_through(p1: Knot, p2: Knot) -> (f64, f64) {
    if p2.x - p1.x == 0.0 || p2.y - p1.y == 0.0 {
        (1.0, 0.0)
    } else if p1.x == 0.0 {
        let offset = p1.y;
        ((p2.y - offset) / p2.x, offset)
    } else {
        let slope = (p2.y - p1.y) / (p2.x - p1.x);
        (slope, p1.y - p1.x * slope)
    }
}

/// libvmaf's `piecewise_linear_mapping`: every segment is visited and the
/// last one that claims `x` wins; the end segments extend past the knots.
fn piecewise_linear(x: f64, knots: &[Knot]) -> f64 {
    let last = knots.len() - 2;
    let mut y = 0.0;
    for (idx, pair) in knots.windows(2).enumerate() {
        let (a, b) = (pair[0], pair[1]);
        let inside = a.x <= x && x <= b.x;
        let below = idx == 0 && x < a.x;
        let above = idx == last && x > b.x;
        if !(inside || below || above) {
            continue;
        }
        y = if a.y == b.y {
            a.y
        } else {
            let (slope, offset) = line_through(a, b);
            slope * x + offset
        };
    }
    y
}

/// libvmaf's `score_clip`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clip {
    pub min: f64,
    pub max: f64,
}

impl Clip {
    pub fn apply(self, value: f64) -> f64 {
        let v = if value < self.min { self.min } else { value };
        if v > self.max {
            self.max
        } else {
            v
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polynomial_and_rectification() {
        let t = ScoreTransform {
            p0: Some(1.0),
            p1: Some(2.0),
            p2: Some(-0.5),
            out_gte_in: true,
            ..Default::default()
        };
        assert_eq!(t.apply(1.0), 1.0 + 2.0 - 0.5);
        // 1 + 8 - 8 = 1 < 4: rectified up to the input.
        assert_eq!(t.apply(4.0), 4.0);
    }

    #[test]
    fn knots_extend_past_the_ends() {
        let knots = vec![
            Knot { x: 0.0, y: 0.0 },
            Knot { x: 10.0, y: 20.0 },
            Knot { x: 20.0, y: 25.0 },
        ];
        ScoreTransform::check_knots(&knots).unwrap();
        let t = ScoreTransform {
            knots: Some(knots),
            ..Default::default()
        };
        assert_eq!(t.apply(5.0), 10.0);
        assert_eq!(t.apply(-1.0), -2.0);
        assert_eq!(t.apply(15.0), 22.5);
        assert_eq!(t.apply(30.0), 30.0);
        assert!(ScoreTransform::check_knots(&[Knot { x: 1.0, y: 0.0 }]).is_err());
        assert!(
            ScoreTransform::check_knots(&[Knot { x: 1.0, y: 1.0 }, Knot { x: 1.0, y: 2.0 }])
                .is_err()
        );
    }

    #[test]
    fn clip_and_normalization() {
        let c = Clip {
            min: 0.0,
            max: 100.0,
        };
        assert_eq!(
            (c.apply(-1.0), c.apply(50.0), c.apply(101.0)),
            (0.0, 50.0, 100.0)
        );
        let s = Linear {
            slope: 2.0,
            intercept: -1.0,
        };
        let n = Normalization::LinearRescale;
        assert_eq!(n.normalize(s, 3.0), 5.0);
        assert_eq!(n.denormalize(s, 5.0), 3.0);
        assert_eq!(Normalization::None.normalize(s, 3.0), 3.0);
    }
}

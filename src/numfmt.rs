//! C `printf` number formats that the `vmaf` tool's outputs and feature names
//! use, written once so names and reports agree byte for byte.

/// Formats like C's `%.{precision}g`.
pub fn format_g(value: f64, precision: usize) -> String {
    if value.is_nan() {
        return if value.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .into();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.into();
    }
    let p = precision.max(1);
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Round to p significant digits first: the exponent after rounding
    // decides between fixed and scientific notation, as in C.
    let sci = format!("{:.*e}", p - 1, value);
    let (mantissa, exp) = sci.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    if exp < -4 || exp >= p as i32 {
        let m = strip_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{:.*}", decimals, value)).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Formats like C's `%f` with `decimals` digits.
pub fn format_f(value: f64, decimals: usize) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.into();
    }
    format!("{:.*}", decimals, value)
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // literals as C prints them
mod tests {
    use super::*;

    #[test]
    fn g_matches_c() {
        assert_eq!(format_g(1.0, 6), "1");
        assert_eq!(format_g(1.5, 6), "1.5");
        assert_eq!(format_g(100.0, 6), "100");
        assert_eq!(format_g(1e6, 6), "1e+06");
        assert_eq!(format_g(123456.0, 6), "123456");
        assert_eq!(format_g(1234567.0, 6), "1.23457e+06");
        assert_eq!(format_g(0.0001, 6), "0.0001");
        assert_eq!(format_g(0.00001, 6), "1e-05");
        assert_eq!(format_g(0.0, 17), "0");
        assert_eq!(format_g(0.1, 17), "0.10000000000000001");
        assert_eq!(format_g(0.97077957865762665, 17), "0.97077957865762665");
        assert_eq!(format_g(87.267035450261787, 17), "87.267035450261787");
        assert_eq!(format_g(999999.5, 6), "1e+06");
        assert_eq!(format_g(-2.5, 6), "-2.5");
    }

    #[test]
    fn g17_round_trips() {
        for v in [
            0.53436768054962158f64,
            1.0 / 3.0,
            12345.678901234567,
            1e-300,
            8.584881922508627,
        ] {
            let s = format_g(v, 17);
            assert_eq!(s.parse::<f64>().unwrap(), v, "{s}");
        }
    }
}

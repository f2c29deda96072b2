//! How libvmaf reads an option's text, reproduced so that vmafx takes,
//! refuses and reads every value as libvmaf does: `sscanf("%f %c")`
//! decides that a value is a number, which is then stored as the `%g` of
//! its `strtof` (src/dict.c); the option is read from that text with
//! `atoi` or `atof`, a zero counting only when the text starts with `0`
//! (src/opt.c). So `63.7` is the integer 63, `-0` is refused, `0x10` is
//! 16 and `1.5abc` is 1.5.

use crate::numfmt::format_g;

/// C's `isspace` in the "C" locale.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Where a number starts in `b` as C reads it (after white space), where
/// its digits start (after an optional sign), and whether it is negative.
fn signed_start(b: &[u8]) -> (usize, usize, bool) {
    let start = b.iter().position(|&c| !is_space(c)).unwrap_or(b.len());
    match b.get(start) {
        Some(b'-') => (start, start + 1, true),
        Some(b'+') => (start, start + 1, false),
        _ => (start, start, false),
    }
}

/// The number `strtod` reads at the start of `text` (after white space) as
/// its decimal or hexadecimal text and where that text ends; `None` when
/// it reads none.
fn number_prefix(text: &str) -> Option<(NumberText<'_>, usize)> {
    let b = text.as_bytes();
    let (start, i, negative) = signed_start(b);
    let rest = &text[i..];
    let starts_with = |word: &str| {
        rest.len() >= word.len()
            && rest.as_bytes()[..word.len()].eq_ignore_ascii_case(word.as_bytes())
    };
    if starts_with("infinity") {
        return Some((NumberText::Infinite { negative }, i + 8));
    }
    if starts_with("inf") {
        return Some((NumberText::Infinite { negative }, i + 3));
    }
    if starts_with("nan") {
        let mut end = i + 3;
        // `nan(n-char-sequence)`
        if b.get(end) == Some(&b'(') {
            let chars = b[end + 1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                .count();
            if b.get(end + 1 + chars) == Some(&b')') {
                end += chars + 2;
            }
        }
        return Some((NumberText::NotANumber { negative }, end));
    }
    let digits = |from: usize, hex: bool| {
        b[from..]
            .iter()
            .take_while(|c| {
                if hex {
                    c.is_ascii_hexdigit()
                } else {
                    c.is_ascii_digit()
                }
            })
            .count()
    };
    // A mantissa: digits, optionally a point and more digits, at least one
    // digit in all; returns where it ends.
    let mantissa = |from: usize, hex: bool| {
        let whole = digits(from, hex);
        let mut end = from + whole;
        let mut fraction = 0;
        if b.get(end) == Some(&b'.') {
            fraction = digits(end + 1, hex);
            end += 1 + fraction;
        }
        (whole + fraction > 0).then_some(end)
    };
    // An exponent is read only where digits follow its letter (and sign).
    let exponent = |from: usize, letters: &[u8]| {
        if !b.get(from).is_some_and(|c| letters.contains(c)) {
            return from;
        }
        let mut at = from + 1;
        if matches!(b.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        match digits(at, false) {
            0 => from,
            n => at + n,
        }
    };
    if starts_with("0x") {
        if let Some(end) = mantissa(i + 2, true) {
            let end = exponent(end, b"pP");
            let hex = NumberText::Hex {
                negative,
                text: &text[i + 2..end],
            };
            return Some((hex, end));
        }
        // "0x" with no hexadecimal digit after it: the number is the 0.
    }
    let end = exponent(mantissa(i, false)?, b"eE");
    Some((NumberText::Decimal(&text[start..end]), end))
}

/// A number's text as `strtod` reads it.
enum NumberText<'a> {
    /// Sign, digits, point and exponent, as Rust's parser takes them.
    Decimal(&'a str),
    /// Digits after `0x`, a point and a `p` exponent.
    Hex {
        negative: bool,
        text: &'a str,
    },
    Infinite {
        negative: bool,
    },
    NotANumber {
        negative: bool,
    },
}

impl NumberText<'_> {
    fn value(&self) -> f64 {
        match *self {
            // Correctly rounded, as glibc's strtod.
            NumberText::Decimal(t) => t.parse().expect("a decimal number's text"),
            NumberText::Hex { negative, text } => {
                let v = hex_value(text);
                if negative {
                    -v
                } else {
                    v
                }
            }
            NumberText::Infinite { negative } if negative => f64::NEG_INFINITY,
            NumberText::Infinite { .. } => f64::INFINITY,
            NumberText::NotANumber { negative } if negative => -f64::NAN,
            NumberText::NotANumber { .. } => f64::NAN,
        }
    }

    /// The value `strtof` reads: decimal text rounded once, to a float.
    fn value_f32(&self) -> f32 {
        match *self {
            NumberText::Decimal(t) => t.parse().expect("a decimal number's text"),
            _ => self.value() as f32,
        }
    }
}

/// The value of hexadecimal digits with an optional point and `p`
/// exponent (exact up to 13 digits; longer ones are rounded once per digit,
/// past any option's range).
fn hex_value(text: &str) -> f64 {
    let (digits, exp) = match text.find(['p', 'P']) {
        Some(p) => (&text[..p], text[p + 1..].parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let mut v = 0.0f64;
    for c in whole.chars().chain(fraction.chars()) {
        v = v * 16.0 + f64::from(c.to_digit(16).expect("a hexadecimal digit"));
    }
    v * 2f64.powi(exp.saturating_sub(4 * fraction.len() as i32))
}

/// libvmaf's stored form of an option value: the `%g` of its `strtof`
/// when the text is a number (and white space only after it), else the
/// text as written.
pub fn normalize(text: &str) -> String {
    match number_prefix(text) {
        Some((number, end)) if text.as_bytes()[end..].iter().all(|&c| is_space(c)) => {
            format_g(f64::from(number.value_f32()), 6)
        }
        _ => text.to_string(),
    }
}

/// C's `atof`: the number at the start of `text`, 0 when there is none.
pub fn atof(text: &str) -> f64 {
    number_prefix(text).map_or(0.0, |(n, _)| n.value())
}

/// glibc's `atoi`: the decimal integer at the start of `text` (after white
/// space and a sign), 0 when there is none; read as a `long` that
/// saturates, then cut to 32 bits as glibc does.
pub fn atoi(text: &str) -> i32 {
    let b = text.as_bytes();
    let (_, i, negative) = signed_start(b);
    let mut v: i64 = 0;
    for &c in b[i..].iter().take_while(|c| c.is_ascii_digit()) {
        let d = i64::from(c - b'0');
        v = if negative {
            v.saturating_mul(10).saturating_sub(d)
        } else {
            v.saturating_mul(10).saturating_add(d)
        };
    }
    v as i32
}

/// libvmaf's test of a value read as 0: a number only when its text
/// starts with `0` (so `-0`, `abc` and the empty text are refused).
pub fn zero_is_a_number(text: &str) -> bool {
    text.starts_with('0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_stored_as_the_g_of_their_float() {
        for (text, stored) in [
            ("1.0", "1"),
            ("0.06", "0.06"),
            ("2639.545", "2639.54"),
            (" 63.7 ", "63.7"),
            ("+5", "5"),
            (".5", "0.5"),
            ("5.", "5"),
            ("1e2", "100"),
            ("1e10", "1e+10"),
            ("-0", "-0"),
            ("-0.0", "-0"),
            ("0x10", "16"),
            ("0x1.8p1", "3"),
            ("INF", "inf"),
            ("-Infinity", "-inf"),
            ("nan", "nan"),
            // Not numbers: kept as written.
            ("1.5abc", "1.5abc"),
            ("1.5e", "1.5e"),
            ("bilinear", "bilinear"),
            ("", ""),
            ("0x", "0x"),
        ] {
            assert_eq!(normalize(text), stored, "{text:?}");
        }
    }

    #[test]
    fn atoi_and_atof_read_the_number_at_the_start() {
        assert_eq!(atoi("63.7"), 63);
        assert_eq!(atoi("1e+10"), 1);
        assert_eq!(atoi("  -12x"), -12);
        assert_eq!(atoi("abc"), 0);
        assert_eq!(atoi("99999999999"), 99999999999i64 as i32);
        assert_eq!(atoi("-99999999999999999999"), i64::MIN as i32);
        assert_eq!(atof("1.5abc"), 1.5);
        assert_eq!(atof("1.5e"), 1.5);
        assert_eq!(atof("1e-2x"), 0.01);
        assert_eq!(atof("0x"), 0.0);
        assert_eq!(atof("0x1p-2"), 0.25);
        assert_eq!(atof("-inf"), f64::NEG_INFINITY);
        assert!(atof("nan(1)").is_nan());
        assert_eq!(atof("."), 0.0);
        assert!(zero_is_a_number("0.0") && !zero_is_a_number("-0") && !zero_is_a_number(""));
    }

    /// Any text of number-like characters is read without a panic, and a
    /// stored value reads back as itself.
    #[test]
    fn number_like_texts_read_without_panics() {
        let alphabet = b"0123456789.eEpPxX+- infatyINFATY(_)";
        let mut rng = crate::testing::fuzz::Rng(7);
        for _ in 0..20_000 {
            let len = (rng.next_u64() % 10) as usize;
            let text: String = (0..len)
                .map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize] as char)
                .collect();
            let stored = normalize(&text);
            let _ = (atof(&text), atoi(&text), atof(&stored), atoi(&stored));
            assert_eq!(normalize(&stored), stored, "{text:?}");
        }
    }
}

//! Numbers as the `vmaf` tool reads them: C's `strtoul(s, &end, 0)` with the
//! whole argument consumed, so `0x40` is hexadecimal and `0100` octal.

/// Parses `text` like `strtoul` with base 0 (leading blanks and `+`
/// allowed), into `T`. Negative numbers and values too large for `T` are
/// errors (C would wrap them around).
pub fn c_unsigned<T: TryFrom<u64>>(text: &str) -> Result<T, String> {
    let s = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let s = s.strip_prefix('+').unwrap_or(s);
    if s.starts_with('-') {
        return Err("a negative number is not allowed".into());
    }
    let (digits, radix) = if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (hex, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(format!(
            "'{text}' is not an unsigned integer (decimal, 0x hexadecimal or 0 octal)"
        ));
    }
    let value = u64::from_str_radix(digits, radix).map_err(|_| format!("'{text}' is too large"))?;
    T::try_from(value).map_err(|_| format!("'{text}' is too large"))
}

#[cfg(test)]
mod tests {
    use super::c_unsigned;

    #[test]
    fn bases_as_strtoul_reads_them() {
        assert_eq!(c_unsigned::<u32>("576"), Ok(576));
        assert_eq!(c_unsigned::<u32>("0x40"), Ok(64));
        assert_eq!(c_unsigned::<u32>("0X1f"), Ok(31));
        assert_eq!(c_unsigned::<u32>("010"), Ok(8));
        assert_eq!(c_unsigned::<u32>("0"), Ok(0));
        assert_eq!(c_unsigned::<u32>(" +12"), Ok(12));
        assert_eq!(c_unsigned::<u64>("0xffffffffffffffff"), Ok(u64::MAX));
    }

    #[test]
    fn what_strtoul_would_stop_at_is_refused() {
        for bad in ["", "0x", "08", "12px", "1.5", "wide", "0x40 "] {
            assert!(c_unsigned::<u32>(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            c_unsigned::<u32>("-1"),
            Err("a negative number is not allowed".into())
        );
        assert_eq!(
            c_unsigned::<u8>("0x100"),
            Err("'0x100' is too large".into())
        );
    }
}

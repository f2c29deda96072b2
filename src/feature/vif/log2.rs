//! libvmaf's fixed-point log2: a table of `log2(m) * 2048` for 16-bit
//! mantissas, looked up a block of values at a time.

use std::sync::OnceLock;

/// `round(log2f(m) * 2048)` for mantissas `m` in 32767..=65535 (lower
/// entries unused).
#[derive(Debug)]
pub struct Log2Table {
    /// One zero entry past the end, so that vector gathers, which read 32
    /// bits, stay inside the table.
    entries: Box<[u16; 65537]>,
}

impl Log2Table {
    /// The table, built once. libvmaf takes the product in single precision,
    /// so it is kept here too; the single-precision log2 is the correctly
    /// rounded double result narrowed to float, which equals glibc's `log2f`
    /// on every entry and does not depend on the platform's libm.
    pub fn get() -> &'static Log2Table {
        static TABLE: OnceLock<Log2Table> = OnceLock::new();
        TABLE.get_or_init(|| {
            let mut entries = Box::new([0u16; 65537]);
            for (m, v) in entries[..65536].iter_mut().enumerate().skip(32767) {
                let log2 = (m as f64).log2() as f32;
                *v = f64::from(log2 * 2048.0).round() as u16;
            }
            Log2Table { entries }
        })
    }

    /// The entries, for vector gathers of 32 bits at `2 * mantissa` bytes
    /// (the padding entry makes that safe for every 16-bit mantissa).
    pub fn padded_entries(&self) -> &[u16; 65537] {
        &self.entries
    }

    /// `log2(v) * 2048` of every lane, in libvmaf's fixed point.
    #[inline(always)]
    pub fn log2<const B: usize>(&self, v: &[u64; B]) -> [i32; B] {
        let mut out = [0i32; B];
        for l in 0..B {
            let (mantissa, shift) = mantissa_and_shift(v[l]);
            out[l] = i32::from(self.entries[mantissa as usize]) + 2048 * shift;
        }
        out
    }
}

/// Splits `v` (`2^16 <= v < 2^52`) into its top 16 bits and the shift that
/// drops the rest, as libvmaf's `log2_32`/`log2_64` do (the low bits are
/// truncated, not rounded). Other `v` give meaningless results, without
/// panicking: the mantissa is always below 2^16.
#[inline(always)]
fn mantissa_and_shift(v: u64) -> (u16, i32) {
    // floor(log2(v)) from the exponent of v as a double: exact below 2^52,
    // and it vectorizes where a count of leading zeros does not.
    const BIAS: f64 = 4503599627370496.0; // 2^52
    let exact = f64::from_bits(v | BIAS.to_bits()) - BIAS;
    let shift = (exact.to_bits() >> 52) as i32 - 1023 - 15;
    ((v >> (shift as u32 & 63)) as u16, shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_of_exact_powers_and_truncated_mantissas() {
        let t = Log2Table::get();
        let v = [
            1u64 << 16,
            1 << 20,
            3 << 17,
            (1 << 40) + 12345,
            0xffff_ffff,
            1 << 17,
            // Out of range: meaningless, but no panic.
            5,
            0,
        ];
        let got = t.log2(&v);
        assert_eq!(got[0], 16 * 2048);
        assert_eq!(got[1], 20 * 2048);
        // 3 * 2^17 = 49152 * 2^3; log2(49152) * 2048 = 31918.003 -> 31918.
        assert_eq!(got[2], 31918 + 2048 * 3);
        assert_eq!(got[3], 40 * 2048);
        // 0xffffffff keeps mantissa 65535: round(log2f(65535) * 2048) = 32768.
        assert_eq!(got[4], 32768 + 2048 * 16);
    }
}

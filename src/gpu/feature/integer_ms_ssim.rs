//! `integer_ms_ssim` (VMAFx's MS-SSIM) on the GPU: `float_ms_ssim`'s
//! device pyramid and SSIM sums ([`MsSsimPyramid`], `float_ssim_stats_*`)
//! with VMAFx's halving between scales, `float_ssim_decimate_97_*`
//! (kernels/float_ssim.cu: the separable 9/7 low-pass in float, a fused
//! multiply-add where the CPU's `decimate_97` has a `mul_add`), for luma
//! and, with `enable_chroma`, for Cb and Cr. The CPU extractor's
//! [`Outputs`] checks the format (refusing planes below 176x176), reads
//! the options and scores each plane from its per-scale means.
//!
//! Per-position values and pyramid samples are the CPU's bit for bit; the
//! sums differ in double rounding only (tolerance in docs/gpu-testing.md).

use super::float_common::FrameSums;
use super::float_ms_ssim::MsSsimPyramid;
use super::float_ssim::{FloatPair, Pair, SsimKernels, Variants};
use super::{single_twin, GpuTwin};
use super::{spread_up_to_1440p, GpuExtractor};
use crate::error::Result;
use crate::feature::common::picture_copy::power_of_two_divisor;
use crate::feature::integer_ms_ssim::{Outputs, LOW_PASS_97};
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::KernelArgs;
use crate::gpu::device::{Gpu, Module, Stream};
use crate::gpu::kernels;
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};
use std::sync::Arc;

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TWIN: GpuTwin = single_twin!(
    GpuIntegerMsSsim,
    &[&super::float_ssim::KERNELS],
    super::EVERY_BACKEND
);

/// VMAFx's halving, `float_ssim_decimate_97_*`.
struct Halve97 {
    kernels: Variants,
    /// `1 / divisor` of the float conversion (scale 0 reads raw samples).
    sample_scale: f32,
}

impl Halve97 {
    fn new(module: &Arc<Module>, format: &PictureFormat) -> Result<Self> {
        Ok(Self {
            kernels: Variants::new(module, "float_ssim_decimate_97", format)?,
            sample_scale: 1.0 / power_of_two_divisor(format.bit_depth),
        })
    }

    /// Queues `fine` halved into `coarse` (`ceil` of each side).
    fn enqueue(&self, fine: Pair, coarse: &FloatPair, stream: &Stream) -> Result<()> {
        debug_assert_eq!(
            coarse.size(),
            (fine.width.div_ceil(2), fine.height.div_ceil(2))
        );
        let mut args = KernelArgs::new();
        fine.args(&mut args).arg(self.sample_scale).arg(LOW_PASS_97);
        coarse.out_args(&mut args);
        // SAFETY: the arguments match float_ssim_decimate_97_* (the taps
        // as `struct Taps97`, nine floats); `coarse` holds its width x
        // height samples at its pitch; every buffer stays alive until the
        // stream ran (the shared planes are context-owned, the rest ours).
        unsafe { stream.launch(self.kernels.of(fine), &coarse.decimate_dims(), &mut args) }
    }
}

pub(super) struct GpuIntegerMsSsim {
    outputs: Outputs,
    kernels: SsimKernels,
    halve: Halve97,
    luma: MsSsimPyramid,
    /// Cb's and Cr's (`enable_chroma`): both planes' sizes are the same,
    /// and the stream orders their use.
    chroma: Option<MsSsimPyramid>,
    /// MsSsimPyramid::QUANTITIES per plane scored, in output order.
    sums: FrameSums,
}

impl GpuIntegerMsSsim {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let outputs = Outputs::create(options, format)?;
        let module = kernels::load(gpu, &super::float_ssim::KERNELS)?;
        let luma = MsSsimPyramid::new(gpu, format.plane_size(PlaneId::Y))?;
        let chroma = if outputs.planes().len() > 1 {
            Some(MsSsimPyramid::new(gpu, format.plane_size(PlaneId::Cb))?)
        } else {
            None
        };
        let blocks = chroma
            .iter()
            .map(MsSsimPyramid::stats_blocks)
            .fold(luma.stats_blocks(), u32::max);
        let planes = outputs.planes().len() as u32;
        Ok(Self {
            kernels: SsimKernels::new(&module, format)?,
            halve: Halve97::new(&module, format)?,
            sums: FrameSums::new(gpu, &module, MsSsimPyramid::QUANTITIES * planes, blocks)?,
            outputs,
            luma,
            chroma,
        })
    }

    fn pyramid(&self, plane: PlaneId) -> &MsSsimPyramid {
        match (plane, &self.chroma) {
            (PlaneId::Y, _) | (_, None) => &self.luma,
            (_, Some(chroma)) => chroma,
        }
    }
}

impl GpuExtractor for GpuIntegerMsSsim {
    fn name(&self) -> &'static str {
        "integer_ms_ssim"
    }

    /// Frames are independent and the work is `float_ms_ssim`'s but for
    /// the halving, so it spreads as `float_ms_ssim` does (measured for
    /// that twin; not yet for this one).
    fn instances(&self, format: &PictureFormat) -> usize {
        spread_up_to_1440p(format)
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(if self.chroma.is_some() {
            PlaneMask::ALL
        } else {
            PlaneMask::LUMA
        })
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let totals = self.sums.begin(stream)?;
        for (i, &plane) in self.outputs.planes().iter().enumerate() {
            let base = Pair::shared(&frame.reference(plane)?, &frame.distorted(plane)?);
            let halve = &self.halve;
            self.pyramid(plane).enqueue(
                &self.kernels,
                base,
                self.sums.partials(),
                MsSsimPyramid::QUANTITIES * i as u32,
                stream,
                |fine, coarse| halve.enqueue(fine, coarse, stream),
            )?;
        }
        self.sums.end(index, totals, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, totals)) = self.sums.complete("integer_ms_ssim")? else {
            return Ok(None);
        };
        for (i, &plane) in self.outputs.planes().iter().enumerate() {
            let first = (MsSsimPyramid::QUANTITIES as usize) * i;
            let means = self.pyramid(plane).means(&totals, first);
            if plane == PlaneId::Y {
                self.outputs.emit_luma(index, &means, sink);
            } else {
                self.outputs.emit_chroma(index, plane, &means, sink);
            }
        }
        Ok(Some(index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::common::picture_copy::picture_copy;
    use crate::feature::integer_ms_ssim::decimate_97;
    use crate::gpu::emu::{self, EmuDriver, Patch};
    use crate::gpu::planes::DevicePlane;
    use crate::picture::{ChromaSubsampling, HostPicture};

    /// A `w x h` 4:4:4 picture of pseudo-random `bits`-bit samples (a ramp
    /// plus noise over the whole range).
    fn picture(w: u32, h: u32, bits: u8, seed: u64) -> HostPicture {
        let format = PictureFormat::new(w, h, ChromaSubsampling::Yuv444, bits).unwrap();
        let max = (1u64 << bits) - 1;
        let mut state = seed;
        let mut bytes = Vec::with_capacity(format.frame_bytes());
        for i in 0..3 * u64::from(w) * u64::from(h) {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = (i * 13 * max / 1000 + (state >> 33) % (max / 3 + 1)) % (max + 1);
            if bits > 8 {
                bytes.extend_from_slice(&(v as u16).to_le_bytes());
            } else {
                bytes.push(v as u8);
            }
        }
        let mut p = HostPicture::new(format);
        p.fill_from_packed(&bytes);
        p
    }

    /// The luma of two pictures halved twice on `gpu` (the raw samples,
    /// then the floats) and on the CPU: `(device, cpu)`, each the two
    /// levels' reference and distorted samples.
    fn halved_twice(gpu: &Gpu, w: u32, h: u32, bits: u8) -> [[[Vec<f32>; 2]; 2]; 2] {
        let pictures = [picture(w, h, bits, 1), picture(w, h, bits, 2)];
        let format = *pictures[0].format();
        let module = kernels::load(gpu, &super::super::float_ssim::KERNELS).unwrap();
        let halve = Halve97::new(&module, &format).unwrap();
        let stream = gpu.stream().unwrap();
        let (w, h) = (w as usize, h as usize);
        let uploads = pictures
            .each_ref()
            .map(|p| gpu.upload(p.plane_bytes(PlaneId::Y)).unwrap());
        let [r, d] = [0, 1].map(|i| DevicePlane {
            ptr: uploads[i].ptr(),
            pitch: pictures[i].stride(PlaneId::Y) * format.bytes_per_sample(),
            width: w,
            height: h,
        });
        let one = FloatPair::new(gpu, w.div_ceil(2), h.div_ceil(2)).unwrap();
        let (w1, h1) = one.size();
        let two = FloatPair::new(gpu, w1.div_ceil(2), h1.div_ceil(2)).unwrap();
        halve.enqueue(Pair::shared(&r, &d), &one, &stream).unwrap();
        halve.enqueue(one.pair(), &two, &stream).unwrap();
        let device = [one.download(gpu, &stream), two.download(gpu, &stream)];

        let cpu = pictures.each_ref().map(|p| {
            let (mut base, mut tmp) = (Vec::new(), Vec::new());
            let (mut one, mut two) = (Vec::new(), Vec::new());
            picture_copy(p, PlaneId::Y, 0, &mut base);
            assert_eq!(decimate_97(&base, w, h, &mut tmp, &mut one), (w1, h1));
            decimate_97(&one, w1, h1, &mut tmp, &mut two);
            [one, two]
        });
        let [[r1, r2], [d1, d2]] = cpu;
        [device, [[r1, d1], [r2, d2]]]
    }

    /// Where the device's halvings differ from the CPU's, if anywhere.
    fn first_difference(gpu: &Gpu, w: u32, h: u32, bits: u8) -> Option<String> {
        let [device, cpu] = halved_twice(gpu, w, h, bits);
        for (level, (d, c)) in device.iter().zip(&cpu).enumerate() {
            for (side, (d, c)) in d.iter().zip(c).enumerate() {
                assert_eq!(d.len(), c.len());
                if let Some(i) = (0..d.len()).find(|&i| d[i].to_bits() != c[i].to_bits()) {
                    return Some(format!(
                        "{w}x{h} {bits}-bit, level {}, picture {side}, sample {i}: \
                         device {:e}, CPU {:e}",
                        level + 1,
                        d[i],
                        c[i]
                    ));
                }
            }
        }
        None
    }

    fn emulated(patches: &[Patch]) -> Option<Gpu> {
        match emu::unavailable() {
            None => Some(EmuDriver::gpu(&[], patches)),
            Some(why) => {
                crate::testing::skip("VMAFX_REQUIRE_GXX", why);
                None
            }
        }
    }

    /// Sizes around the 32x8 output tiles (one tile, a tile's edge, a
    /// column or row into the next) and the smallest the 9-tap mirror
    /// takes (5 samples, here at the second halving), at 8, 10 and 16 bits:
    /// both halvings (raw samples, then floats) give the CPU's
    /// `decimate_97` bit for bit.
    #[test]
    fn halving_is_the_cpus_bit_for_bit() {
        let Some(gpu) = emulated(&[]) else { return };
        for (w, h) in [(9, 10), (13, 9), (64, 16), (65, 17), (129, 35), (321, 179)] {
            for bits in [8, 10, 16] {
                if let Some(d) = first_difference(&gpu, w, h, bits) {
                    panic!("{d}");
                }
            }
        }
    }

    /// The vertical pass unfused (a rounded product, then a rounded sum)
    /// changes samples: the comparison above sees fusing.
    #[test]
    fn an_unfused_halving_is_caught() {
        let patch = (
            "float_ssim.cu",
            "a = __fmaf_rn(hz_ref[2 * r + k][c], taps.k[k], a);",
            "a = fadd(fmul(hz_ref[2 * r + k][c], taps.k[k]), a);",
        );
        let Some(gpu) = emulated(&[patch]) else {
            return;
        };
        let found = first_difference(&gpu, 321, 179, 10);
        assert!(found.is_some(), "an unfused vertical pass was not caught");
        println!("caught: {}", found.unwrap());
    }
}

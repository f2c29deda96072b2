//! `ssimulacra2` on the GPU (kernels/ssimulacra2.cu), bit-identical to
//! the CPU extractor. Per frame, reading the shared planes:
//!
//! 1. `ssimu2_convert_*`: both pictures' Y'CbCr to linear RGB and XYB at
//!    scale 0; `ssimu2_downsample` per further scale (each halves the one
//!    before);
//! 2. `ssimu2_blur_rows`: the horizontal recursive Gaussian of the 15
//!    planes (a, b, a a, b b, a b per channel), every scale in one launch;
//! 3. `ssimu2_blur_columns`: the vertical pass, the SSIM and edge error
//!    terms of each pixel and their per-column double sums;
//! 4. `ssimu2_reduce_columns`: each of the 6 x 3 x scales quantities'
//!    column sums added in the CPU's tree, then read back.
//!
//! The host turns the sums into norms and the score with the CPU's code
//! (`feature::ssimulacra2::twin`). Every plane of the pyramid lives in
//! device buffers made once per format.

use super::float_common::sample_suffix;
use super::readback::Readback;
use super::GpuExtractor;
use super::{single_twin, GpuTwin};
use crate::error::Result;
use crate::feature::ssimulacra2::twin::{self, ColourConstants, ScaleNorms, MAX_SCALES, SUMS};
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::{KernelArg, KernelArgs};
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Stream};
use crate::gpu::driver::{DevicePtr, LaunchDims};
use crate::gpu::kernels::{self, kernel_source, KernelSource};
use crate::gpu::planes::{DevicePlane, FramePlanes, PairPlanes};
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// kernels/ssimulacra2.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("ssimulacra2.cu");

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TWIN: GpuTwin = single_twin!(GpuSsimulacra2, &[&KERNELS], super::EVERY_BACKEND);

/// Threads per block of the kernels (kernels/ssimulacra2.cu).
const LINE_THREADS: u32 = 64;
const PIXEL_THREADS: u32 = 128;
const REDUCE_THREADS: u32 = 256;
/// Planes blurred per channel, and in all.
const BLURRED: u32 = 5;
const ROW_PLANES: usize = 3 * BLURRED as usize;
/// Inputs the horizontal pass's tiles hold beyond each side (`HALO`).
const BLUR_HALO: usize = 8;
/// Quantities summed per scale.
const PER_SCALE: usize = 3 * SUMS;

/// `struct Pyramid` of the kernel: the scales' sizes and where each lives
/// in a pyramid plane (every scale one after the other).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct Pyramid {
    scales: i32,
    width: [i32; MAX_SCALES],
    height: [i32; MAX_SCALES],
    offset: [u32; MAX_SCALES],
    plane: u32,
    row_block_start: [u32; MAX_SCALES + 1],
    column_start: [u32; MAX_SCALES + 1],
    sum_stride: u32,
}

// SAFETY: a repr(C) copy of the kernel's struct, plain integers.
unsafe impl KernelArg for Pyramid {}

impl Pyramid {
    fn new(sizes: &[(usize, usize)]) -> Self {
        let mut p = Pyramid {
            scales: sizes.len() as i32,
            ..Default::default()
        };
        let (mut floats, mut row_blocks, mut columns) = (0usize, 0usize, 0usize);
        for (s, &(w, h)) in sizes.iter().enumerate() {
            p.width[s] = w as i32;
            p.height[s] = h as i32;
            p.offset[s] = floats as u32;
            p.row_block_start[s] = row_blocks as u32;
            p.column_start[s] = columns as u32;
            floats += w * h;
            row_blocks += h.div_ceil(LINE_THREADS as usize);
            columns += w;
        }
        p.plane = u32::try_from(floats).expect("a pyramid plane under 2^32 floats");
        p.row_block_start[sizes.len()] = row_blocks as u32;
        p.column_start[sizes.len()] = columns as u32;
        p.sum_stride = sizes[0].0 as u32;
        p
    }

    fn floats(&self) -> usize {
        self.plane as usize
    }

    /// Blocks of `LINE_THREADS` rows, each of one scale.
    fn row_blocks(&self) -> u32 {
        self.row_block_start[self.scales as usize]
    }

    fn columns(&self) -> u32 {
        self.column_start[self.scales as usize]
    }
}

/// `struct Colour` of the kernel.
#[repr(C)]
#[derive(Clone, Copy)]
struct Colour {
    y_off: f32,
    y_scale: f32,
    c_scale: f32,
    cr_r: f32,
    cb_g: f32,
    cr_g: f32,
    cb_b: f32,
    inv_peak: f32,
    p: [f32; 5],
    q: [f32; 5],
    threshold: f32,
    low_div_inv: f32,
    opsin: [f32; 9],
    bias: f32,
    neg_bias_cbrt: f32,
}

// SAFETY: a repr(C) copy of the kernel's struct, plain floats.
unsafe impl KernelArg for Colour {}

impl Colour {
    fn new(k: &ColourConstants) -> Self {
        let c = &k.coefficients;
        Self {
            y_off: c.y_off,
            y_scale: c.y_scale,
            c_scale: c.c_scale,
            cr_r: c.cr_r,
            cb_g: c.cb_g,
            cr_g: c.cr_g,
            cb_b: c.cb_b,
            inv_peak: k.inv_peak,
            p: k.p,
            q: k.q,
            threshold: k.threshold,
            low_div_inv: k.low_div_inv,
            opsin: k.opsin,
            bias: k.bias,
            neg_bias_cbrt: k.neg_bias_cbrt,
        }
    }
}

/// `struct Blur` of the kernel.
#[repr(C)]
#[derive(Clone, Copy)]
struct Blur {
    n2: [f32; 3],
    d1: [f32; 3],
    mul_in: [[f32; 4]; 3],
    mul_prev: [[f32; 4]; 3],
    mul_prev2: [[f32; 4]; 3],
    radius: i32,
}

// SAFETY: a repr(C) copy of the kernel's struct, plain floats and an int.
unsafe impl KernelArg for Blur {}

impl Blur {
    fn new() -> Self {
        let rg = twin::blur_constants();
        assert!(
            rg.radius + 3 <= BLUR_HALO,
            "the row tiles' margins hold the taps"
        );
        Self {
            n2: rg.n2,
            d1: rg.d1,
            mul_in: rg.mul_in,
            mul_prev: rg.mul_prev,
            mul_prev2: rg.mul_prev2,
            radius: rg.radius as i32,
        }
    }
}

/// `struct Planes` of the kernel: one picture's planes, pitches in bytes,
/// and its chroma size.
#[repr(C)]
#[derive(Clone, Copy)]
struct Planes {
    y: DevicePtr,
    u: DevicePtr,
    v: DevicePtr,
    pitch_y: u32,
    pitch_u: u32,
    pitch_v: u32,
    chroma_width: i32,
    chroma_height: i32,
}

// SAFETY: a repr(C) copy of the kernel's struct: device addresses, pitches
// and sizes.
unsafe impl KernelArg for Planes {}

impl Planes {
    fn of(planes: [DevicePlane; 3]) -> Self {
        let [y, u, v] = planes;
        Self {
            y: y.ptr,
            u: u.ptr,
            v: v.ptr,
            pitch_y: y.pitch as u32,
            pitch_u: u.pitch as u32,
            pitch_v: v.pitch as u32,
            chroma_width: u.width as i32,
            chroma_height: u.height as i32,
        }
    }
}

pub(super) struct GpuSsimulacra2 {
    sizes: Vec<(usize, usize)>,
    pyramid: Pyramid,
    colour: Colour,
    blur: Blur,
    convert: Function,
    downsample: Function,
    blur_rows: Function,
    blur_columns: Function,
    reduce: Function,
    /// Linear RGB and XYB: 6 pyramid planes each (picture * 3 + channel).
    linear: DeviceBuffer,
    xyb: DeviceBuffer,
    /// The horizontal pass's output: 15 pyramid planes.
    rows: DeviceBuffer,
    /// Per-column sums: `PER_SCALE` quantities per scale, `sum_stride`
    /// doubles each.
    column_sums: DeviceBuffer,
    results: Readback,
}

impl GpuSsimulacra2 {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        twin::check_format(format)?;
        let matrix = twin::matrix(options)?;
        let module = kernels::load(gpu, &KERNELS)?;
        let (w, h) = format.plane_size(PlaneId::Y);
        let sizes = twin::scale_sizes(w, h);
        let pyramid = Pyramid::new(&sizes);
        let plane_bytes = pyramid.floats() * 4;
        let quantities = PER_SCALE * sizes.len();
        let suffix = sample_suffix(format.bytes_per_sample());
        Ok(Self {
            colour: Colour::new(&ColourConstants::new(matrix, format)),
            blur: Blur::new(),
            convert: module.function(&format!("ssimu2_convert_{suffix}"))?,
            downsample: module.function("ssimu2_downsample")?,
            blur_rows: module.function("ssimu2_blur_rows")?,
            blur_columns: module.function("ssimu2_blur_columns")?,
            reduce: module.function("ssimu2_reduce_columns")?,
            linear: gpu.buffer(6 * plane_bytes)?,
            xyb: gpu.buffer(6 * plane_bytes)?,
            rows: gpu.buffer(ROW_PLANES * plane_bytes)?,
            column_sums: gpu.buffer(quantities * pyramid.sum_stride as usize * 8)?,
            results: Readback::new(gpu, quantities)?,
            sizes,
            pyramid,
        })
    }

    /// A launch of `items` threads in blocks of `threads`, `grid_y` x
    /// `grid_z` times.
    fn dims(items: u32, threads: u32, grid_y: u32, grid_z: u32) -> LaunchDims {
        LaunchDims {
            grid: (items.div_ceil(threads), grid_y, grid_z),
            block: (threads, 1, 1),
            shared_bytes: 0,
        }
    }
}

impl GpuExtractor for GpuSsimulacra2 {
    fn name(&self) -> &'static str {
        "ssimulacra2"
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::ALL)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let [ry, ru, rv] = [PlaneId::Y, PlaneId::Cb, PlaneId::Cr].map(|p| frame.reference(p));
        let [dy, du, dv] = [PlaneId::Y, PlaneId::Cb, PlaneId::Cr].map(|p| frame.distorted(p));
        let (reference, distorted) = (Planes::of([ry?, ru?, rv?]), Planes::of([dy?, du?, dv?]));
        let pyr = self.pyramid;
        let totals = self.results.begin(stream)?.cast::<f64>();
        let linear = self.linear.slice::<f32>(..);
        let xyb = self.xyb.slice::<f32>(..);
        let rows = self.rows.slice::<f32>(..);
        let sums = self.column_sums.slice::<f64>(..);

        let (w, h) = self.sizes[0];
        let mut args = KernelArgs::new();
        args.arg(reference)
            .arg(distorted)
            .arg(pyr)
            .arg(self.colour)
            .arg(linear)
            .arg(xyb);
        let dims = Self::dims(w as u32, PIXEL_THREADS, h as u32, 2);
        // SAFETY: the arguments match ssimu2_convert_* (the structs are
        // repr(C) copies of the kernel's); the shared planes are
        // context-owned, the pyramid buffers ours and sized by `pyr`; all
        // alive until the stream ran.
        unsafe { stream.launch(&self.convert, &dims, &mut args)? };

        for (s, &(w, h)) in self.sizes.iter().enumerate().skip(1) {
            let mut args = KernelArgs::new();
            args.arg(pyr)
                .arg(s as i32)
                .arg(self.colour)
                .arg(linear)
                .arg(xyb);
            let dims = Self::dims(w as u32, PIXEL_THREADS, h as u32, 2);
            // SAFETY: the arguments match ssimu2_downsample; scale `s` and
            // `s - 1` are inside the pyramid buffers.
            unsafe { stream.launch(&self.downsample, &dims, &mut args)? };
        }

        let mut args = KernelArgs::new();
        args.arg(pyr).arg(self.blur).arg(xyb).arg(rows);
        let dims = LaunchDims {
            grid: (pyr.row_blocks(), ROW_PLANES as u32, 1),
            block: (LINE_THREADS, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: the arguments match ssimu2_blur_rows; `rows` holds 15
        // pyramid planes.
        unsafe { stream.launch(&self.blur_rows, &dims, &mut args)? };

        let mut args = KernelArgs::new();
        args.arg(pyr).arg(self.blur).arg(xyb).arg(rows).arg(sums);
        let dims = Self::dims(pyr.columns(), LINE_THREADS, 3, 1);
        // SAFETY: the arguments match ssimu2_blur_columns; `sums` holds
        // PER_SCALE quantities of `sum_stride` doubles per scale.
        unsafe { stream.launch(&self.blur_columns, &dims, &mut args)? };

        let mut args = KernelArgs::new();
        args.arg(pyr).arg(sums).arg(totals);
        let quantities = (PER_SCALE * self.sizes.len()) as u32;
        let dims = Self::dims(quantities * REDUCE_THREADS, REDUCE_THREADS, 1, 1);
        // SAFETY: the arguments match ssimu2_reduce_columns; `totals` is
        // this frame's result slot of `quantities` words.
        unsafe { stream.launch(&self.reduce, &dims, &mut args)? };
        self.results.end(index, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, words)) = self.results.complete_launched("ssimulacra2")? else {
            return Ok(None);
        };
        let norms: Vec<ScaleNorms> = self
            .sizes
            .iter()
            .zip(words.chunks_exact(PER_SCALE))
            .map(|(&(w, h), words)| {
                let sums: [[f64; SUMS]; 3] = std::array::from_fn(|c| {
                    std::array::from_fn(|q| f64::from_bits(words[c * SUMS + q]))
                });
                twin::scale_norms(&sums, w * h)
            })
            .collect();
        sink.emit(index, "ssimulacra2", twin::frame_score(&norms));
        Ok(Some(index))
    }
}

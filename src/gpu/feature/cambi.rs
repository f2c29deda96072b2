//! `cambi` on the GPU (kernels/cambi.cu): per picture one launch resizes,
//! requantizes and anti-dithers the luma (and checks its range), one
//! computes the spatial mask, then per scale one decimates and
//! mode-filters, and one launch computes every scale's c-values from
//! sliding histograms; three launches find each scale's top-k sum by a
//! radix select on the c-values' bits. Every value up to the c-values is
//! the CPU's bit for bit; the top-k sums are added in double in a fixed
//! order, and the host finishes the scores with the CPU extractor's
//! functions (options, tables, scale weights, clipping and outputs all
//! come from `crate::feature::cambi`).
//!
//! The working planes follow the CPU's buffer model (`plane.rs`): when a
//! scale of either geometry is narrower or shorter than half the window,
//! libvmaf's loops read samples left beyond the scale by earlier steps or
//! frames, so the extractor keeps canonical planes, copies each scale back
//! into them and scores the scales one launch each ("exact" mode);
//! otherwise each scale has its own planes and one launch scores them all.

use super::float_common::{doubles, sample_suffix};
use super::readback::Readback;
use super::GpuExtractor;
use super::GpuTwin;
use crate::error::Result;
use crate::feature::cambi::twin::{
    combine_scales, mask_threshold, nearest_indices, out_of_range_error, setup, top_k_count,
    Config, Geometry, Requantize, CONTRAST_WEIGHTS, NUM_SCALES,
};
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::{KernelArg, KernelArgs};
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Stream};
use crate::gpu::driver::{Copy2d, DevicePtr, LaunchDims, Memory};
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{DevicePlane, FramePlanes, PairPlanes};
use crate::gpu::slice::DeviceSlice;
use crate::gpu::GpuBackend;
use crate::picture::{PictureFormat, PlaneId, PlaneMask};
use std::ops::Range;

/// kernels/cambi.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("cambi.cu");

/// The GPU version named by the CPU extractor's registry record.
/// `None` (the CPU scores it) where a c-values block would need more shared
/// memory than the backend gives one (options far from the defaults on AMD).
pub(crate) static TWIN: GpuTwin = GpuTwin {
    create: |requests, format, gpu| {
        let [(_, options)] = requests else {
            return None;
        };
        GpuCambi::create(options, format, gpu)
            .transpose()
            .map(|made| made.map(|x| Box::new(x) as Box<dyn GpuExtractor>))
    },
    modules: &[&KERNELS],
    backends: super::EVERY_BACKEND,
};

/// The shape of a c-values block: its columns (the kernel's `TW`), the
/// threads that share each column's histogram (`K`) and its entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BlockShape {
    columns: u32,
    threads_per_column: u32,
    /// Histogram steps staged at once (the kernel's `BATCH`).
    batch: u32,
    /// Whether a block counts its pooling bins in shared memory first
    /// (`SHARED_BINS`) or adds them to the scale's in global memory.
    shared_bins: bool,
    entry: &'static str,
}

impl BlockShape {
    /// 32 columns, several threads per column, since the histograms'
    /// shared memory bounds the columns an SM holds. CUDA: 4 threads, 16
    /// steps a batch, pooling counts straight to global memory, so that an
    /// H200 SM holds three blocks at 2160p's window and four at 1080p's
    /// (against 64-column blocks with shared counts, two: c-values 0.69 ms
    /// against 0.98 at 2160p with `vmaf_v1.0.16_3d0h`'s options, ADR
    /// 0034); AMD: 2 threads (one 64-wide wave) within a block's 64 KiB.
    fn of(backend: GpuBackend) -> Self {
        match backend {
            GpuBackend::Cuda => BlockShape {
                columns: 32,
                threads_per_column: 4,
                batch: 16,
                shared_bins: false,
                entry: "cambi_c_values",
            },
            GpuBackend::Hip => BlockShape {
                columns: 32,
                threads_per_column: 2,
                batch: 8,
                shared_bins: true,
                entry: "cambi_c_values_wave64",
            },
        }
    }

    fn threads(&self) -> u32 {
        self.columns * self.threads_per_column
    }

    /// Dynamic shared memory of a block (the kernel's layout): the
    /// histograms (two values to a word, each value's row one word longer
    /// than the block where several threads share a column), the ring of
    /// keys, the staged pairs and their run starts (a bit per pair, one
    /// word more per step than the pairs take), the steps' rows, the
    /// batch's walk (its events, `2 * batch + 2`, and its plan, 8), the
    /// level-1 pooling bins (where a block keeps its own).
    fn shared_bytes(&self, band: u32, pad: u32) -> u32 {
        let (tw, k) = (self.columns, self.threads_per_column);
        let hist_stride = tw + u32::from(k > 1);
        let staged = tw + 2 * pad;
        let (ring, batch) = (self.ring(pad), self.batch);
        let words = band.div_ceil(2) * hist_stride
            + (ring * staged).div_ceil(2)
            + batch * staged
            + batch * (staged.div_ceil(32) + 1)
            + 2 * batch
            + (2 * batch + 2)
            + 8
            + if self.shared_bins { BINS[0] as u32 } else { 0 };
        words * 4
    }

    /// Rows of keys a block keeps: its histograms' and a batch's entering.
    fn ring(&self, pad: u32) -> u32 {
        2 * pad + 1 + self.batch
    }
}

/// What AMD GPUs give one block (and what HIP's backend plans for).
const HIP_SHARED_BYTES: u32 = 64 * 1024;

/// Threads of a spatial-mask block, one per column (`MASK_COLS`: its
/// outputs and 3 columns each side), and the rows it walks (`MASK_ROWS`).
const MASK_COLS: u32 = 128;
const MASK_ROWS: u32 = 64;

/// Threads of the select kernels (`SELECT_THREADS`).
const SELECT_THREADS: u32 = 256;
/// C-values each select thread reads (a scale's select blocks, and level
/// 3's partials, follow from it).
const SELECT_PER_THREAD: usize = 32;
/// Radix-select bins per scale and level (`BINS1`..`BINS3`).
const BINS: [usize; 3] = [2048, 1024, 1024];
/// Result words: the distorted picture's per-scale sums, the reference's,
/// then each picture's out-of-range key.
const SUMS_SOURCE: usize = NUM_SCALES;
const OUT_OF_RANGE: usize = 2 * NUM_SCALES;
const RESULT_WORDS: usize = 2 * NUM_SCALES + 2;

/// `struct Resize` of the kernel.
#[repr(C)]
#[derive(Clone, Copy)]
struct Resize {
    cols: DevicePtr,
    rows: DevicePtr,
    left: u32,
    right: u32,
    round: u32,
    anti_dither: i32,
    /// The output is the input's size: the tables map each index to
    /// itself, and the kernel skips them.
    identity: i32,
}

// SAFETY: a repr(C) copy of the kernel's struct: device addresses and
// integers.
unsafe impl KernelArg for Resize {}

/// `struct Tables` of the kernel.
#[repr(C)]
#[derive(Clone, Copy)]
struct Tables {
    active: DevicePtr,
    reciprocal: DevicePtr,
    weights: DevicePtr,
    base: u32,
    band: u32,
}

// SAFETY: a repr(C) copy of the kernel's struct: device addresses and
// integers.
unsafe impl KernelArg for Tables {}

/// `struct ScaleSet` of the kernel.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct ScaleSet {
    offset: [u32; NUM_SCALES],
    count: [u32; NUM_SCALES],
    k: [u32; NUM_SCALES],
    /// Select blocks of scale s: `first[s]..first[s + 1]`.
    first: [u32; NUM_SCALES + 1],
}

// SAFETY: a repr(C) copy of the kernel's struct, plain integers.
unsafe impl KernelArg for ScaleSet {}

/// `struct CScale` of the kernel: one scale of a c-values launch.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CScale {
    img: DevicePtr,
    msk: DevicePtr,
    c_values: DevicePtr,
    bins: DevicePtr,
    w: i32,
    h: i32,
    key_cols: i32,
    key_rows: i32,
    rows_per_block: i32,
    col_blocks: i32,
    first: i32,
    unused: i32,
}

/// `struct CLaunch` of the kernel.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CLaunch {
    s: [CScale; NUM_SCALES],
    scales: i32,
    stride: i32,
    pad: i32,
    ring: i32,
}

// SAFETY: a repr(C) copy of the kernel's struct: device addresses and
// integers.
unsafe impl KernelArg for CLaunch {}

/// One scale of a c-values launch: the scale, its image and mask planes,
/// its c-values and its level-1 bins.
type ScaleWork<'a> = (
    &'a Scale,
    [DeviceSlice<u16>; 2],
    DeviceSlice<f32>,
    DeviceSlice<u32>,
);

/// One scale of a geometry.
#[derive(Clone, Copy, Debug)]
struct Scale {
    width: usize,
    height: usize,
    decimate: bool,
    /// Columns and rows libvmaf's loops read (beyond the scale when it is
    /// smaller than half the window).
    key_cols: usize,
    key_rows: usize,
}

/// How one picture is scored at a geometry.
struct Plan {
    geometry: Geometry,
    resize: Resize,
    threshold: u32,
    scales: [Scale; NUM_SCALES],
    set: ScaleSet,
}

impl Plan {
    fn new(
        config: &Config,
        geometry: Geometry,
        (stride, rows): (usize, usize),
        resize: Resize,
    ) -> Self {
        let pad = geometry.window >> 1;
        let (mut w, mut h) = (geometry.width, geometry.height);
        let mut set = ScaleSet::default();
        let mut offset = 0;
        let scales = std::array::from_fn(|s| {
            let decimate = s > 0 || config.high_res_speedup;
            if decimate {
                w = (w + 1) >> 1;
                h = (h + 1) >> 1;
            }
            set.offset[s] = offset as u32;
            set.count[s] = (w * h) as u32;
            set.k[s] = top_k_count(w * h, config.topk) as u32;
            let blocks = (w * h).div_ceil(SELECT_THREADS as usize * SELECT_PER_THREAD);
            set.first[s + 1] = set.first[s] + blocks.max(1) as u32;
            offset += w * h;
            Scale {
                width: w,
                height: h,
                decimate,
                key_cols: w.max(pad).min(stride),
                key_rows: h.max(pad).min(rows),
            }
        });
        Self {
            geometry,
            resize,
            threshold: mask_threshold(geometry.width, geometry.height),
            scales,
            set,
        }
    }

    /// Whether some scale reads beyond itself.
    fn reads_beyond(&self) -> bool {
        self.scales
            .iter()
            .any(|s| s.key_cols > s.width || s.key_rows > s.height)
    }

    fn c_values_len(&self) -> usize {
        self.scales.iter().map(|s| s.width * s.height).sum()
    }

    /// Select blocks over all scales (level 3's partials).
    fn select_blocks(&self) -> u32 {
        self.set.first[NUM_SCALES]
    }
}

struct Kernels {
    preprocess: Function,
    mask: Function,
    prep: Function,
    c_values: Function,
    level2: Function,
    level3: Function,
    finish: Function,
}

pub(super) struct GpuCambi {
    /// The c-values blocks' shape.
    shape: BlockShape,
    config: Config,
    bit_depth: u32,
    /// Input luma size.
    input: (usize, usize),
    /// Row pitch (samples) of the working planes.
    stride: usize,
    /// Canonical planes and copies each scale back (see the module doc).
    exact: bool,
    /// Exact mode: the canonical planes and a scratch one. Otherwise: the
    /// preprocessed image (spatial mask), then one plane per scale (the
    /// scale's mask plane only where it decimates), so that one launch
    /// computes every scale's c-values.
    image: Vec<DeviceBuffer>,
    mask: Vec<DeviceBuffer>,
    c_values: DeviceBuffer,
    bins: DeviceBuffer,
    partials: DeviceBuffer,
    _indices: DeviceBuffer,
    _table_data: DeviceBuffer,
    tables: Tables,
    band: u32,
    encode: Plan,
    source: Option<Plan>,
    kernels: Kernels,
    results: Readback,
}

impl GpuCambi {
    /// `Ok(None)` where the c-values blocks would not fit the backend's
    /// shared memory.
    pub(super) fn create(
        options: &Options,
        format: &PictureFormat,
        gpu: &Gpu,
    ) -> Result<Option<Self>> {
        let (config, tables) = setup(options, format)?;
        let shape = BlockShape::of(gpu.backend());
        let band = tables.band_size();
        let widest_pad = [config.encode, config.source]
            .iter()
            .map(|g| g.window as u32 >> 1)
            .max()
            .unwrap_or(0);
        if gpu.backend() == GpuBackend::Hip
            && shape.shared_bytes(band as u32, widest_pad) > HIP_SHARED_BYTES
        {
            return Ok(None);
        }
        let module = kernels::load(gpu, &KERNELS)?;
        let input = format.plane_size(PlaneId::Y);
        let (stride, rows) = config.buffer_size();

        // Resize tables: encode columns, rows, then source columns, rows.
        let geometries = if config.full_ref {
            vec![config.encode, config.source]
        } else {
            vec![config.encode]
        };
        let mut index_words = Vec::new();
        let mut starts = Vec::new();
        for g in &geometries {
            starts.push(index_words.len());
            index_words.extend(nearest_indices(input.0, g.width));
            index_words.extend(nearest_indices(input.1, g.height));
        }
        let indices = gpu.upload(&index_words)?;
        let q = Requantize::new(u32::from(format.bit_depth));
        let anti_dither = i32::from(config.enc_bitdepth < 10);
        let plans: Vec<Plan> = geometries
            .iter()
            .zip(&starts)
            .map(|(g, &start)| {
                let cols = start..start + g.width;
                let resize = Resize {
                    cols: indices.slice::<u32>(cols.clone()).ptr(),
                    rows: indices.slice::<u32>(cols.end..cols.end + g.height).ptr(),
                    left: q.left,
                    right: q.right,
                    round: q.round,
                    anti_dither,
                    identity: i32::from((g.width, g.height) == input),
                };
                Plan::new(&config, *g, (stride, rows), resize)
            })
            .collect();
        let exact = plans.iter().any(Plan::reads_beyond);
        let c_values_len = plans.iter().map(Plan::c_values_len).max().unwrap_or(0);

        // Tables: active steps (band words), reciprocals, weights.
        let mut table_words: Vec<u32> = tables.active_steps().to_vec();
        let reciprocal_at = table_words.len();
        table_words.extend(tables.reciprocal().iter().map(|r| r.to_bits()));
        let weights_at = table_words.len();
        table_words.extend(CONTRAST_WEIGHTS.iter().map(|&w| w as u32));
        let table_data = gpu.upload(&table_words)?;
        let table = |range: Range<usize>| table_data.slice::<u32>(range).ptr();
        let kernel_tables = Tables {
            active: table(0..reciprocal_at),
            reciprocal: table(reciprocal_at..weights_at),
            weights: table(weights_at..table_words.len()),
            base: u32::from(tables.band_base()),
            band: band as u32,
        };

        let plane = |rows: usize| gpu.buffer(stride * rows * 2);
        let (mut image, mut mask) = (vec![plane(rows)?], vec![plane(rows)?]);
        if exact {
            image.push(plane(rows)?);
            mask.push(plane(rows)?);
        } else {
            for s in 0..NUM_SCALES {
                let h = plans.iter().map(|p| p.scales[s].height).max().unwrap_or(1);
                image.push(plane(h)?);
                mask.push(plane(h)?);
            }
        }
        let select_blocks = plans.iter().map(Plan::select_blocks).max().unwrap_or(1);
        // Like the CPU's planes, they start zeroed (samples beyond a scale
        // may be read before anything was written there).
        let stream = gpu.stream()?;
        for b in image.iter().chain(&mask) {
            stream.fill_u32(b, 0)?;
        }
        stream.synchronize()?;
        let suffix = sample_suffix(format.bytes_per_sample());
        let kernels = Kernels {
            preprocess: module.function(&format!("cambi_preprocess_{suffix}"))?,
            mask: module.function("cambi_spatial_mask")?,
            prep: module.function("cambi_prep")?,
            c_values: module.function(shape.entry)?,
            level2: module.function("cambi_select_level2")?,
            level3: module.function("cambi_select_level3")?,
            finish: module.function("cambi_select_finish")?,
        };
        let mut plans = plans.into_iter();
        let encode = plans.next().expect("the encode geometry");
        Ok(Some(Self {
            shape,
            bit_depth: u32::from(format.bit_depth),
            input,
            stride,
            exact,
            image,
            mask,
            c_values: gpu.buffer(c_values_len * 4)?,
            bins: gpu.buffer(NUM_SCALES * BINS.iter().sum::<usize>() * 4)?,
            partials: gpu.buffer(select_blocks as usize * 8)?,
            _indices: indices,
            _table_data: table_data,
            tables: kernel_tables,
            band: band as u32,
            encode,
            source: plans.next(),
            kernels,
            results: Readback::new(gpu, RESULT_WORDS)?,
            config,
        }))
    }

    /// Queues the scoring of `luma` with `plan`: per-scale top-k sums into
    /// `sums` (NUM_SCALES doubles), the out-of-range key into
    /// `out_of_range`.
    fn picture(
        &self,
        luma: DevicePlane,
        plan: &Plan,
        sums: DeviceSlice<f64>,
        out_of_range: DeviceSlice<u64>,
        stream: &Stream,
    ) -> Result<()> {
        stream.fill_u32(&self.bins, 0)?;
        let stride = self.stride as i32;
        let g = plan.geometry;
        let (w, h) = (g.width as i32, g.height as i32);
        let (in_w, in_h) = (self.input.0 as i32, self.input.1 as i32);

        // Resize, requantize, anti-dither, range check.
        let max_sample: u32 = if self.bit_depth == 8 || self.bit_depth >= 16 {
            0xFFFF
        } else {
            (1 << self.bit_depth) - 1
        };
        let mut args = KernelArgs::new();
        args.arg(luma.ptr)
            .arg(luma.pitch as u32)
            .arg(in_w)
            .arg(in_h)
            .arg(plan.resize)
            .arg(w)
            .arg(h)
            .arg(self.image[0].slice::<u16>(..))
            .arg(stride)
            .arg(max_sample)
            .arg(out_of_range.slice(..1));
        let dims = LaunchDims {
            grid: (
                (w.max(in_w) as u32).div_ceil(16),
                (h.max(in_h) as u32).div_ceil(16),
                1,
            ),
            block: (256, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: the arguments match cambi_preprocess_* (Resize is a
        // repr(C) copy of the kernel's struct); the plane is context-owned,
        // the rest ours, alive until the stream ran.
        unsafe { stream.launch(&self.kernels.preprocess, &dims, &mut args)? };

        // Spatial mask.
        let mut args = KernelArgs::new();
        args.arg(self.image[0].slice::<u16>(..))
            .arg(stride)
            .arg(w)
            .arg(h)
            .arg(plan.threshold)
            .arg(self.mask[0].slice::<u16>(..));
        let dims = LaunchDims {
            grid: (
                (w as u32).div_ceil(MASK_COLS - 6),
                (h as u32).div_ceil(MASK_ROWS),
                1,
            ),
            block: (MASK_COLS, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: the arguments match cambi_spatial_mask; our buffers.
        unsafe { stream.launch(&self.kernels.mask, &dims, &mut args)? };

        let pad = g.window >> 1;
        let bins = |s: usize| self.bins.slice::<u32>(s * BINS[0]..(s + 1) * BINS[0]);
        let values = |s: usize| {
            let at = plan.set.offset[s] as usize;
            self.c_values
                .slice::<f32>(at..at + plan.set.count[s] as usize)
        };
        let planes = |planes: &[DeviceBuffer], i: usize| planes[i].slice::<u16>(..);
        if self.exact {
            // Canonical planes 0, scratch 1: each scale is filtered into 1,
            // copied back, and scored before the next overwrites it.
            let canonical = [planes(&self.image, 0), planes(&self.mask, 0)];
            let scratch = [planes(&self.image, 1), planes(&self.mask, 1)];
            for (s, scale) in plan.scales.iter().enumerate() {
                self.prep(scale, canonical, scratch, stream)?;
                self.commit(&self.image, scale, stream)?;
                if scale.decimate {
                    self.commit(&self.mask, scale, stream)?;
                }
                let one = [(scale, canonical, values(s), bins(s))];
                self.c_values_launch(&one, pad, stream)?;
            }
        } else {
            // Every scale in its own planes, then one c-values launch.
            let mut source = [planes(&self.image, 0), planes(&self.mask, 0)];
            let mut scored = [source; NUM_SCALES];
            for (s, scale) in plan.scales.iter().enumerate() {
                let mask = if scale.decimate {
                    planes(&self.mask, 1 + s)
                } else {
                    source[1]
                };
                let dst = [planes(&self.image, 1 + s), mask];
                self.prep(scale, source, dst, stream)?;
                source = dst;
                scored[s] = dst;
            }
            let all: [ScaleWork<'_>; NUM_SCALES] =
                std::array::from_fn(|s| (&plan.scales[s], scored[s], values(s), bins(s)));
            self.c_values_launch(&all, pad, stream)?;
        }
        self.select(plan, sums, stream)
    }

    /// Decimates (if the scale does) and mode-filters the `src` planes
    /// into the `dst` planes (the mask only when decimating).
    fn prep(
        &self,
        scale: &Scale,
        [src_img, src_msk]: [DeviceSlice<u16>; 2],
        [out_img, out_msk]: [DeviceSlice<u16>; 2],
        stream: &Stream,
    ) -> Result<()> {
        let mut args = KernelArgs::new();
        args.arg(src_img)
            .arg(src_msk)
            .arg(self.stride as i32)
            .arg(scale.width as i32)
            .arg(scale.height as i32)
            .arg(i32::from(scale.decimate))
            .arg(out_img)
            .arg(out_msk);
        let dims = LaunchDims {
            grid: (
                (scale.width as u32).div_ceil(32),
                (scale.height as u32).div_ceil(8),
                1,
            ),
            block: (256, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: the arguments match cambi_prep; our buffers (source and
        // destination planes differ).
        unsafe { stream.launch(&self.kernels.prep, &dims, &mut args) }
    }

    /// Copies the scale's area of plane 1 into the canonical plane 0.
    fn commit(&self, planes: &[DeviceBuffer], scale: &Scale, stream: &Stream) -> Result<()> {
        let copy = Copy2d {
            src: Memory::Device(planes[1].ptr()),
            src_pitch: self.stride * 2,
            dst: planes[0].ptr(),
            dst_pitch: self.stride * 2,
            width_bytes: scale.width * 2,
            height: scale.height,
        };
        // SAFETY: both planes are ours and cover the scale's area.
        unsafe { stream.copy_2d(&copy) }
    }

    /// One launch computing the c-values of `scales`: each with its image
    /// and mask planes, c-values and level-1 bins.
    fn c_values_launch(&self, scales: &[ScaleWork<'_>], pad: usize, stream: &Stream) -> Result<()> {
        let mut launch = CLaunch {
            scales: scales.len() as i32,
            stride: self.stride as i32,
            pad: pad as i32,
            ring: self.shape.ring(pad as u32) as i32,
            ..CLaunch::default()
        };
        let mut blocks = 0u32;
        for (c, &(scale, [img, msk], values, bins)) in launch.s.iter_mut().zip(scales) {
            // A block builds its first row's window from scratch: give it
            // about four windows of rows to amortize that.
            let rows_per_block = (4 * (2 * pad + 1)).max(32).min(scale.height);
            let col_blocks = (scale.width as u32).div_ceil(self.shape.columns);
            *c = CScale {
                img: img.ptr(),
                msk: msk.ptr(),
                c_values: values.ptr(),
                bins: bins.ptr(),
                w: scale.width as i32,
                h: scale.height as i32,
                key_cols: scale.key_cols as i32,
                key_rows: scale.key_rows as i32,
                rows_per_block: rows_per_block as i32,
                col_blocks: col_blocks as i32,
                first: blocks as i32,
                unused: 0,
            };
            blocks += col_blocks * scale.height.div_ceil(rows_per_block) as u32;
        }
        let dims = LaunchDims {
            grid: (blocks, 1, 1),
            block: (self.shape.threads(), 1, 1),
            shared_bytes: self.shape.shared_bytes(self.band, pad as u32),
        };
        let mut args = KernelArgs::new();
        args.arg(launch).arg(self.tables);
        // SAFETY: the arguments match cambi_c_values (CLaunch and Tables
        // are repr(C) copies of the kernel's structs); our buffers, alive
        // until the stream ran; the dynamic shared memory is what the
        // kernel lays out.
        unsafe { stream.launch(&self.kernels.c_values, &dims, &mut args) }
    }

    /// The per-scale top-k sums into `sums`.
    fn select(&self, plan: &Plan, sums: DeviceSlice<f64>, stream: &Stream) -> Result<()> {
        // The bins of the three radix levels, NUM_SCALES of each in turn.
        let level = |l: usize| {
            let at: usize = BINS[..l].iter().map(|b| NUM_SCALES * b).sum();
            self.bins.slice::<u32>(at..at + NUM_SCALES * BINS[l])
        };
        let (bins1, bins2, bins3) = (level(0), level(1), level(2));
        let grid = LaunchDims {
            grid: (plan.select_blocks(), 1, 1),
            block: (SELECT_THREADS, 1, 1),
            shared_bytes: 0,
        };
        let values = self.c_values.slice::<f32>(..);
        let partials = self.partials.slice::<f64>(..);
        let mut args = KernelArgs::new();
        args.arg(values).arg(plan.set).arg(bins1).arg(bins2);
        // SAFETY: the arguments match cambi_select_level2; our buffers.
        unsafe { stream.launch(&self.kernels.level2, &grid, &mut args)? };
        let mut args = KernelArgs::new();
        args.arg(values)
            .arg(plan.set)
            .arg(bins1)
            .arg(bins2)
            .arg(bins3)
            .arg(partials);
        // SAFETY: the arguments match cambi_select_level3; our buffers.
        unsafe { stream.launch(&self.kernels.level3, &grid, &mut args)? };
        let mut args = KernelArgs::new();
        args.arg(plan.set)
            .arg(bins1)
            .arg(bins2)
            .arg(bins3)
            .arg(partials)
            .arg(sums.slice(..NUM_SCALES));
        let dims = LaunchDims {
            grid: (NUM_SCALES as u32, 1, 1),
            block: (SELECT_THREADS, 1, 1),
            shared_bytes: 0,
        };
        // SAFETY: the arguments match cambi_select_finish; `sums` is a live
        // result buffer of NUM_SCALES words.
        unsafe { stream.launch(&self.kernels.finish, &dims, &mut args) }
    }

    /// A picture's score from its per-scale top-k sums.
    fn score(&self, plan: &Plan, sums: &[f64]) -> f64 {
        let scores: [f64; NUM_SCALES] = std::array::from_fn(|s| sums[s] / f64::from(plan.set.k[s]));
        combine_scales(&scores, plan.geometry.window)
    }
}

impl GpuExtractor for GpuCambi {
    fn name(&self) -> &'static str {
        "cambi"
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes {
            reference: if self.config.full_ref {
                PlaneMask::LUMA
            } else {
                PlaneMask::NONE
            },
            distorted: PlaneMask::LUMA,
        }
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        let out = self.results.begin(stream)?;
        let sums = out.slice(..OUT_OF_RANGE).cast::<f64>();
        self.picture(
            frame.distorted(PlaneId::Y)?,
            &self.encode,
            sums.slice(..SUMS_SOURCE),
            out.slice(OUT_OF_RANGE..=OUT_OF_RANGE),
            stream,
        )?;
        if let Some(plan) = &self.source {
            self.picture(
                frame.reference(PlaneId::Y)?,
                plan,
                sums.offset(SUMS_SOURCE),
                out.slice(OUT_OF_RANGE + 1..=OUT_OF_RANGE + 1),
                stream,
            )?;
        }
        self.results.end(index, stream)
    }

    fn instances(&self, _: &PictureFormat) -> usize {
        // A frame's values depend on that frame alone.
        super::SPREAD_LONG_CHAINS
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, values)) = self.results.complete_launched("cambi")? else {
            return Ok(None);
        };
        for &key in &values[OUT_OF_RANGE..] {
            if key != 0 {
                return Err(out_of_range_error((!key & 0xFFFF) as u32, self.bit_depth));
            }
        }
        let sums = doubles(&values[..OUT_OF_RANGE]);
        let distorted = self.score(&self.encode, &sums[..NUM_SCALES]);
        let source = self
            .source
            .as_ref()
            .map(|plan| self.score(plan, &sums[SUMS_SOURCE..SUMS_SOURCE + NUM_SCALES]));
        self.config.emit(index, distorted, source, sink);
        Ok(Some(index))
    }
}

#[cfg(test)]
mod tests {
    use super::{BlockShape, HIP_SHARED_BYTES};
    use crate::gpu::GpuBackend;

    /// bt1886 defaults: band 564, window 65 (pad 32).
    #[test]
    fn c_values_blocks_fit_each_backend_at_the_defaults() {
        let cuda = BlockShape::of(GpuBackend::Cuda);
        let hip = BlockShape::of(GpuBackend::Hip);
        // Three blocks to an SM of 228 KiB (1 KiB of each reserved); four
        // at a 1080p window (33, pad 16).
        let on_nvidia = cuda.shared_bytes(564, 32);
        assert_eq!(on_nvidia, 59_472);
        assert!(3 * (on_nvidia + 1024) <= 228 * 1024);
        assert!(4 * (cuda.shared_bytes(564, 16) + 1024) <= 228 * 1024);
        assert_eq!(cuda.threads(), 128);
        let on_amd = hip.shared_bytes(564, 32);
        assert_eq!(on_amd, 62_800);
        assert!(on_amd <= HIP_SHARED_BYTES);
        assert_eq!(hip.threads(), 64);
    }
}

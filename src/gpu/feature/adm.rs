//! Integer `adm` on the GPU: the four wavelet scales, decoupling, contrast
//! masking and the cube sums in kernels (kernels/adm.cu), per-row sums
//! rounded and shifted per row as the CPU does; the host finishes the
//! integer totals with the CPU extractor's own float steps
//! ([`Scoring::scores`], [`output::emit`]), so per-frame values are
//! bit-identical to the CPU `adm`, libvmaf's AVX-512 edge-column quirk
//! included (ADR 0005).
//!
//! Per frame: one launch per scale, each doing the scale's DWT of both
//! pictures and its scoring tile by tile (the detail bands never leave the
//! chip); the last tile of each row adds the row's rounded sums to the
//! frame's totals.

use super::readback::Readback;
use super::{single_twin, GpuTwin};
use super::{spread_up_to_1440p, GpuExtractor};
use crate::error::Result;
use crate::feature::adm::twin::{
    band_sizes, coarse_simd_reads_past_row, cos_1deg_sq, fine_row_shift, output,
    simd_reads_past_row, vector_decoupled, CoarseShifts, Config, Names, Pooling, Region,
    ScaleKernel, ScaleSums, Scoring, COARSE_ROUNDING, SCALES,
};
use crate::feature::{FeatureSink, Options};
use crate::gpu::args::KernelArgs;
use crate::gpu::device::{DeviceBuffer, Function, Gpu, Stream};
use crate::gpu::driver::{DevicePtr, LaunchDims};
use crate::gpu::kernels;
use crate::gpu::kernels::{kernel_source, KernelSource};
use crate::gpu::planes::{FramePlanes, PairPlanes};
use crate::gpu::slice::DeviceSlice;
use crate::picture::{PictureFormat, PlaneId, PlaneMask};

/// kernels/adm.cu.
pub(crate) static KERNELS: KernelSource = kernel_source!("adm.cu");

/// The GPU version named by the CPU extractor's registry record.
pub(crate) static TWIN: GpuTwin = single_twin!(GpuAdm, &[&KERNELS], super::EVERY_BACKEND);

/// Threads per block of the scale kernels (kernels/adm.cu).
const THREADS: u32 = 256;
/// Tile width, in coefficients.
const TILE_W: usize = 32;
/// Per-row sums of a scale: ADM numerator, AIM numerator and reference
/// energy, each h, v, d.
const SUMS: usize = 9;
/// Bands with at least this many 32 x 32 tiles get them (each thread works
/// on 4 coefficients); smaller ones get 30 x 6 tiles (one coefficient per
/// thread, the tile's border in the same block), so that they still spread
/// over the device.
const LARGE_TILES: usize = 256;
/// The small tiles (kernels/adm.cu's HALO_W x HALO_H).
const SMALL_TILE: (usize, usize) = (30, 6);

/// One scale's geometry, kernel and approximation buffer.
struct Scale {
    /// DWT input and output (band) sizes.
    input: (usize, usize),
    band: (usize, usize),
    region: Region,
    /// Whether the region is scored (not with `adm_skip_scale0` at scale 0).
    scored: bool,
    /// Whether the last band column reproduces libvmaf's AVX-512 overrun.
    overrun: bool,
    /// Coefficients per thread: 4 (32 x 32 tiles) or 1 (30 x 6 tiles).
    per_thread: usize,
    kernel: Function,
    /// Both pictures' approximations, for the next scale (i16 at scale 0,
    /// i32 after; none at the last scale).
    approx: Option<DeviceBuffer>,
    /// First of this scale's region rows in the row buffers.
    first_row: usize,
}

impl Scale {
    /// Threads per block: (x, y).
    fn block(&self) -> (u32, u32) {
        if self.per_thread == 1 {
            // The tile and its border, a position per thread.
            (SMALL_TILE.0 as u32 + 2, SMALL_TILE.1 as u32 + 2)
        } else {
            let per_row = (TILE_W / self.per_thread) as u32;
            (per_row, THREADS / per_row)
        }
    }

    /// Coefficients per tile: (width, rows).
    fn tile(&self) -> (usize, usize) {
        if self.per_thread == 1 {
            SMALL_TILE
        } else {
            (TILE_W, THREADS as usize * self.per_thread / TILE_W)
        }
    }

    fn grid(&self) -> (u32, u32, u32) {
        let (w, h) = self.tile();
        (
            self.band.0.div_ceil(w) as u32,
            self.band.1.div_ceil(h) as u32,
            1,
        )
    }

    /// Tiles covering a row of the region.
    fn tiles_per_row(&self) -> usize {
        let w = self.tile().0;
        (self.region.right - 1) / w - self.region.left / w + 1
    }
}

pub(super) struct GpuAdm {
    bit_depth: u32,
    scoring: Scoring,
    pooling: Pooling,
    names: Names,
    scales: Vec<Scale>,
    /// Per region row of every scale: the row's sums, and how many tiles
    /// have added theirs; the last tile of a row resets both.
    row_sums: DeviceBuffer,
    row_tiles: DeviceBuffer,
    /// The row buffers start zeroed (cleared on the first frame's stream).
    rows_cleared: bool,
    cos_sq: f64,
    results: Readback,
}

impl GpuAdm {
    pub(super) fn create(options: &Options, format: &PictureFormat, gpu: &Gpu) -> Result<Self> {
        let config = Config::new(options, format)?;
        let scoring = Scoring::new(format, &config.csf, config.params);
        let bytes = format.bytes_per_sample();
        let sizes = band_sizes(format.width as usize, format.height as usize);
        let module = kernels::load(gpu, &KERNELS)?;
        let mut scales = Vec::with_capacity(SCALES);
        let mut rows = 0;
        for (s, &band) in sizes.iter().enumerate() {
            let input = if s == 0 {
                (format.width as usize, format.height as usize)
            } else {
                sizes[s - 1]
            };
            let scored = s > 0 || !config.params.skip_scale0;
            let large_tiles = band.0.div_ceil(TILE_W) * band.1.div_ceil(TILE_W);
            // (The 4-wide runs need a band at least 4 wide.)
            let per_thread = if large_tiles >= LARGE_TILES && band.0 >= 4 {
                4
            } else {
                1
            };
            let name = match s {
                0 if bytes == 1 => format!("adm_scale0_u8_t{per_thread}"),
                0 => format!("adm_scale0_u16_t{per_thread}"),
                _ => format!("adm_scale{s}_t{per_thread}"),
            };
            let coef = if s == 0 { 2 } else { 4 };
            let region = scoring.regions[s];
            scales.push(Scale {
                input,
                band,
                region,
                scored,
                overrun: if s == 0 {
                    scored && simd_reads_past_row(band.0, bytes)
                } else {
                    coarse_simd_reads_past_row(band.0)
                },
                per_thread,
                kernel: module.function(&name)?,
                approx: if s + 1 < SCALES {
                    Some(gpu.buffer(2 * band.0 * band.1 * coef)?)
                } else {
                    None
                },
                first_row: rows,
            });
            if scored {
                rows += region.height();
            }
        }
        Ok(Self {
            bit_depth: format.bit_depth as u32,
            scoring,
            pooling: config.pooling,
            names: config.names,
            scales,
            row_sums: gpu.buffer(rows * SUMS * 8)?,
            row_tiles: gpu.buffer(rows * 4)?,
            rows_cleared: false,
            cos_sq: cos_1deg_sq(),
            results: Readback::new(gpu, SCALES * SUMS)?,
        })
    }

    /// Appends the scoring arguments of scale `s` (kernels/adm.cu's
    /// SCORING_PARAMS).
    fn scoring_args(&self, s: usize, args: &mut KernelArgs, totals: DeviceSlice<u64>) {
        let scale = &self.scales[s];
        let region = &scale.region;
        let (rfactor, cube_shift, den_shifts, row_shift, den_row_shift) = if s == 0 {
            let k = &self.scoring.fine;
            (
                k.rfactor.map(i64::from),
                k.cube_shift,
                (0, 0),
                k.row_shift(),
                fine_row_shift(region),
            )
        } else {
            let k = &self.scoring.coarse[s - 1];
            let den = CoarseShifts::new(s, region);
            (
                k.rfactor,
                [k.cube_shift; 3],
                (den.square, den.cube),
                k.row_shift(),
                den.row,
            )
        };
        // This scale's rows of the row buffers (none when not scored).
        let rows =
            scale.first_row..scale.first_row + if scale.scored { region.height() } else { 0 };
        args.arg(scale.scored as i32)
            .arg(region.top as i32)
            .arg(region.bottom as i32)
            .arg(region.left as i32)
            .arg(region.right as i32)
            .arg(rfactor[0])
            .arg(rfactor[1])
            .arg(rfactor[2])
            .arg(cube_shift[0] as i32)
            .arg(cube_shift[1] as i32)
            .arg(cube_shift[2] as i32)
            .arg(den_shifts.0 as i32)
            .arg(den_shifts.1 as i32)
            .arg(self.scoring.params.gain_limit)
            .arg(self.cos_sq)
            .arg(vector_decoupled(scale.band.0).end as i32)
            .arg(
                self.row_sums
                    .slice::<u64>(rows.start * SUMS..rows.end * SUMS),
            )
            .arg(self.row_tiles.slice::<u32>(rows))
            .arg(totals.slice(s * SUMS..(s + 1) * SUMS))
            .arg(row_shift as i32)
            .arg(den_row_shift as i32)
            .arg(scale.tiles_per_row() as i32);
    }

    /// Scale 0 from both luma planes.
    fn scale0(
        &self,
        frame: &FramePlanes<'_>,
        totals: DeviceSlice<u64>,
        stream: &Stream,
    ) -> Result<()> {
        let (r, d) = (frame.reference(PlaneId::Y)?, frame.distorted(PlaneId::Y)?);
        let s = &self.scales[0];
        let mut args = KernelArgs::new();
        args.arg(r.ptr)
            .arg(r.pitch as u32)
            .arg(d.ptr)
            .arg(d.pitch as u32)
            .arg(s.input.0 as i32)
            .arg(s.input.1 as i32)
            .arg(self.bit_depth as i32)
            .arg(s.band.0 as i32)
            .arg(s.band.1 as i32)
            .arg(s.overrun as i32)
            .arg(s.approx.as_ref().map_or(0, |b| b.ptr()));
        self.scoring_args(0, &mut args, totals);
        // SAFETY: the arguments match adm_scale0_*; the planes are
        // context-owned and the buffers ours, alive past the stream's work.
        unsafe { stream.launch(&s.kernel, &Self::dims(s), &mut args) }
    }

    /// Scale `s` (1-3) from both approximations of scale `s - 1`.
    fn scale_coarse(&self, s: usize, totals: DeviceSlice<u64>, stream: &Stream) -> Result<()> {
        let (scale, input) = (&self.scales[s], &self.scales[s - 1]);
        let ((vadd, vshift), (hadd, hshift)) = COARSE_ROUNDING[s - 1];
        // libvmaf's scratch past this scale's rows holds the previous
        // scale's last vertical-pass row (none before scale 1).
        let (prev, prev_iw, prev_ih, prev_oh, (prev_add, prev_shift)): (
            DevicePtr,
            usize,
            usize,
            usize,
            (i64, u32),
        ) = if s == 1 {
            (0, 1, 1, 1, (0, 0))
        } else {
            (
                self.scales[s - 2].approx.as_ref().map_or(0, |b| b.ptr()),
                input.input.0,
                input.input.1,
                input.band.1,
                COARSE_ROUNDING[s - 2].0,
            )
        };
        let mut args = KernelArgs::new();
        args.arg(input.approx.as_ref().map_or(0, |b| b.ptr()))
            .arg(scale.input.0 as i32)
            .arg(scale.input.1 as i32)
            .arg(scale.band.0 as i32)
            .arg(scale.band.1 as i32)
            .arg(vadd)
            .arg(vshift as i32)
            .arg(hadd)
            .arg(hshift as i32)
            .arg(scale.overrun as i32)
            .arg(prev)
            .arg(prev_iw as i32)
            .arg(prev_ih as i32)
            .arg(prev_oh as i32)
            .arg(prev_add)
            .arg(prev_shift as i32)
            .arg(scale.approx.as_ref().map_or(0, |b| b.ptr()));
        self.scoring_args(s, &mut args, totals);
        // SAFETY: the arguments match adm_scale{1,2,3}_*; buffers are ours.
        unsafe { stream.launch(&scale.kernel, &Self::dims(scale), &mut args) }
    }

    fn dims(scale: &Scale) -> LaunchDims {
        let (x, y) = scale.block();
        LaunchDims {
            grid: scale.grid(),
            block: (x, y, 1),
            shared_bytes: 0,
        }
    }
}

impl GpuExtractor for GpuAdm {
    fn name(&self) -> &'static str {
        "adm"
    }

    fn instances(&self, format: &PictureFormat) -> usize {
        spread_up_to_1440p(format)
    }

    fn planes(&self) -> PairPlanes {
        PairPlanes::both(PlaneMask::LUMA)
    }

    fn enqueue(&mut self, index: u32, frame: &FramePlanes<'_>, stream: &Stream) -> Result<()> {
        if !self.rows_cleared {
            stream.fill_u32(&self.row_sums, 0)?;
            stream.fill_u32(&self.row_tiles, 0)?;
            self.rows_cleared = true;
        }
        let totals = self.results.begin(stream)?;
        self.scale0(frame, totals, stream)?;
        for s in 1..SCALES {
            self.scale_coarse(s, totals, stream)?;
        }
        self.results.end(index, stream)
    }

    fn complete(&mut self, sink: &mut FeatureSink) -> Result<Option<u32>> {
        let Some((index, values)) = self.results.complete_launched("adm")? else {
            return Ok(None);
        };
        let sums: [ScaleSums; SCALES] = std::array::from_fn(|s| {
            let v = &values[s * SUMS..(s + 1) * SUMS];
            ScaleSums {
                num: std::array::from_fn(|k| v[k] as i64),
                aim: std::array::from_fn(|k| v[3 + k] as i64),
                den: std::array::from_fn(|k| v[6 + k]),
            }
        });
        let scores = self.scoring.scores(&sums);
        output::emit(index, &scores, &self.pooling, &self.names, sink);
        Ok(Some(index))
    }
}

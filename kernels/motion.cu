// The integer `motion` SAD: sum of |blur(prev - cur)| with libvmaf 3.2.0's
// separable 5-tap filter (vertical pass rounded and shifted by the bit
// depth, then horizontal pass rounded and shifted by 16), reflect-101
// edges, and a wrapping 32-bit sum per row. Integer arithmetic only.
//
// Layout: a warp owns a strip of ROWS rows and 128 columns, four
// neighbouring columns a lane, and scores the middle 124 (each side's two
// columns are the horizontal tap's halo); a block is WARPS such strips one
// below the other. Walking down its strip, a lane keeps the five rows of
// differences its vertical tap reads in registers (one new row of each
// plane a step, loaded a row ahead, four samples in one load away from the
// picture's edges), runs the vertical pass in 32 bits up to 15-bit input
// (as the CPU does), and gets its neighbours' results by lane shuffles:
// no shared memory and no block barrier until the block's sum. The
// horizontal pass splits each result as y = 256 * hi + lo so that it fits
// 32 bits too (the CPU's `horizontal_tap`).
//
// Row sums: libvmaf adds each row in a wrapping uint32_t. |v| < 2^16, so a
// row of at most 65537 pixels never reaches 2^32 and the frame's SAD is
// the plain sum of every |v|; the extractor runs on the GPU only for such
// widths (src/gpu/feature/motion.rs). A lane sums its ROWS x 4 pixels in
// 32 bits, each block adds its 64-bit total to the frame's.

#include "common.cuh"

#define THREADS 256
#define WARPS (THREADS / 32)
// A warp's strip: 32 lanes of LANE_COLS columns, STRIP_COLS of them scored.
#define LANE_COLS 4
#define STRIP_COLS (32 * LANE_COLS - 4)
#define ROWS 8

__constant__ int FILTER[5] = {3571, 16004, 26386, 16004, 3571};

// Reflect-101 about the edges; indices further out (read only for
// columns that score nothing) are clamped into the picture.
__device__ __forceinline__ int mirror(int i, int size) {
    if (i < 0) i = -i;
    if (i >= size) i = 2 * size - i - 2;
    return i < 0 ? 0 : (i >= size ? size - 1 : i);
}

// Four neighbouring samples in one load: their word and the i-th sample.
template <typename T> struct Quad;
template <> struct Quad<unsigned char> {
    typedef unsigned Word;
    static __device__ __forceinline__ int sample(Word w, int i) { return (int)((w >> (8 * i)) & 0xff); }
};
template <> struct Quad<unsigned short> {
    typedef uint2 Word;
    static __device__ __forceinline__ int sample(Word w, int i) {
        const unsigned half = i < 2 ? w.x : w.y;
        return (int)((half >> (16 * (i & 1))) & 0xffff);
    }
};

// prev - cur at columns x .. x+3 of one row: one load of each plane where
// `whole` (the four columns inside the picture, aligned), else sample by
// sample, mirrored.
template <typename T>
__device__ __forceinline__ void differences(const T *prev, const T *cur, int x, int width,
                                            bool whole, int (&d)[LANE_COLS]) {
    typedef typename Quad<T>::Word Word;
    if (whole) {
        const Word p = __ldg((const Word *)(prev + x)), c = __ldg((const Word *)(cur + x));
#pragma unroll
        for (int i = 0; i < LANE_COLS; i++) d[i] = Quad<T>::sample(p, i) - Quad<T>::sample(c, i);
    } else {
#pragma unroll
        for (int i = 0; i < LANE_COLS; i++) {
            const int m = mirror(x + i, width);
            d[i] = (int)__ldg(prev + m) - (int)__ldg(cur + m);
        }
    }
}

template <typename T>
__device__ __forceinline__ const T *row_of(const T *plane, unsigned pitch, int y) {
    return (const T *)((const char *)plane + (u64)y * pitch);
}

template <typename T, typename Acc>
__device__ void motion_sad(const T *prev, unsigned prev_pitch, const T *cur, unsigned cur_pitch,
                           unsigned width, unsigned height, unsigned bit_depth, u64 *total) {
    __shared__ u64 scratch[WARPS];
    const int w = (int)width, h = (int)height;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    // The strip's first column (a multiple of 4: 4-sample loads stay
    // aligned); it scores columns x0 + 2 .. x0 + 125.
    const int x0 = (int)blockIdx.x * STRIP_COLS - 4;
    const int x = x0 + LANE_COLS * lane;
    const int y0 = ((int)blockIdx.y * WARPS + warp) * ROWS;
    const int y_end = y0 + ROWS < h ? y0 + ROWS : h;
    // One load a plane and row for the whole warp's strip when it lies
    // inside the picture and the rows are aligned for it.
    constexpr unsigned ALIGN = LANE_COLS * sizeof(T) - 1;
    const bool whole = x0 >= 0 && x0 + 32 * LANE_COLS <= w &&
                       ((prev_pitch | cur_pitch | (unsigned)(u64)prev | (unsigned)(u64)cur) & ALIGN) == 0;
    const Acc round = (Acc)1 << (bit_depth - 1);
    // Which of the lane's columns it scores: inside the strip's middle and
    // the picture.
    bool scored[LANE_COLS];
#pragma unroll
    for (int i = 0; i < LANE_COLS; i++) {
        const int c = x + i;
        scored[i] = c >= x0 + 2 && c < x0 + 2 + STRIP_COLS && c >= 0 && c < w;
    }
    unsigned acc = 0;
    if (y0 < h) {
        // The five rows the vertical tap reads, and the next one.
        int d0[LANE_COLS], d1[LANE_COLS], d2[LANE_COLS], d3[LANE_COLS], d4[LANE_COLS], dn[LANE_COLS];
        differences(row_of(prev, prev_pitch, mirror(y0 - 2, h)), row_of(cur, cur_pitch, mirror(y0 - 2, h)), x, w, whole, d1);
        differences(row_of(prev, prev_pitch, mirror(y0 - 1, h)), row_of(cur, cur_pitch, mirror(y0 - 1, h)), x, w, whole, d2);
        differences(row_of(prev, prev_pitch, y0), row_of(cur, cur_pitch, y0), x, w, whole, d3);
        differences(row_of(prev, prev_pitch, mirror(y0 + 1, h)), row_of(cur, cur_pitch, mirror(y0 + 1, h)), x, w, whole, d4);
        differences(row_of(prev, prev_pitch, mirror(y0 + 2, h)), row_of(cur, cur_pitch, mirror(y0 + 2, h)), x, w, whole, dn);
        for (int y = y0; y < y_end; y++) {
#pragma unroll
            for (int i = 0; i < LANE_COLS; i++) {
                d0[i] = d1[i];
                d1[i] = d2[i];
                d2[i] = d3[i];
                d3[i] = d4[i];
                d4[i] = dn[i];
            }
            if (y + 1 < y_end) {
                const int yn = mirror(y + 3, h);
                differences(row_of(prev, prev_pitch, yn), row_of(cur, cur_pitch, yn), x, w, whole, dn);
            }
            // Vertical pass: this lane's four columns and, by shuffles,
            // the two on either side (lanes at the strip's ends get
            // wrapped-around values; their outer columns score nothing).
            int v[LANE_COLS + 4];
#pragma unroll
            for (int i = 0; i < LANE_COLS; i++) {
                const Acc s = (Acc)FILTER[0] * (Acc)(d0[i] + d4[i]) + (Acc)FILTER[1] * (Acc)(d1[i] + d3[i]) +
                              (Acc)FILTER[2] * (Acc)d2[i];
                v[i + 2] = (int)((s + round) >> bit_depth);
            }
            v[0] = lane_get(v[LANE_COLS], (lane + 31) % 32, 32);
            v[1] = lane_get(v[LANE_COLS + 1], (lane + 31) % 32, 32);
            v[LANE_COLS + 2] = lane_get(v[2], (lane + 1) % 32, 32);
            v[LANE_COLS + 3] = lane_get(v[3], (lane + 1) % 32, 32);
            int hi[LANE_COLS + 4], lo[LANE_COLS + 4];
#pragma unroll
            for (int i = 0; i < LANE_COLS + 4; i++) {
                hi[i] = v[i] >> 8;
                lo[i] = v[i] & 0xff;
            }
#pragma unroll
            for (int i = 0; i < LANE_COLS; i++) {
                const int a = FILTER[0] * (hi[i] + hi[i + 4]) + FILTER[1] * (hi[i + 1] + hi[i + 3]) +
                              FILTER[2] * hi[i + 2];
                const int b = FILTER[0] * (lo[i] + lo[i + 4]) + FILTER[1] * (lo[i + 1] + lo[i + 3]) +
                              FILTER[2] * lo[i + 2];
                const int r = (a + ((b + (1 << 15)) >> 8)) >> 8;
                acc += scored[i] ? (unsigned)(r < 0 ? -r : r) : 0u;
            }
        }
    }
    const u64 block_total = block_sum_u64<THREADS>((u64)acc, scratch);
    if (threadIdx.x == 0 && block_total != 0) atomicAdd(total, block_total);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    motion_sad_u8(const unsigned char *prev, unsigned prev_pitch, const unsigned char *cur,
                  unsigned cur_pitch, unsigned width, unsigned height, unsigned bit_depth,
                  u64 *total) {
    motion_sad<unsigned char, int>(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth,
                                   total);
}

// Up to 15 bits: |vertical sum| <= 2^16 * (2^15 - 1) fits 32 bits.
extern "C" __global__ void __launch_bounds__(THREADS)
    motion_sad_u16(const unsigned short *prev, unsigned prev_pitch, const unsigned short *cur,
                   unsigned cur_pitch, unsigned width, unsigned height, unsigned bit_depth,
                   u64 *total) {
    motion_sad<unsigned short, int>(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth,
                                    total);
}

// 16 bits: the vertical sum in 64 bits.
extern "C" __global__ void __launch_bounds__(THREADS)
    motion_sad_u16_wide(const unsigned short *prev, unsigned prev_pitch, const unsigned short *cur,
                        unsigned cur_pitch, unsigned width, unsigned height, unsigned bit_depth,
                        u64 *total) {
    motion_sad<unsigned short, i64>(prev, prev_pitch, cur, cur_pitch, width, height, bit_depth,
                                    total);
}

// Producer layouts into the planes the extractors read: one pass per plane
// that cannot be read in place. Semi-planar chroma (Cb and Cr interleaved)
// is split into two planes; `P`-format samples (value in the high bits of a
// 16-bit word) are shifted down. A 2D grid, one thread per output sample
// (pair): no block-size or warp-size assumption.

#include "common.cuh"

template <typename T>
__device__ inline const T *row_of(const T *base, unsigned pitch, unsigned y) {
    return (const T *)((const char *)base + (u64)y * pitch);
}

template <typename T>
__device__ inline T *row_of(T *base, unsigned pitch, unsigned y) {
    return (T *)((char *)base + (u64)y * pitch);
}

// Interleaved CbCr → Cb and Cr planes. `u` or `v` may be null when no
// extractor reads that plane.
template <typename T>
__device__ void split_chroma(const T *src, unsigned src_pitch, T *u, T *v,
                             unsigned dst_pitch, unsigned width, unsigned height,
                             unsigned shift) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    const T *s = row_of(src, src_pitch, y);
    if (u) row_of(u, dst_pitch, y)[x] = (T)(s[2 * x] >> shift);
    if (v) row_of(v, dst_pitch, y)[x] = (T)(s[2 * x + 1] >> shift);
}

extern "C" __global__ void split_chroma_u8(const unsigned char *src, unsigned src_pitch,
                                           unsigned char *u, unsigned char *v,
                                           unsigned dst_pitch, unsigned width,
                                           unsigned height, unsigned shift) {
    split_chroma(src, src_pitch, u, v, dst_pitch, width, height, shift);
}

extern "C" __global__ void split_chroma_u16(const unsigned short *src, unsigned src_pitch,
                                            unsigned short *u, unsigned short *v,
                                            unsigned dst_pitch, unsigned width,
                                            unsigned height, unsigned shift) {
    split_chroma(src, src_pitch, u, v, dst_pitch, width, height, shift);
}

// A plane of 16-bit words shifted down (P010 luma) or copied (shift 0).
extern "C" __global__ void shift_plane_u16(const unsigned short *src, unsigned src_pitch,
                                           unsigned short *dst, unsigned dst_pitch,
                                           unsigned width, unsigned height,
                                           unsigned shift) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    row_of(dst, dst_pitch, y)[x] = (unsigned short)(row_of(src, src_pitch, y)[x] >> shift);
}

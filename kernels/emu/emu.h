// The CUDA surface the kernels use, for g++: kernels/*.cu compiled as C++
// and run on the host by runtime.cpp (src/gpu/emu.rs drives it; tests
// only). A block's threads are cooperative fibers on one OS thread:
// barriers and warp operations switch between them, everything else is
// plain C++. Blocks run one at a time, so `__shared__` is `static`.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

// Lanes per warp: 32 as NVIDIA runs them; with EMU_WAVE64, 64 as AMD's
// CDNA wavefronts, and the kernels take their AMD branches (HIP's
// shuffles, wave barriers). EMU_HIP: AMD at 32 lanes (RDNA's wave32).
#ifdef EMU_WAVE64
#define EMU_WARP 64
#define __HIP_PLATFORM_AMD__ 1
#elif defined(EMU_HIP)
#define EMU_WARP 32
#define __HIP_PLATFORM_AMD__ 1
#else
#define EMU_WARP 32
#endif

// ---------------------------------------------------------------------
// Qualifiers
#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ static
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// `extern __shared__ T name[];` is rewritten by emu.rs to this static
// buffer (all of a kernel's dynamic shared memory, checked at launch).
#define EMU_DYNAMIC_SHARED static __attribute__((aligned(16)))
// What a block may have: 227 KiB on NVIDIA's H100/H200 class, AMD's 64 KiB
// of LDS.
#ifdef __HIP_PLATFORM_AMD__
#define EMU_DYNAMIC_SHARED_BYTES (64 * 1024)
#else
#define EMU_DYNAMIC_SHARED_BYTES (228 * 1024)
#endif

// ---------------------------------------------------------------------
// Vector types
struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
};
struct __attribute__((aligned(8))) uint2 {
    unsigned x, y;
};
struct __attribute__((aligned(16))) uint4 {
    unsigned x, y, z, w;
};
struct __attribute__((aligned(8))) int2 {
    int x, y;
};
struct __attribute__((aligned(16))) int4 {
    int x, y, z, w;
};
struct __attribute__((aligned(8))) float2 {
    float x, y;
};
struct __attribute__((aligned(16))) float4 {
    float x, y, z, w;
};
struct __attribute__((aligned(16))) double2 {
    double x, y;
};
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline double2 make_double2(double x, double y) { return {x, y}; }

// ---------------------------------------------------------------------
// The scheduler's interface (runtime.cpp)
namespace emu {
// The running fiber (the kernel thread) as kernels see it.
struct Thread {
    uint3 idx;
    unsigned lane;
};
extern Thread *current;
extern dim3 grid_dim, block_dim, block_idx;
void block_barrier();
// Waits for the live lanes of the warp; returns the value lane `source`
// (as the PTX shfl rules pick it) deposited, or `value` when that lane
// has returned.
uint64_t warp_exchange(uint64_t value, int source);
// A warp barrier with no exchange.
void warp_barrier();
// A warp barrier after which `peer(l)` is the pointer lane l passed (null
// for a returned lane) until the lane's next warp operation.
void warp_share(const void *mine);
const void *peer(unsigned lane);

template <typename T> inline uint64_t to_bits(T v) {
    static_assert(sizeof(T) <= 8, "shuffles move up to 64 bits");
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}
template <typename T> inline T from_bits(uint64_t b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}

// PTX shfl.sync's source lane: c = clamp | segment mask, as CUDA's
// intrinsics set it; an out-of-range source reads the lane's own value.
enum Mode { UP, DOWN, BFLY, IDX };
inline int shfl_source(int lane, Mode mode, int b, int width) {
    const int segmask = (EMU_WARP - width) & (EMU_WARP - 1);
    const int cval = mode == UP ? 0 : EMU_WARP - 1;
    const int max_lane = (lane & segmask) | (cval & ~segmask);
    const int min_lane = lane & segmask;
    int j;
    bool ok;
    switch (mode) {
    case UP: j = lane - b; ok = j >= max_lane; break;
    case DOWN: j = lane + b; ok = j <= max_lane; break;
    case BFLY: j = lane ^ b; ok = j <= max_lane; break;
    default: j = min_lane | (b & ~segmask); ok = j <= max_lane; break;
    }
    return ok ? j : lane;
}
template <typename T> inline T shfl(T v, Mode mode, int b, int width) {
    const int source = shfl_source((int)current->lane, mode, b & (EMU_WARP - 1), width);
    return from_bits<T>(warp_exchange(to_bits(v), source));
}
} // namespace emu

#define threadIdx (emu::current->idx)
#define blockIdx (emu::block_idx)
#define blockDim (emu::block_dim)
#define gridDim (emu::grid_dim)
#define warpSize EMU_WARP

inline void __syncthreads() { emu::block_barrier(); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu::warp_barrier(); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

template <typename T> inline T __shfl_sync(unsigned, T v, int lane, int width = 32) {
    return emu::shfl(v, emu::IDX, lane, width);
}
template <typename T> inline T __shfl_xor_sync(unsigned, T v, int mask, int width = 32) {
    return emu::shfl(v, emu::BFLY, mask, width);
}
inline unsigned __ballot_sync(unsigned, int predicate) {
    unsigned word = predicate ? 1u << (emu::current->lane & 31) : 0u;
    for (int m = 16; m > 0; m /= 2) word |= __shfl_xor_sync(0xffffffffu, word, m, 32);
    return word;
}
template <typename T> inline T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
    return emu::shfl(v, emu::DOWN, (int)delta, width);
}
template <typename T> inline T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
    return emu::shfl(v, emu::UP, (int)delta, width);
}

// HIP's shuffles, as ROCm's amd_warp_functions.h computes the source lane
// (ds_bpermute within the wave), and its wave barrier.
template <typename T> inline T __shfl(T v, int src, int width = warpSize) {
    const int self = (int)emu::current->lane;
    const int index = (src & (width - 1)) + (self & ~(width - 1));
    return emu::from_bits<T>(emu::warp_exchange(emu::to_bits(v), index));
}
template <typename T> inline T __shfl_xor(T v, int mask, int width = warpSize) {
    const int self = (int)emu::current->lane;
    int index = self ^ mask;
    if (index >= ((self + width) & ~(width - 1))) index = self;
    return emu::from_bits<T>(emu::warp_exchange(emu::to_bits(v), index));
}
#define __builtin_amdgcn_wave_barrier() emu::warp_barrier()

// ---------------------------------------------------------------------
// Atomics (one OS thread runs a launch; GCC builtins all the same)
#define EMU_ATOMIC(name, op)                                                                    \
    inline int name(int *p, int v) { return __atomic_##op(p, v, __ATOMIC_SEQ_CST); }          \
    inline unsigned name(unsigned *p, unsigned v) { return __atomic_##op(p, v, __ATOMIC_SEQ_CST); } \
    inline unsigned long long name(unsigned long long *p, unsigned long long v) {               \
        return __atomic_##op(p, v, __ATOMIC_SEQ_CST);                                           \
    }                                                                                           \
    inline long long name(long long *p, long long v) { return __atomic_##op(p, v, __ATOMIC_SEQ_CST); }
EMU_ATOMIC(atomicAdd, fetch_add)
EMU_ATOMIC(atomicSub, fetch_sub)
EMU_ATOMIC(atomicAnd, fetch_and)
EMU_ATOMIC(atomicOr, fetch_or)
EMU_ATOMIC(atomicXor, fetch_xor)
EMU_ATOMIC(atomicExch, exchange_n)
#undef EMU_ATOMIC
template <typename T> inline T emu_atomic_rmw(T *p, T v, T (*f)(T, T)) {
    T old = *p;
    *p = f(old, v);
    return old;
}
inline float atomicAdd(float *p, float v) {
    return emu_atomic_rmw<float>(p, v, [](float a, float b) { return a + b; });
}
inline double atomicAdd(double *p, double v) {
    return emu_atomic_rmw<double>(p, v, [](double a, double b) { return a + b; });
}
inline float atomicExch(float *p, float v) {
    return emu_atomic_rmw<float>(p, v, [](float, float b) { return b; });
}
#define EMU_MINMAX(name, pick)                                                                  \
    template <typename T> inline T name(T *p, T v) {                                            \
        return emu_atomic_rmw<T>(p, v, [](T a, T b) { return pick; });                          \
    }
EMU_MINMAX(atomicMax, a > b ? a : b)
EMU_MINMAX(atomicMin, a < b ? a : b)
#undef EMU_MINMAX
template <typename T> inline T atomicCAS(T *p, T compare, T v) {
    T old = *p;
    if (old == compare) *p = v;
    return old;
}
inline unsigned atomicInc(unsigned *p, unsigned limit) {
    unsigned old = *p;
    *p = old >= limit ? 0 : old + 1;
    return old;
}

// ---------------------------------------------------------------------
// Integer intrinsics
template <typename T> inline T __ldg(const T *p) { return *p; }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clz(unsigned x) { return __clz((int)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((uint64_t)a * b) >> 32); }
inline int __mulhi(int a, int b) { return (int)(((int64_t)a * b) >> 32); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline long long __mul64hi(long long a, long long b) {
    return (long long)(((__int128)a * b) >> 64);
}
inline int __mul24(int a, int b) { return (int)((unsigned)(a << 8 >> 8) * (unsigned)(b << 8 >> 8)); }
inline unsigned __sad(int a, int b, unsigned c) { return c + (unsigned)(a > b ? a - b : b - a); }
// prmt.b32 (default mode): byte n of the result is byte s[n] of {y, x};
// a selector nibble's bit 3 replicates that byte's sign.
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    const uint64_t bytes = ((uint64_t)y << 32) | x;
    unsigned r = 0;
    for (int n = 0; n < 4; n++) {
        const unsigned sel = (s >> (4 * n)) & 0xf;
        unsigned b = (unsigned)(bytes >> (8 * (sel & 7))) & 0xff;
        if (sel & 8) b = (b & 0x80) ? 0xff : 0;
        r |= b << (8 * n);
    }
    return r;
}
template <typename T> inline T min(T a, T b) { return a < b ? a : b; }
template <typename T> inline T max(T a, T b) { return a > b ? a : b; }
inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a > b ? a : b; }

// ---------------------------------------------------------------------
// Floating point. The host rounds every operation to nearest (SSE2, no
// contraction: built with -ffp-contract=off), as the _rn intrinsics do.
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __drcp_rn(double a) { return 1.0 / a; }
inline double __dsqrt_rn(double a) { return std::sqrt(a); }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline float __saturatef(float a) { return a < 0.0f ? 0.0f : (a > 1.0f ? 1.0f : (a == a ? a : 0.0f)); }

// cvt.rzi / .rmi / .rni / .rpi with PTX's saturation (NaN gives 0).
// `lo` and `hi` are the type's bounds as doubles (2^63 and 2^64 for the
// 64-bit ones, which no double below them reaches).
template <typename I> inline I emu_cvt(double v, double lo, double hi) {
    if (v != v) return 0;
    if (v <= lo) return std::numeric_limits<I>::min();
    if (v >= hi) return std::numeric_limits<I>::max();
    return (I)v;
}
#define EMU_CVT(suffix, I, LO, HI)                                                              \
    inline I __double2##suffix##_rz(double v) { return emu_cvt<I>(std::trunc(v), LO, HI); }     \
    inline I __double2##suffix##_rd(double v) { return emu_cvt<I>(std::floor(v), LO, HI); }     \
    inline I __double2##suffix##_ru(double v) { return emu_cvt<I>(std::ceil(v), LO, HI); }      \
    inline I __double2##suffix##_rn(double v) { return emu_cvt<I>(std::nearbyint(v), LO, HI); } \
    inline I __float2##suffix##_rz(float v) { return emu_cvt<I>(std::trunc((double)v), LO, HI); } \
    inline I __float2##suffix##_rd(float v) { return emu_cvt<I>(std::floor((double)v), LO, HI); } \
    inline I __float2##suffix##_ru(float v) { return emu_cvt<I>(std::ceil((double)v), LO, HI); }  \
    inline I __float2##suffix##_rn(float v) { return emu_cvt<I>(std::nearbyint((double)v), LO, HI); }
EMU_CVT(int, int, -2147483648.0, 2147483647.0)
EMU_CVT(uint, unsigned, 0.0, 4294967295.0)
EMU_CVT(ll, long long, -9223372036854775808.0, 9223372036854775807.0)
EMU_CVT(ull, unsigned long long, 0.0, 18446744073709551615.0)
#undef EMU_CVT

inline int __double2hiint(double v) { return (int)(emu::to_bits(v) >> 32); }
inline int __double2loint(double v) { return (int)(uint32_t)emu::to_bits(v); }
inline double __hiloint2double(int hi, int lo) {
    return emu::from_bits<double>(((uint64_t)(uint32_t)hi << 32) | (uint32_t)lo);
}
inline long long __double_as_longlong(double v) { return (long long)emu::to_bits(v); }
inline double __longlong_as_double(long long v) { return emu::from_bits<double>((uint64_t)v); }
inline int __float_as_int(float v) { return (int)(uint32_t)emu::to_bits(v); }
inline unsigned __float_as_uint(float v) { return (uint32_t)emu::to_bits(v); }
inline float __int_as_float(int v) { return emu::from_bits<float>((uint32_t)v); }
inline float __uint_as_float(unsigned v) { return emu::from_bits<float>(v); }
inline double __int2double_rn(int v) { return (double)v; }
inline double __uint2double_rn(unsigned v) { return (double)v; }
inline double __ll2double_rn(long long v) { return (double)v; }
inline double __ull2double_rn(unsigned long long v) { return (double)v; }
inline float __int2float_rn(int v) { return (float)v; }
inline float __double2float_rn(double v) { return (float)v; }

using std::fmax;
using std::fmin;

// ---------------------------------------------------------------------
// Kernel registration: each `extern "C" __global__` function of the file
// gets a thunk that unpacks the launch's `void **` by its parameter types
// (the list is generated by emu.rs from the preprocessed source).
namespace emu {
typedef void (*Thunk)(void **params);
template <typename F, F f> struct Unpack;
template <typename... A, void (*f)(A...)> struct Unpack<void (*)(A...), f> {
    template <std::size_t... I> static void call(void **p, std::index_sequence<I...>) {
        f(*static_cast<A *>(p[I])...);
    }
    static void thunk(void **p) { call(p, std::index_sequence_for<A...>()); }
};
struct Entry {
    const char *name;
    Thunk thunk;
};
} // namespace emu
#define EMU_KERNEL(name) {#name, &emu::Unpack<decltype(&name), &name>::thunk},
namespace emu {
extern const Entry entries[];
} // namespace emu

// vif.cu's tensor-core path when built with -DVIF_EMU_MMA: PTX's
// mma.sync.m16n8k32.row.col.s32.u8.u8.s32 over the warp's fragments
// (A 16 x 32 row-major, B 32 x 8 column-major, C and D 16 x 8; lane =
// 4 g + t), in wrapping 32-bit sums as the tensor cores keep them.
struct EmuMmaIn {
    unsigned a[4], b[2];
};
inline void emu_mma_u8(int (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1, int c0, int c1,
                       int c2, int c3) {
    const EmuMmaIn mine = {{a[0], a[1], a[2], a[3]}, {b0, b1}};
    emu::warp_share(&mine);
    const unsigned lane = emu::current->lane, g = lane >> 2, t = lane & 3;
    const int c[4] = {c0, c1, c2, c3};
    unsigned out[4];
    for (int i = 0; i < 4; i++) {
        const unsigned row = g + 8 * (i >> 1), col = 2 * t + (i & 1);
        unsigned acc = (unsigned)c[i];
        for (unsigned k = 0; k < 32; k++) {
            const unsigned kt = (k & 15) >> 2, byte = 8 * (k & 3);
            const EmuMmaIn *pa = (const EmuMmaIn *)emu::peer(4 * (row & 7) + kt);
            const EmuMmaIn *pb = (const EmuMmaIn *)emu::peer(4 * col + kt);
            const unsigned av = (pa->a[(row >= 8) + 2 * (k >= 16)] >> byte) & 0xff;
            const unsigned bv = (pb->b[k >= 16] >> byte) & 0xff;
            acc += av * bv;
        }
        out[i] = acc;
    }
    // Every lane has read the others' fragments before any leaves.
    emu::warp_barrier();
    for (int i = 0; i < 4; i++) d[i] = (int)out[i];
}

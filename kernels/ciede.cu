// CIEDE2000 (libvmaf 3.2.0's `ciede`, as src/feature/ciede reproduces it):
// per pixel, the chroma sample the CPU's ChromaLayout picks (4:4:4,
// 4:2:0, 4:2:2 fixed, or libvmaf's mis-addressed 4:2:2, ADRs/0004), both
// pictures' Y'CbCr converted to CIELAB (lab.rs) and their dE00 (delta_e.rs),
// summed in double: one partial per block (a block adds rows blockIdx.x,
// blockIdx.x + gridDim.x, ...), float_reduce_partials adds them. The host
// turns the sum into the score with the CPU extractor's code.
//
// Exactness: every float and double operation in the CPU's order and
// rounding, none fused (the _rn intrinsics). The C library functions (pow,
// powf, atan2, sin, cos, exp) are CUDA's, which differ from glibc's by a
// few ulps, so per-pixel values can differ in their last bits; the frame's
// mean differs far below the 1e-5 tolerance (tests/gpu/ciede.rs).
// Pixels whose sample triples are equal differ by exactly 0 and are
// skipped, as on the CPU.

#include "common.cuh"
#include "float_common.cuh"

#define THREADS 256

// Chroma layouts (crate::feature::ciede::chroma::ChromaLayout).
#define LAYOUT_FULL 0
#define LAYOUT_QUARTER 1
#define LAYOUT_HALF_WIDTH 2
#define LAYOUT_UPSTREAM_422 3

#define CIEDE_PI 3.14159265358979323846

__device__ __forceinline__ double add_d(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub_d(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double mul_d(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double div_d(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ double sq_d(double a) { return __dmul_rn(a, a); }
__device__ __forceinline__ float div_f(float a, float b) { return __fdiv_rn(a, b); }

struct LabColor {
    float l, a, b;
};

// Where a picture's chroma lives and how luma positions map onto it.
struct ChromaMap {
    int layout;
    // LAYOUT_UPSTREAM_422: libvmaf's chroma width and row pitch (samples).
    int upstream_width;
    int upstream_pitch;
    // The shared planes' chroma height (ceil size).
    int height;
};

// The inverse sRGB transfer function (lab.rs `linearize`).
__device__ __forceinline__ double linearize(double c) {
    if (c > 10.0 / 255.0) return pow(mul_d(add_d(c, 0.055), 1.0 / 1.055), 2.4);
    return mul_d(c, 1.0 / 12.92);
}

// The CIELAB companding function, rounded to float (lab.rs `lab_f`).
__device__ __forceinline__ float lab_f(double c) {
    const double kappa = 24389.0 / 27.0;
    const double epsilon = 216.0 / 24389.0;
    if (c > epsilon) return (float)pow(c, 1.0 / 3.0);
    return (float)mul_d(add_d(mul_d(kappa, c), 16.0), 1.0 / 116.0);
}

// lab.rs `lab_color`; `scale` is 2^(bit depth - 8).
__device__ __forceinline__ LabColor lab_color(unsigned ys, unsigned us, unsigned vs,
                                              double scale) {
    const double y = mul_d(sub_d((double)ys, mul_d(16.0, scale)), div_d(1.0, mul_d(219.0, scale)));
    const double u = mul_d(sub_d((double)us, mul_d(128.0, scale)), div_d(1.0, mul_d(224.0, scale)));
    const double v = mul_d(sub_d((double)vs, mul_d(128.0, scale)), div_d(1.0, mul_d(224.0, scale)));

    const double r = linearize(add_d(y, mul_d(1.28033, v)));
    const double g = linearize(sub_d(sub_d(y, mul_d(0.21482, u)), mul_d(0.38059, v)));
    const double b = linearize(add_d(y, mul_d(2.12798, u)));

    const double x = add_d(add_d(mul_d(r, 0.4124564390896921), mul_d(g, 0.357576077643909)),
                          mul_d(b, 0.18043748326639894));
    const double yy = add_d(add_d(mul_d(r, 0.21267285140562248), mul_d(g, 0.715152155287818)),
                           mul_d(b, 0.07217499330655958));
    const double z = add_d(add_d(mul_d(r, 0.019333895582329317), mul_d(g, 0.119192025881303)),
                          mul_d(b, 0.9503040785363677));

    const double fx = (double)lab_f(mul_d(x, 1.0 / 0.95047));
    const double fy = (double)lab_f(yy);
    const double fz = (double)lab_f(mul_d(z, 1.0 / 1.08883));

    LabColor c;
    c.l = (float)sub_d(mul_d(116.0, fy), 16.0);
    c.a = (float)mul_d(500.0, sub_d(fx, fy));
    c.b = (float)mul_d(200.0, sub_d(fy, fz));
    return c;
}

// delta_e.rs `h_prime`: hue angle in [0, 2 pi) of (y, x).
__device__ __forceinline__ float h_prime(float x, float y) {
    if (x == 0.0f && y == 0.0f) return 0.0f;
    const float hue = (float)atan2((double)x, (double)y);
    return hue < 0.0f ? (float)add_d((double)hue, 2.0 * CIEDE_PI) : hue;
}

__device__ __forceinline__ float delta_h_prime(float c1, float c2, float h1, float h2) {
    if (c1 == 0.0f || c2 == 0.0f) return 0.0f;
    const float diff = fsub(h2, h1);
    if ((double)fabsf(fsub(h1, h2)) <= CIEDE_PI) return diff;
    if (h2 <= h1) return (float)add_d((double)diff, 2.0 * CIEDE_PI);
    return (float)sub_d((double)diff, 2.0 * CIEDE_PI);
}

__device__ __forceinline__ float upcase_h_bar_prime(float h1, float h2) {
    const float sum = fadd(h1, h2);
    if (fabs((double)fsub(h1, h2)) > CIEDE_PI)
        return (float)div_d(add_d((double)sum, 2.0 * CIEDE_PI), 2.0);
    return (float)div_d((double)sum, 2.0);
}

__device__ __forceinline__ float upcase_t(float h_bar) {
    const double h = (double)h_bar;
    double t = sub_d(1.0, mul_d(0.17, cos(sub_d(h, CIEDE_PI / 6.0))));
    t = add_d(t, mul_d(0.24, cos(mul_d(2.0, h))));
    t = add_d(t, mul_d(0.32, cos(add_d(mul_d(3.0, h), CIEDE_PI / 30.0))));
    t = sub_d(t, mul_d(0.20, cos(sub_d(mul_d(4.0, h), 7.0 * CIEDE_PI / 20.0))));
    return (float)t;
}

__device__ __forceinline__ float radians_to_degrees(float radians) {
    return (float)mul_d((double)radians, 180.0 / CIEDE_PI);
}

__device__ __forceinline__ float degrees_to_radians(float degrees) {
    return (float)mul_d((double)degrees, CIEDE_PI / 180.0);
}

__device__ __forceinline__ float r_sub_t(float c_bar_prime, float h_bar) {
    const float degrees =
        (float)mul_d(sub_d((double)radians_to_degrees(h_bar), 275.0), 1.0 / 25.0);
    const float c7 = powf(c_bar_prime, 7.0f);
    // powf(25., 7) rounded to float.
    const float ratio = div_f(c7, fadd(c7, 6103515625.0f));
    const float angle =
        degrees_to_radians((float)mul_d(60.0, exp(-(double)fmul(degrees, degrees))));
    return (float)mul_d(mul_d(-2.0, sqrt((double)ratio)), sin((double)angle));
}

// delta_e.rs `ciede2000` with libvmaf's weights kL = 0.65, kC = 1, kH = 4.
__device__ __forceinline__ float ciede2000(LabColor c1, LabColor c2) {
    const float k_l = 0.65f, k_c = 1.0f, k_h = 4.0f;
    const float delta_l_prime = fsub(c2.l, c1.l);
    const float l_bar = div_f(fadd(c1.l, c2.l), 2.0f);
    const float chroma1 = (float)sqrt(add_d(sq_d((double)c1.a), sq_d((double)c1.b)));
    const float chroma2 = (float)sqrt(add_d(sq_d((double)c2.a), sq_d((double)c2.b)));
    const float c_bar = div_f(fadd(chroma1, chroma2), 2.0f);
    const double c_bar7 = pow((double)c_bar, 7.0);
    const double g = sub_d(1.0, sqrt(div_d(c_bar7, add_d(c_bar7, 6103515625.0))));
    const float a_prime_1 = (float)add_d((double)c1.a, mul_d((double)div_f(c1.a, 2.0f), g));
    const float a_prime_2 = (float)add_d((double)c2.a, mul_d((double)div_f(c2.a, 2.0f), g));
    const float c_prime_1 = (float)sqrt(add_d(sq_d((double)a_prime_1), sq_d((double)c1.b)));
    const float c_prime_2 = (float)sqrt(add_d(sq_d((double)a_prime_2), sq_d((double)c2.b)));
    const float c_bar_prime = div_f(fadd(c_prime_1, c_prime_2), 2.0f);
    const float delta_c_prime = fsub(c_prime_2, c_prime_1);
    const double l50 = sq_d((double)fsub(l_bar, 50.0f));
    const float s_sub_l = (float)add_d(1.0, div_d(mul_d(0.015, l50), sqrt(add_d(20.0, l50))));
    const float s_sub_c = (float)add_d(1.0, mul_d(0.045, (double)c_bar_prime));
    const float h_prime_1 = h_prime(c1.b, a_prime_1);
    const float h_prime_2 = h_prime(c2.b, a_prime_2);
    const float delta_h = delta_h_prime(chroma1, chroma2, h_prime_1, h_prime_2);
    const float delta_upcase_h =
        (float)mul_d(mul_d(2.0, sqrt((double)fmul(c_prime_1, c_prime_2))),
                    sin(div_d((double)delta_h, 2.0)));
    const float h_bar = upcase_h_bar_prime(h_prime_1, h_prime_2);
    const float t = upcase_t(h_bar);
    const float s_sub_h = (float)add_d(1.0, mul_d(mul_d(0.015, (double)c_bar_prime), (double)t));
    const float r_t = r_sub_t(c_bar_prime, h_bar);
    const float lightness = div_f(delta_l_prime, fmul(k_l, s_sub_l));
    const float chroma = div_f(delta_c_prime, fmul(k_c, s_sub_c));
    const float hue = div_f(delta_upcase_h, fmul(k_h, s_sub_h));
    return (float)sqrt(add_d(add_d(add_d(sq_d((double)lightness), sq_d((double)chroma)),
                                 sq_d((double)hue)),
                            (double)fmul(fmul(r_t, chroma), hue)));
}

// The chroma sample of luma position (x, y) (chroma.rs `fill_row`).
template <typename T>
__device__ __forceinline__ unsigned chroma_at(const T *plane, unsigned pitch, int x, int y,
                                              const ChromaMap &m) {
    int row, col;
    switch (m.layout) {
    case LAYOUT_FULL: row = y; col = x; break;
    case LAYOUT_QUARTER: row = y / 2; col = x / 2; break;
    case LAYOUT_HALF_WIDTH: row = y; col = x / 2; break;
    default: {
        // Luma row y reads chroma row y / 2 unhalved, through the padding
        // of libvmaf's rows (padding and rows past the plane read 0). A
        // one-column picture has no libvmaf chroma at all.
        if (m.upstream_pitch <= 0) return 0;
        const u64 at = (u64)(y / 2) * (u64)m.upstream_pitch + (u64)x;
        row = (int)(at / (u64)m.upstream_pitch);
        col = (int)(at % (u64)m.upstream_pitch);
        if (col >= m.upstream_width || row >= m.height) return 0;
    }
    }
    return ((const T *)((const char *)plane + (u64)row * pitch))[col];
}

// One picture's three planes (pitches in bytes).
template <typename T> struct Planes {
    const T *y, *u, *v;
    unsigned pitch_y, pitch_u, pitch_v;
};

template <typename T>
__device__ __forceinline__ void ciede_rows(Planes<T> ref, Planes<T> dis, int width, int height,
                                           ChromaMap map, double scale, double *partials) {
    __shared__ double scratch[THREADS];
    double sum = 0.0;
    for (int y = blockIdx.x; y < height; y += gridDim.x) {
        const T *ry = (const T *)((const char *)ref.y + (u64)y * ref.pitch_y);
        const T *dy = (const T *)((const char *)dis.y + (u64)y * dis.pitch_y);
        for (int x = threadIdx.x; x < width; x += THREADS) {
            const unsigned r0 = ry[x], d0 = dy[x];
            const unsigned r1 = chroma_at(ref.u, ref.pitch_u, x, y, map);
            const unsigned r2 = chroma_at(ref.v, ref.pitch_v, x, y, map);
            const unsigned d1 = chroma_at(dis.u, dis.pitch_u, x, y, map);
            const unsigned d2 = chroma_at(dis.v, dis.pitch_v, x, y, map);
            if (r0 == d0 && r1 == d1 && r2 == d2) continue;
            sum += (double)ciede2000(lab_color(r0, r1, r2, scale), lab_color(d0, d1, d2, scale));
        }
    }
    const double total = block_sum_f64(sum, scratch);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

#define CIEDE_PARAMS(T)                                                                      \
    Planes<T> ref, Planes<T> dis, int width, int height, ChromaMap map, double scale,         \
        double *partials

extern "C" __global__ void __launch_bounds__(THREADS) ciede_sum_u8(CIEDE_PARAMS(unsigned char)) {
    ciede_rows(ref, dis, width, height, map, scale, partials);
}
extern "C" __global__ void __launch_bounds__(THREADS)
    ciede_sum_u16(CIEDE_PARAMS(unsigned short)) {
    ciede_rows(ref, dis, width, height, map, scale, partials);
}

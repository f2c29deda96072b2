/* vmafx's own C API, beside the libvmaf-compatible one (the headers in libvmaf/).
 * SPDX-License-Identifier: BSD-2-Clause-Patent */
#ifndef VMAFX_H
#define VMAFX_H

#include <stddef.h>
#include <stdint.h>

#include "libvmaf/libvmaf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the last failed call on this thread said ("" if none failed):
 * the function and what was wrong, e.g. "vmaf_read_pictures: index 3:
 * pictures are scored in order, the next index is 2". Valid until the
 * next failed call on this thread. */
const char *vmafx_error_message(void);

/* The size of each public struct, the offset of each field and each enum
 * value as this library lays them out ("VmafPicture.size 88\n..."), for
 * checking that a program's headers agree with the library (tests/capi). */
const char *vmafx_abi_layout(void);

/* ---- vmafx's own API: frames where they live, results as frames finish ----
 *
 * Structs the caller fills begin with `size`: set it to sizeof the struct.
 * A later version appends fields; the library reads only what `size`
 * covers. Every function returns 0 or a negative errno, with
 * vmafx_error_message() saying what was wrong. A context is used by one
 * thread at a time. */

#define VMAFX_API_VERSION 1

typedef struct VmafxContext VmafxContext;

enum VmafxBackend {
    VMAFX_BACKEND_CPU = 0,
    VMAFX_BACKEND_CUDA = 1,
    VMAFX_BACKEND_HIP = 2,
    VMAFX_BACKEND_AUTO = 3, /* a GPU when one opens, else the CPU */
};

typedef struct VmafxConfig {
    size_t size;                  /* sizeof(VmafxConfig) */
    unsigned width, height;       /* what is scored: */
    enum VmafPixelFormat pix_fmt; /*   4:2:0, 4:2:2, 4:4:4 or 4:0:0 */
    unsigned bpc;                 /*   8 to 16 bits */
    unsigned n_threads;           /* CPU worker threads (0: the calling thread) */
    unsigned n_subsample;         /* score every Nth frame (0 or 1: every one) */
    const char *const *models;    /* as --model: "version=vmaf_v0.6.1", "path=m.json:name=m" */
    unsigned n_models;
    const char *const *features;  /* as --feature: "psnr", "float_ssim=enable_lcs=true" */
    unsigned n_features;
    enum VmafxBackend backend;
    const char *gpu_device;       /* index or UUID; NULL: "0" */
    unsigned fence_timeout_ms;    /* 0: the default (10 s) */
} VmafxConfig;

enum VmafxPixelFormatLayout {
    VMAFX_PIXEL_FORMAT_PLANAR = 0, /* the context's pix_fmt and bpc, one plane each */
    VMAFX_PIXEL_FORMAT_NV12 = 1,   /* Y + interleaved CbCr, 8-bit 4:2:0 */
    VMAFX_PIXEL_FORMAT_NV16 = 2,
    VMAFX_PIXEL_FORMAT_NV24 = 3,
    VMAFX_PIXEL_FORMAT_P010 = 4,   /* 10-bit in the high bits of 16, 4:2:0 */
    VMAFX_PIXEL_FORMAT_P210 = 5,
    VMAFX_PIXEL_FORMAT_P410 = 6,
    VMAFX_PIXEL_FORMAT_P016 = 7,
    VMAFX_PIXEL_FORMAT_P216 = 8,
    VMAFX_PIXEL_FORMAT_P416 = 9,
};

enum VmafxMemory {
    VMAFX_MEMORY_HOST = 1,    /* `host`: bytes the caller keeps valid and unwritten until release */
    VMAFX_MEMORY_HOST_FD = 2, /* `fd`: a memfd or shared memory; the library dups it */
    VMAFX_MEMORY_DEVICE = 3,  /* `device_ptr`: device memory of the context's GPU */
};

enum VmafxAcquire {
    VMAFX_ACQUIRE_NONE = 0,         /* written already */
    VMAFX_ACQUIRE_SYNC_FILE = 1,    /* `acquire_fd`: a sync_file the library takes and closes */
    VMAFX_ACQUIRE_DEVICE_EVENT = 2, /* `acquire_event`: a CUevent/hipEvent_t, waited on the device */
};

typedef struct VmafxPlane {
    uint64_t offset; /* bytes from the start of the memory */
    uint64_t pitch;  /* bytes from one row to the next */
} VmafxPlane;

typedef struct VmafxFrame {
    size_t size; /* sizeof(VmafxFrame) */
    unsigned width, height;
    enum VmafxPixelFormatLayout pixel_format;
    enum VmafxMemory memory;
    const void *host;
    int fd;
    uint64_t device_ptr;
    uint64_t bytes;          /* of the memory */
    VmafxPlane planes[3];    /* one per memory plane (2 for NV12, ...) */
    enum VmafxAcquire acquire;
    int acquire_fd;
    uintptr_t acquire_event;
    /* Called exactly once per vmafx_submit, once the library no longer
     * reads the frame (on a library thread or in a vmafx_* call): the memory
     * may be reused. A refused frame's is called before vmafx_submit
     * returns. A sync_file acquire_fd is the library's from the call on. */
    void (*release)(void *user_data);
    void *release_user_data;
} VmafxFrame;

int vmafx_context_new(VmafxContext **ctx, const VmafxConfig *cfg);

/* Scores the next pair; returns once it is queued (after its acquire fences
 * on a host wait). */
int vmafx_submit(VmafxContext *ctx, const VmafxFrame *ref, const VmafxFrame *dist);

/* Hands on the queued pairs whose sync_file acquires have signalled since
 * the last call, without submitting: a GPU context takes such a pair at its
 * next call, so a producer that waits for one of its frames back before it
 * submits again (a small pool) calls this while it waits. */
int vmafx_poll(VmafxContext *ctx);

/* Calls `callback` with each scored frame's values (features, then model
 * scores) once the frame is complete, in frame order, from vmafx_submit or
 * vmafx_finish on the calling thread. The arrays live for the call. */
typedef void (*VmafxFrameCallback)(void *user_data, unsigned index, const char *const *names,
                                   const double *values, unsigned count);
int vmafx_on_frame(VmafxContext *ctx, VmafxFrameCallback callback, void *user_data);

/* Waits for every frame; the scores stay queryable. */
int vmafx_finish(VmafxContext *ctx);
int vmafx_score_at(VmafxContext *ctx, const char *name, unsigned index, double *score);
int vmafx_score_pooled(VmafxContext *ctx, const char *name, enum VmafPoolingMethod pool_method,
                       double *score);
int vmafx_context_free(VmafxContext *ctx);

#ifdef __cplusplus
}
#endif

#endif

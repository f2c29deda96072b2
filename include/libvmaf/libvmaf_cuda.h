/* vmafx: libvmaf 3.2-compatible C API. CUDA pictures: frames already on an
 * NVIDIA GPU, scored in place by vmafx's GPU engine.
 * SPDX-License-Identifier: BSD-2-Clause-Patent */
#ifndef VMAFX_LIBVMAF_CUDA_H
#define VMAFX_LIBVMAF_CUDA_H

#include "libvmaf/libvmaf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct VmafCudaState VmafCudaState;

/* cu_ctx: the caller's CUcontext (NULL: the device's primary context). */
typedef struct VmafCudaConfiguration {
    void *cu_ctx;
} VmafCudaConfiguration;

/* Opens the device. -ENOTSUP (with vmafx_error_message) without a CUDA
 * driver or device. */
int vmaf_cuda_state_init(VmafCudaState **cu_state, VmafCudaConfiguration cfg);

/* The context scores on that device; before the first picture. */
int vmaf_cuda_import_state(VmafContext *vmaf, VmafCudaState *cu_state);

enum VmafCudaPicturePreallocationMethod {
    VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_NONE = 0,
    VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE = 1,
    VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_HOST = 2,
    VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_HOST_PINNED = 3,
};

typedef struct VmafCudaPictureConfiguration {
    struct {
        unsigned w, h;
        unsigned bpc;
        enum VmafPixelFormat pix_fmt;
    } pic_params;
    enum VmafCudaPicturePreallocationMethod pic_prealloc_method;
} VmafCudaPictureConfiguration;

/* A pool of pictures: DEVICE pictures have device addresses in data[]
 * (fill them with cuMemcpy2D; they are read in place once passed to
 * vmaf_read_pictures), HOST ones are host pictures. */
int vmaf_cuda_preallocate_pictures(VmafContext *vmaf, VmafCudaPictureConfiguration cfg);
int vmaf_cuda_fetch_preallocated_picture(VmafContext *vmaf, VmafPicture *pic);

#ifdef __cplusplus
}
#endif

#endif

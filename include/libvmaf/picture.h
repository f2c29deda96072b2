/* vmafx: libvmaf 3.2-compatible C API. Pictures.
 * SPDX-License-Identifier: BSD-2-Clause-Patent */
#ifndef VMAFX_LIBVMAF_PICTURE_H
#define VMAFX_LIBVMAF_PICTURE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum VmafPixelFormat {
    VMAF_PIX_FMT_UNKNOWN = 0,
    VMAF_PIX_FMT_YUV420P = 1,
    VMAF_PIX_FMT_YUV422P = 2,
    VMAF_PIX_FMT_YUV444P = 3,
    VMAF_PIX_FMT_YUV400P = 4,
};

typedef struct VmafRef VmafRef;

/* A picture: up to three planes of w[i] x h[i] samples, rows stride[i]
 * bytes apart; samples above 8 bits are 16-bit words. Fill data[] after
 * vmaf_picture_alloc; ref and priv belong to the library. */
typedef struct VmafPicture {
    enum VmafPixelFormat pix_fmt;
    unsigned bpc;
    unsigned w[3], h[3];
    ptrdiff_t stride[3];
    void *data[3];
    VmafRef *ref;
    void *priv;
} VmafPicture;

/* Allocates a zeroed picture (bpc 8 to 16). 0 or -errno. */
int vmaf_picture_alloc(VmafPicture *pic, enum VmafPixelFormat pix_fmt,
                       unsigned bpc, unsigned w, unsigned h);

/* Drops the caller's reference and zeroes *pic. 0 or -errno. */
int vmaf_picture_unref(VmafPicture *pic);

#ifdef __cplusplus
}
#endif

#endif

/* vmafx: the libvmaf API version this library implements.
 * SPDX-License-Identifier: BSD-2-Clause-Patent */
#ifndef VMAFX_LIBVMAF_VERSION_H
#define VMAFX_LIBVMAF_VERSION_H

#define VMAF_API_VERSION_MAJOR 3
#define VMAF_API_VERSION_MINOR 2
#define VMAF_API_VERSION_PATCH 0

#endif

/* vmafx's own C API, beside the libvmaf-compatible one (the headers in libvmaf/).
 * SPDX-License-Identifier: BSD-2-Clause-Patent */
#ifndef VMAFX_H
#define VMAFX_H

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

#ifdef __cplusplus
}
#endif

#endif

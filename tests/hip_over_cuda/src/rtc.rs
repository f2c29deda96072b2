//! hiprtc (`libhiprtc.so`) on NVRTC: the HIP program is translated
//! ([`translate_source`], [`translate_options`]) and compiled for the
//! current device; `hiprtcGetCode` hands back a CUBIN (or NUL-terminated
//! PTX where this NVRTC cannot make machine code for the device), which
//! `hipModuleLoadData` loads.

use crate::{guarded, hip};
use cudarc::nvrtc::sys as nv;
use std::ffi::{c_char, c_int, CStr, CString};
use std::ptr::null_mut;

/// Put before the program: the macros hiprtc predefines for an AMD wave32
/// target, and the AMD built-ins vmafx's kernels use in their HIP
/// branches, as the CUDA built-ins that do the same on a 32-lane warp.
/// (AMD lanes run in lockstep, so the HIP branches name no lane mask; on
/// NVIDIA the whole warp takes part, as the kernels' CUDA branches say.)
pub const PRELUDE: &str = "\
// hip-over-cuda: hiprtc's predefined macros for gfx1030 (wave32)
#define __HIP_PLATFORM_AMD__ 1
#define __HIPCC_RTC__ 1
#define __HIP__ 1
#define __HIP_DEVICE_COMPILE__ 1
#define __AMDGCN_WAVEFRONT_SIZE 32
#define __gfx1030__ 1
// AMD built-ins as CUDA's
#define __shfl_xor(v, mask, width) __shfl_xor_sync(0xffffffffu, (v), (mask), (width))
#define __shfl(v, lane, width) __shfl_sync(0xffffffffu, (v), (lane), (width))
#define __builtin_amdgcn_wave_barrier() __syncwarp()
";

/// The HIP program as NVRTC compiles it: [`PRELUDE`], then the source
/// with its line numbers kept (`#line 1`), clang-only pragmas blanked
/// (`#pragma clang fp contract(off)`: NVRTC has no such pragma and never
/// contracts the `_rn` intrinsics the kernels use).
pub fn translate_source(source: &str, name: &str) -> String {
    let mut out = String::with_capacity(PRELUDE.len() + source.len() + 64);
    out.push_str(PRELUDE);
    out.push_str(&format!("#line 1 \"{}\"\n", name.replace(['"', '\\'], "_")));
    for line in source.lines() {
        if line.trim_start().starts_with("#pragma clang") {
            out.push_str("// (clang pragma dropped by hip-over-cuda)");
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// hiprtc's options as NVRTC's, for a device of compute capability
/// `sm` (e.g. 90): AMD target options dropped (the code is for the CUDA
/// device), `-std` spelt NVRTC's way, preprocessor options kept, the
/// architecture added. Anything else is refused with the reason (an option
/// this library does not know how to carry over).
pub fn translate_options(options: &[&str], sm: i32) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for &o in options {
        if o.starts_with("--offload-arch=")
            || o.starts_with("--gpu-architecture=")
            || o.starts_with("-mcpu=")
        {
            continue; // AMD's target; NVRTC gets the device's below
        } else if let Some(std) = o.strip_prefix("-std=").or_else(|| o.strip_prefix("--std=")) {
            out.push(format!("--std={std}"));
        } else if o.starts_with("-D") || o.starts_with("-U") || o.starts_with("-I") {
            out.push(o.to_string());
        } else if matches!(o, "-O0" | "-O1" | "-O2" | "-O3") {
            continue; // NVRTC optimises by default
        } else {
            return Err(format!(
                "hip-over-cuda: the hiprtc option {o:?} has no NVRTC translation here"
            ));
        }
    }
    out.push(format!("--gpu-architecture=sm_{sm}"));
    Ok(out)
}

/// A program: what hiprtcCreateProgram was given, then the outcome.
struct Program {
    source: String,
    name: String,
    headers: Vec<(CString, CString)>,
    /// The log, NUL-terminated (hiprtcGetProgramLog copies it whole).
    log: Vec<u8>,
    code: Vec<u8>,
}

const SUCCESS: hip::hiprtcResult = hip::hiprtcResult_HIPRTC_SUCCESS;
const INVALID_INPUT: hip::hiprtcResult = hip::hiprtcResult_HIPRTC_ERROR_INVALID_INPUT;

fn call(f: impl FnOnce() -> Result<(), hip::hiprtcResult>) -> hip::hiprtcResult {
    guarded(SUCCESS, hip::hiprtcResult_HIPRTC_ERROR_INTERNAL_ERROR, f)
}

/// # Safety
/// `prog` is null or a program of [`hiprtcCreateProgram`] not yet destroyed.
unsafe fn program<'a>(prog: hip::hiprtcProgram) -> Result<&'a mut Program, hip::hiprtcResult> {
    (prog as *mut Program)
        .as_mut()
        .ok_or(hip::hiprtcResult_HIPRTC_ERROR_INVALID_PROGRAM)
}

unsafe fn c_str(p: *const c_char) -> Option<String> {
    (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcCreateProgram(
    prog: *mut hip::hiprtcProgram,
    src: *const c_char,
    name: *const c_char,
    num_headers: c_int,
    headers: *const *const c_char,
    include_names: *const *const c_char,
) -> hip::hiprtcResult {
    if prog.is_null() || src.is_null() || num_headers < 0 {
        return INVALID_INPUT;
    }
    if num_headers > 0 && (headers.is_null() || include_names.is_null()) {
        return INVALID_INPUT;
    }
    call(|| {
        let mut hs = Vec::new();
        for i in 0..num_headers as usize {
            let (h, n) = (*headers.add(i), *include_names.add(i));
            if h.is_null() || n.is_null() {
                return Err(INVALID_INPUT);
            }
            hs.push((CStr::from_ptr(h).to_owned(), CStr::from_ptr(n).to_owned()));
        }
        let p = Box::new(Program {
            source: c_str(src).unwrap_or_default(),
            name: c_str(name).unwrap_or_else(|| "default_program".into()),
            headers: hs,
            log: vec![0],
            code: Vec::new(),
        });
        *prog = Box::into_raw(p) as hip::hiprtcProgram;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcDestroyProgram(prog: *mut hip::hiprtcProgram) -> hip::hiprtcResult {
    if prog.is_null() || (*prog).is_null() {
        return hip::hiprtcResult_HIPRTC_ERROR_INVALID_PROGRAM;
    }
    drop(Box::from_raw(*prog as *mut Program));
    *prog = null_mut();
    SUCCESS
}

/// NVRTC's log of `p`, without its NUL.
unsafe fn nvrtc_log(p: nv::nvrtcProgram) -> String {
    let mut size = 0;
    if nv::nvrtcGetProgramLogSize(p, &mut size) != nv::nvrtcResult::NVRTC_SUCCESS || size == 0 {
        return String::new();
    }
    let mut log = vec![0u8; size];
    nv::nvrtcGetProgramLog(p, log.as_mut_ptr() as *mut c_char);
    String::from_utf8_lossy(&log)
        .trim_end_matches('\0')
        .to_string()
}

/// Compiles `source` with NVRTC; the image (CUBIN, or PTX with its NUL)
/// and the log.
unsafe fn nvrtc_compile(
    source: &CStr,
    name: &CStr,
    headers: &[(CString, CString)],
    options: &[String],
    ptx: bool,
) -> (nv::nvrtcResult, Vec<u8>, String) {
    let mut p = null_mut();
    let (hs, ns): (Vec<_>, Vec<_>) = headers
        .iter()
        .map(|(h, n)| (h.as_ptr(), n.as_ptr()))
        .unzip();
    let r = nv::nvrtcCreateProgram(
        &mut p,
        source.as_ptr(),
        name.as_ptr(),
        hs.len() as c_int,
        hs.as_ptr(),
        ns.as_ptr(),
    );
    if r != nv::nvrtcResult::NVRTC_SUCCESS {
        return (r, Vec::new(), format!("nvrtcCreateProgram: {r:?}"));
    }
    let opts: Vec<CString> = options
        .iter()
        .map(|o| CString::new(o.as_str()).expect("options hold no NUL"))
        .collect();
    let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    let r = nv::nvrtcCompileProgram(p, ptrs.len() as c_int, ptrs.as_ptr());
    let log = nvrtc_log(p);
    let mut code = Vec::new();
    let mut result = r;
    if r == nv::nvrtcResult::NVRTC_SUCCESS {
        let mut size = 0;
        result = if ptx {
            nv::nvrtcGetPTXSize(p, &mut size)
        } else {
            nv::nvrtcGetCUBINSize(p, &mut size)
        };
        if result == nv::nvrtcResult::NVRTC_SUCCESS {
            code = vec![0u8; size];
            result = if ptx {
                nv::nvrtcGetPTX(p, code.as_mut_ptr() as *mut c_char)
            } else {
                nv::nvrtcGetCUBIN(p, code.as_mut_ptr() as *mut c_char)
            };
        }
    }
    nv::nvrtcDestroyProgram(&mut p);
    (result, code, log)
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcCompileProgram(
    prog: hip::hiprtcProgram,
    num_options: c_int,
    options: *const *const c_char,
) -> hip::hiprtcResult {
    if num_options < 0 || (num_options > 0 && options.is_null()) {
        return INVALID_INPUT;
    }
    call(|| {
        let p = program(prog)?;
        let given: Vec<String> = (0..num_options as usize)
            .map(|i| c_str(*options.add(i)).unwrap_or_default())
            .collect();
        let given: Vec<&str> = given.iter().map(String::as_str).collect();
        let fail = |p: &mut Program, text: String, code| {
            p.log = text.into_bytes();
            p.log.push(0);
            p.code.clear();
            Err(code)
        };
        if !nv::is_culib_present() {
            return fail(
                p,
                "hip-over-cuda: NVRTC (libnvrtc.so) was not found".into(),
                hip::hiprtcResult_HIPRTC_ERROR_COMPILATION,
            );
        }
        let (major, minor) = match crate::runtime::current_compute_capability() {
            Ok(cc) => cc,
            Err(e) => {
                return fail(
                    p,
                    format!("hip-over-cuda: no CUDA device to compile for (hipError {e})"),
                    hip::hiprtcResult_HIPRTC_ERROR_INTERNAL_ERROR,
                )
            }
        };
        let sm = major * 10 + minor;
        let mut opts = match translate_options(&given, sm) {
            Ok(o) => o,
            Err(e) => return fail(p, e, hip::hiprtcResult_HIPRTC_ERROR_INVALID_OPTION),
        };
        let source =
            CString::new(translate_source(&p.source, &p.name)).map_err(|_| INVALID_INPUT)?;
        let name = CString::new(p.name.as_str()).map_err(|_| INVALID_INPUT)?;
        let (mut r, mut code, mut log) = nvrtc_compile(&source, &name, &p.headers, &opts, false);
        if r == nv::nvrtcResult::NVRTC_ERROR_INVALID_OPTION {
            // A device newer than this NVRTC: PTX, which the driver translates.
            if let Some(arch) = opts.last_mut() {
                *arch = format!("--gpu-architecture=compute_{sm}");
            }
            (r, code, log) = nvrtc_compile(&source, &name, &p.headers, &opts, true);
        }
        if r != nv::nvrtcResult::NVRTC_SUCCESS {
            let code = if r == nv::nvrtcResult::NVRTC_ERROR_COMPILATION {
                hip::hiprtcResult_HIPRTC_ERROR_COMPILATION
            } else {
                hip::hiprtcResult_HIPRTC_ERROR_INTERNAL_ERROR
            };
            return fail(
                p,
                format!("hip-over-cuda: NVRTC {r:?} ({})\n{log}", opts.join(" ")),
                code,
            );
        }
        p.log = log.into_bytes();
        p.log.push(0);
        p.code = code;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetProgramLogSize(
    prog: hip::hiprtcProgram,
    size: *mut usize,
) -> hip::hiprtcResult {
    if size.is_null() {
        return INVALID_INPUT;
    }
    call(|| {
        *size = program(prog)?.log.len();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetProgramLog(
    prog: hip::hiprtcProgram,
    log: *mut c_char,
) -> hip::hiprtcResult {
    if log.is_null() {
        return INVALID_INPUT;
    }
    call(|| {
        let p = program(prog)?;
        std::ptr::copy_nonoverlapping(p.log.as_ptr(), log as *mut u8, p.log.len());
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetCodeSize(
    prog: hip::hiprtcProgram,
    size: *mut usize,
) -> hip::hiprtcResult {
    if size.is_null() {
        return INVALID_INPUT;
    }
    call(|| {
        *size = program(prog)?.code.len();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hiprtcGetCode(
    prog: hip::hiprtcProgram,
    code: *mut c_char,
) -> hip::hiprtcResult {
    if code.is_null() {
        return INVALID_INPUT;
    }
    call(|| {
        let p = program(prog)?;
        std::ptr::copy_nonoverlapping(p.code.as_ptr(), code as *mut u8, p.code.len());
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options vmafx's HIP driver passes (src/gpu/hip/mod.rs:
    /// `--offload-arch=ARCH`, `-std=c++17`).
    #[test]
    fn vmafxs_options_become_nvrtcs() {
        let o = translate_options(&["--offload-arch=gfx1030", "-std=c++17"], 90).unwrap();
        assert_eq!(o, ["--std=c++17", "--gpu-architecture=sm_90"]);
        let o = translate_options(&["-DX=1", "-O3", "--std=c++20"], 80).unwrap();
        assert_eq!(o, ["-DX=1", "--std=c++20", "--gpu-architecture=sm_80"]);
        let e = translate_options(&["-mwavefrontsize64"], 90).unwrap_err();
        assert!(e.contains("-mwavefrontsize64"), "{e}");
    }

    #[test]
    fn the_source_keeps_its_lines_and_loses_clang_pragmas() {
        let src = "#pragma clang fp contract(off)\n__global__ void k() {}\n";
        let t = translate_source(src, "k.cu");
        let body = t.strip_prefix(PRELUDE).unwrap();
        let lines: Vec<&str> = body.lines().collect();
        assert_eq!(lines[0], "#line 1 \"k.cu\"");
        assert!(!lines[1].contains("#pragma") && lines[1].starts_with("//"));
        assert_eq!(lines[2], "__global__ void k() {}");
        assert_eq!(lines.len(), 3);
    }

    /// Every AMD-only name in the kernels' HIP branches (`kernels/*.cu`,
    /// `*.cuh` under `__HIP_PLATFORM_AMD__`) is mapped by the prelude:
    /// a new built-in there fails this test before it fails on a device.
    #[test]
    fn the_kernels_amd_builtins_are_all_mapped() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../kernels");
        let mut used = std::collections::BTreeSet::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let ext = path.extension().and_then(|e| e.to_str());
            if !matches!(ext, Some("cu" | "cuh")) {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (i, _) in text.match_indices("__builtin_amdgcn_") {
                let name: String = text[i..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                used.insert(name);
            }
            // The HIP branches' non-_sync shuffles.
            for name in ["__shfl_xor(", "__shfl("] {
                if text.contains(name) {
                    used.insert(name.trim_end_matches('(').to_string());
                }
            }
        }
        assert!(!used.is_empty(), "no AMD built-in found in {dir}: moved?");
        for name in &used {
            assert!(
                PRELUDE.contains(&format!("#define {name}(")),
                "{name} is not mapped to CUDA in PRELUDE"
            );
        }
    }

    #[test]
    fn programs_keep_their_log_and_code_until_destroyed() {
        let src = CString::new("__global__ void k() {}").unwrap();
        let mut prog = null_mut();
        unsafe {
            assert_eq!(
                hiprtcCreateProgram(
                    &mut prog,
                    src.as_ptr(),
                    std::ptr::null(),
                    0,
                    std::ptr::null(),
                    std::ptr::null()
                ),
                SUCCESS
            );
            let mut size = 99;
            assert_eq!(hiprtcGetCodeSize(prog, &mut size), SUCCESS);
            assert_eq!(size, 0);
            assert_eq!(hiprtcGetProgramLogSize(prog, &mut size), SUCCESS);
            assert_eq!(size, 1); // the NUL of an empty log
            assert_eq!(hiprtcDestroyProgram(&mut prog), SUCCESS);
            assert!(prog.is_null());
            assert_eq!(
                hiprtcDestroyProgram(&mut prog),
                hip::hiprtcResult_HIPRTC_ERROR_INVALID_PROGRAM
            );
        }
    }
}

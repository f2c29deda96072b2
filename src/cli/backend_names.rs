//! Feature names with a backend suffix (`float_psnr_cuda`, `psnr_hip`, as
//! libvmaf names its CUDA extractors `vif_cuda`, `adm_cuda`): the extractor
//! on that GPU, refused where this run cannot put it there.

use crate::error::{Error, Result};
use crate::feature::registry;
use crate::gpu::GpuBackend;

/// The suffixes and the backend each names (its `--backend` value is the
/// backend's `Display`).
const SUFFIXES: [(&str, GpuBackend); 2] = [("_cuda", GpuBackend::Cuda), ("_hip", GpuBackend::Hip)];

/// The extractor name to ask the context for. `gpu`: the backend this run
/// scores on (`None`: the CPU).
pub fn resolve(name: &str, gpu: Option<GpuBackend>) -> Result<&str> {
    if registry::find(name).is_ok() {
        return Ok(name);
    }
    for (suffix, backend) in SUFFIXES {
        let Some(base) = name.strip_suffix(suffix) else {
            continue;
        };
        let Ok(info) = registry::find(base) else {
            continue;
        };
        if gpu != Some(backend) {
            let now = gpu.map_or("the CPU", GpuBackend::runtime_name);
            return Err(Error::InvalidArgument(format!(
                "feature '{name}' needs --backend {backend} (this run scores on {now})"
            )));
        }
        let twin = info.gpu.is_some_and(|t| t.backends.contains(&backend));
        if !twin {
            return Err(Error::InvalidArgument(format!(
                "feature '{name}': {} has no {} version",
                info.name,
                backend.runtime_name()
            )));
        }
        return Ok(base);
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::resolve;
    use crate::gpu::GpuBackend;

    #[test]
    fn suffixes_pick_the_gpu_twin_or_say_what_is_needed() {
        assert_eq!(resolve("float_psnr", None).unwrap(), "float_psnr");
        assert_eq!(
            resolve("float_psnr_cuda", Some(GpuBackend::Cuda)).unwrap(),
            "float_psnr"
        );
        assert_eq!(resolve("psnr_hip", Some(GpuBackend::Hip)).unwrap(), "psnr");
        // VMAFx's ssim (by name or alias) and integer_ms_ssim have GPU
        // twins; float_ansnr has none.
        assert_eq!(
            resolve("ssim_cuda", Some(GpuBackend::Cuda)).unwrap(),
            "ssim"
        );
        assert_eq!(
            resolve("integer_ssim_hip", Some(GpuBackend::Hip)).unwrap(),
            "integer_ssim"
        );
        assert_eq!(
            resolve("integer_ms_ssim_cuda", Some(GpuBackend::Cuda)).unwrap(),
            "integer_ms_ssim"
        );
        assert_eq!(
            resolve("float_ansnr_cuda", Some(GpuBackend::Cuda))
                .unwrap_err()
                .to_string(),
            "invalid argument: feature 'float_ansnr_cuda': float_ansnr has no CUDA version"
        );
        assert_eq!(
            resolve("motion_v2_cuda", Some(GpuBackend::Cuda)).unwrap(),
            "motion_v2"
        );
        assert_eq!(
            resolve("float_psnr_cuda", None).unwrap_err().to_string(),
            "invalid argument: feature 'float_psnr_cuda' needs --backend cuda \
             (this run scores on the CPU)"
        );
        assert_eq!(
            resolve("psnr_hip", Some(GpuBackend::Cuda))
                .unwrap_err()
                .to_string(),
            "invalid argument: feature 'psnr_hip' needs --backend hip (this run scores on CUDA)"
        );
        assert_eq!(
            resolve("ssimulacra2_cuda", Some(GpuBackend::Cuda)).unwrap(),
            "ssimulacra2"
        );
        assert_eq!(
            resolve("float_ansnr_hip", Some(GpuBackend::Hip))
                .unwrap_err()
                .to_string(),
            "invalid argument: feature 'float_ansnr_hip': float_ansnr has no HIP version"
        );
        assert_eq!(
            resolve("cambi_hip", Some(GpuBackend::Hip)).unwrap(),
            "cambi"
        );
        // Unknown names pass through: the context names what it knows.
        assert_eq!(resolve("nope_cuda", None).unwrap(), "nope_cuda");
    }
}

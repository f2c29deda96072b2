# Sourced by suites.sh and hip.sh on the device machine, in the checkout's
# root, with C set to where the carried binaries go: the Vulkan and EGL
# loaders, the carried binaries, the table of suites and how one suite runs.

# Vulkan and EGL loaders (the machine has the NVIDIA drivers but no
# loaders): the .deb files carried in .gl, unpacked into /.
if compgen -G ".gl/*.deb" > /dev/null; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -f $icd ] && export VK_DRIVER_FILES=$icd
[ -f $egl ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$egl

rm -rf "$C" && mkdir -p "$C"
tar xJf .gpu-carry/bin.tar.xz -C "$C" --strip-components 1 || { echo "no .gpu-carry/bin.tar.xz: run build-for-device.sh and carry .gpu-carry"; exit 1; }

# Suite -> "BINARY PREFIX": the tests of the carried test binary whose
# names start with PREFIX (its module, tests/BINARY/MODULE.rs). The suites
# kept the names of the binaries they were before tests/ was grouped into
# a few binaries, so the logs of docs/gpu-testing.md compare.
declare -A SUITE_TESTS=(
    # capi: the C library's CUDA pictures and the CUDA producer example
    # (examples/c/cuda_frames.c; its other tests need this
    # checkout's build tree or libvmaf's headers, and run in CI)
    [capi]="capi c_clients::cuda_"
    [gpu]="gpu engine::"
    [gpu_adm]="gpu adm::"
    [gpu_cambi]="gpu cambi::"
    [gpu_ciede]="gpu ciede::"
    [gpu_float]="gpu float::"
    [gpu_float_adm]="gpu float_adm::"
    [gpu_float_ssim]="gpu float_ssim::"
    [gpu_import]="import gpu::"
    [gpu_import_layer]="import_serial gpu_layer::"
    [gpu_import_producers]="import_serial gpu_producers::"
    [gpu_kernels]="gpu cuda_kernels::"
    [gpu_ms_ssim]="gpu integer_ms_ssim::"
    [gpu_models]="gpu models::"
    [gpu_psnr_hvs]="gpu psnr_hvs::"
    [gpu_speed]="gpu speed::"
    [gpu_ssim]="gpu ssim::"
    [gpu_ssimulacra2]="gpu ssimulacra2::"
    [gpu_vif]="gpu vif::"
)

# run_suite SUITE LOG_PREFIX TIME_LIMIT: the tests of SUITE (a key of
# SUITE_TESTS, or a binary and a name prefix in one argument), output in
# $OUT/LOG_PREFIX<SUITE>.txt; prints "SUITE rc=N <test result>" and the
# first failures.
run_suite() {
    local t=$1 spec bin prefix log rc names
    spec=${SUITE_TESTS[$t]:-}
    [ -z "$spec" ] && [[ $t == *" "* ]] && spec=$t
    [ -n "$spec" ] || { echo "$t: no such suite"; return 1; }
    read -r bin prefix <<< "$spec"
    log=$2${t//[^A-Za-z0-9_]/_} # "gpu vif::" -> gpu_vif__
    [ -x "$C/$bin" ] || { echo "$t: $bin not in the carried binaries"; return 1; }
    # The suite's tests by full name (--exact): a libtest filter matches
    # anywhere in a name, so `adm::` alone would run float_adm's too.
    mapfile -t names < <("$C/$bin" --list --format terse 2> /dev/null \
        | sed -n 's/: test$//p' | awk -v p="$prefix" 'index($0, p) == 1')
    [ ${#names[@]} -gt 0 ] || { echo "$t: no such suite (no test of $bin starts with $prefix)"; return 1; }
    # shellcheck disable=SC2086
    timeout "$3" "$C/$bin" --exact "${names[@]}" --test-threads 4 ${TEST_ARGS:-} > "$OUT/$log.txt" 2>&1
    rc=$?
    echo "$t rc=$rc $(grep -E '^test result' "$OUT/$log.txt")"
    grep -E "FAILED|panicked" "$OUT/$log.txt" | head -5
    grep -m1 -h "running on\|GPU: " "$OUT/$log.txt"
    return $rc
}

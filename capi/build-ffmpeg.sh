#!/usr/bin/env bash
# Builds a small FFmpeg 7.1 with --enable-libvmaf against the vmafx C
# library installed by capi/install.sh, to prove an unmodified libvmaf
# client runs on vmafx (tests/capi/ffmpeg.rs runs it on golden pairs).
#
#   bash capi/build-ffmpeg.sh VMAFX_PREFIX FFMPEG_TARBALL BUILD_DIR
#
# Only what the tests use is enabled (file and pipe protocols, y4m and raw
# video in, the libvmaf filter, the null muxer), so it builds in minutes on
# two cores. The ffmpeg binary ends up in BUILD_DIR/ffmpeg.
#
# With NV_CODEC_HEADERS=path/to/nv-codec-headers-*.tar.gz it is built for
# GPU frames too (docs/gpu-device-checks/ffmpeg-cuda.sh runs it on the
# H200): NVDEC decoding of H.264 and HEVC from .mp4/.mkv files, the
# libvmaf_cuda filter, hwupload_cuda, and scale_cuda (NVDEC gives NV12;
# FFmpeg's libvmaf_cuda takes yuv420p) compiled by clang (--enable-cuda-llvm,
# FFmpeg's own CUDA headers: no CUDA toolkit). Such a build has no run path: the
# library is chosen at run time with LD_LIBRARY_PATH, so one binary runs
# on vmafx and on libvmaf alike (both are libvmaf.so.3).
set -euo pipefail
vmafx_prefix=$(cd "${1:?VMAFX_PREFIX}" && pwd)
tarball=$(cd "$(dirname "${2:?FFMPEG_TARBALL}")" && pwd)/$(basename "$2")
build=${3:?BUILD_DIR}
mkdir -p "$build"
build=$(cd "$build" && pwd)
cd "$build"
if [ ! -d src ]; then
    mkdir src
    tar xJf "$tarball" -C src --strip-components 1
fi
cd src
pc_path="$vmafx_prefix/lib/pkgconfig"
gpu_flags=()
rpath="-Wl,-rpath,$vmafx_prefix/lib"
if [ -n "${NV_CODEC_HEADERS:-}" ]; then
    mkdir -p "$build/nvch"
    tar xzf "$NV_CODEC_HEADERS" -C "$build/nvch" --strip-components 1
    make -C "$build/nvch" PREFIX="$build/nvch-prefix" install > /dev/null
    pc_path="$pc_path:$build/nvch-prefix/lib/pkgconfig"
    command -v clang > /dev/null || { echo "NV_CODEC_HEADERS builds need clang (scale_cuda)"; exit 1; }
    gpu_flags=(--enable-ffnvcodec --enable-cuda-llvm --enable-cuvid --enable-nvdec
               --enable-hwaccel=h264_nvdec,hevc_nvdec
               --enable-decoder=h264,hevc,h264_cuvid,hevc_cuvid
               --enable-parser=h264,hevc --enable-bsf=h264_mp4toannexb,hevc_mp4toannexb
               --enable-demuxer=mov,matroska,h264,hevc
               --enable-filter=libvmaf_cuda,hwupload_cuda,hwdownload,scale_cuda)
    rpath=""
fi
PKG_CONFIG_PATH="$pc_path" ./configure \
    --disable-everything --disable-doc --disable-debug --disable-x86asm \
    --disable-autodetect --disable-network --disable-ffplay --disable-ffprobe \
    --enable-libvmaf \
    --enable-protocol=file,pipe \
    --enable-demuxer=yuv4mpegpipe,rawvideo \
    --enable-decoder=rawvideo,wrapped_avframe \
    --enable-encoder=wrapped_avframe,rawvideo \
    --enable-muxer=null \
    --enable-filter=libvmaf,scale,format,null,setpts,trim \
    "${gpu_flags[@]}" \
    --extra-ldflags="$rpath" > "$build/configure.log" \
    || { tail -30 "$build/configure.log"; cat ffbuild/config.log | tail -40; exit 1; }
make -j"$(nproc)" ffmpeg > "$build/make.log" 2>&1 || { tail -40 "$build/make.log"; exit 1; }
cp ffmpeg "$build/ffmpeg"
LD_LIBRARY_PATH="$vmafx_prefix/lib" "$build/ffmpeg" -hide_banner -filters 2>/dev/null | grep -q libvmaf
echo "built $build/ffmpeg against $(LD_LIBRARY_PATH="$vmafx_prefix/lib" ldd "$build/ffmpeg" | grep -o '/[^ ]*libvmaf[^ ]*')"

#!/usr/bin/env bash
# Builds a small FFmpeg 7.1 with --enable-libvmaf against the vmafx C
# library installed by capi/install.sh, to prove an unmodified libvmaf
# client runs on vmafx (tests/ffmpeg.rs runs it on golden pairs).
#
#   bash capi/build-ffmpeg.sh VMAFX_PREFIX FFMPEG_TARBALL BUILD_DIR
#
# Only what the tests use is enabled (file and pipe protocols, y4m and raw
# video in, the libvmaf filter, the null muxer), so it builds in minutes on
# two cores. The ffmpeg binary ends up in BUILD_DIR/ffmpeg.
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
PKG_CONFIG_PATH="$vmafx_prefix/lib/pkgconfig" ./configure \
    --disable-everything --disable-doc --disable-debug --disable-x86asm \
    --disable-autodetect --disable-network --disable-ffplay --disable-ffprobe \
    --enable-libvmaf \
    --enable-protocol=file,pipe \
    --enable-demuxer=yuv4mpegpipe,rawvideo \
    --enable-decoder=rawvideo,wrapped_avframe \
    --enable-encoder=wrapped_avframe,rawvideo \
    --enable-muxer=null \
    --enable-filter=libvmaf,scale,format,null,setpts,trim \
    --extra-ldflags="-Wl,-rpath,$vmafx_prefix/lib" > "$build/configure.log" \
    || { tail -30 "$build/configure.log"; cat ffbuild/config.log | tail -40; exit 1; }
make -j"$(nproc)" ffmpeg > "$build/make.log" 2>&1 || { tail -40 "$build/make.log"; exit 1; }
cp ffmpeg "$build/ffmpeg"
"$build/ffmpeg" -hide_banner -filters 2>/dev/null | grep -q libvmaf
echo "built $build/ffmpeg against $(ldd "$build/ffmpeg" | grep -o '/[^ ]*libvmaf[^ ]*')"

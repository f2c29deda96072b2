#!/usr/bin/env bash
# Builds vmafx as a C library and installs it where libvmaf would be:
#
#   PREFIX/lib/libvmaf.so.3.2.0 (+ libvmaf.so.3, libvmaf.so), libvmaf.a
#   PREFIX/include/libvmaf/{libvmaf,picture,model,feature,version}.h, vmafx.h
#   PREFIX/lib/pkgconfig/libvmaf.pc (name libvmaf, version 3.2.0)
#
# so a libvmaf client (FFmpeg's --enable-libvmaf) builds and links against
# vmafx unchanged. Usage (from anywhere in the checkout):
#
#   bash capi/install.sh PREFIX          # e.g. /usr/local or $HOME/.local
#
# Environment: CARGO_PROFILE (default release), CARGO_FEATURES (default:
# the C API and the CUDA backend, loaded at run time).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:?usage: capi/install.sh PREFIX}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
profile=${CARGO_PROFILE:-release}
features=${CARGO_FEATURES:-capi,cuda}
version=3.2.0
soname=libvmaf.so.3

# cargo rustc makes the cdylib and staticlib without making every other
# build of the crate produce them; the soname is libvmaf's.
cargo rustc --locked --lib --profile "$profile" --no-default-features --features "$features" \
    --crate-type cdylib --crate-type staticlib -- -C link-arg=-Wl,-soname,$soname
case $profile in dev) dir=debug ;; *) dir=$profile ;; esac
target=${CARGO_TARGET_DIR:-target}/$dir

# What a static link needs besides libvmaf.a (rustc's own list).
native=$(cargo rustc --locked --lib --profile "$profile" --no-default-features --features "$features" \
    --crate-type staticlib -- --print native-static-libs 2>&1 \
    | sed -n 's/.*native-static-libs: //p' | tail -1)

mkdir -p "$prefix/lib/pkgconfig" "$prefix/include/libvmaf"
install -m 755 "$target/libvmafx.so" "$prefix/lib/libvmaf.so.$version"
ln -sf "libvmaf.so.$version" "$prefix/lib/$soname"
ln -sf "$soname" "$prefix/lib/libvmaf.so"
install -m 644 "$target/libvmafx.a" "$prefix/lib/libvmaf.a"
install -m 644 include/libvmaf/*.h "$prefix/include/libvmaf/"
install -m 644 include/vmafx.h "$prefix/include/"

cat > "$prefix/lib/pkgconfig/libvmaf.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: libvmaf
Description: VMAF video quality scoring (vmafx, libvmaf 3.2-compatible)
Version: $version
Libs: -L\${libdir} -lvmaf
Libs.private: ${native:--lpthread -ldl -lm}
Cflags: -I\${includedir} -I\${includedir}/libvmaf
PC
echo "installed libvmaf $version (vmafx, features $features, profile $profile) to $prefix"

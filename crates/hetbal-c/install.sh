#!/usr/bin/env bash
# Builds hetbal's C library in release mode and installs it under PREFIX:
#   PREFIX/lib/libhetbal.so and libhetbal.a       the library (C ABI)
#   PREFIX/include/hetbal.h                       planning (no MPI needed)
#   PREFIX/include/hetbal_mpi.h                   the MPI runtime
#   PREFIX/include/hetbal.f90                     the Fortran module's source
#   PREFIX/include/hetbal.mod                     the module, built when mpif90 is there
#   PREFIX/lib/pkgconfig/hetbal.pc                for pkg-config
# Then: mpicc app.c $(pkg-config --cflags --libs hetbal), with
# PKG_CONFIG_PATH=PREFIX/lib/pkgconfig.
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 PREFIX" >&2
    exit 2
fi
mkdir -p "$1"
prefix=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)

cargo build --release --quiet -p hetbal-c --manifest-path "$root/Cargo.toml"
target=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release

mkdir -p "$prefix/lib/pkgconfig" "$prefix/include"
install -m 755 "$target/libhetbal_c.so" "$prefix/lib/libhetbal.so"
install -m 644 "$target/libhetbal_c.a" "$prefix/lib/libhetbal.a"
install -m 644 "$here/include/hetbal.h" "$here/include/hetbal_mpi.h" \
    "$here/fortran/hetbal.f90" "$prefix/include/"
if command -v mpif90 >/dev/null 2>&1; then
    (cd "$prefix/include" && mpif90 -c hetbal.f90 -o hetbal.o && rm -f hetbal.o)
fi
# The static library needs what Rust's standard library and MPI use.
cat > "$prefix/lib/pkgconfig/hetbal.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: hetbal
Description: Balanced loads and optimal data redistributions on heterogeneous processors
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lhetbal
Libs.private: -lmpi -lpthread -ldl -lm -lgcc_s
PC
echo "hetbal $version installed in $prefix" >&2

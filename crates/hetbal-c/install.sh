#!/usr/bin/env bash
# Builds hetbal's C library in release mode and installs it under PREFIX:
#   PREFIX/lib/libhetbal.so and libhetbal.a       the library (C ABI)
#   PREFIX/include/hetbal.h                       planning (no MPI needed)
#   PREFIX/include/hetbal_mpi.h                   the MPI runtime
#   PREFIX/include/hetbal.f90                     the Fortran module's source
#   PREFIX/lib/pkgconfig/hetbal.pc                for pkg-config
# and, when mpif90 is there, the Fortran module built:
#   PREFIX/include/hetbal.mod, PREFIX/lib/libhetbal_fortran.a,
#   PREFIX/lib/pkgconfig/hetbal-fortran.pc
# Then, with PKG_CONFIG_PATH=PREFIX/lib/pkgconfig:
#   mpicc app.c $(pkg-config --cflags --libs hetbal)
#   mpif90 app.f90 $(pkg-config --cflags --libs hetbal-fortran)
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
# Static linking: `pkg-config --static --libs hetbal` still names -lhetbal,
# which the linker resolves to the shared library when both are installed;
# hetbal-static names the archive itself.
cat > "$prefix/lib/pkgconfig/hetbal-static.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: hetbal-static
Description: hetbal linked statically (libhetbal.a)
Version: $version
Cflags: -I\${includedir}
Libs: \${libdir}/libhetbal.a -lmpi -lpthread -ldl -lm -lgcc_s
PC
if command -v mpif90 >/dev/null 2>&1; then
    build=$(mktemp -d)
    (cd "$build" && mpif90 -O2 -fPIC -c "$here/fortran/hetbal.f90" -o hetbal.o &&
        ar rcs "$prefix/lib/libhetbal_fortran.a" hetbal.o &&
        install -m 644 hetbal.mod "$prefix/include/")
    rm -rf "$build"
    cat > "$prefix/lib/pkgconfig/hetbal-fortran.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: hetbal-fortran
Description: The Fortran 2008 module of hetbal (use hetbal)
Version: $version
Requires: hetbal
Cflags: -I\${includedir}
Libs: -L\${libdir} -lhetbal_fortran
PC
fi
echo "hetbal $version installed in $prefix" >&2

#!/usr/bin/env bash
# build_peers.sh: builds the peers of bench/ipm_overhead.py, the PMPI profilers IPM and mpiP, from
# a folder of their public sources, into a cache outside the repository, for LD_PRELOAD. Nothing
# in the tests or CI needs them; the bench skips a peer it does not find.
#
#   bench/build_peers.sh ipm  SOURCE [DEST]   # github.com/nerscadmin/IPM  -> DEST/ipm/libipm.so
#   bench/build_peers.sh mpip SOURCE [DEST]   # github.com/LLNL/mpiP       -> DEST/mpip/libmpiP.so
#
# DEST defaults to ${PERFATLAS_BENCH_PEERS:-~/.cache/perfatlas-bench/peers}/FAMILY, FAMILY the MPI
# of $MPICC (default mpicc): openmpi or mpich, where bench/ipm_overhead.py looks for the peers of
# its launcher's MPI. SOURCE is copied into DEST/NAME/build and built there (both peers configure
# in their source tree; SOURCE is left untouched). DEST/NAME/build-info.txt records the source,
# its revision ($PEER_REVISION, else git's where SOURCE is a clone), the compiler and the
# configure line. Debian packages: autoconf automake libtool (IPM), libunwind-dev binutils-dev
# (mpiP), gfortran (mpiP's Fortran glue), and the MPI's -dev package.
#
# The configure options, and why:
#   IPM   --enable-shared --disable-static: a libipm.so to preload (IPM builds only an archive by
#         default). GCC=yes: IPM's configure never runs AC_PROG_CC when MPICC is given, so libtool
#         does not know the compiler is GCC and links with a bare "-soname" that gcc rejects.
#         CFLAGS="-O2 -g": IPM's configure sets no optimization of its own (its build would be
#         -O0, slower than any site installs it). Its default timer is kept: gettimeofday (vDSO);
#         HAVE_RDTSC is never defined by its configure. Only src/libipm.la is made: the Fortran
#         library libipmf does not link with Debian's gfortran and libtool (a bare "-soname"
#         again) and the bench's programs are C.
#   mpiP  CC=$MPICC F77=$MPIFC CFLAGS="-O2 -g", everything else its defaults: libunwind for the
#         stack walk, libbfd for source lookup, MPI_Wtime as timer, call sites of depth 1 (-k 1 at
#         run time). `make shared` makes libmpiP.so. Its wrapper generator reads $LOGNAME, which a
#         non-login shell may lack: set to the user's name if unset.
set -euo pipefail

usage() {
    echo "usage: $0 ipm|mpip SOURCE [DEST]   (environment: MPICC, MPIFC, PERFATLAS_BENCH_PEERS," \
        "PEER_REVISION)" >&2
    exit 2
}
[ $# -ge 2 ] && [ $# -le 3 ] || usage
peer=$1
source=$(cd "$2" && pwd) || { echo "build_peers: no source folder $2" >&2; exit 2; }
MPICC=${MPICC:-mpicc}
MPIFC=${MPIFC:-mpifort}
command -v "$MPICC" >/dev/null || { echo "build_peers: no MPI compiler $MPICC (set MPICC)" >&2; exit 2; }
# Open MPI's wrapper answers --showme; MPICH's answers -show (and names mpich in it).
if "$MPICC" --showme:version >/dev/null 2>&1; then family=openmpi; else family=mpich; fi
dest=${3:-${PERFATLAS_BENCH_PEERS:-$HOME/.cache/perfatlas-bench/peers}/$family}

need() { # what a peer's build needs ("tool:package" or "header.h:package"), missing ones named
    local missing="" what
    for pair in "$@"; do
        what=${pair%%:*}
        case $what in
        *.h) echo "#include <$what>" | "$MPICC" -E -x c - >/dev/null 2>&1 || missing="$missing ${pair#*:}" ;;
        *) command -v "$what" >/dev/null 2>&1 || missing="$missing ${pair#*:}" ;;
        esac
    done
    if [ -n "$missing" ]; then
        echo "build_peers: $peer needs the Debian packages$missing (apt-get install$missing)" >&2
        exit 2
    fi
}

revision() {
    if [ -n "${PEER_REVISION:-}" ]; then echo "$PEER_REVISION"
    elif [ -e "$source/.git" ] && git -C "$source" rev-parse HEAD 2>/dev/null; then :
    else echo "unknown (not a git clone; set PEER_REVISION)"; fi
}

fresh_copy() { # $1: the peer's folder under dest; the build tree is a fresh copy of the source
    rm -rf "$1/build"
    mkdir -p "$1"
    cp -a "$source" "$1/build"
}

info() { # $1: the peer's folder, $2: the configure line
    {
        echo "source: $source"
        echo "revision: $(revision)"
        echo "compiler: $MPICC ($("$MPICC" --version | head -1))"
        echo "configure: $2"
        echo "built: $(date -u '+%Y-%m-%d %H:%M UTC')"
    } >"$1/build-info.txt"
}

case $peer in
ipm)
    need autoreconf:autoconf automake:automake libtoolize:libtool
    [ -x "$source/bootstrap.sh" ] || { echo "build_peers: $source has no bootstrap.sh: not IPM's sources" >&2; exit 2; }
    out=$dest/ipm
    fresh_copy "$out"
    configure=(./configure --enable-shared --disable-static "MPICC=$MPICC" GCC=yes "CFLAGS=-O2 -g")
    (
        cd "$out/build"
        ./bootstrap.sh >bootstrap.log 2>&1
        "${configure[@]}" >configure.log 2>&1
        make -C src -j"$(nproc)" libipm.la >make.log 2>&1
    ) || { echo "build_peers: IPM's build failed; see the logs in $out/build" >&2; exit 1; }
    cp -L "$out/build/src/.libs/libipm.so" "$out/libipm.so"
    info "$out" "$(printf '%q ' "${configure[@]}")"
    echo "build_peers: $out/libipm.so"
    ;;
mpip)
    need "$MPIFC:gfortran" libunwind.h:libunwind-dev bfd.h:binutils-dev
    [ -f "$source/mpiPi.c" ] || { echo "build_peers: $source has no mpiPi.c: not mpiP's sources" >&2; exit 2; }
    out=$dest/mpip
    fresh_copy "$out"
    configure=(./configure "CC=$MPICC" "F77=$MPIFC" "CFLAGS=-O2 -g")
    (
        cd "$out/build"
        "${configure[@]}" >configure.log 2>&1
        LOGNAME=${LOGNAME:-$(id -un)} make -j"$(nproc)" shared >make.log 2>&1
    ) || { echo "build_peers: mpiP's build failed; see the logs in $out/build" >&2; exit 1; }
    cp "$out/build/libmpiP.so" "$out/libmpiP.so"
    info "$out" "$(printf '%q ' "${configure[@]}")"
    # what configure chose (the timer, the stack walk, the source lookup), from its summary
    grep -E "^ +(Timer|Stack Unwinding|Address to Source Lookup) +:" "$out/build/configure.log" |
        sed 's/^ *//; s/  */ /g' >>"$out/build-info.txt"
    echo "build_peers: $out/libmpiP.so"
    ;;
*) usage ;;
esac

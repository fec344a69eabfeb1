#!/bin/sh
# usage: nul_run.sh CISOLVE EXPECT_SH SCRATCH_DIR
# An FCIDUMP header followed by 2 GiB of NUL bytes, as a sparse file (it takes no disk): the
# reader must refuse it at the first block it reads, naming the line, under a 1.5 GiB limit on
# the address space (a reader holding the "line" whole would need 2 GiB more than the program's
# own mappings: a build with CUDA, NCCL and MPI maps about 0.9 GiB of libraries before it reads).
set -u
cisolve=$1; expect=$2; dir=$3
f="$dir/nul_run.fcidump"
printf ' &FCI NORB=2,NELEC=2,MS2=0,\n &END\n' > "$f" || exit 1
truncate -s 2G "$f" || { rm -f "$f"; exit 1; }
# (not under AddressSanitizer, whose shadow memory needs terabytes of address space)
if ! ldd "$cisolve" 2>/dev/null | grep -q libasan; then ulimit -v 1572864; fi
# (one thread: OpenBLAS's per-thread buffers on a many-core host would not fit the limit)
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
  "$expect" 1 "nul_run\.fcidump: line 3: NUL byte at column 1" -- "$cisolve" --device cpu "$f"
rc=$?
rm -f "$f"
exit $rc

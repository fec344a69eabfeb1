#!/bin/sh
# usage: layers.sh SOURCE_DIR
# The library's folders are layers (docs/architecture.md): a file includes headers of its own
# folder and of the folders below it only, so that no two folders depend on each other.
#   base         nothing of ours
#   io           base
#   kernels      base
#   spmv         base kernels
#   hamiltonian  base kernels spmv
#   solver       base kernels
#   app          all of the above (and the public header include/cisolve.h, which it implements)
#   include      nothing of ours
cd "$1" || exit 2
grep -rn --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' --include='*.in' \
     '^#include "[a-z_]*/' base io kernels spmv hamiltonian solver app include |
awk -F: '
  BEGIN {
    ok["base"] = " base ";
    ok["io"] = " base io ";
    ok["kernels"] = " base kernels ";
    ok["spmv"] = " base kernels spmv ";
    ok["hamiltonian"] = " base kernels spmv hamiltonian ";
    ok["solver"] = " base kernels solver ";
    ok["app"] = " base io kernels spmv hamiltonian solver app ";
    ok["include"] = " ";
  }
  {
    split($1, p, "/"); from = p[1];
    to = $3; sub(/^#include "/, "", to); sub(/\/.*/, "", to);
    if (index(ok[from], " " to " ") == 0) {
      printf "%s:%s: %s/ includes %s/ (it may include:%s)\n", $1, $2, from, to, ok[from]; bad = 1
    }
  }
  END { if (!bad) print "ok: every include goes to the same layer or one below"; exit bad }'

#!/bin/sh
# usage: cleanup_lint.sh SOURCE_DIR
# Every function with a `cleanup:` label declares CIS_CLEANUP_FUNCTION (base/error.h), also one
# that jumps there by hand: without it a returning check in it would compile and skip the
# cleanup. A function is what lies between two lines that begin with "}".
cd "$1" || exit 2
status=0
for f in $(find base io kernels spmv hamiltonian solver app bench tests -name '*.c' -o -name '*.cu'); do
  awk -v f="$f" 'BEGIN { start = 1 }
    /^}/ { if (label && !mark) { print f ":" start ": a function with a cleanup label and no CIS_CLEANUP_FUNCTION"; bad = 1 }
           label = 0; mark = 0; start = NR + 1; next }
    /^cleanup:/ { label = 1 }
    /CIS_CLEANUP_FUNCTION;/ { mark = 1 }
    END { exit bad }' "$f" || status=1
done
[ $status = 0 ] && echo "ok: every function with a cleanup label declares CIS_CLEANUP_FUNCTION"
exit $status

# Shared by the MPI tests: mpirun for this machine (as root Open MPI must be told it may run;
# more ranks than cores are allowed: CI has 2 cores), and the checks of tests/batch/common.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../batch/common.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# mpi NP ARGS...: the program on NP ranks.
mpi() { local np=$1; shift; "$MPIRUN" -np "$np" "$@"; }
# rank_pid PATTERN RANK: the process of that rank among those whose command line holds PATTERN
# (a path of the run's own), from its Open MPI environment.
rank_pid() {
  local p
  for p in $(pgrep -f -- "$1"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$p"; return 0; }
  done
  return 1
}

# Shared by the batch tests: fail with a message; wait for a line in a log.
fail() { echo "FAIL: $*"; exit 1; }
# wait_for REGEX FILE SECONDS: until FILE has a line matching REGEX (extended grep).
wait_for() {
  local i
  for ((i = 0; i < $3 * 100; i++)); do
    grep -qE -- "$1" "$2" 2>/dev/null && return 0
    sleep 0.01
  done
  return 1
}
# matvecs of an output, from show_results.
matvecs_of() { "$SHOW" "$1" | awk '/^# matvecs/ {print $3}'; }

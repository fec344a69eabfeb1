#!/usr/bin/env bash
# usage: expect.sh EXIT_CODE REGEX -- COMMAND...
# Runs COMMAND, passes when it exits with EXIT_CODE and its stderr+stdout match REGEX
# (extended grep, case-insensitive).
set -u
want=$1; regex=$2; shift 2
[ "${1:-}" = "--" ] && shift
out=$("$@" 2>&1); got=$?
if [ "$got" != "$want" ]; then
  printf 'FAIL: exit code %s, expected %s\ncommand: %s\noutput:\n%s\n' "$got" "$want" "$*" "$out"
  exit 1
fi
if ! printf '%s' "$out" | grep -qiE -- "$regex"; then
  printf 'FAIL: output does not match /%s/\ncommand: %s\noutput:\n%s\n' "$regex" "$*" "$out"
  exit 1
fi
printf 'ok: exit %s, message matches /%s/\n' "$got" "$regex"

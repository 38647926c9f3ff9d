#!/bin/sh
# expect_failure.sh REGEX COMMAND...: passes when COMMAND exits with status 1 or 2 (not a crash:
# signals give 128+) and its stderr matches REGEX.
regex=$1
shift
err=$("$@" 2>&1 >/dev/null)
status=$?
printf '%s\n' "$err"
if [ "$status" -ne 1 ] && [ "$status" -ne 2 ]; then
  echo "expect_failure: exit status $status (wanted 1 or 2)" >&2
  exit 1
fi
if ! printf '%s\n' "$err" | grep -Eq -- "$regex"; then
  echo "expect_failure: stderr does not match: $regex" >&2
  exit 1
fi

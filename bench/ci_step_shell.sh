#!/bin/sh
# The SHELL bench/ci_time.sh gives `make test` (and, through MAKEFLAGS, the makes it starts): runs
# each recipe line as /bin/sh would (make calls SHELL -c LINE) and appends one line to
# $CI_TIME_STEPS: the line's start and end (epoch seconds), the CPU seconds of what it ran (its
# children's user + system, `times`), and its text; bench/ci_steps.py names the steps from those.
start=$(date +%s.%N)
/bin/sh "$@"
status=$?
end=$(date +%s.%N)
if [ -n "${CI_TIME_STEPS:-}" ]; then
  # `times` in this shell, not in a $(...) subshell, whose children are not this shell's.
  times >"$CI_TIME_STEPS.$$"
  cpu=$(sed -n 2p "$CI_TIME_STEPS.$$" | awk '{ n = 0; for (i = 1; i <= NF; i++) { split($i, t, "m"); n += t[1] * 60 + t[2] } print n }')
  rm -f "$CI_TIME_STEPS.$$"
  # The text on one line; one short write, so that lines of parallel jobs do not mix.
  line="$start $end $cpu $(printf '%s' "$*" | tr '\n' ' ' | cut -c1-400)"
  printf '%s\n' "$line" >>"$CI_TIME_STEPS"
fi
exit $status

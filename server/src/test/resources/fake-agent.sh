#!/bin/sh
# Stands in for /opt/rudder/bin/rudder in remote-run tests. Records each run in runs/ next to this script (its
# argv, one argument per line; its pid and uid; when it started and ended, in ns), then does what the control
# files next to it say: "block" (wait until "release" exists, at most 60 s), "sleep" (seconds), "exit-code".
dir=$(dirname "$0")
run="$dir/runs/$$"
mkdir -p "$dir/runs"
date +%s%N > "$run.start"
echo $$ > "$run.pid"
id -u > "$run.uid"
printf '%s\n' "$@" > "$run.argv"
echo "fake agent: started $*"
if [ -f "$dir/block" ]; then
    i=0
    while [ ! -f "$dir/release" ] && [ $i -lt 1200 ]; do
        sleep 0.05
        i=$((i + 1))
    done
fi
if [ -f "$dir/sleep" ]; then
    sleep "$(cat "$dir/sleep")"
fi
echo "fake agent: done"
date +%s%N > "$run.end"
exit "$(cat "$dir/exit-code" 2>/dev/null || echo 0)"

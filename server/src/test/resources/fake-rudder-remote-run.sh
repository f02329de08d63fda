#!/bin/sh
# Stands in for "/opt/rudder/bin/rudder remote run" in tests. Records each run in runs/ next to this script (its argv,
# one argument per line), then answers for each host after "--" as rudder remote run does (cf-runagent per host, one
# after the other, through Rudder's formatter): "<address>> -> <line>" (cf-runagent prefixes the address it
# connected to: the host itself, or what the "addresses" control file maps it to, lines "host=address"), then a
# formatter row whose first column is that address; for a host named down*, cf-runagent's own log line
# "   error: Failed to connect to host: <host>". A header and a summary for the whole batch frame it all. Control
# files next to it: "sleep" (seconds, at the end), "exit-code".
dir=$(dirname "$0")
run="$dir/runs/$$"
mkdir -p "$dir/runs"
printf '%s\n' "$@" > "$run.argv"
hosts=
after=
for argument in "$@"; do
    [ -n "$after" ] && hosts=$argument
    [ "$argument" = "--" ] && after=1
done
echo "Hostname        M| State         Technique"
IFS=,
for host in $hosts; do
    address=$host
    if [ -f "$dir/addresses" ]; then
        mapped=$(grep "^$host=" "$dir/addresses" | cut -d= -f2)
        [ -n "$mapped" ] && address=$mapped
    fi
    case $host in
        down*) echo "   error: Failed to connect to host: $host"; continue ;;
    esac
    echo "$address> -> agent run on $host"
    printf '%-15.15s E| compliant     row of %s\n' "$address" "$host"
done
echo "## Summary #####"
if [ -f "$dir/sleep" ]; then
    sleep "$(cat "$dir/sleep")"
fi
exit "$(cat "$dir/exit-code" 2>/dev/null || echo 0)"

#!/usr/bin/env bash
# The 10M-page daemon benchmark (issue 43 items 4-5), one run of one build:
#   bench/scale/daemon10m/run-ab.sh BINARY NAME [SECONDS]
# SCALE_DIR (default /var/tmp/scale) holds s10m.snap, a snapshot of a store
# written by `scale_bench --ten-million --cycle-cpu 0.5 --store DIR
# --loopback-port 18090`. Each run starts from a fresh copy of the snapshot
# (every run changes the store it crawls, so runs on one store drift), runs
# `BINARY run` on run.toml for SECONDS (300), polls /status every 10 s into
# logs/NAME-HHMM.log (poll.sh), and records 20 s of `perf` on the busiest
# thread (the scheduler's) 200 s in, into logs/NAME.perf. nginx (nginx.conf,
# SSI: each URL a distinct page) is started if it is not running.
set -euo pipefail
binary=$(realpath "$1"); name=$2; secs=${3:-300}
here=$(cd "$(dirname "$0")" && pwd)
dir=${SCALE_DIR:-/var/tmp/scale}
mkdir -p "$dir/logs"
cp "$here/page.html" "$dir/"
sed "s#SCALE_DIR#$dir#g" "$here/nginx.conf.in" > "$dir/nginx.conf"
sed "s#SCALE_DIR#$dir#g" "$here/run.toml.in" > "$dir/run.toml"
if ! curl -s -o /dev/null http://127.0.0.1:18090/; then
  nginx -c "$dir/nginx.conf" -p "$dir"
fi
rm -rf "$dir/s10m"
cp -a "$dir/s10m.snap" "$dir/s10m"
log=$dir/logs/$name-$(date +%H%M).log
"$binary" run --config "$dir/run.toml" > "$dir/logs/$name-daemon.out" 2>&1 &
pid=$!
"$here/poll.sh" "$pid" "$log" &
sleep 200
tid=$(ps -L -o tid=,pcpu= -p "$pid" | sort -k2 -nr | head -1 | awk '{print $1}')
perf record -F 999 -g -t "$tid" -o "$dir/logs/$name.perf" -- sleep 20 \
  > /dev/null 2>&1 || true
sleep $((secs > 220 ? secs - 220 : 0))
kill -TERM "$pid"
wait "$pid" || true
echo "log: $log; perf report -i $dir/logs/$name.perf --no-children --sort symbol"

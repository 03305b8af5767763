#!/usr/bin/env bash
# poll.sh PID LOG: every 10 s, the daemon's state, fetches (total and in the
# last 10 s), rate_actual, network and scheduler lags, busiest threads' CPU.
pid=$1; log=$2; prev=0
while kill -0 "$pid" 2>/dev/null; do
  s=$(curl -s -m 5 http://127.0.0.1:18931/status)
  cpu=$(ps -L -o pcpu=,comm= -p "$pid" | sort -nr | head -3 | tr -s ' ' | tr '\n' ' ')
  line=$(echo "$s" | PREV=$prev python3 -c '
import json,os,sys
try: s=json.load(sys.stdin)
except Exception: print("0 no-status"); sys.exit()
f=s.get("pages_fetched_total",0); p=int(os.environ["PREV"])
ll=s.get("loop_lag_ms",{}); sl=s.get("scheduler_lag_ms",{})
print(f, s.get("state"), "known", s.get("pages_known"), "fetched", f, "d10s", f-p if p else 0, "rate", s.get("rate_actual"), "net_lag", ll.get("p99"), ll.get("max"), "sched_lag", sl.get("p99"), sl.get("max"), "limited", s.get("limited_by"))')
  prev=${line%% *}
  echo "$(date +%T) ${line#* } | $cpu" >> "$log"
  sleep 10
done

#!/bin/bash
# Run from anywhere after make build; needs nothing else. Rounds alternate one and three voters.
# bench meta (remote, create) against a single voter and a three-voter group, alternating; for
# each run it also prints the CPU the cluster process (meta replicas and datanodes) and the
# benchmark process spent per 1,000 creates, and how busy the machine's cores were.
B="$(cd "$(dirname "$0")/.." && pwd)/bin/strato"
T="${TMPDIR:-/tmp}"
FILES="${FILES:-20000}"
ticks=$(getconf CLK_TCK)
cpu_of() { awk -v t="$ticks" '{print ($14+$15)/t}' "/proc/$1/stat"; }
busy_idle() { awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat; }
for r in 1 2 3; do
  for n in 1 3; do
    d=$T/strato-voters-$n; rm -rf $d
    $B dev --data $d --meta-replicas $n --meta-addr 127.0.0.1:0 --datanodes 3 > $d.log 2>&1 &
    pid=$!
    for i in $(seq 1 100); do grep -q ready $d.log 2>/dev/null && break; sleep 0.1; done
    addrs=$(python3 -c "import json;j=json.load(open('$d/cluster.json'));print(','.join(j.get('metas') or [j['meta']]))")
    leader=$($B admin meta status --meta $addrs --json | python3 -c "import json,sys;print([s for s in json.load(sys.stdin) if s['role']=='leader'][0]['leaderAddr'])")
    c0=$(cpu_of $pid); read -r b0 i0 < <(busy_idle)
    out=$(/usr/bin/env time -f 'benchcpu %U %S' -o $d.time $B bench meta -op create -threads 16 -files $FILES -filesPerDir 4 -close --meta $leader 2>/dev/null)
    c1=$(cpu_of $pid); read -r b1 i1 < <(busy_idle)
    ops=$(echo "$out" | grep 'Ops per sec')
    bcpu=$(awk '/^benchcpu/{print $2+$3}' $d.time)
    python3 -c "print('round $r voters $n: $ops; CPU per 1,000 creates: cluster %.2f s, bench %.2f s; cores busy %.0f%%' % ((float('$c1')-float('$c0'))*1000/$FILES, float('${bcpu:-0}')*1000/$FILES, 100*($b1-$b0)/max(1,($b1-$b0)+($i1-$i0))))"
    kill -TERM $pid; wait $pid 2>/dev/null
  done
done

#!/bin/bash
# Run from anywhere after make build; needs nothing else. Rounds alternate one and three voters.
# bench meta (remote, create) against a single voter and a three-voter group, alternating.
B="$(cd "$(dirname "$0")/.." && pwd)/bin/strato"
T="${TMPDIR:-/tmp}"
for r in 1 2 3; do
  for n in 1 3; do
    d=$T/strato-voters-$n; rm -rf $d
    $B dev --data $d --meta-replicas $n --meta-addr 127.0.0.1:0 --datanodes 3 > $d.log 2>&1 &
    pid=$!
    for i in $(seq 1 100); do grep -q ready $d.log 2>/dev/null && break; sleep 0.1; done
    addrs=$(python3 -c "import json;j=json.load(open('$d/cluster.json'));print(','.join(j.get('metas') or [j['meta']]))")
    leader=$($B admin meta status --meta $addrs --json | python3 -c "import json,sys;print([s for s in json.load(sys.stdin) if s['role']=='leader'][0]['leaderAddr'])")
    ops=$($B bench meta -op create -threads 16 -files 20000 -filesPerDir 4 -close --meta $leader 2>/dev/null | grep 'Ops per sec')
    echo "round $r voters $n: $ops"
    kill -TERM $pid; wait $pid 2>/dev/null
  done
done

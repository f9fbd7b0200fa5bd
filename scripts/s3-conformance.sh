#!/usr/bin/env bash
# make s3-conformance: versitygw's S3 integration suite (`versitygw test
# full-flow`, installed by make into bin/tools at VERSITYGW_VERSION) against
# the S3 gateway of a `strato dev` on free loopback ports, with the
# development key. Prints the pass count and every failing test with
# versitygw's message; the whole output goes to $S3_CONFORMANCE_LOG
# (default s3-conformance.log). docs/s3.md lists each failure with its
# reason. VERSITYGW_FLAGS passes flags to full-flow; by default
# --versioning-enabled, versitygw's mode for a gateway whose buckets can be
# versioned, as strato's can: it runs its versioning tests too and empties
# buckets by version, as a versioned bucket (every bucket with object lock)
# must be emptied. VERSITYGW_FLAGS= (empty) runs the unversioned mode.
#
# full-flow runs its tests one after another in one process, and a test
# that panics (versitygw's own code indexing something a response left
# out) ends the run. When that happens the run goes on from the next test
# of full-flow, one versitygw process per test (versitygw runs any test by
# name); full-flow's order is read from versitygw's source in the module
# cache, the panicked test counted as failed.
set -euo pipefail
cd "$(dirname "$0")/.."
vgw=$PWD/bin/tools/versitygw
version=${VERSITYGW_VERSION:-v1.8.0}
[ -x "$vgw" ] || { echo "s3-conformance: $vgw is missing (make s3-conformance installs it)" >&2; exit 1; }
[ -x bin/strato ] || { echo "s3-conformance: bin/strato is missing (make build)" >&2; exit 1; }
log=${S3_CONFORMANCE_LOG:-$PWD/s3-conformance.log}
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
meta=127.0.0.1:$(free_port)
s3=127.0.0.1:$(free_port)
bin/strato dev --data "$work/data" --meta-addr "$meta" --s3-addr "$s3" --http "" >"$work/dev.log" 2>&1 &
pid=$!
for _ in $(seq 150); do grep -q "strato dev: ready" "$work/dev.log" && break; sleep 0.2; done
grep -q "  s3        http://$s3" "$work/dev.log" || { cat "$work/dev.log"; exit 1; }
endpoint=http://$s3
unset AWS_CA_BUNDLE AWS_PROFILE AWS_ENDPOINT_URL

# versitygw's tests run ./versitygw for some cases: run from its directory.
vtest() { (cd "$(dirname "$vgw")" && "$vgw" test -a strato-dev -s strato-dev-secret -e "$endpoint" "$@") 2>&1; }
strip() { sed 's/\x1b\[[0-9;]*m//g'; }

echo "== versitygw $version test full-flow against strato's gateway at $endpoint"
vtest full-flow ${VERSITYGW_FLAGS---versioning-enabled} | strip >"$work/out" || true
cp "$work/out" "$log"
if grep -q '^panic: ' "$work/out"; then
	panicked=$(grep -a '^RUN ' "$work/out" | tail -1 | awk '{print $2}')
	echo "full-flow stopped: $panicked panicked; going on test by test from the next one"
	echo "FAIL $panicked: panicked in versitygw's test code" >>"$work/out"
	src=$(go env GOMODCACHE)/github.com/versity/versitygw@$version/tests/integration/group-tests.go
	# full-flow's tests in order (ts.Run ones as they come, ts.Sync ones at
	# the end, as versitygw runs them), with its conditions taken for a
	# default run (no versioning, not Azure, not Windows, not a sidecar).
	python3 - "$src" >"$work/order" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
funcs = {m.group(1): m.end() for m in re.finditer(r'^func (\w+)\(ts \*TestState\) \{', src, re.M)}
def body(name):
    start = funcs[name]
    return src[start:src.index('\n}\n', start)].split('\n')
def cond(c):
    c = re.sub(r'ts\.conf\.\w+', 'False', c).replace('&&', ' and ').replace('||', ' or ')
    return eval(re.sub(r'!(?!=)', ' not ', c))
def walk(name, out, syncs):
    stack = []
    for line in body(name):
        s = line.strip()
        m = re.match(r'if (.*) \{$', s)
        if m:
            stack.append(cond(m.group(1))); continue
        if s == '} else {':
            stack[-1] = not stack[-1]; continue
        if s == '}':
            stack and stack.pop(); continue
        if not all(stack):
            continue
        m = re.match(r'ts\.(Run|Sync)\((\w+)\)$', s)
        if m:
            (out if m.group(1) == 'Run' else syncs).append(m.group(2)); continue
        m = re.match(r'(Test\w+)\(ts\)$', s)
        if m and m.group(1) in funcs:
            walk(m.group(1), out, syncs)
out, syncs = [], []
walk('TestFullFlow', out, syncs)
print('\n'.join(out + syncs))
PY
	found=0
	while read -r t; do
		if [ "$found" = 1 ]; then
			vtest "$t" | strip >"$work/one" || true
			if grep -q '^panic: ' "$work/one"; then
				echo "FAIL $t: panicked in versitygw's test code" >>"$work/out"
			else
				grep -a -v '^RAN:\|^test failed\|^$' "$work/one" >>"$work/out" || true
			fi
		fi
		[ "$t" = "$panicked" ] && found=1
	done <"$work/order"
	cp "$work/out" "$log"
fi
pass=$(grep -ac '^PASS ' "$work/out" || true)
fail=$(grep -ac '^FAIL ' "$work/out" || true)
skip=$(grep -ac '^SKIP ' "$work/out" || true)
grep -a '^FAIL ' "$work/out" | cut -c1-400 || true
echo "versitygw $version full-flow against strato: $pass passed, $fail failed, $skip skipped (log: $log)"

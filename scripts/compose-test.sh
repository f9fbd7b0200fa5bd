#!/usr/bin/env bash
# deploy/compose.yaml's cluster started for real (make compose-test): the
# image built by make image (FROM scratch, nothing pulled), three meta
# voters, three datanodes and the S3 gateway started by docker-compose with
# deploy/compose.ci.yaml's ports, every container on the host network and
# every server on 127.0.0.1. Then:
#   - a file put and got back through the CLI (strato fs put/get, FSO
#     bucket), and another through S3 (strato s3 cp, the AWS SDK for Go);
#   - the image's time zone database: strato fs ls run in a container with
#     TZ=Asia/Tokyo shows times at +09:00;
#   - one datanode container killed (SIGKILL); both files read back through
#     the CLI and S3, from the two replicas left;
#   - everything torn down (containers, volumes);
#   - then TLS and tokens as the Helm chart runs them: certificates issued
#     by the image's own strato admin ca issue from a CA mounted read-only
#     (the chart's init container), one meta (--auth token, its console
#     over HTTPS) and one datanode on them, a file put and got back with
#     the administrator's token the meta wrote; then the chart's bootstrap:
#     a proxy user's token (taken from strato admin token issue's Token:
#     line) for an S3 gateway, and a user's key through it.
# A dockerd is started when none answers (its own data root and socket in a
# temporary directory, overlay2, else vfs; no bridge, no iptables rules) and
# stopped at the end. Needs docker.io and docker-compose (Debian's); the
# Prometheus and Grafana services are not started (their images would be
# pulled).
set -euo pipefail
cd "$(dirname "$0")/.."
for c in docker dockerd docker-compose curl unzip; do
	command -v "$c" >/dev/null || { echo "compose-test: $c not found (apt-get install docker.io docker-compose curl unzip)"; exit 1; }
done
start=$(date +%s)
work=$(mktemp -d /tmp/strato-compose-test.XXXXXX)
project=strato-ci
compose=(docker-compose -p "$project" -f deploy/compose.yaml -f deploy/compose.ci.yaml)
services=(meta1 meta2 meta3 dn1 dn2 dn3 s3)
dockerd_pid=
up=
tls_containers=(strato-ci-tls-meta strato-ci-tls-dn strato-ci-tls-s3)

cleanup() {
	rc=$?
	set +e
	if [ -n "$up" ]; then
		[ "$rc" -ne 0 ] && "${compose[@]}" logs --no-color --tail 30 >&2
		"${compose[@]}" down -v --timeout 5 >/dev/null 2>&1
	fi
	if docker ps -aq --filter name=strato-ci-tls- | grep -q .; then
		[ "$rc" -ne 0 ] && for c in "${tls_containers[@]}"; do docker logs --tail 20 "$c" >&2; done
		docker rm -f "${tls_containers[@]}" >/dev/null 2>&1
	fi
	if [ -n "$dockerd_pid" ]; then
		kill "$dockerd_pid" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$dockerd_pid" 2>/dev/null && { kill -9 "$dockerd_pid"; sleep 0.5; }
		# A dockerd that died uncleanly may leave its overlay mounts.
		grep -o " $work/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
	fi
	rm -rf "$work"
	echo "compose-test: $([ "$rc" -eq 0 ] && echo ok || echo FAILED) in $(($(date +%s) - start)) s"
	exit "$rc"
}
trap cleanup EXIT

# A daemon: the one DOCKER_HOST (or the default socket) names, else our own.
if ! docker info >/dev/null 2>&1; then
	export DOCKER_HOST=unix://$work/docker.sock
	for driver in overlay2 vfs; do
		rm -rf "$work/root" "$work/exec"
		dockerd --data-root "$work/root" --exec-root "$work/exec" --pidfile "$work/dockerd.pid" \
			-H "$DOCKER_HOST" --storage-driver "$driver" \
			--bridge none --iptables=false --ip-forward=false --ip-masq=false \
			>"$work/dockerd.log" 2>&1 &
		dockerd_pid=$!
		for _ in $(seq 150); do
			docker info >/dev/null 2>&1 && break
			kill -0 "$dockerd_pid" 2>/dev/null || break
			sleep 0.2
		done
		docker info >/dev/null 2>&1 && break
		echo "compose-test: dockerd with $driver did not start:" >&2
		tail -5 "$work/dockerd.log" >&2
		kill "$dockerd_pid" 2>/dev/null; wait "$dockerd_pid" 2>/dev/null
		dockerd_pid=
	done
	[ -n "$dockerd_pid" ] || exit 1
	echo "== dockerd started ($driver, data root $work/root)"
fi

echo "== make image"
make -s image IMAGE=strato:dev >/dev/null
make -s build

# The ports of compose.ci.yaml must be free: another cluster on them would
# answer instead.
for p in 17860 17861 17862 17863 17864 17865 17866 17867 17868 17869 17870 17871 17872 17873 17874 17875 17876 17877 17878 17879; do
	if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "compose-test: 127.0.0.1:$p is taken"; exit 1; fi
done

echo "== docker-compose up"
up=1
"${compose[@]}" up -d --no-build "${services[@]}" 2>&1 | grep -v '^Creating' || true
[ "$("${compose[@]}" ps -q "${services[@]}" | wc -l)" -eq 7 ] || { echo "compose-test: not every service was created"; exit 1; }

# ready PORT...: every /readyz answers 200 within 120 s.
ready() {
	for p in "$@"; do
		for i in $(seq 600); do
			curl -fsS -o /dev/null "http://127.0.0.1:$p/readyz" 2>/dev/null && break
			[ "$i" -eq 600 ] && { echo "compose-test: 127.0.0.1:$p/readyz not ready after 120 s"; exit 1; }
			sleep 0.2
		done
	done
}
ready 17861 17863 17865 17871 17873 17875 17879
echo "== ready after $(($(date +%s) - start)) s"

export STRATO_META=127.0.0.1:17860,127.0.0.1:17862,127.0.0.1:17864
export AWS_ACCESS_KEY_ID=strato-dev AWS_SECRET_ACCESS_KEY=strato-dev-secret AWS_ENDPOINT_URL=http://127.0.0.1:17878
s=bin/strato
head -c $((24 << 20)) /dev/urandom >"$work/cli.bin"
head -c $((20 << 20)) /dev/urandom >"$work/s3.bin"

echo "== CLI: fs put and get"
$s sh volume create civol >/dev/null
$s sh bucket create /civol/files >/dev/null
$s fs put "$work/cli.bin" /civol/files/cli.bin
$s fs get /civol/files/cli.bin "$work/cli.back"
cmp "$work/cli.bin" "$work/cli.back"

echo "== the image's time zones: fs ls in a container with TZ=Asia/Tokyo"
# Go falls back to UTC when it finds no time zone database: the listing's
# times would end in Z.
ls_tokyo=$(docker run --pull never --rm --network host -e TZ=Asia/Tokyo strato:dev fs ls --meta "$STRATO_META" /civol/files)
grep -q '+09:00' <<<"$ls_tokyo" || { echo "compose-test: no +09:00 in the container's listing:"; echo "$ls_tokyo"; exit 1; }

echo "== S3: strato s3 cp up and down"
$s s3 mb s3://objects >/dev/null
$s s3 cp --quiet "$work/s3.bin" s3://objects/s3.bin >/dev/null
$s s3 cp --quiet s3://objects/s3.bin "$work/s3.back" >/dev/null
cmp "$work/s3.bin" "$work/s3.back"

echo "== kill dn1"
"${compose[@]}" kill dn1 2>&1 | grep -v '^Killing' || true
[ -z "$(docker ps -q --filter "id=$("${compose[@]}" ps -q dn1)")" ] || { echo "compose-test: dn1 still runs"; exit 1; }
curl -fsS -o /dev/null http://127.0.0.1:17871/healthz 2>/dev/null && { echo "compose-test: dn1 still answers"; exit 1; }

echo "== read back without dn1"
rm -f "$work/cli.back" "$work/s3.back"
$s fs get /civol/files/cli.bin "$work/cli.back"
cmp "$work/cli.bin" "$work/cli.back"
$s s3 cp --quiet s3://objects/s3.bin "$work/s3.back" >/dev/null
cmp "$work/s3.bin" "$work/s3.back"

echo "== docker-compose down"
"${compose[@]}" down -v --timeout 5 >/dev/null 2>&1
up=
[ -z "$(docker ps -aq --filter "label=com.docker.compose.project=$project")" ] || { echo "compose-test: containers left"; exit 1; }
echo "== TLS and tokens: certificates issued in the image from a read-only CA"
tls=$work/tls
mkdir -p "$tls/meta" "$tls/dn" "$tls/meta-data" "$tls/dn-data"
$s admin ca init --dir "$tls/ca" >/dev/null
# The servers' user owns what it writes; the CA's key is readable by it,
# as the chart's Secret (mode 0440, the pod's fsGroup) is.
chown -R 65532:65532 "$tls"
# run DOCKER-OPTIONS... -- STRATO-ARGS...: a container of the image on
# the host network (never pulled).
run() {
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	docker run --pull never --network host "${opts[@]}" strato:dev "$@"
}
for n in meta dn; do
	run --rm -v "$tls/ca:/ca:ro" -v "$tls/$n:/tls" -- \
		admin ca issue --dir /ca --name node --out /tls --host 127.0.0.1 >/dev/null
done
run -d --name strato-ci-tls-meta -v "$tls/ca/ca.crt:/ca/ca.crt:ro" -v "$tls/meta:/tls:ro" -v "$tls/meta-data:/data" -- \
	meta --data /data --listen 127.0.0.1:17866 --http 127.0.0.1:17867 \
	--tls-cert /tls/node.crt --tls-key /tls/node.key --tls-ca /ca/ca.crt >/dev/null
run -d --name strato-ci-tls-dn -v "$tls/ca/ca.crt:/ca/ca.crt:ro" -v "$tls/dn:/tls:ro" -v "$tls/dn-data:/data" -- \
	datanode --data /data --meta 127.0.0.1:17866 --listen 127.0.0.1:17876 --http 127.0.0.1:17877 \
	--tls-cert /tls/node.crt --tls-key /tls/node.key --tls-ca /ca/ca.crt >/dev/null
for i in $(seq 300); do
	curl -fsS -o /dev/null --cacert "$tls/ca/ca.crt" https://127.0.0.1:17867/readyz 2>/dev/null &&
		curl -fsS -o /dev/null http://127.0.0.1:17877/readyz 2>/dev/null && break
	[ "$i" -eq 300 ] && { echo "compose-test: the TLS meta and datanode not ready after 60 s"; exit 1; }
	sleep 0.2
done
export STRATO_META=127.0.0.1:17866 STRATO_TLS_CA=$tls/ca/ca.crt
if $s sh volume list >/dev/null 2>&1; then echo "compose-test: meta --auth token answered without a token"; exit 1; fi
STRATO_TOKEN=$(cat "$tls/meta-data/admin.token")
export STRATO_TOKEN
$s sh volume create tlsvol >/dev/null
$s sh bucket create /tlsvol/files --replication ONE >/dev/null
$s fs put "$work/cli.bin" /tlsvol/files/cli.bin
rm -f "$work/cli.back"
$s fs get /tlsvol/files/cli.bin "$work/cli.back"
cmp "$work/cli.bin" "$work/cli.back"

echo "== TLS and tokens: an S3 gateway with a proxy user's token (the Helm chart's bootstrap)"
$s admin user create s3-gateway --proxy >/dev/null
$s admin user create alice >/dev/null
$s sh volume create s3v --owner s3-gateway >/dev/null
$s sh volume create s3v-multipart --owner s3-gateway >/dev/null
echo alice-secret-0123456789abcdef | $s admin s3 key create --user alice --access-key ci-alice --secret-stdin >/dev/null
# As docs/operations.md and the chart's notes take it.
token=$($s admin token issue --user s3-gateway | awk '$1 == "Token:" {print $2}')
[ -n "$token" ] || { echo "compose-test: no Token: line from strato admin token issue"; exit 1; }
mkdir -p "$tls/s3-token"
printf '%s\n' "$token" >"$tls/s3-token/token"
chown -R 65532:65532 "$tls/s3-token"
run -d --name strato-ci-tls-s3 -v "$tls/ca/ca.crt:/ca/ca.crt:ro" -v "$tls/s3-token:/token:ro" -- \
	s3 --meta 127.0.0.1:17866 --listen 127.0.0.1:17868 --http 127.0.0.1:17869 \
	--tls-ca /ca/ca.crt --token-file /token/token >/dev/null
for i in $(seq 150); do
	curl -fsS -o /dev/null http://127.0.0.1:17869/readyz 2>/dev/null && break
	[ "$i" -eq 150 ] && { echo "compose-test: the TLS S3 gateway not ready after 30 s"; exit 1; }
	sleep 0.2
done
export AWS_ACCESS_KEY_ID=ci-alice AWS_SECRET_ACCESS_KEY=alice-secret-0123456789abcdef AWS_ENDPOINT_URL=http://127.0.0.1:17868
# One datanode: the bucket of replication ONE, made by the administrator
# for alice.
$s sh bucket create /s3v/alice-objects --layout OBS --replication ONE --owner alice >/dev/null
$s s3 cp --quiet "$work/s3.bin" s3://alice-objects/s3.bin >/dev/null
rm -f "$work/s3.back"
$s s3 cp --quiet s3://alice-objects/s3.bin "$work/s3.back" >/dev/null
cmp "$work/s3.bin" "$work/s3.back"
docker rm -f "${tls_containers[@]}" >/dev/null

echo "compose-test: CLI and S3 put/get, time zones in the image, read back with a datanode killed, TLS and tokens, an S3 gateway on a proxy token: 9 passed, 0 failed"

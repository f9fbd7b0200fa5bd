#!/usr/bin/env bash
# Runs Hadoop's own dtutil (org.apache.hadoop.security.token.DtUtilShell,
# what `hadoop dtutil` runs) on a strato delegation token, against a
# `strato dev --secure` cluster of its own: get (as the administrator, with
# renewer rm), print, renew as rm, renew as the administrator (refused:
# only the renewer renews), cancel as rm, and checks that meta lists the
# token cancelled (docs/hadoop.md "Delegation tokens").
# Needs bin/strato (make build), the connector jar (make hadoop, or
# mvn -DskipTests package in hadoop/), Java 17, and the Hadoop jars of
# test/hadoop/fetch.sh (make hadoop-deps).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/bin/strato"
jar="$(ls "$root"/hadoop/target/strato-hadoop-*.jar | grep -v original | head -1)"
lib="$("$root/test/hadoop/fetch.sh")"
dir="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$bin" dev --data "$dir/data" --meta-addr "127.0.0.1:$port" --secure --s3-addr "" --http "" >"$dir/dev.log" 2>&1 &
dev=$!
trap 'kill $dev 2>/dev/null; wait $dev 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 60); do grep -q "strato dev: ready" "$dir/dev.log" && break; sleep 1; done
grep -q "strato dev: ready" "$dir/dev.log" || { cat "$dir/dev.log"; exit 1; }
ca="$dir/data/tls/ca.crt"
admin="$(grep -o 'token strato1\.[^ ]*' "$dir/dev.log" | head -1 | cut -d' ' -f2)"
cli=(--meta "127.0.0.1:$port" --tls-ca "$ca")
"$bin" admin user create rm "${cli[@]}" --token "$admin" >/dev/null
rm_token="$("$bin" admin token issue --user rm "${cli[@]}" --token "$admin" | awk '/^Token:/ {print $2}')"
dtutil() { java -cp "$lib/*:$jar" org.apache.hadoop.security.token.DtUtilShell "$@"; }
service="strato:127.0.0.1:$port"
tokens="$dir/tokens.bin"
set -x
dtutil -Dfs.strato.tls.ca="$ca" -Dfs.strato.token="$admin" get "strato://127.0.0.1:$port/" -renewer rm "$tokens"
dtutil print "$tokens"
dtutil -Dfs.strato.tls.ca="$ca" -Dfs.strato.token="$rm_token" renew -alias "$service" "$tokens"
if dtutil -Dfs.strato.tls.ca="$ca" -Dfs.strato.token="$admin" renew -alias "$service" "$tokens" >"$dir/refused.log" 2>&1; then
  echo "the administrator renewed a token whose renewer is rm" >&2
  exit 1
fi
grep -q "only its renewer (rm)" "$dir/refused.log"
dtutil -Dfs.strato.tls.ca="$ca" -Dfs.strato.token="$rm_token" cancel -alias "$service" "$tokens"
"$bin" admin token delegation list "${cli[@]}" --token "$admin" | grep -q "cancelled"
set +x
echo "dtutil-check: get, print, renew, cancel: ok"

"""boto3 against strato's S3 gateway, with boto3's default settings (which
presign with Signature Version 2 for us-east-1), then with SigV2 for every
request (signature_version="s3") and SigV4 presigning.

Usage: boto3_test.py ENDPOINT [ACCESS_LOG]  (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY set)
With ACCESS_LOG, the gateway's access log (empty before the run), it
checks that the log has one JSON line per HTTP request the script sent.
Prints 'N passed, 0 failed' and exits 0, or raises.
"""
import hashlib
import json
import os
import ssl
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid

import boto3
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint = sys.argv[1]
access_log = sys.argv[2] if len(sys.argv) > 2 else None
# The HTTP requests sent (every attempt of every client, and the urllib
# fetches), to compare with the access log's lines.
sent = 0
sent_lock = threading.Lock()


def count_sent(**_):
    global sent
    with sent_lock:
        sent += 1


def client(**kw):
    c = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", **kw)
    c.meta.events.register("before-send", count_sent)
    return c


s3 = client(config=Config(s3={"addressing_style": "path"}))  # HTTPS: trusts $AWS_CA_BUNDLE
bucket = "boto3-" + uuid.uuid4().hex[:12]
passed = 0


def check(name, cond):
    global passed
    if not cond:
        raise AssertionError(name)
    passed += 1


def code(fn):
    try:
        fn()
    except ClientError as e:
        return e.response["Error"]["Code"]
    return None


s3.create_bucket(Bucket=bucket)
check("bucket listed", bucket in [b["Name"] for b in s3.list_buckets()["Buckets"]])
check("create again", code(lambda: s3.create_bucket(Bucket=bucket)) == "BucketAlreadyOwnedByYou")

data = os.urandom(3 << 20)
s3.put_object(Bucket=bucket, Key="dir/ключ key", Body=data, Metadata={"m": "v"}, ContentType="text/x")
got = s3.get_object(Bucket=bucket, Key="dir/ключ key", ChecksumMode="ENABLED")
check("roundtrip", got["Body"].read() == data)
check("metadata %r %r" % (got["Metadata"], got["ContentType"]), got["Metadata"] == {"m": "v"} and got["ContentType"] == "text/x")
check("etag", got["ETag"].strip('"') == hashlib.md5(data).hexdigest())
check("range", s3.get_object(Bucket=bucket, Key="dir/ключ key", Range="bytes=10-19")["Body"].read() == data[10:20])
check("missing", code(lambda: s3.get_object(Bucket=bucket, Key="nope")) == "NoSuchKey")

# upload_file: multipart past 8 MiB, with boto3's default checksums.
big = os.urandom(20 << 20)
with open("/tmp/strato-boto3-big", "wb") as f:
    f.write(big)
s3.upload_file("/tmp/strato-boto3-big", bucket, "big")
s3.download_file(bucket, "big", "/tmp/strato-boto3-big.back")
with open("/tmp/strato-boto3-big.back", "rb") as f:
    check("multipart roundtrip", f.read() == big)
check("multipart etag", s3.head_object(Bucket=bucket, Key="big")["ETag"].strip('"').endswith("-3"))

for i in range(5):
    s3.put_object(Bucket=bucket, Key=f"list/{i}", Body=b"x")
pages = list(s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="list/", PaginationConfig={"PageSize": 2}))
check("paged list", sum(len(p.get("Contents", [])) for p in pages) == 5 and len(pages) == 3)
res = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
check("delimiter", sorted(p["Prefix"] for p in res["CommonPrefixes"]) == ["dir/", "list/"])

# Conditional writes (decision 0097): If-None-Match: * creates only; If-Match
# of a stale ETag is refused, of the current one succeeds.
s3.put_object(Bucket=bucket, Key="cond", Body=b"first", IfNoneMatch="*")
check("if-none-match on an existing key", code(lambda: s3.put_object(Bucket=bucket, Key="cond", Body=b"second", IfNoneMatch="*")) == "PreconditionFailed")
etag = s3.head_object(Bucket=bucket, Key="cond")["ETag"]
s3.put_object(Bucket=bucket, Key="cond", Body=b"third", IfMatch=etag)
check("if-match of a stale etag", code(lambda: s3.put_object(Bucket=bucket, Key="cond", Body=b"fourth", IfMatch=etag)) == "PreconditionFailed")
check("conditional writes: the winner's bytes", s3.get_object(Bucket=bucket, Key="cond")["Body"].read() == b"third")
s3.delete_object(Bucket=bucket, Key="cond")

s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "dir/ключ key"})
check("copy", s3.get_object(Bucket=bucket, Key="copy")["Body"].read() == data)

# CompleteMultipartUpload sent again after it succeeded (an SDK retries a
# Complete whose answer timed out): the same answer; another part list for
# the completed upload: NoSuchUpload.
mpu = s3.create_multipart_upload(Bucket=bucket, Key="mpu")["UploadId"]
mparts = [{"ETag": s3.upload_part(Bucket=bucket, Key="mpu", UploadId=mpu, PartNumber=n, Body=body)["ETag"], "PartNumber": n}
          for n, body in [(1, os.urandom(5 << 20)), (2, b"tail")]]
first = s3.complete_multipart_upload(Bucket=bucket, Key="mpu", UploadId=mpu, MultipartUpload={"Parts": mparts})
again = s3.complete_multipart_upload(Bucket=bucket, Key="mpu", UploadId=mpu, MultipartUpload={"Parts": mparts})
check("complete twice %r %r" % (first["ETag"], again["ETag"]),
      again["ETag"] == first["ETag"] and first["ETag"].endswith('-2"') and (again["Bucket"], again["Key"]) == (bucket, "mpu"))
check("complete again, other parts", code(lambda: s3.complete_multipart_upload(
    Bucket=bucket, Key="mpu", UploadId=mpu, MultipartUpload={"Parts": mparts[:1]})) == "NoSuchUpload")

# Presigned URLs. With its defaults (no signature_version, region
# us-east-1) boto3 presigns with Signature Version 2 (AWSAccessKeyId,
# Signature, Expires); with signature_version="s3v4", SigV4.
ctx = ssl.create_default_context(cafile=os.environ.get("AWS_CA_BUNDLE"))


def fetch(url):
    """The status and body of a GET of url (urllib, no SDK)."""
    count_sent()
    try:
        with urllib.request.urlopen(url, context=ctx) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "copy"}, ExpiresIn=60)
check("default presign is SigV2: " + url, "AWSAccessKeyId=" in url and "Signature=" in url and "X-Amz-" not in url)
check("presigned (SigV2)", fetch(url) == (200, data))
url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "copy",
                                "ResponseContentDisposition": 'attachment; filename="a b.bin"'}, ExpiresIn=60)
check("presigned (SigV2), a response-* override signed", fetch(url) == (200, data))
check("presigned (SigV2), forged", fetch(url.replace("/copy?", "/big?"))[0] == 403)
expired = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "copy"}, ExpiresIn=1)
time.sleep(2)
status, body = fetch(expired)
check("presigned (SigV2), expired: %d %r" % (status, body[:200]), status == 403 and b"Request has expired" in body)
v4 = client(config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
url = v4.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "copy"}, ExpiresIn=60)
check("presigned (SigV4)", "X-Amz-Signature=" in url and fetch(url) == (200, data))

# CORS: the bucket's rules, and a browser's preflight (OPTIONS, no
# credentials) answered from them.
check("no CORS yet", code(lambda: s3.get_bucket_cors(Bucket=bucket)) == "NoSuchCORSConfiguration")
s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [
    {"AllowedOrigins": ["https://*.app.example"], "AllowedMethods": ["GET", "PUT"], "AllowedHeaders": ["*"],
     "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 300}]})
rules = s3.get_bucket_cors(Bucket=bucket)["CORSRules"]
check("CORS rules %r" % rules, len(rules) == 1 and rules[0]["AllowedMethods"] == ["GET", "PUT"] and rules[0]["MaxAgeSeconds"] == 300)
check("CORS bad method", code(lambda: s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [
    {"AllowedOrigins": ["*"], "AllowedMethods": ["PATCH"]}]})) == "InvalidRequest")


def options(origin, method):
    """The status and headers of a preflight of the bucket's key "copy"."""
    count_sent()
    req = urllib.request.Request(f"{endpoint}/{bucket}/copy", method="OPTIONS", headers={
        "Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": "content-type"})
    try:
        with urllib.request.urlopen(req, context=ctx) as r:
            return r.status, r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.headers


status, headers = options("https://www.app.example", "PUT")
check("preflight allowed: %d %r" % (status, dict(headers)), status == 200 and
      headers["Access-Control-Allow-Origin"] == "https://www.app.example" and headers["Access-Control-Max-Age"] == "300")
check("preflight refused", options("https://elsewhere.example", "PUT")[0] == 403)
s3.delete_bucket_cors(Bucket=bucket)
check("CORS deleted", code(lambda: s3.get_bucket_cors(Bucket=bucket)) == "NoSuchCORSConfiguration")

# A client signing every request with SigV2 in the Authorization header.
v2 = client(config=Config(signature_version="s3", s3={"addressing_style": "path"}))
v2.put_object(Bucket=bucket, Key="v2/ключ +key", Body=data, Metadata={"m": "v2"}, ContentType="text/v2")
got = v2.get_object(Bucket=bucket, Key="v2/ключ +key")
check("SigV2 put/get", got["Body"].read() == data and got["Metadata"] == {"m": "v2"} and got["ContentType"] == "text/v2")
check("SigV2 list", [o["Key"] for o in v2.list_objects_v2(Bucket=bucket, Prefix="v2/")["Contents"]] == ["v2/ключ +key"])
v2.upload_file("/tmp/strato-boto3-big", bucket, "v2/big")  # multipart: ?uploads, ?partNumber&uploadId signed
check("SigV2 multipart", v2.head_object(Bucket=bucket, Key="v2/big")["ContentLength"] == len(big))
bad = client(aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"], aws_secret_access_key="wrong",
             config=Config(signature_version="s3", s3={"addressing_style": "path"}))
check("SigV2, wrong secret", code(lambda: bad.list_objects_v2(Bucket=bucket)) == "SignatureDoesNotMatch")

# Versioning: two versions, the old one read back, a delete marker, the
# marker removed brings the object back.
vb = bucket + "-versions"
s3.create_bucket(Bucket=vb)
check("versioning never enabled", "Status" not in s3.get_bucket_versioning(Bucket=vb))
s3.put_bucket_versioning(Bucket=vb, VersioningConfiguration={"Status": "Enabled"})
check("versioning enabled", s3.get_bucket_versioning(Bucket=vb).get("Status") == "Enabled")
v1 = s3.put_object(Bucket=vb, Key="k", Body=b"one")["VersionId"]
v2 = s3.put_object(Bucket=vb, Key="k", Body=b"two")["VersionId"]
vs = s3.list_object_versions(Bucket=vb)
check("list versions %r" % vs.get("Versions"),
      [(v["VersionId"], v["IsLatest"]) for v in vs.get("Versions", [])] == [(v2, True), (v1, False)])
check("get the old version", s3.get_object(Bucket=vb, Key="k", VersionId=v1)["Body"].read() == b"one")
d = s3.delete_object(Bucket=vb, Key="k")
check("a delete makes a marker %r" % d, d.get("DeleteMarker") is True and d.get("VersionId"))
check("deleted", code(lambda: s3.get_object(Bucket=vb, Key="k")) == "NoSuchKey")
markers = s3.list_object_versions(Bucket=vb).get("DeleteMarkers", [])
check("the marker listed, latest", [m["VersionId"] for m in markers] == [d["VersionId"]] and markers[0]["IsLatest"])
s3.delete_object(Bucket=vb, Key="k", VersionId=d["VersionId"])
check("the marker removed: the object back", s3.get_object(Bucket=vb, Key="k")["Body"].read() == b"two")
for v in s3.list_object_versions(Bucket=vb)["Versions"]:
    s3.delete_object(Bucket=vb, Key=v["Key"], VersionId=v["VersionId"])
s3.delete_bucket(Bucket=vb)
check("a versioned bucket emptied by version and deleted", vb not in [b["Name"] for b in s3.list_buckets()["Buckets"]])

# Lifecycle: a rule with a date already past expires what its filter
# matches (strato dev runs rounds every second here), nothing else.
lb = bucket + "-lifecycle"
s3.create_bucket(Bucket=lb)
s3.put_object(Bucket=lb, Key="tmp/a", Body=b"x")
s3.put_object(Bucket=lb, Key="keep/a", Body=b"x")
s3.put_bucket_lifecycle_configuration(Bucket=lb, LifecycleConfiguration={"Rules": [
    {"ID": "tmp", "Status": "Enabled", "Filter": {"Prefix": "tmp/"}, "Expiration": {"Date": "2020-01-01T00:00:00Z"}},
    {"ID": "uploads", "Status": "Enabled", "Filter": {"Prefix": ""}, "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7}}]})
rules = s3.get_bucket_lifecycle_configuration(Bucket=lb)["Rules"]
check("lifecycle read back %r" % rules, [r["ID"] for r in rules] == ["tmp", "uploads"]
      and rules[0]["Filter"] == {"Prefix": "tmp/"} and rules[1]["AbortIncompleteMultipartUpload"]["DaysAfterInitiation"] == 7)
for _ in range(100):
    if [o["Key"] for o in s3.list_objects_v2(Bucket=lb).get("Contents", [])] == ["keep/a"]:
        break
    time.sleep(0.1)
check("lifecycle expired tmp/a, kept keep/a", [o["Key"] for o in s3.list_objects_v2(Bucket=lb).get("Contents", [])] == ["keep/a"])
check("lifecycle transitions refused", code(lambda: s3.put_bucket_lifecycle_configuration(Bucket=lb, LifecycleConfiguration={"Rules": [
    {"ID": "t", "Status": "Enabled", "Filter": {}, "Transitions": [{"Days": 30, "StorageClass": "GLACIER"}]}]})) == "NotImplemented")
s3.delete_bucket_lifecycle(Bucket=lb)
check("lifecycle deleted", code(lambda: s3.get_bucket_lifecycle_configuration(Bucket=lb)) == "NoSuchLifecycleConfiguration")
s3.delete_object(Bucket=lb, Key="keep/a")
s3.delete_bucket(Bucket=lb)

# Object lock: a bucket made with it is versioned; its default retention
# keeps a version from a delete by version ID (AccessDenied), not from a
# delete marker; a legal hold keeps it even from the bypass.
kb = bucket + "-lock"
s3.create_bucket(Bucket=kb, ObjectLockEnabledForBucket=True)
check("object lock: versioned", s3.get_bucket_versioning(Bucket=kb).get("Status") == "Enabled")
s3.put_object_lock_configuration(Bucket=kb, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled",
                                 "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}})
check("object lock: configuration", s3.get_object_lock_configuration(Bucket=kb)["ObjectLockConfiguration"]
      ["Rule"]["DefaultRetention"] == {"Mode": "GOVERNANCE", "Days": 1})
lv = s3.put_object(Bucket=kb, Key="k", Body=b"worm")["VersionId"]
check("object lock: default retention", s3.head_object(Bucket=kb, Key="k").get("ObjectLockMode") == "GOVERNANCE")
check("object lock: delete by version refused",
      code(lambda: s3.delete_object(Bucket=kb, Key="k", VersionId=lv)) == "AccessDenied")
check("object lock: a delete marker allowed", s3.delete_object(Bucket=kb, Key="k").get("DeleteMarker") is True)
s3.put_object_legal_hold(Bucket=kb, Key="k", VersionId=lv, LegalHold={"Status": "ON"})
check("object lock: a legal hold beats the bypass",
      code(lambda: s3.delete_object(Bucket=kb, Key="k", VersionId=lv, BypassGovernanceRetention=True)) == "AccessDenied")
s3.put_object_legal_hold(Bucket=kb, Key="k", VersionId=lv, LegalHold={"Status": "OFF"})
s3.delete_object(Bucket=kb, Key="k", VersionId=lv, BypassGovernanceRetention=True)
for m in s3.list_object_versions(Bucket=kb).get("DeleteMarkers", []):
    s3.delete_object(Bucket=kb, Key=m["Key"], VersionId=m["VersionId"])
s3.delete_bucket(Bucket=kb)
check("object lock: bucket emptied with the bypass and deleted", kb not in [b["Name"] for b in s3.list_buckets()["Buckets"]])

# A bucket policy, and anonymous requests (botocore's UNSIGNED): refused
# until the policy allows Principal "*" that object.
anon = client(config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}))
check("anonymous GET refused", code(lambda: anon.get_object(Bucket=bucket, Key="copy")) == "AccessDenied")
check("malformed policy", code(lambda: s3.put_bucket_policy(Bucket=bucket, Policy='{"Statement": []}')) == "MalformedPolicy")
s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/copy"}]}))
check("policy read back", json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"])["Statement"][0]["Action"] == "s3:GetObject")
check("policy status", s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is True)
check("anonymous GET by the policy", anon.get_object(Bucket=bucket, Key="copy")["Body"].read() == data)
check("anonymous GET with urllib", fetch(f"{endpoint}/{bucket}/copy") == (200, data))
check("anonymous GET of another key", code(lambda: anon.get_object(Bucket=bucket, Key="big")) == "AccessDenied")
check("anonymous PUT", code(lambda: anon.put_object(Bucket=bucket, Key="copy", Body=b"x")) == "AccessDenied")
s3.delete_bucket_policy(Bucket=bucket)
check("policy deleted", code(lambda: anon.get_object(Bucket=bucket, Key="copy")) == "AccessDenied")

res = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in
                        ["copy", "big", "mpu", "dir/ключ key", "v2/ключ +key", "v2/big"] + [f"list/{i}" for i in range(5)]]})
check("delete objects", len(res.get("Deleted", [])) == 11 and not res.get("Errors"))
s3.delete_bucket(Bucket=bucket)

if access_log:
    # A line is written when its response is: the last may trail the
    # client's read by a moment.
    for _ in range(50):
        with open(access_log) as f:
            lines = [json.loads(line) for line in f]
        if len(lines) >= sent:
            break
        time.sleep(0.1)
    check("access log: %d lines for %d requests" % (len(lines), sent), len(lines) == sent)
    check("access log: request IDs", len({e["request_id"] for e in lines}) == sent)
    check("access log: the bad secret refused", any(e["status"] == 403 and e["error"] == "SignatureDoesNotMatch" for e in lines))
    check("access log: the first put", any(e["op"] == "PutObject" and e["bucket"] == bucket and e["key"] == "dir/ключ key"
                                           and e["status"] == 200 and e["bytes_in"] == len(data) for e in lines))
print(f"{passed} passed, 0 failed")

# strato — build, run, test.
GO        ?= go
export CGO_ENABLED ?= 0
BIN       := bin/strato
TOOLS     := $(CURDIR)/bin/tools
GOLANGCI  := $(TOOLS)/golangci-lint
GOLANGCI_VERSION := v2.15.0
TEST_TIMEOUT ?= 15m
ARGS      ?=

.PHONY: spark-deps spark-test s3-test s3-deps s3-conformance build run stop test testrace testrace-ci verify bench tools proto proto-baseline clean hadoop-deps hadoop soak failover deploy-check dist dist-check image compose-test

# The build's identity, stamped into the binary (internal/buildinfo: strato
# version, strato_build_info, the console's footer) and the connector jar's
# manifest: the version git describes, the commit, and the commit's date
# (SOURCE_DATE_EPOCH, unless set), never the time of the build, so that the
# same sources build the same bytes (docs/decisions/0079-release-artifacts.md).
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
ifndef SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH := $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
endif
export SOURCE_DATE_EPOCH
BUILD_DATE := $(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ)
BUILDINFO  := github.com/strato-io/strato/internal/buildinfo
LDFLAGS    := -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT) -X $(BUILDINFO).date=$(BUILD_DATE)

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/strato

# run: start a local cluster (strato dev, data in ./strato-data) and show it
# storing and reading back a file; it keeps running (make stop), or stops at
# the end with ARGS=--demo.
run: build
	./scripts/run.sh $(ARGS)

# stop: stop the cluster make run started.
stop:
	@if [ -f strato-data/dev.pid ] && kill $$(cat strato-data/dev.pid) 2>/dev/null; then \
		while kill -0 $$(cat strato-data/dev.pid) 2>/dev/null; do sleep 0.1; done; echo "strato dev stopped"; \
	else echo "strato dev is not running"; fi; rm -f strato-data/dev.pid

test:
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# soak: the multi-host fault scenarios of test/netfault back to back, each
# with a new seed, for SOAK_DURATION (needs root and ip netns). The summary
# goes to soak-report.txt; a failing seed keeps its run directory (logs,
# histories, porcupine.html).
# Before them, CRASH_ROUNDS (default 50) seeded kill -9 schedules of the
# crash tests of test/crash_test.go: the three datanode processes at once,
# and strato dev as one process.
SOAK_DURATION ?= 30m
CRASH_ROUNDS ?= 50
soak:
	STRATO_CRASH_ROUNDS=$(CRASH_ROUNDS) $(GO) test -count=1 -timeout 0 -run '^TestCrash(Datanodes|Dev)$$' -v ./test
	STRATO_SOAK_DURATION=$(SOAK_DURATION) STRATO_SOAK_REPORT=$(CURDIR)/soak-report.txt \
		$(GO) test -count=1 -timeout 0 -run '^TestSoak$$' -v ./test/netfault

# failover: kill the meta leader FAILOVER_KILLS times under continuous writes
# and report the time to the first successful write (median, max).
FAILOVER_KILLS ?= 20
failover:
	STRATO_FAILOVER_KILLS=$(FAILOVER_KILLS) $(GO) test -count=1 -timeout 40m -run '^TestFailover$$' -v ./test/netfault

# hadoop-deps: the Hadoop jars test/teragen_test.go runs Hadoop's own TeraGen
# with, fetched from Maven Central once into $STRATO_CACHE (default
# .cache/ of the work tree, with Maven's downloads in .cache/m2). The test fetches them itself when they are missing.
hadoop-deps:
	./test/hadoop/fetch.sh >/dev/null

# hadoop: the Hadoop FileSystem connector (hadoop/, docs/hadoop.md): its
# tests (the wire vectors, and Hadoop's FileSystem contract suite against a
# strato dev cluster of bin/strato, which this builds first), then the shaded
# jar hadoop/target/strato-hadoop-VERSION.jar. Maven's downloads are cached
# in .cache/m2 (HADOOP_M2); HADOOP_MVN_ARGS adds to the command line (e.g.
# -DskipTests, -Dtest=TestStratoContractRename).
MVN             ?= mvn
HADOOP_M2       ?= $(CURDIR)/.cache/m2
HADOOP_MVN_ARGS ?=
HADOOP_STAMP    = -Dstrato.version=$(VERSION) -Dstrato.commit=$(COMMIT) -Dproject.build.outputTimestamp=$(BUILD_DATE)
hadoop: build
	$(MVN) -B -ntp -Dmaven.repo.local=$(HADOOP_M2) -f hadoop/pom.xml -Dstrato.bin=$(CURDIR)/$(BIN) \
		$(HADOOP_STAMP) $(HADOOP_MVN_ARGS) package

# dist: the release artifacts in $(DIST_DIR) (scripts/dist.sh,
# docs/operations.md "Installing a release"): for each of DIST_PLATFORMS,
# strato-VERSION-OS-ARCH.tar.gz (the static binary, README.md, docs/,
# deploy/); the connector jar strato-hadoop-VERSION.jar (built without its
# tests: make hadoop runs them); SHA256SUMS. Reproducible: -trimpath, the
# commit's date as every time stamp, tar entries sorted, owned by 0:0.
# The container image is not among them (the image's own target builds it).
DIST_DIR       ?= dist
DIST_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
dist:
	$(MVN) -B -q -ntp -Dmaven.repo.local=$(HADOOP_M2) -f hadoop/pom.xml $(HADOOP_STAMP) -DskipTests clean package
	GO="$(GO)" VERSION=$(VERSION) LDFLAGS='$(LDFLAGS)' DIST_DIR=$(DIST_DIR) DIST_PLATFORMS="$(DIST_PLATFORMS)" ./scripts/dist.sh

# dist-check: make dist twice, into two folders, and compare their
# SHA256SUMS (scripts/dist-check.sh). Slow (four cross builds and two
# Maven builds): not run by CI.
dist-check:
	MAKE="$(MAKE)" ./scripts/dist-check.sh

# s3-deps: boto3 and the aws cli, from PyPI into .cache/s3-venv (once).
S3_VENV := .cache/s3-venv
s3-deps:
	@[ -x $(S3_VENV)/bin/aws ] || { python3 -m venv $(S3_VENV) && $(S3_VENV)/bin/pip install -q boto3 awscli; }

# s3-test: boto3 and the aws cli, with their defaults, against the S3
# gateway of a strato dev (scripts/s3-client-test.sh).
s3-test: build s3-deps
	./scripts/s3-client-test.sh

# spark-deps: PySpark (its bundled Hadoop client is 3.4.1; Java 17) and
# matplotlib from PyPI into .cache/spark-venv, and the jars s3a:// needs,
# hadoop-aws matching that Hadoop and its AWS SDK bundle, and
# spark-hadoop-cloud (the S3A committers' binding), from Maven Central
# into .cache/spark-jars (through Maven, cached in .cache/m2). Once: later
# runs find them. Nothing outside the work tree changes (docs/spark.md).
PYSPARK_VERSION    := 4.0.5
SPARK_HADOOP       := 3.4.1
SPARK_AWS_SDK      := 2.24.6
# spark-hadoop-cloud binds Hadoop's S3A committers into Spark SQL; 4.0.2 is
# the newest 4.0.x on Maven Central here (its classes are unchanged in 4.0).
SPARK_CLOUD        := 4.0.2
SPARK_VENV         := .cache/spark-venv
SPARK_JARS         := .cache/spark-jars
spark-deps:
	@[ -f $(SPARK_VENV)/.pyspark-$(PYSPARK_VERSION) ] || { rm -rf $(SPARK_VENV) && python3 -m venv $(SPARK_VENV) && \
		$(SPARK_VENV)/bin/pip install -q --disable-pip-version-check pyspark==$(PYSPARK_VERSION) matplotlib && \
		touch $(SPARK_VENV)/.pyspark-$(PYSPARK_VERSION); }
	@ls $(SPARK_VENV)/lib/python3*/site-packages/pyspark/jars/hadoop-client-api-$(SPARK_HADOOP).jar >/dev/null 2>&1 || \
		{ echo "pyspark $(PYSPARK_VERSION) does not bundle Hadoop $(SPARK_HADOOP)"; exit 1; }
	@for a in org.apache.hadoop:hadoop-aws:$(SPARK_HADOOP) software.amazon.awssdk:bundle:$(SPARK_AWS_SDK) \
		org.apache.spark:spark-hadoop-cloud_2.13:$(SPARK_CLOUD); do \
		f=$(SPARK_JARS)/$$(echo $$a | cut -d: -f2)-$$(echo $$a | cut -d: -f3).jar; [ -f $$f ] && continue; \
		rm -rf $(SPARK_JARS)/.tmp; \
		$(MVN) -B -q -ntp -Dmaven.repo.local=$(HADOOP_M2) dependency:copy -Dartifact=$$a -DoutputDirectory=$(SPARK_JARS)/.tmp && \
		mv $(SPARK_JARS)/.tmp/*.jar $(SPARK_JARS)/ || exit 1; \
	done; rm -rf $(SPARK_JARS)/.tmp

# spark-test: a few MB of Parquet written by PySpark to strato:// and to
# s3a:// on the gateway of its own strato dev, read back and compared; the
# output committer leaves _SUCCESS and nothing temporary, and a failed task
# attempt leaves no partial file (test/spark/, docs/spark.md).
spark-test: build spark-deps
	@ls hadoop/target/strato-hadoop-*.jar >/dev/null 2>&1 && [ -z "$$(find hadoop/src hadoop/pom.xml -newer $$(ls hadoop/target/strato-hadoop-*.jar | grep -v original | head -1) -type f 2>/dev/null | head -1)" ] || \
		$(MAKE) hadoop HADOOP_MVN_ARGS="-q -DskipTests"
	./test/spark/run.sh

# s3-conformance: versitygw's S3 integration suite (full-flow) against the
# gateway of a strato dev; prints the pass count and every failure
# (scripts/s3-conformance.sh; docs/s3.md says why each fails). Slow: not CI.
VERSITYGW_VERSION := v1.8.0
VERSITYGW := $(TOOLS)/versitygw
$(VERSITYGW):
	GOBIN=$(TOOLS) $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

s3-conformance: build $(VERSITYGW)
	VERSITYGW_VERSION=$(VERSITYGW_VERSION) ./scripts/s3-conformance.sh

# The race detector needs cgo.
testrace:
	CGO_ENABLED=1 $(GO) test -count=1 -race -timeout $(TEST_TIMEOUT) ./...

# testrace-ci: the race detector over the packages whose race run fits CI's
# budget (about 6 minutes on its 2 cores); .ci/run calls it. Measured one
# package at a time with `go test -race -count=1` on a 2-core machine as CI's (the
# test binary's time; the first package also paid ~45 s to build the
# standard library for the detector, walfs ~60 s for Pebble):
#   walfs 150.5s, datanode/container 67.5s, s3 37.5s, meta/namespace 23.5s,
#   datanode 15.3s, client 13.1s, meta 4.7s, web 4.2s,
#   datanode/replication 3.5s, ec 2.5s, internal/lint 2.2s, wire 1.3s,
#   meta/cluster 1.2s, certs 1.1s, bytesize, checksum, leader, telemetry 1.0s
#   (332 s in all); together, two packages at a time, 2 min 51 s with the
#   build cache warm.
# meta/consensus 24.8 s (its single-voter test waits for the commit index
# to catch up with the applied one: a sole voter applies entries while
# their append is fsynced, decision 0006). Left out, not measured under the
# detector: minicluster, cmd/strato (31 s without it), test, test/cluster,
# test/netfault and bench/... (in-process clusters and real processes).
RACE_CI_PKGS := ./walfs ./datanode/container ./s3 ./meta/namespace ./datanode ./client ./meta ./web \
	./datanode/replication ./ec ./internal/lint ./wire ./meta/cluster ./meta/consensus ./certs ./bytesize \
	./checksum ./leader ./telemetry ./metaconn ./datanode/agent ./datanode/scanner ./meta/topology
testrace-ci:
	CGO_ENABLED=1 $(GO) test -count=1 -race -timeout $(TEST_TIMEOUT) $(RACE_CI_PKGS)

$(GOLANGCI):
	GOBIN=$(TOOLS) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)

tools: $(GOLANGCI)

PROTOC_GEN_GO      := $(TOOLS)/protoc-gen-go
PROTOC_GEN_GO_GRPC := $(TOOLS)/protoc-gen-go-grpc
$(PROTOC_GEN_GO):
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
$(PROTOC_GEN_GO_GRPC):
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2

BUF := $(TOOLS)/buf
$(BUF):
	GOBIN=$(TOOLS) $(GO) install github.com/bufbuild/buf/cmd/buf@v1.75.0

PROTO_TOOLS := $(BUF) $(PROTOC_GEN_GO) $(PROTOC_GEN_GO_GRPC)

# proto: regenerate the Go code of proto/strato/v1 (buf, with the plugins
# above). The generated code is committed; make verify checks it is current.
proto: $(PROTO_TOOLS)
	cd proto && PATH=$(TOOLS):$$PATH $(BUF) generate

# proto-baseline: record the API as it is now as the point `buf breaking`
# compares with (at a release; see docs/api.md).
proto-baseline: $(BUF)
	cd proto && $(BUF) build -o api-baseline.binpb

verify: $(GOLANGCI) $(PROTO_TOOLS)
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	@# The public client links no server code (no storage engine, no Raft).
	@bad=$$($(GO) list -deps ./client | grep -E 'cockroachdb/pebble|go.etcd.io/raft|strato/(meta|datanode|cluster|bench)(/|$$)'); \
		if [ -n "$$bad" ]; then echo "client depends on server code:"; echo "$$bad"; exit 1; fi
	cd proto && $(BUF) lint && $(BUF) breaking --against api-baseline.binpb
	@# The generated code is what the .proto files generate.
	@tmp=$$(mktemp -d) && cp -r proto $$tmp/ && (cd $$tmp/proto && rm -f strato/v1/*.pb.go && \
		sed -i 's|out: \.\.|out: gen|' buf.gen.yaml && PATH=$(TOOLS):$$PATH $(BUF) generate) && \
		diff -r -q $$tmp/proto/gen/proto/strato/v1 proto/strato/v1 | grep '\.pb\.go' ; rc=$$?; rm -rf $$tmp; \
		if [ $$rc -eq 0 ]; then echo "generated code out of date: make proto"; exit 1; fi
	$(GOLANGCI) run ./...

# deploy-check: validate deploy/ without a container runtime or a cluster
# (deploy/validate: compose-go's schema check of compose.yaml, strict
# decoding of the Kubernetes manifests into k8s.io/api's types, every strato
# command line parsed by this build's flags), then the alerting rules
# (deploy/prometheus/check: parsed by Prometheus's rule parser, each alert
# fired and kept silent by the tests of deploy/prometheus/alerts_test.yml
# in Prometheus's rule engine).
deploy-check: build
	cd deploy/validate && $(GO) run . -dir .. -strato $(CURDIR)/$(BIN)
	cd deploy/prometheus/check && $(GO) test -count=1 .

# image: deploy/Dockerfile's image, FROM scratch, built without pulling
# anything: the static binary, the build machine's CA certificates and the Go
# toolchain's time zone database (its zoneinfo.zip unpacked: Go reads $TZ's
# zone from /usr/share/zoneinfo), put in a context directory of their own
# (bin/image). DOCKER_HOST picks the daemon.
IMAGE     ?= strato:dev
IMAGE_CTX := bin/image
CA_CERTS  ?= /etc/ssl/certs/ca-certificates.crt
image:
	rm -rf $(IMAGE_CTX) && mkdir -p $(IMAGE_CTX)/data $(IMAGE_CTX)/tmp && chmod 1777 $(IMAGE_CTX)/tmp
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags='-s -w $(LDFLAGS)' -o $(IMAGE_CTX)/strato ./cmd/strato
	cp $(CA_CERTS) $(IMAGE_CTX)/ca-certificates.crt
	unzip -q "$$($(GO) env GOROOT)/lib/time/zoneinfo.zip" -d $(IMAGE_CTX)/zoneinfo
	docker build -q -f deploy/Dockerfile -t $(IMAGE) $(IMAGE_CTX)

# compose-test: the image, and deploy/compose.yaml's cluster started from it
# on the host network with deploy/compose.ci.yaml's ports: put and get
# through the CLI and S3, one datanode container killed, read back
# (scripts/compose-test.sh; starts and stops a dockerd of its own when
# none runs).
compose-test:
	./scripts/compose-test.sh

# Go micro-benchmarks (the experiment benchmarks are `strato bench ...`).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin dist

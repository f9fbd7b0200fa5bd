# strato — build, run, test.
GO        ?= go
export CGO_ENABLED ?= 0
BIN       := bin/strato
TOOLS     := $(CURDIR)/bin/tools
GOLANGCI  := $(TOOLS)/golangci-lint
GOLANGCI_VERSION := v2.15.0
TEST_TIMEOUT ?= 15m
ARGS      ?=

.PHONY: build run test testrace verify bench tools clean

build:
	$(GO) build -o $(BIN) ./cmd/strato

# run: the quickest way to see strato do its job on this machine.
run: build
	./scripts/run.sh $(ARGS)

test:
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# The race detector needs cgo.
testrace:
	CGO_ENABLED=1 $(GO) test -count=1 -race -timeout $(TEST_TIMEOUT) ./...

$(GOLANGCI):
	GOBIN=$(TOOLS) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)

tools: $(GOLANGCI)

verify: $(GOLANGCI)
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	$(GOLANGCI) run ./...

# Go micro-benchmarks (the experiment benchmarks are `strato bench ...`).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin

# koopq — build, test and demo targets. Both entry points install the Debian
# packages they need when they are missing (root + apt-get, as on CI).

SHELL := /bin/bash
GO ?= go
APT_PKGS := libopenblas-dev libdnnl-dev libhdf5-dev libmujoco-dev pkg-config python3-h5py python3-numpy python3-scipy slurm-wlm munge python3-onnx
BIN := bin/koopq

.PHONY: deps build test demo bench vet fmt clean mutate docs

deps:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi

build: deps
	$(GO) build -buildvcs=true -o $(BIN) ./cmd/koopq

vet: deps
	$(GO) vet ./...
	$(GO) vet -tags crashtest ./run/ ./cmd/koopq/
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

test: deps vet
	$(GO) test -timeout 40m ./...
	$(GO) test -tags purego ./internal/blas/ ./nn/
	CGO_ENABLED=0 $(GO) test -run WithoutHDF5 ./dataset/

demo: build
	./$(BIN) demo

# The CLI reference in docs/cli/ is generated from the commands themselves;
# TestCLIDocsUpToDate (cmd/koopq) fails when the committed copy is stale.
# Run this after adding or changing a verb or flag, and after merges.
docs:
	env -u KOOPQ_AUGMENT_CACHE -u KOOPQ_ALLOW_DIRTY $(GO) run ./cmd/koopq docs --out docs/cli

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 20x ./internal/blas/ ./cql/
	$(GO) test -run '^$$' -bench SACStep -benchtime 20x ./sac/

# Mutation testing with gremlins (pinned; installed into bin/ on first use).
# GOFLAGS=-short makes every learning test skip (they check testing.Short()),
# so each mutant runs only the fast tests of its own package; `make test` does
# not pass -short and still runs them. -count=1 keeps the unmutated coverage
# run out of the test cache, so the timeout is scaled from its real duration. One package at a time:
# `make mutate MUTATE_PKGS=cql`. Reports land in bin/mutate-<pkg>.json.
# KOOPQ_HDF5_IN_PROCESS=1 runs HDF5 reads in the test process instead of a
# child worker, so their lines count as covered (no crash isolation: for
# coverage of koopq's own test files only; see docs/mutation.md).
GREMLINS_VERSION := v0.6.0
GREMLINS := bin/gremlins-$(GREMLINS_VERSION)
MUTATE_PKGS ?= cql augment koopman dataset sac eval
# A mutant whose `go test` (build included) runs this many times longer than
# the unmutated coverage run counts as timed out. That run reuses the build
# cache while every mutant relinks its test binary, so the factor is large
# (cql's fast tests take ≈ 1.5 s, a relink several); raise it on a loaded machine.
MUTATE_TIMEOUT_COEF ?= 40

$(GREMLINS):
	mkdir -p bin/.gremlins
	GOBIN=$(CURDIR)/bin/.gremlins $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)
	mv bin/.gremlins/gremlins $@

mutate: deps $(GREMLINS)
	@for p in $(MUTATE_PKGS); do \
	  echo "== gremlins on ./$$p"; \
	  KOOPQ_HDF5_IN_PROCESS=1 GOFLAGS='-short -count=1' ./$(GREMLINS) unleash --workers 2 --timeout-coefficient $(MUTATE_TIMEOUT_COEF) \
	    -S ltc -o bin/mutate-$$p.json ./$$p || exit 1; \
	done

clean:
	rm -rf bin

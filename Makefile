# koopq — build, test and demo targets. Both entry points install the Debian
# packages they need when they are missing (root + apt-get, as on CI).

SHELL := /bin/bash
GO ?= go
APT_PKGS := libopenblas-dev libdnnl-dev libhdf5-dev libmujoco-dev pkg-config python3-h5py python3-numpy python3-scipy slurm-wlm munge
BIN := bin/koopq

.PHONY: deps build test demo bench vet fmt clean

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
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

test: deps vet
	$(GO) test -timeout 40m ./...
	$(GO) test -tags purego ./internal/blas/ ./nn/

demo: build
	./$(BIN) demo

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 20x ./internal/blas/ ./cql/

clean:
	rm -rf bin

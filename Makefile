# mcphost — see README.md. `make run` serves the example plugins, `make test` runs every test.
GO       ?= go
BIN      := bin/mcphost
CONFIG   ?= mcphost.toml
# Every Go plugin: a directory under plugins/ or testdata/plugins/ with a main.go.
GO_PLUGINS := $(patsubst %/main.go,%,$(wildcard plugins/*/main.go testdata/plugins/*/main.go))
# The plugin ABI and the Go SDK are Go modules of their own (RATIONALE.md):
# `./...` from the root does not reach them, so vet and test visit each.
SUB_MODULES := abi sdk

.PHONY: all build plugins run test vet conformance reference clean

all: build plugins

# -buildvcs=auto: stamp the commit into `mcphost version` even where GOFLAGS
# turns VCS stamping off (it does so silently outside a git checkout).
build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/mcphost

# Every plugin in another language (C, Rust, AssemblyScript, WAT): a directory
# under plugins/ with a build.sh, whose small .wasm build is committed.
# The JavaScript engine comes first: plugins/js-hello is built from it.
SCRIPT_PLUGINS := host/internal/jsengine $(patsubst %/build.sh,%,$(wildcard plugins/*/build.sh))
# Under `make test`, plugins-check builds each of them (and compares it with
# the committed file, which nothing may rewrite first), so `plugins` leaves
# them alone; exported, so that the `$(MAKE) conformance` of test does too.
ifneq ($(filter test,$(MAKECMDGOALS)),)
export MCPHOST_SCRIPT_PLUGINS_CHECKED := 1
endif

# Builds each Go plugin to <dir>/<name>.wasm (Go's build cache keeps this
# quick; <dir>/goflags, if present, adds build flags: see plugins/fetch),
# then runs each other plugin's build.sh. A build.sh installs its toolchain
# (apt-get, npm) when it can; when it cannot it exits 3 after printing
# "skipped <lang>: <why>", and that plugin keeps its committed .wasm.
# A Go plugin with a skills/ directory ships its Agent Skills (`mcphost
# plugin skills`, abi/ABI.md §19). Each plugin under plugins/ then ships
# its description (`mcphost plugin describe`, docs/config.md): a host with an empty cache lists it without
# compiling it. (testdata/ plugins stay as built: tests describe their own.)
plugins: build
	@for d in $(GO_PLUGINS); do \
		out=$$d/$$(basename $$d).wasm; \
		echo "plugin  $$out"; \
		GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $(GO) build -buildmode=c-shared $$(cat $$d/goflags 2>/dev/null) -o $$out ./$$d || exit 1; \
		if [ -d $$d/skills ]; then ./$(BIN) plugin skills $$out >/dev/null || exit 1; fi; \
		case $$d in plugins/*) ./$(BIN) plugin describe $$out >/dev/null || exit 1 ;; esac; \
	done
ifeq ($(MCPHOST_SCRIPT_PLUGINS_CHECKED),)
	@skipped=; for d in $(SCRIPT_PLUGINS); do \
		echo "plugin  $$d (build.sh)"; \
		$$d/build.sh; rc=$$?; \
		case $$rc in \
		0) ;; \
		3) skipped="$$skipped $${d#plugins/}" ;; \
		*) echo "$$d/build.sh failed (exit $$rc)" >&2; exit 1 ;; \
		esac; \
	done; \
	if [ -n "$$skipped" ]; then echo "plugins: skipped$$skipped (reasons above); their committed .wasm files are used"; fi
endif

# Rebuilds every plugin of SCRIPT_PLUGINS with `build.sh --check` and fails
# unless each build matches the committed .wasm byte for byte. As root (CI),
# where build.sh installs a missing toolchain, one that still cannot be had
# is a failure; anyone else gets a clear skip for that plugin.
.PHONY: plugins-check
plugins-check:
	@failed=; for d in $(SCRIPT_PLUGINS); do \
		$$d/build.sh --check; rc=$$?; \
		case $$rc in \
		0) ;; \
		3) if [ "$$(id -u)" = 0 ]; then \
			echo "plugins-check: $$d: its toolchain is missing and could not be installed" >&2; failed="$$failed $$d"; \
		   else echo "plugins-check: $$d: skipped, its toolchain is missing (as root, build.sh installs it)" >&2; fi ;; \
		*) failed="$$failed $$d" ;; \
		esac; \
	done; \
	if [ -n "$$failed" ]; then echo "plugins-check failed:$$failed" >&2; exit 1; fi

LISTEN ?= 127.0.0.1:8808

run: build plugins
	./$(BIN) serve --config $(CONFIG) --http $(LISTEN)

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	@for m in $(SUB_MODULES); do echo "$(GO) -C $$m vet ./..."; $(GO) -C $$m vet ./... || exit 1; done
	GOOS=wasip1 GOARCH=wasm $(GO) -C sdk vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet $(addprefix ./,$(GO_PLUGINS))

test: plugins-check plugins vet
	@scripts/ensure-haproxy.sh
	@scripts/ensure-registry.sh
	@scripts/ensure-redis.sh
	@scripts/ensure-chromium.sh
	@GO=$(GO) scripts/ensure-cosign.sh
	@GO=$(GO) scripts/ensure-jaeger.sh
	$(GO) test -race -count=1 -timeout 45m ./...
	@for m in $(SUB_MODULES); do echo "$(GO) -C $$m test -race -count=1 ./..."; $(GO) -C $$m test -race -count=1 ./... || exit 1; done
	$(MAKE) reference
	$(MAKE) conformance

# Differential tests of the plugins that replace the MCP reference servers
# (reftest/): the same calls to mcphost and to the reference servers from
# npm (installed with Node 22 into a cache on first use). The tests run the
# built bin/mcphost as a desktop client does, so they are not built with
# -race (the host's own tests are). REFTEST_RUN narrows them (go test -run).
REFTEST_RUN ?= .
reference: build plugins
	@where=$$(scripts/reference-servers.sh --install) || exit 1; \
	eval "$$(echo "$$where" | sed -n 's/^dir: */refdir=/p; s/^node: */node=/p')"; \
	echo "MCPHOST_BIN=$(CURDIR)/$(BIN) MCPHOST_NODE=$$node MCPHOST_REFERENCE_DIR=$$refdir $(GO) test -count=1 -run '$(REFTEST_RUN)' ./reftest/"; \
	MCPHOST_BIN=$(CURDIR)/$(BIN) MCPHOST_NODE=$$node MCPHOST_REFERENCE_DIR=$$refdir $(GO) test -count=1 -run '$(REFTEST_RUN)' ./reftest/

# The official MCP conformance suite against plugins/everything, stateful and
# stateless (installs Node 22 and the suite from npm into a cache on first use).
conformance: build plugins
	scripts/run-conformance.sh

# Performance figures of BENCHMARKS.md (issue #9): Go benchmarks, then the
# load generator against mcphost and a native go-sdk server in the same run.
# Not part of `make test`; see scripts/bench.sh for its knobs (BENCH_*).
.PHONY: bench
bench:
	scripts/bench.sh

clean:
	rm -rf bin $(foreach d,$(GO_PLUGINS),$(d)/$(notdir $(d)).wasm)

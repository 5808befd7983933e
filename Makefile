# mcphost — see README.md. `make run` serves the example plugins, `make test` runs every test.
GO       ?= go
BIN      := bin/mcphost
CONFIG   ?= mcphost.toml
# Every Go plugin: a directory under plugins/ or testdata/plugins/ with a main.go.
GO_PLUGINS := $(patsubst %/main.go,%,$(wildcard plugins/*/main.go testdata/plugins/*/main.go))

.PHONY: all build plugins run test vet conformance clean

all: build plugins

build:
	$(GO) build -o $(BIN) ./cmd/mcphost

# Builds each Go plugin to <dir>/<name>.wasm (Go's build cache keeps this quick).
plugins:
	@for d in $(GO_PLUGINS); do \
		out=$$d/$$(basename $$d).wasm; \
		echo "plugin  $$out"; \
		GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $(GO) build -buildmode=c-shared -o $$out ./$$d || exit 1; \
	done

LISTEN ?= 127.0.0.1:8808

run: build plugins
	./$(BIN) serve --config $(CONFIG) --http $(LISTEN)

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./sdk/... $(addprefix ./,$(GO_PLUGINS))

test: plugins vet
	$(GO) test -race -count=1 ./...
	$(MAKE) conformance

# The official MCP conformance suite against plugins/everything, stateful and
# stateless (installs Node 22 and the suite from npm into a cache on first use).
conformance: build plugins
	scripts/run-conformance.sh

clean:
	rm -rf bin $(foreach d,$(GO_PLUGINS),$(d)/$(notdir $(d)).wasm)

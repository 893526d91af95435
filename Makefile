# The two commands a new user runs:
#   make demo   the guided tour: local cluster, Git server, sync, self-heal, a commit rolled out
#   make test   build what the tests need and run every check CI runs
SHELL := /bin/bash
GO ?= go
GOTEST_FLAGS ?= -race -count=1 -timeout 45m
# package:FuzzTarget:inputs triples run briefly by `make fuzz` (seed corpora
# also run in `go test`). Each runs a count of inputs, about 5 s here, not a
# duration: Go 1.26's coordinator can report its own -fuzztime deadline as a
# failure ("context deadline exceeded", no crasher; go.dev/issue/75804, fixed
# only in Go 1.27), and a count sets no deadline. FUZZTIME=1m (any -fuzztime
# value) overrides the counts for a longer local run. Minimizing an
# interesting input is capped at FUZZMINIMIZE: its default of 60 s per input
# once made one target run for 400 s.
FUZZTIME ?=
FUZZMINIMIZE ?= 3s
FUZZ_TARGETS := ./resource:FuzzDecode:20000x ./resource:FuzzTrackingID:20000x \
	./render:FuzzRootResolve:20000x \
	./health:FuzzLuaHealth:10000x ./health:FuzzCheck:5000x ./health/internal/luavm:FuzzPattern:8000x \
	./diff:FuzzIgnoreRules:150x ./diff:FuzzSecretMasking:1500x \
	./source/webhook:FuzzWebhook:50000x

.PHONY: demo test tools redis chromium fmt generate generate-check vet unit fuzz bench-check sops-check bench bench-fleet vulncheck apicheck

demo:
	$(GO) run ./examples/gitopsctl demo

TEST_STAGES := tools redis chromium fmt generate-check vet apicheck unit bench-check sops-check fuzz vulncheck

# Every stage in order, each with the seconds it took (where CI's time goes).
test:
	@total=$$(date +%s); for s in $(TEST_STAGES); do t=$$(date +%s); \
		$(MAKE) --no-print-directory $$s || { echo "make test: stage $$s failed after $$(( $$(date +%s) - t )) s" >&2; exit 1; }; \
		echo "make test: stage $$s took $$(( $$(date +%s) - t )) s"; done; \
	echo "make test: all stages took $$(( $$(date +%s) - total )) s"

# Build every program the tests run once, before parallel test packages need
# them (internal/testtools): the local cluster's programs and kubectl, the
# reference helm and kustomize, gitops-sops and gitopsctl. Tests then only
# find them, so no test's time includes a build and none sets a deadline on
# one. -race, as vet and the tests compile every package: the packages
# compiled here are the ones they use (no second compile when cold).
tools:
	$(GO) run -race ./internal/testtools/cmd/testtools

# Install redis-server when missing and possible (root with apt-get).
redis:
	@if command -v redis-server >/dev/null; then echo "redis-server: $$(command -v redis-server)"; \
	elif command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
		export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq redis-server >/dev/null && echo "redis-server installed"; \
	else echo "redis-server missing and cannot be installed here; install it to run the Redis tests" >&2; exit 1; fi

# Install Debian's chromium when missing and possible (root with apt-get):
# examples/portal's TestBrowser drives it and fails without it.
chromium:
	@if command -v chromium >/dev/null; then echo "chromium: $$(command -v chromium)"; \
	elif command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
		export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq chromium >/dev/null && echo "chromium installed"; \
	else echo "chromium missing and cannot be installed here; install it to run examples/portal's TestBrowser" >&2; exit 1; fi

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v /testdata/)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# DeepCopy methods of the model (apis/...) are written by controller-gen,
# and the root's alias.go by internal/aliasgen (`go generate .`);
# generate-check fails when the DeepCopy methods are stale, without touching
# the tree (internal/layers' TestAliasFileIsCurrent checks alias.go).
CONTROLLER_GEN ?= $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
API_DIRS := $(shell grep -l '+kubebuilder:object:generate=true' apis/*/doc.go | xargs -n1 dirname)

generate:
	@for d in $(API_DIRS); do $(CONTROLLER_GEN) object paths=./$$d/... || exit 1; done
	$(GO) generate .

generate-check:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for d in $(API_DIRS); do \
		$(CONTROLLER_GEN) object paths=./$$d/... output:object:dir="$$tmp/$$d" || exit 1; \
		diff -u "$$d/zz_generated.deepcopy.go" "$$tmp/$$d/zz_generated.deepcopy.go" >/dev/null || \
			{ echo "$$d/zz_generated.deepcopy.go is stale: run make generate" >&2; exit 1; }; \
	done; echo "generated code up to date: $(API_DIRS)"

# vet with -race: it compiles every package as the race-enabled tests do,
# so on a cold build cache the unit stage reuses vet's objects instead of
# compiling everything a second time.
vet:
	$(GO) vet -race ./...

# The exported API against the release api/RELEASE records (apidiff,
# internal/apicheck): an incompatible change fails unless CHANGELOG.md's
# Unreleased section lists it. After vet: apidiff's export runs go list
# -export -race, which finds most packages compiled by vet -race; the
# release's API is exported once per machine and cached in the user cache.
apicheck:
	$(GO) run ./internal/apicheck/cmd/apicheck

unit:
	$(GO) test $(GOTEST_FLAGS) ./...

# bench/ is its own module (Flux's ssa stays out of the library's go.mod):
# vet it and run its harness once at tiny sizes; `make bench` runs it whole.
bench-check:
	cd bench && $(GO) vet -race ./... && $(GO) test -race -count=1 -timeout 30m ./...

# sops/ is its own module (SOPS brings the cloud KMS SDKs): vet and test it,
# unit tests and the end-to-end test on the local cluster.
sops-check:
	cd sops && $(GO) vet -race ./... && $(GO) test $(GOTEST_FLAGS) ./...

bench:
	cd bench && $(GO) run ./cmd/compare -repeat 5

# The fleet section at full size on the full local cluster (bench-check runs
# it with 20 apps): FLEET_APPS Applications of 5 objects from one monorepo.
FLEET_APPS ?= 1000
bench-fleet:
	cd bench && $(GO) run ./cmd/compare -only fleet -cluster full -fleet-apps $(FLEET_APPS)

# govulncheck over every module against a local database built from the
# golang.org/x/vulndb module (cached under the user cache, never committed);
# findings and accepted standard-library ones: scripts/vulncheck.sh, SECURITY.md S19.
vulncheck:
	GO=$(GO) bash scripts/vulncheck.sh

fuzz:
	@for t in $(FUZZ_TARGETS); do IFS=: read -r pkg fn n <<<"$$t"; n=$${FUZZTIME:-$$n}; \
		echo "fuzz $$pkg $$fn for $$n"; \
		$(GO) test -run='^$$' -fuzz="^$$fn\$$" -fuzztime=$$n -fuzzminimizetime=$(FUZZMINIMIZE) $$pkg || exit 1; done

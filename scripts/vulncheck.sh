#!/usr/bin/env bash
# vulncheck: govulncheck over every Go module of the repository, against a
# local vulnerability database built from the golang.org/x/vulndb module's
# data/osv (fetched through the Go module proxy, like any module). Nothing it
# builds lives in the repository: the database, the tools and the results are
# kept under ${XDG_CACHE_HOME:-$HOME/.cache}/gitops-vulndb/, keyed by version,
# so each is built once per machine.
#
# A finding that reaches our call graph fails the run, unless it is a
# standard-library finding listed with its reason in
# scripts/vulncheck-accepted.txt. A finding in a module is never accepted:
# upgrade the module.
#
# A module whose sources (every .go, go.mod and go.sum of the repository,
# since bench/ replaces the library by ../) already passed against the same
# database, tools and Go version is not scanned again.
set -euo pipefail

VULN_VERSION=v1.9.0
VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018
# The database's date: the commit time in VULNDB_VERSION.
VULNDB_DATE=2026-11-05T23:49:57Z

GO=${GO:-go}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/gitops-vulndb
dbdir=$cache/$VULNDB_VERSION/db
bindir=$cache/bin-$VULN_VERSION-$VULNDB_VERSION
accepted=$root/scripts/vulncheck-accepted.txt
mkdir -p "$cache"

# One build at a time per machine (parallel CI jobs share the cache).
exec 9>"$cache/.lock"
flock 9

if [ ! -x "$bindir/govulncheck" ] || [ ! -x "$bindir/indexdb" ]; then
	echo "vulncheck: building govulncheck $VULN_VERSION and indexdb $VULNDB_VERSION into $bindir"
	tmp=$(mktemp -d "$cache/bin.XXXXXX")
	(cd "$tmp" && GOWORK=off GOFLAGS= GOBIN="$tmp" "$GO" install "golang.org/x/vuln/cmd/govulncheck@$VULN_VERSION" &&
		GOWORK=off GOFLAGS= GOBIN="$tmp" "$GO" install "golang.org/x/vulndb/cmd/indexdb@$VULNDB_VERSION")
	rm -rf "$bindir" && mv "$tmp" "$bindir"
fi

if [ ! -f "$dbdir/index/db.json" ]; then
	echo "vulncheck: building the database of $VULNDB_DATE into $dbdir"
	src=$(cd "$cache" && GOWORK=off GOFLAGS= "$GO" mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -d "$src/data/osv" ] || { echo "vulncheck: no data/osv in golang.org/x/vulndb@$VULNDB_VERSION ($src)" >&2; exit 1; }
	tmp=$(mktemp -d "$cache/db.XXXXXX")
	"$bindir/indexdb" -vulns "$src/data/osv" -out "$tmp/db"
	# indexdb leaves the database undated; govulncheck prints this date.
	printf '{"modified":"%s"}\n' "$VULNDB_DATE" >"$tmp/db/index/db.json"
	# govulncheck reads a file:// database's .json files only.
	find "$tmp/db" -name '*.json.gz' -delete
	mkdir -p "$(dirname "$dbdir")" && rm -rf "$dbdir" && mv "$tmp/db" "$dbdir" && rmdir "$tmp"
fi

# Inputs of every scan: the repository's Go sources, the accepted list, the
# tools, the database and the Go toolchain.
inputs=$({ "$GO" version; echo "$VULN_VERSION $VULNDB_VERSION"; cat "$accepted";
	git ls-files -z --cached --others --exclude-standard -- '*.go' '*go.mod' '*go.sum' | xargs -0 sha256sum; } | sha256sum | cut -c1-32)
mkdir -p "$cache/passed"

status=0
for mod in $(git ls-files --cached --others --exclude-standard -- 'go.mod' '*/go.mod' | grep -v '/testdata/' | xargs -n1 dirname | sort); do
	stamp=$cache/passed/$(echo "$mod" | tr '/.' '__')-$inputs
	if [ -f "$stamp" ]; then
		echo "vulncheck: $mod: passed before with these sources (${stamp##*/})"
		continue
	fi
	echo "vulncheck: $mod: govulncheck -db file://$dbdir ./..."
	out=$(mktemp)
	rc=0
	(cd "$mod" && GOWORK=off "$bindir/govulncheck" -db "file://$dbdir" ./...) >"$out" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
		cat "$out" >&2
		echo "vulncheck: $mod: govulncheck failed (exit $rc)" >&2
		rm -f "$out"
		exit 1
	fi
	# Each "Vulnerability #N: ID" block names where it was found: a module
	# ("Module: path") or the standard library.
	verdict=$(awk -v accepted="$accepted" '
		BEGIN { while ((getline line < accepted) > 0) { if (line ~ /^GO-/) { split(line, f, " "); ok[f[1]] = 1 } } }
		/^=== / { inSym = ($0 ~ /Symbol Results/) }
		inSym && /^Vulnerability #[0-9]+: / { id = $3; seen[id] = 1 }
		inSym && /^  Module: / { mod[id] = mod[id] " " $2 }
		END {
			for (id in seen) {
				if (mod[id] != "") print "FAIL " id " in module" mod[id]
				else if (!(id in ok)) print "FAIL " id " in the standard library, not in scripts/vulncheck-accepted.txt"
				else print "accepted " id " (standard library)"
			}
		}' "$out" | sort)
	if grep -q '^FAIL' <<<"$verdict"; then
		cat "$out"
		echo "$verdict"
		echo "vulncheck: $mod: findings reach the call graph (above)" >&2
		status=1
	else
		[ -n "$verdict" ] && echo "$verdict" | sed 's/^/  /'
		echo "vulncheck: $mod: no finding outside the accepted list"
		touch "$stamp"
	fi
	rm -f "$out"
done
exit $status

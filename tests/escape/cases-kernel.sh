# tests/escape/cases-kernel.sh — attacks the kernel layers answer (issue 8, items 7, 8, 14):
# set-id files left for the host, the host user's inotify instances used up from
# inside, and a hard link written through to a file outside the work directory.
# Sourced by escape.sh; see doc/seccomp.md, doc/limits.md, doc/filesystem.md.

# The host sees a set-id file the payload made in the work directory.
setid_check() {
	local f
	find "$CASE_WORK" -type f -perm /6000 2>/dev/null | while read -r f; do
		echo "ESCAPED: the host sees a set-id file: $(stat -c '%A' "$f") ${f#"$CASE_WORK"/}"
	done
}

# Holds the host-side probe of the inotify case: waits for the payload to say it
# holds its instances, then tries one inotify_init1 on the host as the same user.
inotify_probe_start() {
	(
		for _ in $(seq 300); do
			[ -e "$CASE_WORK/held" ] && break
			sleep 0.05
		done
		if [ -e "$CASE_WORK/held" ]; then
			# Three tries 0.1 s apart, each closed again: one refusal is enough. (Other
			# suites run as the same user and take and free instances meanwhile; the
			# payload soaks up whatever they free, so a lucky moment cannot hide it.)
			python3 -c 'import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
res = "ok"
for _ in range(3):
    fd = libc.inotify_init1(0)
    if fd < 0:
        res = os.strerror(ctypes.get_errno())
        break
    os.close(fd)
    time.sleep(0.1)
print("host-inotify", res)' >"$CASE/inotify-host" 2>&1
		else
			echo "host-inotify never-held" >"$CASE/inotify-host"
		fi
		: >"$CASE_WORK/checked"
	) &
	INOTIFY_PROBE=$!
}

inotify_probe_check() {
	wait "$INOTIFY_PROBE" 2>/dev/null
	case $(cat "$CASE/inotify-host" 2>/dev/null) in
	"host-inotify ok") ;;
	"host-inotify never-held") echo "BROKEN: the payload never said it held its instances" ;;
	*) echo "ESCAPED: the host user's inotify_init1 failed while the payload held" \
		"$(cat "$CASE_WORK/held" 2>/dev/null) instances: $(cat "$CASE/inotify-host")" ;;
	esac
}

# A file outside the work directory, hard-linked into it as pnpm's store does.
hardlink_plant() {
	mkdir -p "$CASE/store" "$CASE_WORK/node_modules/x" "$CASE_WORK/inside" &&
		echo 'module.exports = 1' >"$CASE/store/index.js" &&
		chmod 0444 "$CASE/store/index.js" &&
		ln "$CASE/store/index.js" "$CASE_WORK/node_modules/x/index.js" &&
		echo inside >"$CASE_WORK/inside/a" &&
		ln "$CASE_WORK/inside/a" "$CASE_WORK/inside/b" ||
		echo "BROKEN: cannot plant the hard link" >>"$CASE/host"
}

# pnpm's layout past the per-file cap: 2,100 store files linked into 21 package directories.
hardlink_plant_many() {
	hardlink_plant
	local p i
	for p in $(seq 0 20); do
		mkdir -p "$CASE/store/p$p" "$CASE_WORK/node_modules/.pnpm/p$p/node_modules/p$p"
		for i in $(seq 0 99); do
			: >"$CASE/store/p$p/f$i.js"
		done
		( cd "$CASE/store/p$p" && ln ./*.js "$CASE_WORK/node_modules/.pnpm/p$p/node_modules/p$p/" )
	done
	echo 'module.exports = 1' >"$CASE/store/p7/f7.js"
}

hardlink_check_many() {
	hardlink_check
	grep -q "$BAIT" "$CASE/store/p7/f7.js" 2>/dev/null &&
		echo "ESCAPED: the payload wrote through one of 2,100 hard links into the store"
	return 0
}

# The same link, in a directory given with --rw (its path is fixed before the case exists).
hardlink_plant_rw() {
	hardlink_plant
	mkdir -p "$CASE_RW/deep/er" &&
		ln "$CASE/store/index.js" "$CASE_RW/deep/er/index.js" ||
		echo "BROKEN: cannot plant the hard link under --rw" >>"$CASE/host"
}

hardlink_check() {
	grep -q "$BAIT" "$CASE/store/index.js" 2>/dev/null &&
		echo "ESCAPED: the payload wrote through a hard link to a file outside the work directory"
	return 0
}

# A repository cloned locally into the work directory: git hard-links its objects.
git_clone_plant() {
	{
		git init -q "$CASE/origin" &&
			echo one >"$CASE/origin/f" &&
			git -C "$CASE/origin" add f &&
			git -C "$CASE/origin" -c user.name=t -c user.email=t@t commit -qm one &&
			git clone -q "$CASE/origin" "$CASE_WORK/repo" &&
			[ -n "$(find "$CASE_WORK/repo/.git/objects" -type f -links +1)" ]
	} >/dev/null 2>&1 || echo "BROKEN: no hard-linked local clone" >>"$CASE/host"
}

sg_plant() {
	mkdir -m 2775 "$CASE_WORK/sg" && chmod g+s "$CASE_WORK/sg" ||
		echo "BROKEN: cannot make a set-group-id directory" >>"$CASE/host"
}

kernel_cases() {
	# The --rw directory of hardlink-write-through-rw: beside the cases, same filesystem.
	CASE_RW=$SUITE/kernel-rw-$PHASE
	rm -rf "$CASE_RW"
	mkdir -p "$CASE_RW"

	# -- item 8: set-id bits. The host's nosuid does not apply to the user's own
	# files: a set-user-id file left in the work directory runs as the user for
	# whoever executes it, a set-group-id file with the user's group.
	HOSTCHECK=setid_check attack setid-files fires \
		"no set-id file reaches the host (chmod 6755/4755/2755, open O_CREAT 04755, mknod, install -m)" -- '
cd "$W"
for m in 6755 4755 2755 u+s g+s; do
	f=chmod-$(echo $m | tr + p); : > "$f"; chmod "$m" "$f" 2>/dev/null
done
: > fchmod; python3 -c "import os; fd = os.open(\"fchmod\", os.O_WRONLY); os.fchmod(fd, 0o6755)" 2>/dev/null
python3 -c "import os; os.close(os.open(\"open-creat\", os.O_CREAT | os.O_WRONLY, 0o4755))" 2>/dev/null
python3 -c "import os; os.close(os.open(\".\", os.O_TMPFILE | os.O_WRONLY, 0o2755))" 2>/dev/null
python3 -c "import os, stat; os.mknod(\"mknod\", stat.S_IFREG | 0o6755)" 2>/dev/null
install -m 4755 /dev/null installed 2>/dev/null
find . -type f -perm /6000 | sed "s/^/ESCAPED: set-id file made: /"
command -v python3 >/dev/null || echo "untested: python3 is missing"
'

	# A set-group-id directory inherited from the host stays usable, and files
	# made in it get its group without a set-id bit (only directories inherit it).
	SETUP=sg_plant works setgid-dir-inherited "files made in an inherited set-group-id directory carry no set-id bit" -- '
cd "$W/sg" && : > f && mkdir d && : > d/g &&
	[ -z "$(find f d/g -perm /6000)" ] && echo WORKS'

	# -- item 14: ucounts are hierarchical, so instances taken in the sandbox
	# count against the host user's fs.inotify.max_user_instances (128).
	SETUP=inotify_probe_start HOSTCHECK=inotify_probe_check attack inotify-exhaust fires \
		"200 inotify instances inside leave the host user some (per-namespace ucounts)" -- '
command -v python3 >/dev/null || echo "untested: python3 is missing"
python3 - "$W" <<"PY"
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fds = []
for _ in range(200):
    fd = libc.inotify_init1(0)
    if fd < 0:
        break
    fds.append(fd)
w = sys.argv[1]
with open(os.path.join(w, "held"), "w") as f:
    f.write(str(len(fds)))
# Until the host has checked, take every instance anyone else frees.
for _ in range(1000):
    if os.path.exists(os.path.join(w, "checked")):
        break
    fd = libc.inotify_init1(0)
    if fd >= 0:
        fds.append(fd)
    time.sleep(0.01)
print("held", len(fds), "inotify instances")
PY'

	# -- item 7: pnpm's store, a local git clone: a file of the work directory
	# whose other name is outside it. Writing it inside changes it outside.
	SETUP=hardlink_plant HOSTCHECK=hardlink_check attack hardlink-write-through fires \
		"a file hard-linked into the work directory from outside cannot be written through" -- '
cd "$W"
f=node_modules/x/index.js
chmod u+w "$f" 2>/dev/null
echo "$M" >> "$f" 2>/dev/null
python3 -c "import sys; open(sys.argv[1], \"a\").write(sys.argv[2])" "$f" "$M" 2>/dev/null
'
	# The same through a --rw directory outside the work directory.
	SETUP=hardlink_plant_rw HOSTCHECK=hardlink_check attack hardlink-write-through-rw fires \
		"a file hard-linked into a --rw directory from outside it cannot be written through" \
		--rw "$CASE_RW" -- "
f='$CASE_RW/deep/er/index.js'
chmod u+w \"\$f\" 2>/dev/null
echo \"\$M\" >> \"\$f\" 2>/dev/null
"
	SETUP=hardlink_plant_many HOSTCHECK=hardlink_check_many attack hardlink-write-through-many fires \
		"2,100 files hard-linked from a store (pnpm's layout) cannot be written through" -- '
cd "$W"
f=node_modules/.pnpm/p7/node_modules/p7/f7.js
chmod u+w "$f" 2>/dev/null
echo "$M" >> "$f" 2>/dev/null
rm -f "$f" 2>/dev/null; echo "$M" > "$f" 2>/dev/null
'
	SETUP=git_clone_plant works git-local-clone-commit "git commit works in a local clone whose objects are hard links" -- '
cd "$W/repo" && echo two >> f && git -c user.name=t -c user.email=t@t commit -qam two &&
	git log --oneline | wc -l | grep -q 2 && echo WORKS'
	SETUP=hardlink_plant works hardlink-inside "a file whose every name is inside the work directory stays writable" -- '
cd "$W/inside" && echo more >> b && grep -q more a && rm a && echo WORKS'
}

CASE_GROUPS+=(kernel_cases)

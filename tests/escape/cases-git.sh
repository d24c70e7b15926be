# tests/escape/cases-git.sh — git attacks that land on the host DURING the run, and
# the after-run quarantine's bypasses (issue 8, items 4 and 5). Sourced by escape.sh.
#
# Each case here is hand-written (both phases): a poller on the host runs `git
# status` in the work directory every few milliseconds while the payload runs, as an
# IDE or a shell prompt does, and after the run the host's git runs once more
# (git_host_check). A command the payload planted leaves $W/.fsmon-*: ESCAPED.
# Sandboxed, the case also asserts how boxy reacted: "killed" (the watcher stopped the
# run: exit 137), "finished" (exit 0) or "blocked", and an "ALERT" line naming the path
# at the end of the run. Unsandboxed (control), the same payload must print ESCAPED.
# Where the watcher is the defence ("killed"), the planted file exists for a few ms
# before it acts: a host git that read it in that window is reported as RACE, not failed
# (the window is measured in doc/filesystem.md); the host's git after the run must be clean.

# A repository copied from the workdir's, with a config that runs a command: what a
# planted commondir or gitdir line points at. $1: directory (relative to $W), $2: tag.
git_evil_repo_sh() {
	cat <<EOF
mkdir -p $1 && cp -R .git/objects .git/refs .git/HEAD $1/ 2>/dev/null
printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch %s/.fsmon-$2; false"\n' "\$W" >$1/config
EOF
}

# The host's `git status` in each of "$@" (relative to the workdir), every 10 ms,
# until $CASE/poll.stop exists: what a shell prompt or an IDE does during the run.
git_poll_start() {
	: >"$CASE/poll.count"
	rm -f "$CASE/poll.stop"
	(
		n=0
		while [ ! -e "$CASE/poll.stop" ]; do
			for d in "$@"; do
				[ -d "$CASE_WORK/$d" ] && (cd "$CASE_WORK/$d" && git status >/dev/null 2>&1)
			done
			n=$((n + 1))
			sleep 0.01
		done
		echo "$n" >"$CASE/poll.count"
	) &
	GIT_POLLER=$!
}
git_poll_stop() {
	: >"$CASE/poll.stop"
	wait "$GIT_POLLER" 2>/dev/null
	for f in "$CASE_WORK"/.fsmon-*; do
		[ ! -e "$f" ] || echo "ESCAPED: the host's git ran the payload's command during the run (${f##*/})"
	done
	rm -f "$CASE_WORK"/.fsmon-*
}

# git_case NAME EXPECT SETUP "POLL-DIRS" DESC PAYLOAD
#   EXPECT: killed (the run is stopped by the gitdir watch), finished (it ends by itself
#   and an ALERT names what was neutralised after it) or blocked (the attack cannot even
#   be made: it ends by itself, nothing to report).
git_case() {
	local name=$1 expect=$2 setup=$3 dirs=$4 desc=$5 payload=$6 body
	only "$name" || return 0
	case_new "$name"
	$setup
	body="$(prelude)
$payload
echo BOXY-CASE-DONE"
	# shellcheck disable=SC2086
	git_poll_start $dirs
	if [ "$PHASE" = sandbox ]; then
		boxy_run -- /bin/sh -c "$body"
	else
		direct_run /bin/sh -c "$body"
	fi
	git_poll_stop >"$CASE/host"
	if [ "$PHASE" = sandbox ] && [ "$expect" = killed ]; then
		# What the watcher stops is there for a few ms first (doc/filesystem.md measures
		# the window): a host git that read it then is that window, said, not failed.
		sed -i 's/^ESCAPED: /RACE: /' "$CASE/host"
	fi
	git_host_check >>"$CASE/host"
	chmod -R u+rwx "$CASE_WORK" 2>/dev/null   # what the payload chmod'ed, for the clean-up
	if [ "$PHASE" = control ]; then
		CONTROL_RAN=$((CONTROL_RAN + 1))
		if grep -q ESCAPED "$CASE/out" "$CASE/host"; then
			CONTROL_FIRED=$((CONTROL_FIRED + 1))
			ok "control: $name detector fires unsandboxed"
		else
			not_ok "control: $name detector fires unsandboxed"
			diag_file "$CASE/out" 10
			diag_file "$CASE/host" 5
		fi
		return
	fi
	if grep -q ESCAPED "$CASE/out" "$CASE/host"; then
		not_ok "$desc"
		grep -h ESCAPED "$CASE/out" "$CASE/host" | diag "$(cat)"
	elif grep -q '^BROKEN' "$CASE/host"; then
		not_ok "$desc: the case's set-up failed"
		grep -h '^BROKEN' "$CASE/host" | diag "$(cat)"
	elif ! grep -q '^BOXY-CASE-STARTED' "$CASE/out"; then
		not_ok "$desc: the sandbox did not run the attack (boxy exit $RUN_RC)"
		diag_file "$CASE/err" 5
	elif grep -q '^untested:' "$CASE/out"; then
		not_ok "$desc: the attack could not be attempted"
		grep -h '^untested:' "$CASE/out" | diag "$(cat)"
	elif [ "$expect" = killed ] && { [ "$RUN_RC" -ne 137 ] || grep -q '^BOXY-CASE-DONE' "$CASE/out"; }; then
		not_ok "$desc: the run was not stopped (exit $RUN_RC, want 137)"
		diag_file "$CASE/err" 5
	elif [ "$expect" = finished ] && { [ "$RUN_RC" -ne 0 ] || ! grep -q '^BOXY-CASE-DONE' "$CASE/out"; }; then
		not_ok "$desc: the payload did not finish (exit $RUN_RC)"
		diag_file "$CASE/out" 5
		diag_file "$CASE/err" 5
	elif [ "$expect" = blocked ] && { [ "$RUN_RC" -ne 0 ] || ! grep -q '^BOXY-CASE-DONE' "$CASE/out"; }; then
		not_ok "$desc: the payload did not finish (exit $RUN_RC)"
		diag_file "$CASE/out" 5
		diag_file "$CASE/err" 5
	elif [ "$expect" != blocked ] && ! grep -q '^boxy: ALERT: git: ' "$CASE/err"; then
		not_ok "$desc: no ALERT line at the end of the run"
		diag_file "$CASE/err" 5
	else
		ok "$desc ($(cat "$CASE/poll.count") host git status runs during it)"
		! grep -q '^RACE: ' "$CASE/host" ||
			diag "the host's git won the race during the run (the documented window): $(grep -h '^RACE: ' "$CASE/host")"
		[ -z "${BOXY_TEST_VERBOSE:-}" ] || grep -h '^boxy: ALERT' "$CASE/err" | diag "$(cat)"
	fi
}

# The workdir is a subdirectory of a larger repository (the planted home is one).
git_outer_setup() {
	local g=(git -c user.name=boxy-test -c user.email=boxy-test@example.invalid -c init.defaultBranch=main)
	(cd "$CASE_HOME" && "${g[@]}" init -q && : >"$CASE_WORK/keep" && "${g[@]}" add project/keep &&
		"${g[@]}" commit -qm outer) >"$CASE/git-setup.log" 2>&1 ||
		echo "BROKEN: git setup failed: $(tail -2 "$CASE/git-setup.log")" >"$CASE/setup.err"
}
git_none_setup() { :; }

# A repository planted N levels deep with its own fsmonitor, entered through a gitlink.
git_plant_sh() {
	cat <<EOF
mkdir -p $1 && (cd $1 && git init -q && echo y >f && git add f &&
	git -c user.name=a -c user.email=a@b commit -qm x) >/dev/null 2>&1 &&
	git update-index --add --cacheinfo "160000,\$(git -C $1 rev-parse HEAD),$1" 2>/dev/null &&
	git -C $1 config core.fsmonitor "touch \$W/.fsmon-$2; false"
EOF
}

git_cases() {
	# -- item 4: what git reads to find config and hooks, planted during the run
	git_case git-live-commondir blocked git_setup "." \
		"a .git/commondir cannot be renamed into place during the run (a read-only \".\" is there)" "
$(git_evil_repo_sh evilgit commondir)
printf '../evilgit\n' >.git/cd.tmp && mv .git/cd.tmp .git/commondir
sleep 3"
	git_case git-live-commondir-write blocked git_setup ". sub" \
		"a .git/commondir or a submodule's cannot be written during the run" "
$(git_evil_repo_sh evilgit commondirw)
printf '../evilgit\n' >.git/commondir
printf '../../../evilgit\n' >.git/modules/sub/commondir
sleep 3"
	git_case git-live-worktree killed git_setup ". wt" \
		"a linked worktree's commondir re-pointed during the run stops it (git worktree add alone does not)" "
for i in 1 2 3 4 5; do git worktree add -q wt 2>wt.err && break; sleep 0.3; done
[ -d wt ] || echo \"untested: git worktree add failed: \$(head -c 200 wt.err)\"
[ -f .git/worktrees/wt/commondir ] || echo 'untested: no worktrees/wt/commondir'
sleep 1
$(git_evil_repo_sh evilgit worktree)
printf '%s/evilgit\n' \"\$W\" >.git/worktrees/wt/cd.tmp && mv .git/worktrees/wt/cd.tmp .git/worktrees/wt/commondir
sleep 3"
	git_case git-live-rootfile killed git_none_setup "." \
		"a .git file (gitlink) planted at the root of a workdir without a repository stops the run" "
git init -q evil && git -C evil config core.fsmonitor \"touch \$W/.fsmon-rootfile; false\"
printf 'gitdir: evil/.git\n' >.gitlink.tmp && mv .gitlink.tmp .git
sleep 3"
	git_case git-live-rootdir-outer killed git_outer_setup "." \
		"a .git directory planted at the root of a workdir inside a larger repository stops the run and is quarantined" "
git init -q evil && git -C evil config core.fsmonitor \"touch \$W/.fsmon-outer; false\"
mv evil/.git .git
sleep 3"
	# -- item 5: the after-run quarantine's bypasses
	git_case git-planted-chmod finished git_setup "" \
		"a planted a/x/.git under a directory made unwritable (chmod 555) is still quarantined" "
$(git_plant_sh a/x chmod)
chmod 555 a/x a"
	git_case git-planted-deep finished git_setup "" \
		"a planted .git 12 levels deep (past any depth bound) is still quarantined" "
$(git_plant_sh a/b/c/d/e/f/g/h/i/j/k/x deep)"
	if only git-quarantine-unique && [ "$PHASE" = sandbox ]; then
		# Two runs plant the same a/x/.git: the second quarantine must not fail on the first's name.
		case_new git-quarantine-unique
		git_setup
		boxy_run -- /bin/sh -c "$(git_plant_sh a/x first)"
		local rc1=$RUN_RC
		boxy_run -- /bin/sh -c "$(git_plant_sh a/x second)"
		git_host_check >"$CASE/host"
		local n
		n=$(find "$CASE_WORK/a/x" -maxdepth 1 -name '.git.boxy-quarantine-*' | wc -l)
		if grep -q ESCAPED "$CASE/host"; then
			not_ok "a repository planted twice at the same path is quarantined both times"
			diag_file "$CASE/host" 3
		elif [ "$rc1" -ne 0 ] || [ "$RUN_RC" -ne 0 ] || [ "$n" -ne 2 ]; then
			not_ok "a repository planted twice at the same path is quarantined both times (exits $rc1 $RUN_RC, $n quarantined)"
			diag_file "$CASE/err" 5
		else
			ok "a repository planted twice at the same path is quarantined both times, under two names"
		fi
	fi

	# -- item 5: the finding is said at the end of the run, in red on a terminal only
	if only git-alert-red && [ "$PHASE" = sandbox ]; then
		case_new git-alert-red
		git_setup
		local esc=$'\033[1;31m' tty_ok=no plain_ok=no
		(cd "$CASE_WORK" && HOME=$CASE_HOME script -qec \
			"'$BOXY' run --net none -- sh -c 'mkdir -p r/s && git init -q r/s'" /dev/null) \
			</dev/null >"$CASE/tty" 2>&1
		(cd "$CASE_WORK" && HOME=$CASE_HOME NO_COLOR=1 script -qec \
			"'$BOXY' run --net none -- sh -c 'mkdir -p t/u && git init -q t/u'" /dev/null) \
			</dev/null >"$CASE/nocolor" 2>&1
		grep -aFq "${esc}boxy: ALERT: git: $CASE_WORK/r/s/.git" "$CASE/tty" && tty_ok=yes
		grep -aFq "boxy: ALERT: git: $CASE_WORK/t/u/.git" "$CASE/nocolor" &&
			! grep -aFq "$esc" "$CASE/nocolor" && plain_ok=yes
		if [ $tty_ok = yes ] && [ $plain_ok = yes ]; then
			ok "a planted repository is an ALERT with its path at the end of the run: red on a terminal, plain under NO_COLOR"
		else
			not_ok "a planted repository is an ALERT with its path at the end of the run: red on a terminal ($tty_ok), plain under NO_COLOR ($plain_ok)"
			diag_file "$CASE/tty" 5
			diag_file "$CASE/nocolor" 5
		fi
	fi

	# -- what must keep working beside the watch
	SETUP=git_setup HOSTCHECK=git_host_check works git-worktree-add \
		"git worktree add and a commit in the linked worktree (not stopped by the gitdir watch)" -- '
git worktree add -q wt2 && cd wt2 && echo z >z && git add z &&
	git -c user.name=b -c user.email=b@example.invalid commit -qm wt && echo WORKS'
}
CASE_GROUPS+=(git_cases)

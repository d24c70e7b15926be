# tests/escape/cases-files.sh — files boxy opens or writes for the user, and what
# reaches the user's screen and logs (issue 8 items 3, 6 and 16).
#
# Each case is two runs: the first, as a hostile payload, plants something in the
# work directory; the second is the user's next, innocent command. They only make
# sense with boxy (the attack is on boxy's own handling of paths and names), so
# they run in the sandboxed phase only. ESCAPED means the plant worked: a file of
# the user's was written or truncated through a planted link, a key came in, a
# control character reached the log or the terminal raw.

# files_boxy DIR FLAGS... -- CMD...: boxy run from DIR (not necessarily the case's
# work directory), HOME the planted one; out, err and the status as boxy_run's.
files_boxy() {
	local dir=$1
	shift
	(
		cd "$dir" || exit 99
		HOME=$CASE_HOME exec "$BOXY" run "$@"
	) </dev/null >"$CASE/out" 2>"$CASE/err"
	RUN_RC=$?
}

# files_raw FILE...: the control bytes a terminal or a parser must never get raw
# (ESC, C1 CSI U+009B, the overlong C0 9B, U+202E), counted over FILE...
files_raw() {
	LC_ALL=C grep -caF -e $'\x1b' -e $'\xc2\x9b' -e $'\xc0\x9b' -e $'\xe2\x80\xae' "$@" 2>/dev/null |
		awk -F: '{ n += $NF } END { print n + 0 }'
}

files_cases() {
	[ "$PHASE" = sandbox ] || return 0

	# Item 3: a run plants links where the next run's output files go. The user's
	# next run names them; nothing of the user's may be written or truncated.
	if only files-output-link; then
		case_new files-output-link
		printf '# rc %s\n' "$BAIT" >"$CASE_HOME/.bashrc"
		printf '# profile %s\n' "$BAIT" >"$CASE_HOME/.profile"
		boxy_run -- /bin/sh -c '
ln -s "$HOME/.bashrc" audit.jsonl
ln -s "$HOME/.profile" net.json
ln -s "$HOME/.ssh" logs
echo BOXY-CASE-DONE'
		local before_rc before_pr got="" esc=""
		before_rc=$(sha256sum <"$CASE_HOME/.bashrc")
		before_pr=$(sha256sum <"$CASE_HOME/.profile")
		files_boxy "$CASE_WORK" --net none --audit-log audit.jsonl -- /bin/true
		got="audit=$RUN_RC"
		[ "$(wc -l <"$CASE/err")" -eq 1 ] && grep -q symlink "$CASE/err" || got="$got(words)"
		[ "$(sha256sum <"$CASE_HOME/.bashrc")" = "$before_rc" ] || esc="$esc ~/.bashrc appended"
		cp "$CASE/err" "$CASE/err.audit"
		files_boxy "$CASE_WORK" --net allowlist --net-log net.json -- /bin/true
		got="$got netlog=$RUN_RC"
		[ "$(sha256sum <"$CASE_HOME/.profile")" = "$before_pr" ] || esc="$esc ~/.profile truncated"
		files_boxy "$CASE_WORK" --net none --audit-log logs/authorized_keys -- /bin/true
		got="$got dirlink=$RUN_RC"
		[ ! -e "$CASE_HOME/.ssh/authorized_keys" ] || esc="$esc ~/.ssh/authorized_keys created"
		# An ordinary new file in the work directory still works.
		files_boxy "$CASE_WORK" --net none --audit-log fresh.jsonl -- /bin/true
		got="$got fresh=$RUN_RC"
		[ -f "$CASE_WORK/fresh.jsonl" ] && [ ! -L "$CASE_WORK/fresh.jsonl" ] || got="$got(no file)"
		if [ -n "$esc" ]; then
			not_ok "output files through links a run planted"
			diag "ESCAPED:$esc"
		elif [ "$got" = "audit=125 netlog=125 dirlink=125 fresh=0" ]; then
			ok "--audit-log/--net-log through links a run planted are refused in one line"
		else
			not_ok "output files through planted links: got $got, want audit=125 netlog=125 dirlink=125 fresh=0"
			diag_file "$CASE/err.audit" 5
			diag_file "$CASE/err" 5
		fi
	fi

	# Item 6: a run in ~/project plants dist -> ~/.ssh and config.json -> the key;
	# a later run from ANOTHER directory names them with --ro and --copy.
	if only files-planted-elsewhere; then
		case_new files-planted-elsewhere
		boxy_run -- /bin/sh -c '
ln -s "$HOME/.ssh" dist
ln -s "$HOME/.ssh/id_rsa" config.json
mkdir -p real && echo inside-ok >real/f && ln -s real dist2
echo BOXY-CASE-DONE'
		local other=$CASE_HOME/elsewhere got="" leaked=""
		mkdir -p "$other"
		files_boxy "$other" --net none --ro "$CASE_WORK/dist" -- /bin/sh -c "cat '$CASE_WORK/dist/id_rsa'"
		got="ro=$RUN_RC"
		grep -q "$BAIT" "$CASE/out" && leaked="$leaked --ro"
		[ "$(wc -l <"$CASE/err")" -eq 1 ] && grep -q "leads out of" "$CASE/err" || got="$got(words)"
		cp "$CASE/err" "$CASE/err.ro"
		files_boxy "$other" --net none --copy "$CASE_WORK/config.json:/tmp/c" -- /bin/sh -c 'cat /tmp/c'
		got="$got copy=$RUN_RC"
		grep -q "$BAIT" "$CASE/out" && leaked="$leaked --copy"
		[ "$(wc -l <"$CASE/err")" -eq 1 ] && grep -q "leads out of" "$CASE/err" || got="$got(words)"
		files_boxy "$other" --net none --ro "$CASE_WORK/dist2" -- /bin/sh -c "cat '$CASE_WORK/dist2/f'"
		got="$got inside=$RUN_RC"
		grep -q inside-ok "$CASE/out" || got="$got(no content)"
		if [ -n "$leaked" ]; then
			not_ok "links planted by one run, followed by another's --ro/--copy"
			diag "ESCAPED: the key came in through$leaked"
		elif [ "$got" = "ro=125 copy=125 inside=0" ]; then
			ok "--ro/--copy from another directory through links a run planted are refused; a link inside works"
		else
			not_ok "planted links from another directory: got $got, want ro=125 copy=125 inside=0"
			diag_file "$CASE/err.ro" 5
			diag_file "$CASE/err" 5
		fi
	fi

	# Item 16: names a payload chooses (a planted repository's path, reported after the
	# run) must reach the audit log, -v, boxy show and show --json escaped.
	if only files-hostile-names; then
		case_new files-hostile-names
		boxy_run -v -- /bin/sh -c '
d=$(printf "x\302\233""31m\300\233""2J\342\200\256gpj\033]0;t\007")
mkdir -p "$d/.git" && echo "[core]" >"$d/.git/config"
echo BOXY-CASE-DONE'
		local id n_log n_err n_show bad_json=""
		cp "$CASE/err" "$CASE/err.run"
		n_log=$(files_raw "$CASE/audit.jsonl")
		n_err=$(files_raw "$CASE/err.run")
		python3 -c '
import json, sys
for line in open(sys.argv[1], "rb"):
    json.loads(line.decode("utf-8", "strict"))
' "$CASE/audit.jsonl" 2>"$CASE/json.err" || bad_json=" (audit log: not valid JSON in UTF-8)"
		id=$(HOME=$CASE_HOME "$BOXY" ps -a 2>/dev/null | awk 'NR == 2 { print $1 }')
		HOME=$CASE_HOME "$BOXY" show "$id" >"$CASE/show" 2>&1
		HOME=$CASE_HOME "$BOXY" show --json "$id" >"$CASE/show.json" 2>&1
		n_show=$(files_raw "$CASE/show" "$CASE/show.json")
		if ! grep -q 'gpj' "$CASE/audit.jsonl"; then
			not_ok "hostile names: the planted repository was not reported (nothing tested)"
			diag_file "$CASE/err.run" 5
		elif [ "$n_log$n_err$n_show" != 000 ] || [ -n "$bad_json" ]; then
			not_ok "hostile names reach the audit log, -v and boxy show escaped"
			diag "ESCAPED: raw control bytes: audit log $n_log, -v $n_err, show $n_show$bad_json"
		else
			ok "hostile names reach the audit log, -v and boxy show escaped"
		fi
	fi
}
CASE_GROUPS+=(files_cases)

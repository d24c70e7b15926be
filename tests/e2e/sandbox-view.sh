#!/bin/bash
# sandbox-view.sh — what a sandbox sees of /proc, /dev and /etc, read from
# inside it (its own mountinfo, stat, reads and writes), through the daemon and
# under --no-daemon. The mount stage builds these with as few operations as it
# can (doc/internals-sandbox.md, "What the stages cost"); this suite holds the
# result to doc/filesystem.md whatever the way: every masked /proc directory an
# empty read-only mount of a tmpfs that is itself read-only, every masked /proc
# file a read-only /dev/null, each /dev node its own nosuid,noexec bind of the
# host's node, /etc only the synthesized files and the allowlist, each entry
# read-only. A probe line "BAD: ..." is a difference; none may appear.

. "$(dirname "$0")/../lib/harness.sh"
harness_as_test_user "$0" "$@"
. "$(dirname "$0")/daemon-lib.sh"

plan 10

# The probe, run inside: prints BAD lines, and "SEEN kind name" for what it checked.
PROBE='
mi=/proc/self/mountinfo
# mnt P: "mountopts fstype root superopts" of the topmost mount at P, or nothing.
mnt() { awk -v p="$1" "\$5 == p { for (i = 7; \$i != \"-\"; i++); r = \$6 \" \" \$(i+1) \" \" \$4 \" \" \$(i+3) } END { if (r) print r }" $mi; }
for d in acpi asound bus driver fs irq scsi tty dynamic_debug sysvipc; do
	[ -e /proc/$d ] || continue
	set -- $(mnt /proc/$d)
	[ $# -eq 4 ] || { echo "BAD: /proc/$d is not masked"; continue; }
	case $1 in ro|ro,*) ;; *) echo "BAD: /proc/$d mounted $1";; esac
	[ "$2" = tmpfs ] || echo "BAD: /proc/$d masked by $2, not tmpfs"
	case $4 in ro|ro,*) ;; *) echo "BAD: /proc/$d: its tmpfs is writable ($4)";; esac
	[ -z "$(ls -A /proc/$d)" ] || echo "BAD: /proc/$d shows entries"
	(: >/proc/$d/boxy-probe) 2>/dev/null && echo "BAD: wrote into /proc/$d"
	echo "SEEN procdir $d"
done
for f in kcore kallsyms keys key-users timer_list sched_debug sysrq-trigger kmsg latency_stats \
	timer_stats modules iomem ioports slabinfo vmallocinfo pagetypeinfo zoneinfo buddyinfo \
	lockdep lockdep_chains lockdep_stats config.gz mtrr kpagecount kpageflags kpagecgroup \
	softirqs interrupts; do
	[ -e /proc/$f ] || continue
	set -- $(mnt /proc/$f)
	[ $# -eq 4 ] || { echo "BAD: /proc/$f is not masked"; continue; }
	case $1 in ro|ro,*) ;; *) echo "BAD: /proc/$f mounted $1";; esac
	[ "$3" = /null ] || echo "BAD: /proc/$f masked by $3, not /dev/null"
	[ "$(head -c 16 /proc/$f 2>/dev/null | wc -c)" = 0 ] || echo "BAD: /proc/$f reads"
	echo "SEEN procfile $f"
done
set -- $(mnt /proc/sys)
case $1 in ro|ro,*) ;; *) echo "BAD: /proc/sys mounted ${1:-not at all}";; esac
for n in null zero full random urandom; do
	[ -c /dev/$n ] || echo "BAD: /dev/$n is not a character device"
	set -- $(mnt /dev/$n)
	[ $# -eq 4 ] || { echo "BAD: /dev/$n is not its own mount"; continue; }
	case ,$1, in *,rw,*) ;; *) echo "BAD: /dev/$n mounted $1";; esac
	case ,$1, in *,nosuid,*noexec,*|*,noexec,*nosuid,*) ;; *) echo "BAD: /dev/$n mounted $1";; esac
	[ "$3" = /$n ] || echo "BAD: /dev/$n is the host node $3"
	echo "SEEN dev $n"
done
echo x >/dev/null || echo "BAD: cannot write /dev/null"
[ "$(head -c 4 /dev/zero | od -An -tx1 | tr -d " ")" = 00000000 ] || echo "BAD: /dev/zero"
for e in $(ls -A /etc); do
	case $e in
	passwd|group|hosts|hostname|machine-id|resolv.conf|nsswitch.conf|mtab) ;;
	ld.so.cache|ld.so.conf|ld.so.conf.d|alternatives|ssl|ca-certificates|ca-certificates.conf) ;;
	pki|crypto-policies|localtime|timezone|locale.alias|os-release|lsb-release|debian_version) ;;
	mime.types|mailcap|magic|magic.mime|protocols|services|rpc|gai.conf|host.conf) ;;
	inputrc|terminfo|profile|profile.d|bash.bashrc|shells|gitconfig|perl|python3*|fonts|vim|nanorc) ;;
	*) echo "BAD: /etc/$e is not in the allowlist";;
	esac
	if [ -n "$(mnt /etc/$e)" ]; then
		set -- $(mnt /etc/$e)
		case $1 in ro|ro,*) ;; *) echo "BAD: /etc/$e mounted $1";; esac
		[ "$3" = /etc/$e ] || echo "BAD: /etc/$e is the host entry $3"
		echo "SEEN etc $e"
	fi
	if [ -f /etc/$e ] && [ ! -L /etc/$e ]; then
		(: >>/etc/$e) 2>/dev/null && echo "BAD: /etc/$e is writable"
	fi
done
(: >/etc/boxy-probe) 2>/dev/null && echo "BAD: created a file in /etc"
for e in shadow gshadow sudoers ssh environment npmrc; do
	[ -e /etc/$e ] && echo "BAD: /etc/$e is there"
done
:'

for how in daemon no-daemon; do
	if [ $how = daemon ]; then
		B run --net none -- sh -c "$PROBE"
	else
		B run --no-daemon --net none -- sh -c "$PROBE"
	fi
	check "$how: the probe ran" '[ "$RC" = 0 ]'
	check "$how: /proc masked as doc/filesystem.md says (ro mounts, ro tmpfs, /dev/null)" \
		'! grep -q "^BAD: /proc" "$OUT" && grep -q "^SEEN procdir" "$OUT" &&
		 grep -q "^SEEN procfile" "$OUT"'
	check "$how: /dev nodes bound one by one, nosuid,noexec, writable" \
		'! grep -q "^BAD: /dev" "$OUT" && [ "$(grep -c "^SEEN dev " "$OUT")" = 5 ]'
	check "$how: /etc is the allowlist and the synthesized files, read-only" \
		'! grep -q "^BAD: /etc" "$OUT" && grep -q "^SEEN etc services$" "$OUT"'
	check "$how: no other difference" '! grep -q "^BAD" "$OUT"'
	grep "^BAD" "$OUT" | head -20 | while read -r l; do diag "$l"; done
done

done_testing

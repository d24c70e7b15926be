#!/bin/bash
# tools/delegate-vm.sh — boxy's limits under a systemd user manager that has the
# memory, pids and cpu controllers (doc/systemd.md), on a machine whose own
# cgroup v2 has none (they are bound to cgroup v1 there, as on the host boxy is
# developed on): a virtual machine with cgroup v2 only.
#
# Not part of the test suite: it needs qemu-system-x86 and downloads Debian's
# kernel and busybox-static packages (apt-get download, from the archive), and
# under TCG (no usable /dev/kvm) it takes a few minutes. What it shows, and
# tests/e2e/systemd-user.sh cannot here: with boxy.service's Delegate=yes, the
# daemon in boxy.service/daemon and each run's cgroup beside it, the kernel
# enforces --memory (OOM kill at memory.max, every process of the run, exit 137,
# recorded and told), --pids (pids.max: fork fails) and --cpus (cpu.max).
#
# The guest boots this machine's root filesystem read-only over 9p, with tmpfs
# on /tmp, /run and /var/tmp; it writes nothing to the host. Run as root from a
# built tree: tools/delegate-vm.sh [BUILDDIR]. The guest's console is printed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
[ "$(id -u)" = 0 ] || { echo "delegate-vm.sh: run as root" >&2; exit 2; }
[ -x "$build/boxy" ] || { echo "delegate-vm.sh: no $build/boxy (sh tools/build.sh)" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "delegate-vm.sh: apt-get install qemu-system-x86" >&2; exit 2; }
id boxytest >/dev/null 2>&1 || useradd -m -s /bin/sh boxytest
work=$(mktemp -d /tmp/boxy-delegate-vm.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

# The kernel and busybox, unpacked (not installed).
kpkg=$(apt-cache depends linux-image-amd64 | sed -n 's/.*Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n 1)
apt-get download -q "$kpkg" busybox-static >/dev/null 2>&1 ||
	{ echo "delegate-vm.sh: apt-get download $kpkg busybox-static failed" >&2; exit 1; }
mkdir k bb
dpkg-deb -x linux-image-*.deb k
dpkg-deb -x busybox-static*.deb bb
kver=$(ls k/lib/modules)
kmod=k/lib/modules/$kver/kernel
mkdir -p ird/bin ird/mod ird/proc ird/sys ird/dev ird/root
cp bb/bin/busybox ird/bin/
for m in drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_legacy_dev \
	drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci fs/netfs/netfs \
	fs/fscache/fscache net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p; do
	cp "$kmod/$m.ko" ird/mod/
done

# Stage 1 (initramfs): the host's root over 9p, writable scratch, then switch_root
# (not chroot: a chrooted process may not create user namespaces).
cat >ird/init <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci netfs fscache \
	9pnet 9pnet_virtio 9p; do insmod /mod/$m.ko; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose hostroot /root || exec sh
for d in tmp run var/tmp; do mount -t tmpfs -o mode=1777 tmpfs /root/$d; done
mount -t proc proc /root/proc; mount -t sysfs sys /root/sys; mount -t devtmpfs dev /root/dev
mkdir -p /root/dev/pts /root/dev/shm
mount -t devpts -o mode=620,ptmxmode=666 devpts /root/dev/pts; mount -t tmpfs tmpfs /root/dev/shm
cp /stage2.sh /root/tmp/stage2.sh
exec switch_root /root /bin/bash /tmp/stage2.sh
EOF
chmod +x ird/init

# Stage 2 (the host's tree, as root): cgroup v2 with the controllers, a user manager
# for boxytest in a cgroup of its own, the built units, and three runs with limits.
cat >ird/stage2.sh <<EOF
#!/bin/bash
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
B=$build
SRC=$top
EOF
cat >>ird/stage2.sh <<'EOF'
U=boxytest
mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo "+memory +pids +cpu" >/sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/user && chown -R $U /sys/fs/cgroup/user
mkdir -p /run/systemd/system /tmp/rt /tmp/h/.config/systemd/user/boxy.service.d /tmp/h/w
cp $B/dist/systemd/boxy.service $SRC/dist/systemd/boxy.socket /tmp/h/.config/systemd/user/
printf '[Service]\nExecStart=\nExecStart=%s daemon serve\n' "$B/boxy" \
	>/tmp/h/.config/systemd/user/boxy.service.d/build.conf
chown -R $U /tmp/rt /tmp/h && chmod 700 /tmp/rt
AS() { setpriv --reuid=$U --regid=$(id -g $U) --init-groups env -i HOME=/tmp/h \
	XDG_RUNTIME_DIR=/tmp/rt PATH=/usr/bin:/bin LANG=C.UTF-8 "$@"; }
echo $$ >/sys/fs/cgroup/user/cgroup.procs
AS /usr/lib/systemd/systemd --user >/tmp/manager.log 2>&1 &
echo $$ >/sys/fs/cgroup/cgroup.procs
for _ in $(seq 300); do [ -S /tmp/rt/systemd/private ] && break; sleep 0.5; done
cd /tmp/h/w
echo "=== systemctl --user start boxy.socket: $(AS systemctl --user start boxy.socket; AS systemctl --user is-active boxy.socket)"
AS $B/boxy run --net none -- true
P=$(AS systemctl --user show -p MainPID --value boxy.service)
S=$(sed -n 's/^0:://p' /proc/$P/cgroup)
echo "=== the daemon (pid $P) is in $S"
S=/sys/fs/cgroup${S%/daemon}
echo "=== --memory 64MiB, a 400 MiB balloon"
AS $B/boxy run --net none --memory 64MiB -- python3 -c 'b = bytearray(400 << 20); print("not killed")'
echo "rc=$?"
echo "=== --pids 20, 40 background sleeps"
AS $B/boxy run --net none --pids 20 -- sh -c 'for i in $(seq 40); do sleep 3 & done; wait'
echo "rc=$?"
echo "=== a run with all three, while it runs: its cgroup, beside the daemon"
AS $B/boxy run -d --net none --memory 100MiB --pids 50 --cpus 0.5 -- sleep 3 >/dev/null
sleep 1
for d in $S/boxy-*; do
	[ -e "$d/cgroup.procs" ] && [ -n "$(cat $d/cgroup.procs)" ] || continue
	echo "$d: memory.max $(cat $d/memory.max), memory.swap.max $(cat $d/memory.swap.max)," \
		"memory.oom.group $(cat $d/memory.oom.group), pids.max $(cat $d/pids.max)," \
		"cpu.max $(cat $d/cpu.max), processes $(cat $d/cgroup.procs | tr '\n' ' ')"
done
echo "=== $S itself holds: [$(cat $S/cgroup.procs)], enables: [$(cat $S/cgroup.subtree_control)]"
sleep 3
echo "=== the records of these runs (cgroup and limits decisions)"
for id in $(AS $B/boxy ps -a --json | python3 -c 'import json,sys; print(" ".join(s["id"] for s in json.load(sys.stdin)))'); do
	AS $B/boxy show --json $id | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(s["id"][:8], " ".join(s["argv"])[:60], "-> exit", s.get("exit_code"))
for d in s["decisions"]:
    if d["layer"] in ("cgroup", "limits"):
        print("   ", d["layer"], d["verdict"], d["subject"] + ":", d["reason"])'
done
poweroff -f
EOF
chmod +x ird/stage2.sh
(cd ird && find . | cpio -o -H newc 2>/dev/null | gzip) >initrd.gz

accel=tcg
cpu=max
# KVM when it works (a nested hypervisor may refuse the guest's MSRs); TCG otherwise.
if [ -w /dev/kvm ] && timeout 20 qemu-system-x86_64 -enable-kvm -cpu host -m 64 -nographic \
	-no-reboot -kernel "k/boot/vmlinuz-$kver" -append "console=ttyS0 panic=-1 init=/bin/false" \
	2>/dev/null | grep -q "Kernel panic"; then
	accel=kvm
	cpu=host
fi
echo "delegate-vm.sh: booting $kpkg ($accel)" >&2
timeout 1800 qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -smp 2 -m 2048 -nographic -no-reboot \
	-kernel "k/boot/vmlinuz-$kver" -initrd initrd.gz \
	-append "console=ttyS0 quiet panic=-1 cgroup_no_v1=all" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap |
	tr -d '\r' | sed -n '/^===/,$p' | grep -v '^Powering off' || true

/*
 * bpf-sim.h — a small classic-BPF interpreter for seccomp programs.
 *
 * The tests export boxy's assembled seccomp filter and run it here over a
 * struct seccomp_data of their choosing, so that every syscall number's
 * verdict can be asserted without loading anything into the kernel. It
 * accepts only what the kernel's seccomp checker accepts (32-bit aligned
 * loads inside seccomp_data, scratch memory, ALU, forward jumps, RET) and
 * refuses anything else as a malformed program rather than guessing.
 */
#ifndef BOXY_BPF_SIM_H
#define BOXY_BPF_SIM_H

#include <stddef.h>
#include <stdint.h>

struct sock_filter;
struct seccomp_data;

#define BPF_SIM_MAX_INSNS 4096    /* BPF_MAXINSNS: the kernel refuses longer programs */

/*
 * Run prog (len instructions) over data. Returns 0 and stores the program's
 * return value (SECCOMP_RET_*) in *ret; or -1 with a static reason in *why
 * when the program is malformed: an unknown or non-seccomp opcode, a load
 * outside seccomp_data or unaligned, a read of scratch memory never
 * written, a jump out of range, division by zero, or running off the end.
 */
int bpf_sim_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *data,
		uint32_t *ret, const char **why);

#endif

/*
 * bpf-sim.c — a classic-BPF interpreter restricted to what seccomp allows.
 *
 * State is what classic BPF has: the accumulator A, the index register X
 * and sixteen 32-bit scratch cells M[]. The input "packet" is a struct
 * seccomp_data, read only by 32-bit aligned absolute loads (the only kind
 * the kernel's seccomp_check_filter lets through). Jumps are forward by
 * construction (unsigned offsets from the next instruction), so the checks
 * that matter are that a target stays inside the program and that the
 * program ends in a RET: a program that runs off its end, or loads outside
 * the data, is reported as malformed, never given a verdict.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "bpf-sim.h"

#define SIM_MEMWORDS 16     /* BPF_MEMWORDS */

/* Fetch the 32-bit word at byte offset off of data, as the kernel's seccomp_data loader does. */
static int sim_load_word(const struct seccomp_data *data, uint32_t off, uint32_t *out)
{
	uint32_t w;

	if (off >= sizeof(*data) || off % 4 != 0)
		return -1;
	memcpy(&w, (const unsigned char *)data + off, sizeof(w));
	*out = w;
	return 0;
}

/* Apply the ALU operation op to a with operand b; -1 on division by zero or unknown op. */
static int sim_alu(uint16_t op, uint32_t *a, uint32_t b)
{
	switch (op) {
	case BPF_ADD: *a += b; break;
	case BPF_SUB: *a -= b; break;
	case BPF_MUL: *a *= b; break;
	case BPF_DIV: if (b == 0) return -1; *a /= b; break;
	case BPF_MOD: if (b == 0) return -1; *a %= b; break;
	case BPF_OR:  *a |= b; break;
	case BPF_AND: *a &= b; break;
	case BPF_XOR: *a ^= b; break;
	/* Shifts of 32 or more are undefined in C; the kernel's checker refuses them for K. */
	case BPF_LSH: if (b >= 32) return -1; *a <<= b; break;
	case BPF_RSH: if (b >= 32) return -1; *a >>= b; break;
	case BPF_NEG: *a = (uint32_t)-*a; break;
	default: return -1;
	}
	return 0;
}

/* Run one seccomp program; see bpf-sim.h. */
int bpf_sim_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *data,
		uint32_t *ret, const char **why)
{
	uint32_t A = 0, X = 0, M[SIM_MEMWORDS] = { 0 };
	uint16_t mem_set = 0;  /* bit i: M[i] has been written */
	size_t pc = 0;

#define SIM_FAIL(msg) do { *why = (msg); return -1; } while (0)
	if (len == 0 || len > BPF_SIM_MAX_INSNS)
		SIM_FAIL("program length out of range");

	while (pc < len) {
		const struct sock_filter *f = &prog[pc];
		uint16_t cls = BPF_CLASS(f->code);
		uint32_t operand, target;

		pc++;
		switch (cls) {
		case BPF_LD:
		case BPF_LDX: {
			uint32_t v;

			if (BPF_SIZE(f->code) != BPF_W)
				SIM_FAIL("load of a size other than 32 bits");
			switch (BPF_MODE(f->code)) {
			case BPF_ABS:
				if (cls != BPF_LD)
					SIM_FAIL("LDX ABS is not a classic BPF instruction");
				if (sim_load_word(data, f->k, &v) < 0)
					SIM_FAIL("load outside seccomp_data or unaligned");
				break;
			case BPF_IMM:
				v = f->k;
				break;
			case BPF_MEM:
				if (f->k >= SIM_MEMWORDS)
					SIM_FAIL("scratch memory index out of range");
				if (!(mem_set & (1u << f->k)))
					SIM_FAIL("read of scratch memory never written");
				v = M[f->k];
				break;
			case BPF_LEN:
				v = sizeof(*data);
				break;
			default:
				SIM_FAIL("load mode not allowed in seccomp (IND/MSH)");
			}
			if (cls == BPF_LD)
				A = v;
			else
				X = v;
			break;
		}
		case BPF_ST:
		case BPF_STX:
			if (f->k >= SIM_MEMWORDS)
				SIM_FAIL("scratch memory index out of range");
			M[f->k] = cls == BPF_ST ? A : X;
			mem_set |= (uint16_t)(1u << f->k);
			break;
		case BPF_ALU:
			operand = BPF_SRC(f->code) == BPF_X ? X : f->k;
			if (sim_alu(BPF_OP(f->code), &A, operand) < 0)
				SIM_FAIL("bad ALU operation (unknown, division by zero or wide shift)");
			break;
		case BPF_JMP: {
			if (BPF_OP(f->code) == BPF_JA) {
				/* k is unsigned: forward only, but it can still leave the program. */
				if ((size_t)f->k >= len - pc)
					SIM_FAIL("jump out of range");
				pc += f->k;
				break;
			}
			operand = BPF_SRC(f->code) == BPF_X ? X : f->k;
			switch (BPF_OP(f->code)) {
			case BPF_JEQ:  target = A == operand; break;
			case BPF_JGT:  target = A > operand; break;
			case BPF_JGE:  target = A >= operand; break;
			case BPF_JSET: target = (A & operand) != 0; break;
			default: SIM_FAIL("unknown jump");
			}
			{
				size_t off = target ? f->jt : f->jf;

				if (off >= len - pc)
					SIM_FAIL("jump out of range");
				pc += off;
			}
			break;
		}
		case BPF_RET:
			if (BPF_RVAL(f->code) == BPF_K)
				*ret = f->k;
			else if (BPF_RVAL(f->code) == BPF_A)
				*ret = A;
			else
				SIM_FAIL("RET X is not allowed");
			return 0;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				X = A;
			else if (BPF_MISCOP(f->code) == BPF_TXA)
				A = X;
			else
				SIM_FAIL("unknown MISC operation");
			break;
		default:
			SIM_FAIL("unknown instruction class");
		}
	}
	SIM_FAIL("ran off the end of the program");
#undef SIM_FAIL
}

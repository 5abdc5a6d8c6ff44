/* SPDX-License-Identifier: MIT */
/* Entry relocation: decides whether the first instructions of a function
 * can be replaced by a jmp rel32, and rewrites them (Zydis decodes and
 * re-encodes every instruction) into a thunk that runs elsewhere and jumps
 * back.  Runs in the constructor on live code of the host: every read is
 * bounds-checked, and memory that the code only points at (jump tables) is
 * read with process_vm_readv, which fails instead of faulting. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include "shim/internal.h"

#define MODE ZYDIS_MACHINE_MODE_LONG_64
#define HIST 16u /* instructions looked back at for a jump table's set-up */
#define MAX_TABLES 64u /* jump tables per function */
#define MAX_TABLE_ENTRIES 65536u

struct insn {
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
};

/* A recognised jump table: its set-up runs from the bounds check at cmp
 * to the indirect jump at jmp; a branch into that range would skip the
 * check, so none may land there. */
struct table_span {
	uint64_t cmp, jmp;
};

static void decoder_init(ZydisDecoder *d)
{
	ZydisDecoderInit(d, MODE, ZYDIS_STACK_WIDTH_64);
}

/* Decodes the instruction at code (avail bytes readable).  Returns 0 or -1. */
static int decode(const ZydisDecoder *d, const uint8_t *code, uint64_t avail, struct insn *x)
{
	if (avail == 0)
		return -1;
	if (avail > ZYDIS_MAX_INSTRUCTION_LENGTH)
		avail = ZYDIS_MAX_INSTRUCTION_LENGTH;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(d, code, avail, &x->in, x->op)))
		return -1;
	return 0;
}

static ZydisRegister family(ZydisRegister r)
{
	return r == ZYDIS_REGISTER_NONE ? r : ZydisRegisterGetLargestEnclosing(MODE, r);
}

/* Index of the explicit operand with a relative immediate, or -1. */
static int rel_imm(const struct insn *x)
{
	unsigned i;

	if (!(x->in.attributes & ZYDIS_ATTRIB_IS_RELATIVE))
		return -1;
	for (i = 0; i < x->in.operand_count_visible; i++)
		if (x->op[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && x->op[i].imm.is_relative)
			return (int)i;
	return -1;
}

/* Index of the explicit rip-relative memory operand, or -1. */
static int rip_mem(const struct insn *x)
{
	unsigned i;

	for (i = 0; i < x->in.operand_count_visible; i++)
		if (x->op[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    x->op[i].mem.base == ZYDIS_REGISTER_RIP)
			return (int)i;
	return -1;
}

/* True if x addresses memory relative to eip (address-size prefix): the
 * encoder is not asked to move that. */
static int eip_mem(const struct insn *x)
{
	unsigned i;

	for (i = 0; i < x->in.operand_count; i++)
		if (x->op[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    (x->op[i].mem.base == ZYDIS_REGISTER_EIP ||
		     x->op[i].mem.base == ZYDIS_REGISTER_IP))
			return 1;
	return 0;
}

#define KEPT_PREFIXES                                                                     \
	(ZYDIS_ATTRIB_HAS_LOCK | ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |           \
	 ZYDIS_ATTRIB_HAS_REPNE | ZYDIS_ATTRIB_HAS_XACQUIRE | ZYDIS_ATTRIB_HAS_XRELEASE | \
	 ZYDIS_ATTRIB_HAS_SEGMENT)

/* True if y is x re-encoded: same mnemonic, prefixes and operands, apart
 * from the displacement of operand skip (the rip-relative one). */
static int same_shape(const struct insn *x, const struct insn *y, int skip)
{
	unsigned i;

	if (x->in.mnemonic != y->in.mnemonic ||
	    x->in.operand_count_visible != y->in.operand_count_visible ||
	    x->in.operand_width != y->in.operand_width ||
	    (x->in.attributes & KEPT_PREFIXES) != (y->in.attributes & KEPT_PREFIXES))
		return 0;
	for (i = 0; i < x->in.operand_count_visible; i++) {
		const ZydisDecodedOperand *a = &x->op[i], *b = &y->op[i];

		if (a->type != b->type || a->size != b->size)
			return 0;
		switch (a->type) {
		case ZYDIS_OPERAND_TYPE_REGISTER:
			if (a->reg.value != b->reg.value)
				return 0;
			break;
		case ZYDIS_OPERAND_TYPE_MEMORY:
			if (a->mem.type != b->mem.type || a->mem.segment != b->mem.segment ||
			    a->mem.base != b->mem.base || a->mem.index != b->mem.index ||
			    a->mem.scale != b->mem.scale ||
			    ((int)i != skip && a->mem.disp.value != b->mem.disp.value))
				return 0;
			break;
		case ZYDIS_OPERAND_TYPE_IMMEDIATE:
			if (a->imm.value.u != b->imm.value.u || a->imm.is_relative)
				return 0;
			break;
		default:
			return 0;
		}
	}
	return 1;
}

static uint64_t abs_target(const struct insn *x, int opi, uint64_t addr)
{
	ZyanU64 t = 0;

	ZydisCalcAbsoluteAddress(&x->in, &x->op[opi], addr, &t);
	return t;
}

static int is_loop_like(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
	case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JCXZ:
	case ZYDIS_MNEMONIC_XBEGIN:
		return 1;
	default:
		return 0;
	}
}

static int is_indirect(const struct insn *x)
{
	return rel_imm(x) < 0 && x->in.operand_count_visible >= 1 &&
	       (x->op[0].type == ZYDIS_OPERAND_TYPE_REGISTER ||
		x->op[0].type == ZYDIS_OPERAND_TYPE_MEMORY);
}

static int is_indirect_jmp(const struct insn *x)
{
	return x->in.mnemonic == ZYDIS_MNEMONIC_JMP && is_indirect(x);
}

static int is_indirect_call(const struct insn *x)
{
	return x->in.mnemonic == ZYDIS_MNEMONIC_CALL && is_indirect(x);
}

/* Padding a short function's window may cover: int3 and the nop forms. */
static int is_padding(const struct insn *x)
{
	return x->in.mnemonic == ZYDIS_MNEMONIC_INT3 || x->in.mnemonic == ZYDIS_MNEMONIC_NOP;
}

/* Instructions after which the function certainly does not fall through
 * (a call might return: whether its callee is noreturn is not known). */
static int is_terminator(const struct insn *x)
{
	switch (x->in.mnemonic) {
	case ZYDIS_MNEMONIC_RET:
	case ZYDIS_MNEMONIC_JMP:
	case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_HLT:
		return 1;
	default:
		return 0;
	}
}

/* True if x writes register family r (explicitly or implicitly). */
static int writes(const struct insn *x, ZydisRegister r)
{
	unsigned i;

	for (i = 0; i < x->in.operand_count; i++)
		if (x->op[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (x->op[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
		    family(x->op[i].reg.value) == r)
			return 1;
	return 0;
}

static int is_reg(const struct insn *x, unsigned i, ZydisRegister fam)
{
	return i < x->in.operand_count_visible && x->op[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	       family(x->op[i].reg.value) == fam;
}

/* Reads len bytes of this process at addr without faulting.  Returns 0 or
 * -1 (unmapped, or the system call is not allowed). */
static int safe_read(uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len};
	struct iovec remote = {(void *)(uintptr_t)addr, len};

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* The function being planned: its bytes, where they run, how far they can
 * be read. */
struct fn {
	const ZydisDecoder *d;
	const uint8_t *code;
	uint64_t func, func_end, limit_end;
};

static int decode_fn(const struct fn *f, uint64_t addr, struct insn *x)
{
	if (addr < f->func || addr >= f->limit_end)
		return -1;
	return decode(f->d, f->code + (addr - f->func), f->limit_end - addr, x);
}

/* A jump table found behind an indirect jump. */
struct table {
	uint64_t addr; /* first entry */
	unsigned scale; /* 4: int32 offsets from addr (PIC); 8: absolute */
	uint64_t count; /* entries */
	uint64_t cmp; /* address of the bounds check */
	uint64_t lea; /* address of the lea of a PIC table's base */
};

/* Walks back from the table load at hist[k] to the bounds check: `cmp
 * $N, %I` immediately followed by ja (N + 1 entries) or jae (N entries),
 * with no write of the index in between except zero-extending moves within
 * one register or renames (`mov %eJ, %eI`, `movzbl %jl, %eI`).  The
 * compilers' guarantee that a 32-bit index was zero-extended when it was
 * computed is trusted; a narrower compare needs a zero extension after it.
 * Returns 0 or -1. */
static int find_bound(const struct fn *f, const uint64_t *hist, int k, ZydisRegister idx,
		      struct table *t)
{
	struct insn x, c;
	int i, zext = 0;

	for (i = k - 1; i >= 1; i--) {
		if (decode_fn(f, hist[i], &x))
			return -1;
		if (x.in.mnemonic == ZYDIS_MNEMONIC_JNBE || x.in.mnemonic == ZYDIS_MNEMONIC_JNB) {
			if (decode_fn(f, hist[i - 1], &c) || c.in.mnemonic != ZYDIS_MNEMONIC_CMP ||
			    !is_reg(&c, 0, idx) || c.in.operand_count_visible != 2 ||
			    c.op[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
				return -1;
			t->count = c.op[1].imm.value.u;
			if (c.op[1].imm.is_signed && c.op[1].imm.value.s < 0)
				return -1;
			/* a byte or word compare bounds the load's index only
			 * through a zero extension after it */
			if (c.op[0].size < 32 && !zext)
				return -1;
			if (x.in.mnemonic == ZYDIS_MNEMONIC_JNBE)
				t->count++;
			t->cmp = hist[i - 1];
			return t->count > 0 && t->count <= MAX_TABLE_ENTRIES ? 0 : -1;
		}
		if (x.in.meta.category == ZYDIS_CATEGORY_COND_BR ||
		    x.in.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
		    x.in.meta.category == ZYDIS_CATEGORY_CALL ||
		    x.in.meta.category == ZYDIS_CATEGORY_RET)
			return -1;
		if (!writes(&x, idx))
			continue;
		/* mov %eJ, %eI / movzx %jl, %eI: the index now comes from J */
		if ((x.in.mnemonic == ZYDIS_MNEMONIC_MOV ||
		     x.in.mnemonic == ZYDIS_MNEMONIC_MOVZX) &&
		    is_reg(&x, 0, idx) && x.op[0].size == 32 && x.in.operand_count_visible == 2 &&
		    x.op[1].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (x.in.mnemonic == ZYDIS_MNEMONIC_MOVZX || x.op[1].size == 32)) {
			idx = family(x.op[1].reg.value);
			zext = 1;
			continue;
		}
		return -1;
	}
	return -1;
}

/* True if operand o is [idx*scale + disp] or [base + idx*scale] as asked. */
static int mem_index(const ZydisDecodedOperand *o, ZydisRegister base, unsigned scale)
{
	return o->type == ZYDIS_OPERAND_TYPE_MEMORY && o->mem.segment != ZYDIS_REGISTER_FS &&
	       o->mem.segment != ZYDIS_REGISTER_GS && family(o->mem.base) == base &&
	       o->mem.index != ZYDIS_REGISTER_NONE && o->mem.scale == scale;
}

/* Recognises the jump table of the indirect jmp at hist[k] (hist holds the
 * addresses of the k + 1 instructions before it, oldest first):
 *   lea T(%rip),%A ... movslq (%A,%I,4),%X ... add %A,%X ... jmp *%X   (PIC)
 *   jmp *T(,%I,8)  or  mov T(,%I,8),%X ... jmp *%X                     (absolute)
 * Returns 0 and *t when it is one and bounded, else -1. */
static int find_table(const struct fn *f, const uint64_t *hist, int k, struct table *t)
{
	struct insn j, x;
	ZydisRegister X, A = ZYDIS_REGISTER_NONE, idx = ZYDIS_REGISTER_NONE;
	int i, load = 0, state = 0; /* 0: want add or mov, 1: want movslq, 2: want lea */

	if (decode_fn(f, hist[k], &j))
		return -1;
	t->lea = UINT64_MAX;
	if (j.op[0].type == ZYDIS_OPERAND_TYPE_MEMORY) {
		if (!mem_index(&j.op[0], ZYDIS_REGISTER_NONE, 8))
			return -1;
		t->addr = (uint64_t)(int64_t)(int32_t)j.op[0].mem.disp.value;
		t->scale = 8;
		return find_bound(f, hist, k, family(j.op[0].mem.index), t);
	}
	X = family(j.op[0].reg.value);
	for (i = k - 1; i >= 0; i--) {
		if (decode_fn(f, hist[i], &x))
			return -1;
		if (state == 0 && x.in.mnemonic == ZYDIS_MNEMONIC_ADD && is_reg(&x, 0, X) &&
		    x.op[0].size == 64 && x.op[1].type == ZYDIS_OPERAND_TYPE_REGISTER) {
			A = family(x.op[1].reg.value);
			state = 1;
			continue;
		}
		if (state == 0 && x.in.mnemonic == ZYDIS_MNEMONIC_MOV && is_reg(&x, 0, X) &&
		    x.op[0].size == 64 && mem_index(&x.op[1], ZYDIS_REGISTER_NONE, 8)) {
			t->addr = (uint64_t)(int64_t)(int32_t)x.op[1].mem.disp.value;
			t->scale = 8;
			return find_bound(f, hist, i, family(x.op[1].mem.index), t);
		}
		if (state == 1 && x.in.mnemonic == ZYDIS_MNEMONIC_MOVSXD && is_reg(&x, 0, X) &&
		    mem_index(&x.op[1], A, 4) && x.op[1].mem.disp.value == 0) {
			idx = family(x.op[1].mem.index);
			load = i;
			state = 2;
			continue;
		}
		if (state == 2 && x.in.mnemonic == ZYDIS_MNEMONIC_LEA && is_reg(&x, 0, A) &&
		    x.op[0].size == 64 && rip_mem(&x) == 1) {
			t->addr = abs_target(&x, 1, hist[i]);
			t->scale = 4;
			t->lea = hist[i];
			/* the bounds check may sit between the lea and the load */
			return find_bound(f, hist, load, idx, t);
		}
		/* ja to the default case may sit between the lea and the load */
		if (state == 2 && x.in.meta.category == ZYDIS_CATEGORY_COND_BR)
			continue;
		if (x.in.meta.category == ZYDIS_CATEGORY_COND_BR ||
		    x.in.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
		    x.in.meta.category == ZYDIS_CATEGORY_CALL ||
		    x.in.meta.category == ZYDIS_CATEGORY_RET)
			return -1;
		/* X matters only after its load; writes of the index between
		 * the lea and the load (mov %esi,%esi) are find_bound's to judge */
		if ((state <= 1 && writes(&x, X)) || (state >= 1 && writes(&x, A)))
			return -1;
	}
	return -1;
}

/* Reads the entries of table t and checks that none lands strictly inside
 * (lo, hi).  Returns 0, or -1 with *why. */
static int check_table(const struct table *t, uint64_t lo, uint64_t hi, const char **why)
{
	uint8_t buf[512];
	uint64_t done = 0, total = t->count * t->scale;

	while (done < total) {
		size_t n = total - done < sizeof(buf) ? (size_t)(total - done) : sizeof(buf);
		size_t i;

		if (safe_read(t->addr + done, buf, n)) {
			*why = "jump table cannot be read";
			return -1;
		}
		for (i = 0; i + t->scale <= n; i += t->scale) {
			uint64_t target;

			if (t->scale == 4) {
				int32_t rel;

				memcpy(&rel, buf + i, 4);
				target = t->addr + (uint64_t)(int64_t)rel;
			} else {
				memcpy(&target, buf + i, 8);
			}
			if (target > lo && target < hi) {
				*why = "jump table entry lands inside the window";
				return -1;
			}
		}
		done += n;
	}
	return 0;
}

/* Direct targets of x at addr: a relative branch's, or a rip-relative
 * lea's (an address taken of code, e.g. a computed goto).  Returns 1 and
 * *target, or 0. */
static int code_target(const struct insn *x, uint64_t addr, uint64_t *target)
{
	int i = rel_imm(x);

	if (i >= 0) {
		*target = abs_target(x, i, addr);
		return 1;
	}
	if (x->in.mnemonic == ZYDIS_MNEMONIC_LEA && (i = rip_mem(x)) >= 0) {
		*target = abs_target(x, i, addr);
		return 1;
	}
	return 0;
}

static int reencode_rip(const struct insn *x, uint64_t from, uint64_t to, uint8_t *out, size_t cap,
			size_t *len);

/* Checks one instruction of the window: can it run elsewhere?  Returns 0
 * or -1 with *why. */
static int check_movable(const struct insn *x, uint64_t addr, int last, const char **why)
{
	uint8_t tmp[ZYDIS_MAX_INSTRUCTION_LENGTH];
	size_t n;
	int i;

	if (is_loop_like(x->in.mnemonic)) {
		*why = "loop, jrcxz or xbegin in the window";
		return -1;
	}
	if (is_indirect_call(x) && !last) {
		*why = "indirect call inside the window";
		return -1;
	}
	if (eip_mem(x)) {
		*why = "eip-relative operand in the window";
		return -1;
	}
	if (x->in.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR) {
		*why = "far branch in the window";
		return -1;
	}
	i = rel_imm(x);
	if (i >= 0) {
		/* jmp, jcc and call with a 64-bit operand size: a 66 prefix
		 * would truncate the target on some processors */
		if ((x->in.mnemonic != ZYDIS_MNEMONIC_JMP &&
		     x->in.mnemonic != ZYDIS_MNEMONIC_CALL &&
		     x->in.meta.category != ZYDIS_CATEGORY_COND_BR) ||
		    x->in.operand_width != 64) {
			*why = "relative operand that cannot be re-encoded";
			return -1;
		}
		return 0;
	}
	if (rip_mem(x) >= 0 && reencode_rip(x, addr, addr, tmp, sizeof(tmp), &n)) {
		*why = "rip-relative operand that cannot be re-encoded";
		return -1;
	}
	return 0;
}

/* Checks every instruction of [func, func_end): branches into the window
 * (lo, hi), indirect jumps.  Returns 0 or -1 with *why, *why_off. */
static int check_function(const struct fn *f, uint64_t lo, uint64_t hi, const char **why,
			  uint64_t *why_off)
{
	struct table_span spans[MAX_TABLES];
	uint64_t hist[HIST], a, target;
	unsigned nspans = 0, nhist = 0, i;
	struct insn x;

	for (a = f->func; a < f->func_end; a += x.in.length) {
		*why_off = a - f->func;
		if (decode_fn(f, a, &x)) {
			*why = "undecodable instruction in the function";
			return -1;
		}
		if (nhist == HIST) {
			memmove(hist, hist + 1, sizeof(hist) - sizeof(hist[0]));
			nhist--;
		}
		hist[nhist++] = a;
		if (code_target(&x, a, &target) && target > lo && target < hi) {
			*why = "branch into the window";
			return -1;
		}
		/* A conditional branch of the function back to its own entry
		 * is a loop whose head is the entry (`while (n->next) n =
		 * n->next;` from gcc and clang -O2): every turn would enter
		 * the patched bytes, the wrapper, as a call of its own (one
		 * call of a 50-node walk was 50 entries).  An unconditional
		 * jump there stays a tail call to itself, as from another
		 * function. */
		if (x.in.meta.category == ZYDIS_CATEGORY_COND_BR && code_target(&x, a, &target) &&
		    target >= f->func && target <= lo) {
			*why = "a loop of the function starts at its entry";
			return -1;
		}
		if (is_indirect_jmp(&x)) {
			struct table t;

			if (find_table(f, hist, (int)nhist - 1, &t)) {
				*why = "indirect jump that cannot be bounded";
				return -1;
			}
			if (check_table(&t, lo, hi, why))
				return -1;
			if (nspans == MAX_TABLES) {
				*why = "too many jump tables";
				return -1;
			}
			spans[nspans].cmp = t.lea < t.cmp ? t.lea : t.cmp;
			spans[nspans++].jmp = a;
		}
	}
	if (a != f->func_end) {
		*why = "instruction crosses the function end";
		return -1;
	}
	if (!nspans)
		return 0;
	/* Second pass: nothing may enter a table's set-up past its check. */
	for (a = f->func; a < f->func_end; a += x.in.length) {
		if (decode_fn(f, a, &x)) {
			*why_off = a - f->func;
			*why = "undecodable instruction in the function";
			return -1;
		}
		if (!code_target(&x, a, &target))
			continue;
		for (i = 0; i < nspans; i++) {
			if (target > spans[i].cmp && target <= spans[i].jmp) {
				*why_off = a - f->func;
				*why = "branch into a jump table's bounds check";
				return -1;
			}
		}
	}
	return 0;
}

/* Checks the bytes from func_end to the window end: padding only, and the
 * function's last instruction (the one ending at func_end) a terminator. */
static int check_tail(const struct fn *f, uint64_t patch, uint64_t wend, const char **why,
		      uint64_t *why_off)
{
	uint64_t a, last = 0, prev = 0;
	struct insn x;

	for (a = patch; a < f->func_end; a += x.in.length) {
		if (decode_fn(f, a, &x)) {
			*why_off = a - f->func;
			*why = "undecodable instruction in the window";
			return -1;
		}
		prev = last;
		last = a;
	}
	*why_off = f->func_end - f->func;
	if (a != f->func_end) {
		*why = "instruction crosses the function end";
		return -1;
	}
	/* -mharden-sls=all ends a function `ret; int3` (the int3 inside its
	 * size): the ret is its last instruction (xor %eax,%eax; ret; int3). */
	if (!decode_fn(f, last, &x) && last > patch &&
	    x.in.mnemonic == ZYDIS_MNEMONIC_INT3)
		last = prev;
	if (decode_fn(f, last, &x) || !is_terminator(&x)) {
		*why_off = last - f->func;
		*why = "short function that may fall through";
		return -1;
	}
	for (a = f->func_end; a < wend; a += x.in.length) {
		*why_off = a - f->func;
		if (decode_fn(f, a, &x) || !is_padding(&x)) {
			*why = "window crosses the function end";
			return -1;
		}
	}
	return 0;
}

int cs_reloc_plan(const uint8_t *code, uint64_t func, uint64_t func_end, uint64_t limit_end,
		  struct cs_reloc_plan *plan, const char **why, uint64_t *why_off)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	ZydisDecoder d;
	struct fn f = {&d, code, func, func_end, limit_end};
	uint64_t patch = func, a;
	unsigned ninsn = 0;
	int ended = 0; /* an unconditional ret, jmp, ud2 or hlt met in the window */
	struct insn x;

	*why_off = 0;
	if (!code || func_end <= func || limit_end < func_end) {
		*why = "empty or invalid function bounds";
		return -1;
	}
	decoder_init(&d);
	if (func_end - func >= sizeof(endbr64) && !memcmp(code, endbr64, sizeof(endbr64)))
		patch += sizeof(endbr64);
	if (patch >= func_end) {
		*why = "function too short";
		return -1;
	}
	for (a = patch; a - patch < CS_PATCH_JMP_SIZE; a += x.in.length) {
		*why_off = a - func;
		if (decode_fn(&f, a, &x)) {
			*why = a >= func_end ? "function shorter than the 5-byte window, and no "
					       "padding after it"
					     : "undecodable instruction in the window";
			return -1;
		}
		/* In the function (not its padding): most likely a debugger's
		 * breakpoint (gdb's `break f` before the program ran).  Moved
		 * into the copy, it trapped where the debugger knows of no
		 * breakpoint, and the byte the debugger restores at the entry
		 * landed on the patch (SIGTRAP, then SIGSEGV: review helper
		 * 91).  After a ret or jmp it is the function's own padding
		 * (-mharden-sls: `ret; int3` inside the symbol's size): not
		 * reached from the window, and no debugger puts one there. */
		if (a < func_end && !ended && x.in.mnemonic == ZYDIS_MNEMONIC_INT3) {
			*why = "int3 in the window (a debugger's breakpoint?)";
			return -1;
		}
		if (check_movable(&x, a, a + x.in.length - patch >= CS_PATCH_JMP_SIZE, why))
			return -1;
		if (is_terminator(&x))
			ended = 1;
		ninsn++;
	}
	if (a - patch > sizeof(plan->orig)) {
		*why = "window too long";
		return -1;
	}
	if (a > func_end && check_tail(&f, patch, a, why, why_off))
		return -1;
	if (check_function(&f, patch, a, why, why_off))
		return -1;
	memset(plan, 0, sizeof(*plan));
	plan->func = func;
	plan->patch = patch;
	plan->window = (unsigned)(a - patch);
	plan->ninsn = ninsn;
	memcpy(plan->orig, code + (patch - func), plan->window);
	/* A trial where everything is in reach: what fails now (a call that
	 * cannot be emulated, say) would fail whatever the thunk's address. */
	{
		uint8_t trial[CS_THUNK_MAX];

		*why_off = patch - func;
		if (cs_reloc_emit(plan, patch, trial, sizeof(trial), why) < 0)
			return -1;
	}
	*why = NULL;
	return 0;
}

/* ---- emitting the thunk ---- */

struct out {
	uint8_t *buf;
	size_t cap, len;
	uint64_t addr; /* run-time address of buf */
};

static void req_init(ZydisEncoderRequest *r, ZydisMnemonic m, unsigned nops)
{
	memset(r, 0, sizeof(*r));
	r->machine_mode = MODE;
	r->mnemonic = m;
	r->operand_count = (ZyanU8)nops;
}

/* Encodes r at the current end of o; absolute: r holds absolute targets.
 * Returns 0 or -1. */
static int put(struct out *o, ZydisEncoderRequest *r, int absolute)
{
	ZyanUSize n = o->cap - o->len;
	ZyanStatus s;

	if (absolute)
		s = ZydisEncoderEncodeInstructionAbsolute(r, o->buf + o->len, &n, o->addr + o->len);
	else
		s = ZydisEncoderEncodeInstruction(r, o->buf + o->len, &n);
	if (!ZYAN_SUCCESS(s))
		return -1;
	o->len += n;
	return 0;
}

static int put_bytes(struct out *o, const void *p, size_t n)
{
	if (o->cap - o->len < n)
		return -1;
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	return 0;
}

static int rel32_reaches(uint64_t from_end, uint64_t target)
{
	int64_t d = (int64_t)(target - from_end);

	return d >= INT32_MIN && d <= INT32_MAX;
}

/* The inverse of condition jump m, or ZYDIS_MNEMONIC_INVALID. */
static ZydisMnemonic jcc_inverse(ZydisMnemonic m)
{
	static const ZydisMnemonic pairs[][2] = {
		{ZYDIS_MNEMONIC_JO, ZYDIS_MNEMONIC_JNO}, {ZYDIS_MNEMONIC_JB, ZYDIS_MNEMONIC_JNB},
		{ZYDIS_MNEMONIC_JZ, ZYDIS_MNEMONIC_JNZ}, {ZYDIS_MNEMONIC_JBE, ZYDIS_MNEMONIC_JNBE},
		{ZYDIS_MNEMONIC_JS, ZYDIS_MNEMONIC_JNS}, {ZYDIS_MNEMONIC_JP, ZYDIS_MNEMONIC_JNP},
		{ZYDIS_MNEMONIC_JL, ZYDIS_MNEMONIC_JNL}, {ZYDIS_MNEMONIC_JLE, ZYDIS_MNEMONIC_JNLE},
	};
	unsigned i;

	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		if (pairs[i][0] == m)
			return pairs[i][1];
		if (pairs[i][1] == m)
			return pairs[i][0];
	}
	return ZYDIS_MNEMONIC_INVALID;
}

static int put_abs_jump(struct out *o, uint64_t target)
{
	ZydisEncoderRequest r;

	req_init(&r, ZYDIS_MNEMONIC_JMP, 1);
	r.operands[0].type = ZYDIS_OPERAND_TYPE_MEMORY;
	r.operands[0].mem.base = ZYDIS_REGISTER_RIP;
	r.operands[0].mem.size = 8;
	if (put(o, &r, 0))
		return -1;
	return put_bytes(o, &target, sizeof(target));
}

/* True if the instruction written at o->buf + start is m to target. */
static int lands(const struct out *o, size_t start, ZydisMnemonic m, uint64_t target)
{
	ZydisDecoder d;
	struct insn y;
	int i;

	decoder_init(&d);
	return !decode(&d, o->buf + start, o->len - start, &y) && y.in.mnemonic == m &&
	       y.in.length == o->len - start && (i = rel_imm(&y)) >= 0 &&
	       abs_target(&y, i, o->addr + start) == target;
}

/* jmp (or jcc m) to target: rel32 when it reaches, else jmp *0(%rip) and
 * the absolute address (a jcc then becomes the inverse jcc over it).
 * Returns 0 or -1. */
static int put_jump(struct out *o, ZydisMnemonic m, uint64_t target)
{
	ZydisEncoderRequest r;
	size_t start = o->len;

	req_init(&r, m, 1);
	r.branch_type = ZYDIS_BRANCH_TYPE_NEAR;
	r.branch_width = ZYDIS_BRANCH_WIDTH_32;
	r.operands[0].type = ZYDIS_OPERAND_TYPE_IMMEDIATE;
	r.operands[0].imm.u = target;
	/* jmp rel32 is 5 bytes, jcc rel32 6 */
	if (rel32_reaches(o->addr + o->len + (m == ZYDIS_MNEMONIC_JMP ? 5 : 6), target) &&
	    !put(o, &r, 1) && lands(o, start, m, target))
		return 0;
	o->len = start;
	if (m != ZYDIS_MNEMONIC_JMP) {
		/* j!cc over the 14-byte absolute jump */
		req_init(&r, jcc_inverse(m), 1);
		if (r.mnemonic == ZYDIS_MNEMONIC_INVALID)
			return -1;
		r.branch_type = ZYDIS_BRANCH_TYPE_SHORT;
		r.branch_width = ZYDIS_BRANCH_WIDTH_8;
		r.operands[0].type = ZYDIS_OPERAND_TYPE_IMMEDIATE;
		r.operands[0].imm.s = 14;
		if (put(o, &r, 0))
			return -1;
	}
	return put_abs_jump(o, target);
}

/* Re-encodes x (at from) with its rip-relative operand aimed at the same
 * absolute address from to.  Decodes the result to check it.  Returns 0
 * and *len, or -1 (out of reach, or not encodable). */
static int reencode_rip(const struct insn *x, uint64_t from, uint64_t to, uint8_t *buf, size_t cap,
			size_t *len)
{
	ZydisEncoderRequest r;
	ZydisDecoder d;
	struct insn y;
	int i = rip_mem(x), j;
	uint64_t target = abs_target(x, i, from);
	ZyanUSize n = cap;

	if (!ZYAN_SUCCESS(ZydisEncoderDecodedInstructionToEncoderRequest(
		    &x->in, x->op, x->in.operand_count_visible, &r)))
		return -1;
	r.operands[i].mem.displacement = (ZyanI64)target;
	if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstructionAbsolute(&r, buf, &n, to)))
		return -1;
	decoder_init(&d);
	if (decode(&d, buf, n, &y) || y.in.length != n || (j = rip_mem(&y)) != i ||
	    !same_shape(x, &y, i) || abs_target(&y, j, to) != target)
		return -1;
	*len = n;
	return 0;
}

/* True if the instruction written at o->buf + start is the jmp through
 * the operand of indirect call x (an rsp base read 8 bytes further). */
static int is_jmp_of(const struct out *o, size_t start, const struct insn *x)
{
	ZydisDecoder d;
	struct insn y, want = *x;

	want.in.mnemonic = ZYDIS_MNEMONIC_JMP;
	if (want.op[0].type == ZYDIS_OPERAND_TYPE_MEMORY &&
	    family(want.op[0].mem.base) == ZYDIS_REGISTER_RSP)
		want.op[0].mem.disp.value += 8;
	decoder_init(&d);
	return !decode(&d, o->buf + start, o->len - start, &y) && y.in.length == o->len - start &&
	       same_shape(&want, &y, -1);
}

/* The return address of an emulated call: a real call (to the next
 * instruction but one: a call to the very next one is the get-PC idiom,
 * which the return stack predictor ignores), whose pushed address is then
 * overwritten with the original one, ret.  The callee sees and returns to
 * ret, as it would from the original code.  Pushed instead (push $ret), the
 * callee's return found the return stack predictor one entry off, and so
 * did every return after it up the call chain: a target whose relocated
 * prologue holds a call cost ~20 ns more per call (16 against 9 ns a call
 * in a micro-benchmark; outer() calling inner(): 83-87 against 70-75 ns
 * per wrapped call of outer, docs/performance.md).  Registers and flags stay
 * untouched. */
static int put_return_address(struct out *o, uint64_t ret)
{
	/* clang-format off */
	uint8_t b[21] = {0xe8, 1, 0, 0, 0, /* call 1f */
			 0xcc, /* int3, never reached */
			 0xc7, 0x04, 0x24, 0, 0, 0, 0, /* 1: movl $lo, (%rsp) */
			 0xc7, 0x44, 0x24, 0x04, 0, 0, 0, 0}; /* movl $hi, 4(%rsp) */
	/* clang-format on */
	uint32_t lo = (uint32_t)ret, hi = (uint32_t)(ret >> 32);

	memcpy(b + 9, &lo, 4);
	memcpy(b + 17, &hi, 4);
	return put_bytes(o, b, sizeof(b));
}

/* call: its return address (put_return_address), then a jump to the
 * callee (a direct target, or x's operand turned into a jmp). */
static int put_call(struct out *o, const struct insn *x, uint64_t addr, uint64_t ret)
{
	ZydisEncoderRequest r;
	int i = rel_imm(x);
	size_t n;

	if (put_return_address(o, ret))
		return -1;
	if (i >= 0)
		return put_jump(o, ZYDIS_MNEMONIC_JMP, abs_target(x, i, addr));
	if (!ZYAN_SUCCESS(ZydisEncoderDecodedInstructionToEncoderRequest(
		    &x->in, x->op, x->in.operand_count_visible, &r)))
		return -1;
	r.mnemonic = ZYDIS_MNEMONIC_JMP;
	if (r.operands[0].type == ZYDIS_OPERAND_TYPE_REGISTER) {
		if (family(r.operands[0].reg.value) == ZYDIS_REGISTER_RSP)
			return -1;
		n = o->len;
		return put(o, &r, 0) || !is_jmp_of(o, n, x) ? -1 : 0;
	}
	if (r.operands[0].type != ZYDIS_OPERAND_TYPE_MEMORY)
		return -1;
	/* the operand is read after our call, so rsp moved by 8; and after
	 * the return address was stored, so an operand in its 8 bytes below
	 * rsp (read before the push by the original call) would be that
	 * address: refused, as is an index that may reach there */
	if (family(r.operands[0].mem.base) == ZYDIS_REGISTER_RSP) {
		if (r.operands[0].mem.index != ZYDIS_REGISTER_NONE ||
		    (r.operands[0].mem.displacement > -16 && r.operands[0].mem.displacement < 0))
			return -1;
		r.operands[0].mem.displacement += 8;
	}
	if (family(r.operands[0].mem.index) == ZYDIS_REGISTER_RSP)
		return -1;
	if (r.operands[0].mem.base == ZYDIS_REGISTER_RIP) {
		struct insn y;
		ZydisDecoder d;
		ZyanUSize m = o->cap - o->len;
		uint64_t target = abs_target(x, 0, addr);

		r.operands[0].mem.displacement = (ZyanI64)target;
		if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstructionAbsolute(&r, o->buf + o->len, &m,
									o->addr + o->len)))
			return -1;
		decoder_init(&d);
		if (decode(&d, o->buf + o->len, m, &y) || rip_mem(&y) != 0 ||
		    abs_target(&y, 0, o->addr + o->len) != target)
			return -1;
		o->len += m;
		return 0;
	}
	n = o->len;
	if (put(o, &r, 0) || !is_jmp_of(o, n, x))
		return -1;
	return 0;
}

int cs_reloc_emit(const struct cs_reloc_plan *plan, uint64_t thunk, uint8_t *out, size_t cap,
		  const char **why)
{
	struct out o = {out, cap, 0, thunk};
	ZydisDecoder d;
	unsigned off;
	struct insn x;

	if (!plan || plan->window < CS_PATCH_JMP_SIZE || plan->window > sizeof(plan->orig)) {
		*why = "invalid plan";
		return -1;
	}
	decoder_init(&d);
	for (off = 0; off < plan->window; off += x.in.length) {
		uint64_t addr = plan->patch + off;
		int i;

		if (decode(&d, plan->orig + off, plan->window - off, &x)) {
			*why = "undecodable instruction in the window";
			return -1;
		}
		i = rel_imm(&x);
		if (x.in.mnemonic == ZYDIS_MNEMONIC_CALL) {
			if (put_call(&o, &x, addr, addr + x.in.length)) {
				*why = "call cannot be emulated";
				return -1;
			}
		} else if (i >= 0 &&
			   (x.in.mnemonic == ZYDIS_MNEMONIC_JMP ||
			    x.in.meta.category == ZYDIS_CATEGORY_COND_BR) &&
			   !is_loop_like(x.in.mnemonic)) {
			if (put_jump(&o, x.in.mnemonic, abs_target(&x, i, addr))) {
				*why = "branch cannot be re-encoded";
				return -1;
			}
		} else if (i >= 0) {
			*why = "relative operand that cannot be re-encoded";
			return -1;
		} else if (rip_mem(&x) >= 0) {
			size_t n;

			if (reencode_rip(&x, addr, o.addr + o.len, o.buf + o.len, o.cap - o.len,
					 &n)) {
				*why = "rip-relative operand out of reach of the thunk";
				return -1;
			}
			o.len += n;
		} else if (put_bytes(&o, plan->orig + off, x.in.length)) {
			*why = "thunk buffer too small";
			return -1;
		}
	}
	if (put_jump(&o, ZYDIS_MNEMONIC_JMP, plan->patch + plan->window)) {
		*why = "thunk buffer too small";
		return -1;
	}
	*why = NULL;
	return (int)o.len;
}

/* ---- unwind information for a thunk ---- */

struct cfi_out {
	uint8_t *buf;
	size_t cap, len;
	size_t row; /* thunk offset of the last row */
};

static void cfi_byte(struct cfi_out *c, unsigned b)
{
	if (c->len < c->cap)
		c->buf[c->len] = (uint8_t)b;
	c->len++;
}

static void cfi_uleb(struct cfi_out *c, uint64_t v)
{
	do {
		cfi_byte(c, (unsigned)(v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

/* A new row at thunk offset at. */
static void cfi_advance(struct cfi_out *c, size_t at)
{
	size_t d = at - c->row;

	if (!d)
		return;
	if (d < 64) {
		cfi_byte(c, 0x40 | (unsigned)d); /* DW_CFA_advance_loc */
	} else if (d < 256) {
		cfi_byte(c, 0x02); /* DW_CFA_advance_loc1 */
		cfi_byte(c, (unsigned)d);
	} else {
		cfi_byte(c, 0x03); /* DW_CFA_advance_loc2 */
		cfi_byte(c, (unsigned)(d & 0xff));
		cfi_byte(c, (unsigned)(d >> 8));
	}
	c->row = at;
}

/* DWARF number of a callee-saved register (x86-64 psABI), or 0. */
static unsigned dwarf_saved(ZydisRegister r)
{
	switch (family(r)) {
	case ZYDIS_REGISTER_RBX:
		return 3;
	case ZYDIS_REGISTER_RBP:
		return 6;
	case ZYDIS_REGISTER_R12:
		return 12;
	case ZYDIS_REGISTER_R13:
		return 13;
	case ZYDIS_REGISTER_R14:
		return 14;
	case ZYDIS_REGISTER_R15:
		return 15;
	default:
		return 0;
	}
}

/* Bits (1 << DWARF number) of the callee-saved registers x writes, apart
 * from rsp and the one a pop restores. */
static unsigned saved_written(const struct insn *x)
{
	unsigned i, bits = 0, r;

	for (i = 0; i < x->in.operand_count; i++)
		if (x->op[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (x->op[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
		    (r = dwarf_saved(x->op[i].reg.value)))
			bits |= 1u << r;
	return bits;
}

size_t cs_reloc_cfi(const uint8_t *code, size_t n, size_t at, uint8_t *out, size_t cap)
{
	struct cfi_out c = {out, cap, 0, at};
	int64_t depth = 8; /* CFA - rsp: the return address only */
	int on_rbp = 0, depth_known = 1;
	/* callee-saved registers with a slot in the rows; the ones written
	 * in the window (bits 1 << DWARF number) */
	unsigned in_slot = 0, changed = 0;
	ZydisDecoder d;
	struct insn x;

	decoder_init(&d);
	while (at < n && !decode(&d, code + at, n - at, &x)) {
		size_t next = at + x.in.length;
		ZydisMnemonic m = x.in.mnemonic;
		int64_t was = depth;
		unsigned saved = 0, restored = 0, written = saved_written(&x);

		if (m == ZYDIS_MNEMONIC_JMP) {
			/* The jump back, or to an emulated call's callee
			 * (rel32, or jmp *0(%rip) and the address): the end.
			 * Else the far jump of an inverted jcc, which the
			 * instructions after its address follow: not read. */
			if (next == n || (next + 8 == n && rip_mem(&x) >= 0 &&
					  x.op[0].mem.disp.value == 0))
				break;
			goto unknown;
		}
		if (m == ZYDIS_MNEMONIC_CALL) {
			/* An emulated call (put_return_address): the slot it
			 * pushes becomes the callee's return address, into the
			 * original code, whose own CFI takes over there. */
			depth += 8;
		} else if (m == ZYDIS_MNEMONIC_PUSH) {
			depth += x.in.operand_width / 8;
			if (x.op[0].type == ZYDIS_OPERAND_TYPE_REGISTER)
				saved = dwarf_saved(x.op[0].reg.value);
		} else if (m == ZYDIS_MNEMONIC_POP && !is_reg(&x, 0, ZYDIS_REGISTER_RBP) &&
			   !is_reg(&x, 0, ZYDIS_REGISTER_RSP)) {
			depth -= x.in.operand_width / 8;
			/* the pop of a pushed register: its caller's value
			 * is back (a push's slot holds it, below), and the
			 * slot may be pushed over */
			if (x.op[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			    (restored = dwarf_saved(x.op[0].reg.value)) &&
			    (in_slot & (1u << restored)))
				written &= ~(1u << restored);
			else
				restored = 0;
		} else if ((m == ZYDIS_MNEMONIC_SUB || m == ZYDIS_MNEMONIC_ADD) &&
			   is_reg(&x, 0, ZYDIS_REGISTER_RSP) &&
			   x.op[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			depth += (m == ZYDIS_MNEMONIC_SUB ? 1 : -1) * x.op[1].imm.value.s;
		} else if (m == ZYDIS_MNEMONIC_LEA && is_reg(&x, 0, ZYDIS_REGISTER_RSP) &&
			   family(x.op[1].mem.base) == ZYDIS_REGISTER_RSP &&
			   x.op[1].mem.index == ZYDIS_REGISTER_NONE) {
			depth -= x.op[1].mem.disp.value;
		} else if (m == ZYDIS_MNEMONIC_MOV && !on_rbp && depth_known &&
			   is_reg(&x, 0, ZYDIS_REGISTER_RBP) && is_reg(&x, 1, ZYDIS_REGISTER_RSP) &&
			   x.op[0].size == 64) {
			on_rbp = 1; /* CFA = rbp + depth from here */
			cfi_advance(&c, next);
			cfi_byte(&c, 0x0d); /* DW_CFA_def_cfa_register */
			cfi_uleb(&c, 6);
		} else if (writes(&x, ZYDIS_REGISTER_RSP) ||
			   (on_rbp && writes(&x, ZYDIS_REGISTER_RBP))) {
			if (!on_rbp || writes(&x, ZYDIS_REGISTER_RBP))
				goto unknown;
			depth_known = 0; /* the CFA stays rbp-based */
		}
		/* A push of a callee-saved register changed in the window
		 * (since entry, or since its last push): the slot does not
		 * hold the caller's value. */
		changed |= written;
		if (saved && (changed & (1u << saved)))
			goto unknown;
		if (depth != was) {
			if (!depth_known || depth < 8)
				goto unknown;
			if (!on_rbp) {
				cfi_advance(&c, next);
				cfi_byte(&c, 0x0e); /* DW_CFA_def_cfa_offset */
				cfi_uleb(&c, (uint64_t)depth);
			}
		}
		if (saved) {
			/* the offset is factored by 8: a slot off that
			 * grid (sub $4,%rsp before) cannot be said */
			if (!depth_known || depth % 8)
				goto unknown;
			cfi_advance(&c, next);
			cfi_byte(&c, 0x80 | saved); /* DW_CFA_offset, factored by -8 */
			cfi_uleb(&c, (uint64_t)depth / 8);
			in_slot |= 1u << saved;
		}
		if (restored) {
			cfi_advance(&c, next);
			cfi_byte(&c, 0xc0 | restored); /* DW_CFA_restore */
			in_slot &= ~(1u << restored);
			changed &= ~(1u << restored);
		}
		at = next;
		if (m == ZYDIS_MNEMONIC_CALL)
			break;
	}
	return c.len;
unknown:
	/* Not followed: an unwinder stops here rather than go wrong. */
	cfi_advance(&c, at + x.in.length);
	cfi_byte(&c, 0x07); /* DW_CFA_undefined */
	cfi_uleb(&c, 16);
	return c.len;
}

static size_t put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return 4;
}

static size_t put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return 8;
}

/* An .eh_frame for n stubs and their thunks (one FDE each, covering the
 * stub and its thunk; the CIE first, a zero length last): stub i's bytes
 * are at code[i], run at addr[i], len[i] of them (the stub's
 * CS_STUB_BYTES, then the thunk).  The stub (make_stub in entry.c): the
 * caller's return address on top (CFA = rsp + 8), then the index pushed
 * (rsp + 16); the thunk: called by the trampoline (rsp + 8), then as its
 * instructions move rsp (cs_reloc_cfi).  Returns the malloc'd blob and
 * *size, or NULL. */
uint8_t *cs_unwind_blob(const uint8_t *const *code, const uint64_t *addr, const unsigned *len,
			size_t n, size_t *size)
{
	/* CIE: version 1, no augmentation (absolute FDE addresses), code
	 * alignment 1, data alignment -8, return address column 16; CFA =
	 * rsp + 8, return address at CFA - 8; nops to a multiple of 8 with the
	 * length. */
	static const uint8_t cie[] = {0, 0, 0, 0, 1, 0, 1, 0x78, 16, 0x0c, 7, 8, 0x90, 1, 0, 0, 0, 0, 0, 0};
	uint8_t cfi[256], *blob, *p;
	size_t i, cap = 4 + sizeof(cie) + 4, l;

	for (i = 0; i < n; i++)
		cap += 4 + 4 + 16 + 8 + sizeof(cfi);
	if (!(blob = calloc(1, cap)))
		return NULL;
	p = blob;
	p += put32(p, sizeof(cie));
	memcpy(p, cie, sizeof(cie));
	p += sizeof(cie);
	for (i = 0; i < n; i++) {
		uint8_t *fde = p;

		/* advance 5 (past push $idx): CFA = rsp + 16; advance to the
		 * thunk: CFA = rsp + 8. */
		cfi[0] = 0x40 | 5;
		cfi[1] = 0x0e;
		cfi[2] = 16;
		cfi[3] = 0x40 | (CS_STUB_BYTES - 5);
		cfi[4] = 0x0e;
		cfi[5] = 8;
		l = 6 + cs_reloc_cfi(code[i], len[i], CS_STUB_BYTES, cfi + 6, sizeof(cfi) - 6);
		if (l > sizeof(cfi))
			l = 6; /* cannot happen: a thunk is a few instructions */
		p += 4;
		p += put32(p, (uint32_t)(p - blob));
		p += put64(p, addr[i]);
		p += put64(p, len[i]);
		memcpy(p, cfi, l);
		p += l;
		while ((p - fde) % 8)
			*p++ = 0; /* DW_CFA_nop */
		put32(fde, (uint32_t)(p - fde - 4));
	}
	p += put32(p, 0); /* the end */
	*size = (size_t)(p - blob);
	return blob;
}

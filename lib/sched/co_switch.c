/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Machine context switch for the coroutines.
 *
 * x86_64 (System V ABI): the callee-saved state is rbx, rbp, r12-r15, rsp,
 * the MXCSR control bits and the x87 control word. co_ctx_switch() pushes
 * them on the running stack, stores rsp in from->sp, loads to->sp and pops
 * the same frame from there. A new context gets a hand-made frame whose
 * return address is a trampoline that calls entry(arg).
 *
 * aarch64 (AAPCS64): x19-x28, x29 (fp), x30 (lr), sp, d8-d15 and FPCR, the
 * same scheme with a 176-byte frame; the switch "returns" through x30.
 *
 * Other architectures: getcontext/makecontext/swapcontext. Slower (a
 * sigprocmask system call per switch), but correct everywhere glibc is.
 */
#include <stdint.h>
#include <string.h>

#include "sched_private.h"

#if defined(SCHED_CO_ASM) && defined(__x86_64__)

/*
 * Frame saved by co_ctx_switch, from the saved rsp upwards (8-byte words):
 *   [0] mxcsr (low 4 bytes), x87 control word (next 2 bytes)
 *   [1] r15  [2] r14  [3] r13  [4] r12  [5] rbx  [6] rbp
 *   [7] return address
 */
#define CO_FRAME_WORDS 8
#define CO_FRAME_R13 3
#define CO_FRAME_R12 4
#define CO_FRAME_RBP 6
#define CO_FRAME_RET 7

/* ABI defaults: all exceptions masked, round to nearest; x87 extended precision. */
#define CO_MXCSR_DEFAULT 0x1f80u
#define CO_X87CW_DEFAULT 0x037fu

void co_ctx_switch_asm(void **from_sp, void *to_sp);
void co_ctx_trampoline(void);

__asm__(
	".text\n"
	".p2align 4\n"
	".globl co_ctx_switch_asm\n"
	".hidden co_ctx_switch_asm\n"
	".type co_ctx_switch_asm, @function\n"
	"co_ctx_switch_asm:\n"
	"	pushq %rbp\n"
	"	pushq %rbx\n"
	"	pushq %r12\n"
	"	pushq %r13\n"
	"	pushq %r14\n"
	"	pushq %r15\n"
	"	subq $8, %rsp\n"
	"	stmxcsr (%rsp)\n"
	"	fnstcw 4(%rsp)\n"
	"	movl (%rsp), %eax\n"
	"	movzwl 4(%rsp), %ecx\n"
	"	movq %rsp, (%rdi)\n"
	"	movq %rsi, %rsp\n"
	/* Loading MXCSR/x87 CW is slow: only when the target's differ. */
	"	cmpl (%rsp), %eax\n"
	"	jne 2f\n"
	"	cmpw 4(%rsp), %cx\n"
	"	jne 2f\n"
	"1:	addq $8, %rsp\n"
	"	popq %r15\n"
	"	popq %r14\n"
	"	popq %r13\n"
	"	popq %r12\n"
	"	popq %rbx\n"
	"	popq %rbp\n"
	"	ret\n"
	"2:	ldmxcsr (%rsp)\n"
	"	fldcw 4(%rsp)\n"
	"	jmp 1b\n"
	".size co_ctx_switch_asm, .-co_ctx_switch_asm\n"
	"\n"
	/* Entered by ret with rsp 16-byte aligned: r13 = entry, r12 = arg. */
	".p2align 4\n"
	".globl co_ctx_trampoline\n"
	".hidden co_ctx_trampoline\n"
	".type co_ctx_trampoline, @function\n"
	"co_ctx_trampoline:\n"
	"	movq %r12, %rdi\n"
	"	callq *%r13\n"
	"	ud2\n"
	".size co_ctx_trampoline, .-co_ctx_trampoline\n");

void
co_ctx_init(struct co_ctx *ctx, void *stack_lo, size_t size,
	    co_entry_fn entry, void *arg)
{
	/* Keep 16 zero bytes at the top: a null return address ends backtraces. */
	uintptr_t top = RTE_ALIGN_FLOOR((uintptr_t)stack_lo + size, 16) - 16;
	uint64_t *frame = (uint64_t *)(top - CO_FRAME_WORDS * sizeof(uint64_t));

	memset(frame, 0, (CO_FRAME_WORDS + 2) * sizeof(uint64_t));
	frame[0] = CO_MXCSR_DEFAULT | ((uint64_t)CO_X87CW_DEFAULT << 32);
	frame[CO_FRAME_R12] = (uint64_t)(uintptr_t)arg;
	frame[CO_FRAME_R13] = (uint64_t)(uintptr_t)entry;
	frame[CO_FRAME_RBP] = 0;
	frame[CO_FRAME_RET] = (uint64_t)(uintptr_t)co_ctx_trampoline;
	ctx->sp = frame;
}

void
co_ctx_switch(struct co_ctx *from, struct co_ctx *to)
{
	co_ctx_switch_asm(&from->sp, to->sp);
}

const char *
co_ctx_impl(void)
{
	return "x86_64 asm";
}

#elif defined(SCHED_CO_ASM) && defined(__aarch64__)

/*
 * Frame saved by co_ctx_switch, from the saved sp upwards (8-byte words):
 *   [0..9]   x19..x28     [10] x29 (fp)   [11] x30 (lr: where to resume)
 *   [12..19] d8..d15      [20] FPCR       [21] padding (16-byte frame)
 */
#define CO_FRAME_WORDS 22
#define CO_FRAME_X19 0
#define CO_FRAME_X20 1
#define CO_FRAME_FP 10
#define CO_FRAME_LR 11
#define CO_FRAME_FPCR 20

void co_ctx_switch_asm(void **from_sp, void *to_sp);
void co_ctx_trampoline(void);

__asm__(
	".text\n"
	".p2align 4\n"
	".globl co_ctx_switch_asm\n"
	".hidden co_ctx_switch_asm\n"
	".type co_ctx_switch_asm, %function\n"
	"co_ctx_switch_asm:\n"
	"	sub sp, sp, #176\n"
	"	stp x19, x20, [sp, #0]\n"
	"	stp x21, x22, [sp, #16]\n"
	"	stp x23, x24, [sp, #32]\n"
	"	stp x25, x26, [sp, #48]\n"
	"	stp x27, x28, [sp, #64]\n"
	"	stp x29, x30, [sp, #80]\n"
	"	stp d8, d9, [sp, #96]\n"
	"	stp d10, d11, [sp, #112]\n"
	"	stp d12, d13, [sp, #128]\n"
	"	stp d14, d15, [sp, #144]\n"
	"	mrs x9, fpcr\n"
	"	str x9, [sp, #160]\n"
	"	mov x10, sp\n"
	"	str x10, [x0]\n"
	"	mov sp, x1\n"
	"	ldp x19, x20, [sp, #0]\n"
	"	ldp x21, x22, [sp, #16]\n"
	"	ldp x23, x24, [sp, #32]\n"
	"	ldp x25, x26, [sp, #48]\n"
	"	ldp x27, x28, [sp, #64]\n"
	"	ldp x29, x30, [sp, #80]\n"
	"	ldp d8, d9, [sp, #96]\n"
	"	ldp d10, d11, [sp, #112]\n"
	"	ldp d12, d13, [sp, #128]\n"
	"	ldp d14, d15, [sp, #144]\n"
	"	ldr x9, [sp, #160]\n"
	"	msr fpcr, x9\n"
	"	add sp, sp, #176\n"
	"	ret\n"
	".size co_ctx_switch_asm, .-co_ctx_switch_asm\n"
	"\n"
	/* Entered by ret with sp 16-byte aligned: x20 = entry, x19 = arg. */
	".p2align 4\n"
	".globl co_ctx_trampoline\n"
	".hidden co_ctx_trampoline\n"
	".type co_ctx_trampoline, %function\n"
	"co_ctx_trampoline:\n"
	"	mov x0, x19\n"
	"	blr x20\n"
	"	brk #0\n"
	".size co_ctx_trampoline, .-co_ctx_trampoline\n");

void
co_ctx_init(struct co_ctx *ctx, void *stack_lo, size_t size,
	    co_entry_fn entry, void *arg)
{
	/* Keep 16 zero bytes at the top: a null frame record ends backtraces. */
	uintptr_t top = RTE_ALIGN_FLOOR((uintptr_t)stack_lo + size, 16) - 16;
	uint64_t *frame = (uint64_t *)(top - CO_FRAME_WORDS * sizeof(uint64_t));

	memset(frame, 0, (CO_FRAME_WORDS + 2) * sizeof(uint64_t));
	frame[CO_FRAME_X19] = (uint64_t)(uintptr_t)arg;
	frame[CO_FRAME_X20] = (uint64_t)(uintptr_t)entry;
	frame[CO_FRAME_FP] = 0;
	frame[CO_FRAME_LR] = (uint64_t)(uintptr_t)co_ctx_trampoline;
	frame[CO_FRAME_FPCR] = 0;   /* Linux default: round to nearest, no traps */
	ctx->sp = frame;
}

void
co_ctx_switch(struct co_ctx *from, struct co_ctx *to)
{
	co_ctx_switch_asm(&from->sp, to->sp);
}

const char *
co_ctx_impl(void)
{
	return "aarch64 asm";
}

#else /* SCHED_CO_UCONTEXT */

/* makecontext passes int arguments only: split the two pointers. */
static void
co_ucontext_entry(unsigned int e_hi, unsigned int e_lo,
		  unsigned int a_hi, unsigned int a_lo)
{
	uintptr_t e = ((uintptr_t)(((uint64_t)e_hi << 32) | e_lo));
	uintptr_t a = ((uintptr_t)(((uint64_t)a_hi << 32) | a_lo));
	co_entry_fn entry;

	memcpy(&entry, &e, sizeof(entry));
	entry((void *)a);
}

void
co_ctx_init(struct co_ctx *ctx, void *stack_lo, size_t size,
	    co_entry_fn entry, void *arg)
{
	uint64_t e = 0, a = (uint64_t)(uintptr_t)arg;
	uintptr_t ep;

	memcpy(&ep, &entry, sizeof(ep));
	e = (uint64_t)ep;
	getcontext(&ctx->uc);
	ctx->uc.uc_stack.ss_sp = stack_lo;
	ctx->uc.uc_stack.ss_size = size;
	ctx->uc.uc_link = NULL;
	makecontext(&ctx->uc, (void (*)(void))co_ucontext_entry, 4,
		    (unsigned int)(e >> 32), (unsigned int)e,
		    (unsigned int)(a >> 32), (unsigned int)a);
}

void
co_ctx_switch(struct co_ctx *from, struct co_ctx *to)
{
	swapcontext(&from->uc, &to->uc);
}

const char *
co_ctx_impl(void)
{
	return "ucontext";
}

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * delay_kmod - hold a thread for a while right after a kernel function
 * returns (or right before it runs), to open a race window that is
 * otherwise a few instructions wide.
 *
 * The first @count times @func returns (to code of module @caller, if
 * given), the thread that called it waits @delay_ms before it goes on,
 * with a line in the kernel log when the wait begins.  Meanwhile the test
 * does, from another CPU, what has to fall into the window.  @hits
 * (read-only) counts the waits begun and @ended those over, so the test
 * knows when to act and whether something it did waited for the hold.
 *
 * Two ways to wait:
 *
 * - @sleep=0 (default): a kretprobe busy-waits (mdelay()) in its return
 *   handler, which must not sleep; keep @delay_ms well under the soft
 *   lockup threshold.  Any function can be held so, in any context.  But
 *   a busy wait also holds off RCU grace periods, so it cannot open a
 *   window that something waiting for one (a module unload,
 *   synchronize_rcu()) has to cross: that something waits for the hold.
 *
 * - @sleep=1: a kprobe on @func's entry sends the call to
 *   delay_divert(), which calls @func itself, then sleeps (msleep()) and
 *   returns @func's value to the caller (@before=1: sleeps first).  The
 *   thread is off the CPU, as a thread that blocks is.  Only for a function of at most six integer
 *   or pointer arguments (x86-64: all in registers), returning nothing, an
 *   integer or a pointer, and called where sleeping is allowed.
 *
 * Users:
 * - srpt-rogue, @func = target_setup_session: the moment a new SRP
 *   login's LIO session becomes reachable through its ACL (issue 34,
 *   item 8: the ACL's rmdir and a TPG disable then race the rest of the
 *   login);
 * - srpt-rogue, @sleep=1, @func = wake_up_var, @caller = ib_srpt: a
 *   channel's release work, held asleep right after it woke the waiters
 *   for its TPG and then its port, while ib_srpt unloads (issue 34, item
 *   12: the unload must wait until the work is out of the module's code);
 * - srpt-rogue, with delay2_kmod (this file built under a second name):
 *   @sleep=1, @before=1, @func = srpt_queue_data_in, @caller =
 *   target_core_mod holds a READ's response until its channel is closed,
 *   and @sleep=1, @func = transport_generic_free_cmd, @caller = ib_srpt holds
 *   the CQ's thread after srpt_send_done() freed that READ, the last
 *   command the channel's release waits for (issue 34, item 12: nothing
 *   of the channel may be touched after).
 */

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <asm/ibt.h>

static char *func = "target_setup_session";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "the function whose returns are delayed");

static char *caller;
module_param(caller, charp, 0444);
MODULE_PARM_DESC(caller, "only returns into this module's code (default: any)");

static unsigned int delay_ms = 2000;
module_param(delay_ms, uint, 0444);
MODULE_PARM_DESC(delay_ms, "wait after each delayed return (at most 5000 busy, 60000 asleep)");

static bool sleep;
module_param(sleep, bool, 0444);
MODULE_PARM_DESC(sleep, "sleep instead of busy-waiting (see the file's header)");

static bool before;
module_param(before, bool, 0444);
MODULE_PARM_DESC(before, "with sleep: hold the call before it runs, not after");

static atomic_t count = ATOMIC_INIT(1);
module_param_named(count, count.counter, int, 0444);
MODULE_PARM_DESC(count, "how many returns to delay; the rest go straight on");

static atomic_t hits = ATOMIC_INIT(0);
module_param_named(hits, hits.counter, int, 0444);
MODULE_PARM_DESC(hits, "waits begun so far (read-only)");

static atomic_t ended = ATOMIC_INIT(0);
module_param_named(ended, ended.counter, int, 0444);
MODULE_PARM_DESC(ended, "waits over so far (read-only)");

/*
 * Whether a return to @ret is one to hold, and if so, take one of @count.
 * The module is told by the symbol's "[name]" suffix: module lookups by
 * address are not exported.
 * Context: a kprobe handler.
 */
static bool delay_claim(unsigned long ret)
{
	char sym[KSYM_SYMBOL_LEN];
	size_t n, len;

	if (caller) {
		len = sprint_symbol(sym, ret);
		n = strlen(caller);
		if (len < n + 3 || sym[len - n - 2] != '[' || sym[len - 1] != ']' ||
		    strncmp(sym + len - n - 1, caller, n))
			return false;
	}
	return atomic_dec_if_positive(&count) >= 0;
}

static void delay_begin(void)
{
	pr_info("%s: %s %s in %s[%d], holding it %u ms%s\n", KBUILD_MODNAME,
		func, before ? "called" : "returned", current->comm,
		task_pid_nr(current), delay_ms, sleep ? " asleep" : "");
	atomic_inc(&hits);
}

static void delay_sleep(void)
{
	might_sleep();
	delay_begin();
	msleep(delay_ms);
	atomic_inc(&ended);
}

/* @sleep=0: busy-wait in the return handler. */
static int delay_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (!delay_claim((unsigned long)get_kretprobe_retaddr(ri)))
		return 0;
	delay_begin();
	mdelay(delay_ms);
	atomic_inc(&ended);
	return 0;
}

static struct kretprobe delay_probe = {
	.handler = delay_ret,
	.maxactive = 4,
};

/* @sleep=1: where @func begins, for delay_divert() to call it. */
typedef unsigned long (*delay_fn_t)(unsigned long, unsigned long,
				    unsigned long, unsigned long,
				    unsigned long, unsigned long);
static delay_fn_t delay_target;

/*
 * Stands in for @func on a held call: the kprobe moved the call here with
 * @func's arguments still in their registers and its caller's return
 * address on the stack, so this returns straight to that caller.
 */
static unsigned long delay_divert(unsigned long a0, unsigned long a1,
				  unsigned long a2, unsigned long a3,
				  unsigned long a4, unsigned long a5)
{
	unsigned long ret;

	if (before)
		delay_sleep();
	ret = delay_target(a0, a1, a2, a3, a4, a5);
	if (!before)
		delay_sleep();
	return ret;
}

static int delay_entry(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long ret = *(unsigned long *)kernel_stack_pointer(regs);

	/* delay_divert()'s own call of @func goes through. */
	if (within_module(ret, THIS_MODULE) || !delay_claim(ret))
		return 0;
	instruction_pointer_set(regs, (unsigned long)delay_divert);
	return 1;	/* @func's first instruction is not run here */
}

/* Present so that the probe stays a breakpoint, never a jump. */
static void delay_entry_post(struct kprobe *p, struct pt_regs *regs,
			     unsigned long flags)
{
}

static struct kprobe delay_entry_probe = {
	.pre_handler = delay_entry,
	.post_handler = delay_entry_post,
	.flags = KPROBE_FLAG_DISABLED,	/* until delay_target is known */
};

static int __init delay_init(void)
{
	unsigned long addr;
	int ret;

	if (delay_ms > (sleep ? 60000 : 5000) || (before && !sleep))
		return -EINVAL;
	if (!sleep) {
		delay_probe.kp.symbol_name = func;
		ret = register_kretprobe(&delay_probe);
		goto out;
	}
	delay_entry_probe.symbol_name = func;
	ret = register_kprobe(&delay_entry_probe);
	if (ret)
		goto out;
	/* With IBT the probe sits after @func's ENDBR; a call goes before. */
	addr = (unsigned long)delay_entry_probe.addr;
	if (is_endbr(*(u32 *)(addr - ENDBR_INSN_SIZE)))
		addr -= ENDBR_INSN_SIZE;
	delay_target = (delay_fn_t)addr;
	ret = enable_kprobe(&delay_entry_probe);
	if (ret)
		unregister_kprobe(&delay_entry_probe);
out:
	if (ret)
		pr_err("%s: cannot probe %s (%d)\n", KBUILD_MODNAME, func, ret);
	return ret;
}

static void __exit delay_exit(void)
{
	if (!sleep) {
		unregister_kretprobe(&delay_probe);
		return;
	}
	unregister_kprobe(&delay_entry_probe);
	/* A thread asleep in delay_divert() is in this module's code. */
	while (atomic_read(&ended) != atomic_read(&hits))
		msleep(20);
}

module_init(delay_init);
module_exit(delay_exit);
MODULE_DESCRIPTION("Hold a thread after a function returns, for race tests");
MODULE_LICENSE("GPL");

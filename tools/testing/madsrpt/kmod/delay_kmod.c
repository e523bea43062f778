// SPDX-License-Identifier: GPL-2.0
/*
 * delay_kmod - hold a CPU for a while right after a kernel function returns,
 * to open a race window that is otherwise a few instructions wide.
 *
 * A kretprobe on @func: the first @count times @func returns, the thread
 * that called it busy-waits @delay_ms before it goes on, with a line in the
 * kernel log when the wait begins.  Meanwhile the test does, from another
 * CPU, what has to fall into the window.  @hits (read-only) counts the
 * waits begun, so the test knows when to act.  The wait is mdelay(): a
 * kretprobe handler must not sleep; keep @delay_ms well under the soft
 * lockup threshold.  A busy wait also holds off RCU grace periods, so it
 * cannot open a window that something waiting for one (a module unload,
 * synchronize_rcu()) has to cross: that something waits for the hold.
 *
 * Used by srpt-rogue with @func = target_setup_session: the moment a new
 * SRP login's LIO session becomes reachable through its ACL (issue 34,
 * item 8: the ACL's rmdir and a TPG disable then race the rest of the
 * login).
 */

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/module.h>

static char *func = "target_setup_session";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "the function whose returns are delayed");

static unsigned int delay_ms = 2000;
module_param(delay_ms, uint, 0444);
MODULE_PARM_DESC(delay_ms, "busy wait after each delayed return (at most 5000)");

static atomic_t count = ATOMIC_INIT(1);
module_param_named(count, count.counter, int, 0444);
MODULE_PARM_DESC(count, "how many returns to delay; the rest go straight on");

static atomic_t hits = ATOMIC_INIT(0);
module_param_named(hits, hits.counter, int, 0444);
MODULE_PARM_DESC(hits, "returns delayed so far (read-only)");

static int delay_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (atomic_dec_if_positive(&count) < 0)
		return 0;
	pr_info("delay_kmod: %s returned in %s[%d], holding it %u ms\n",
		func, current->comm, task_pid_nr(current), delay_ms);
	atomic_inc(&hits);
	mdelay(delay_ms);
	return 0;
}

static struct kretprobe delay_probe = {
	.handler = delay_ret,
	.maxactive = 4,
};

static int __init delay_init(void)
{
	int ret;

	if (delay_ms > 5000)
		return -EINVAL;
	delay_probe.kp.symbol_name = func;
	ret = register_kretprobe(&delay_probe);
	if (ret)
		pr_err("delay_kmod: cannot probe %s (%d)\n", func, ret);
	return ret;
}

static void __exit delay_exit(void)
{
	unregister_kretprobe(&delay_probe);
}

module_init(delay_init);
module_exit(delay_exit);
MODULE_DESCRIPTION("Busy-wait after a function returns, for race tests");
MODULE_LICENSE("GPL");

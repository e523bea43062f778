// SPDX-License-Identifier: GPL-2.0
/*
 * sa_storm_kmod - an SA query storm: every host of a fabric asks the SA for
 * PathRecords at once, as the processes of an MPI job do when it starts.
 *
 * Loaded on an ibdevsim fabric whose subnet manager is up, it finds the
 * devices named @prefix0, @prefix1, ... (all but @skip, the SM's own) and
 * makes each of them, port 1, a requester: it sends @queries PathRecord
 * queries through the kernel's SA client (ib_sa_path_rec_get(), the call
 * rdma_cm's route resolution makes), @window of them outstanding at a
 * time, each for the path to another host (host i asks for hosts i + 1,
 * i + 1 + 7919, ... modulo the number of hosts, never itself), each with
 * @timeout_ms as the caller's deadline (ib_sa sends it up to 11 times,
 * every @timeout_ms / 10).  All hosts start together; each answer is
 * checked (the record's SGID, DGID and DLID must be those of the two
 * hosts) and timed from the call to the callback.  When every query came
 * back, the module logs one line:
 *
 *   sa_storm hosts=H queries=Q window=W timeout_ms=T answered=A
 *   timeouts=X errors=E wrong=R elapsed_ms=M goodput=G p50_us=P
 *   p99_us=Q max_us=U starved_hosts=S min_host_answered=N
 *
 * goodput is answered queries per second from the first call to the last
 * callback; a starved host is one that had a query not answered within
 * its deadline.  The retries a storm causes are not seen by the caller:
 * the script that loads the module counts them from the ports' packet
 * counters.  The module loads (so that the script reads the line and
 * unloads it) whenever the run ended, unless an answer was wrong or no
 * query could be made.  The run happens in module init.
 */

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_verbs.h>

#define STORM_STRIDE		7919	/* a prime: spreads each host's peers */
#define STORM_MAX_MISSES	16	/* device numbers skipped before the end */

static char *prefix = "ibdevsim";
module_param(prefix, charp, 0444);
MODULE_PARM_DESC(prefix, "requesters are the devices named PREFIX0, PREFIX1, ...");

static char *skip = "ibdevsim0";
module_param(skip, charp, 0444);
MODULE_PARM_DESC(skip, "device that sends no query (the subnet manager's)");

static unsigned int max_hosts = 4096;
module_param(max_hosts, uint, 0444);
MODULE_PARM_DESC(max_hosts, "most requesters");

static unsigned int queries = 8;
module_param(queries, uint, 0444);
MODULE_PARM_DESC(queries, "PathRecord queries each host sends");

static unsigned int window = 2;
module_param(window, uint, 0444);
MODULE_PARM_DESC(window, "queries each host keeps outstanding");

static unsigned int timeout_ms = 2000;
module_param(timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "deadline of each query, as given to ib_sa");

struct storm_host;

/**
 * struct storm_query - one PathRecord query
 * @host: the requester
 * @to: the host whose path is asked for
 * @sa: ib_sa's handle, valid until @finished is set
 * @id: ib_sa's id of the query
 * @t0: when the query was made
 * @us: time to its callback, in microseconds
 * @status: 0 answered right, -EPROTO answered wrong, or ib_sa's error
 * @finished: the callback ran, or the query could not be made
 */
struct storm_query {
	struct storm_host *host;
	struct storm_host *to;
	struct ib_sa_query *sa;
	int id;
	ktime_t t0;
	u32 us;
	int status;
	bool finished;
};

/**
 * struct storm_host - a requester
 * @dev: its device, referenced
 * @gid: GID 0 of port 1
 * @lid: LID of port 1
 * @first: its first query in storm.q
 * @next: queries made so far (the next one's number)
 * @answered: queries answered right
 */
struct storm_host {
	struct ib_device *dev;
	union ib_gid gid;
	u16 lid;
	struct storm_query *first;
	atomic_t next;
	atomic_t answered;
};

static struct {
	struct storm_host *hosts;
	unsigned int nhosts;
	struct storm_query *q;
	atomic_t pending;		/* queries not finished, +1 for the run */
	struct completion all_done;
	atomic_long_t answered;
	atomic_long_t timeouts;
	atomic_long_t errors;
	atomic_long_t wrong;
	atomic64_t last_ns;		/* latest callback, ktime_get() */
} storm;

static struct ib_sa_client storm_client;

static void storm_post(struct storm_host *h, gfp_t gfp);

/* @q is over: count it once, and wake the run when it was the last. */
static void storm_finish(struct storm_query *q)
{
	s64 now = ktime_to_ns(ktime_get());
	s64 last = atomic64_read(&storm.last_ns);

	q->us = div_u64(now - ktime_to_ns(q->t0), NSEC_PER_USEC);
	while (now > last) {
		s64 seen = atomic64_cmpxchg(&storm.last_ns, last, now);

		if (seen == last)
			break;
		last = seen;
	}
	WRITE_ONCE(q->finished, true);
	if (atomic_dec_and_test(&storm.pending))
		complete(&storm.all_done);
}

/* ib_sa's callback: check and count the answer, then ask the next one. */
static void storm_done(int status, struct sa_path_rec *resp,
		       unsigned int num_prs, void *context)
{
	struct storm_query *q = context;
	struct storm_host *h = q->host;

	if (!status &&
	    (!num_prs || resp->rec_type != SA_PATH_REC_TYPE_IB ||
	     memcmp(&resp->sgid, &h->gid, sizeof(h->gid)) ||
	     memcmp(&resp->dgid, &q->to->gid, sizeof(q->to->gid)) ||
	     be32_to_cpu(sa_path_get_dlid(resp)) != q->to->lid))
		status = -EPROTO;
	q->status = status;
	if (!status) {
		atomic_long_inc(&storm.answered);
		atomic_inc(&h->answered);
	} else if (status == -ETIMEDOUT) {
		atomic_long_inc(&storm.timeouts);
	} else if (status == -EPROTO) {
		atomic_long_inc(&storm.wrong);
	} else {
		atomic_long_inc(&storm.errors);
	}
	storm_post(h, GFP_ATOMIC);
	storm_finish(q);
}

/* The host that query @k of @h asks for. */
static struct storm_host *storm_peer(struct storm_host *h, unsigned int k)
{
	unsigned int i = h - storm.hosts;
	unsigned int j;

	j = (i + 1 + (u64)k * STORM_STRIDE) % storm.nhosts;
	if (j == i)
		j = (j + 1) % storm.nhosts;
	return &storm.hosts[j];
}

/* Make @h's next query, if it has one left; one that fails is over. */
static void storm_post(struct storm_host *h, gfp_t gfp)
{
	ib_sa_comp_mask mask = IB_SA_PATH_REC_DGID | IB_SA_PATH_REC_SGID |
			       IB_SA_PATH_REC_PKEY | IB_SA_PATH_REC_NUMB_PATH |
			       IB_SA_PATH_REC_REVERSIBLE;
	struct sa_path_rec rec;
	struct storm_query *q;
	unsigned int k;
	int ret;

	for (;;) {
		k = atomic_inc_return(&h->next) - 1;
		if (k >= queries)
			return;
		q = &h->first[k];
		q->host = h;
		q->to = storm_peer(h, k);
		memset(&rec, 0, sizeof(rec));
		rec.rec_type = SA_PATH_REC_TYPE_IB;
		rec.sgid = h->gid;
		rec.dgid = q->to->gid;
		rec.pkey = cpu_to_be16(0xffff);
		rec.numb_path = 1;
		rec.reversible = 1;
		q->t0 = ktime_get();
		ret = ib_sa_path_rec_get(&storm_client, h->dev, 1, &rec, mask,
					 timeout_ms, gfp, storm_done, q,
					 &q->sa);
		if (ret >= 0) {
			q->id = ret;
			return;
		}
		q->status = ret;
		atomic_long_inc(&storm.errors);
		storm_finish(q);
	}
}

/* Find the requesters; fails unless there are two, all ports ACTIVE. */
static int storm_find_hosts(void)
{
	struct ib_port_attr attr;
	unsigned int i, misses = 0;
	struct ib_device *dev;
	char name[IB_DEVICE_NAME_MAX];
	int ret;

	for (i = 0; storm.nhosts < max_hosts && misses < STORM_MAX_MISSES;
	     i++) {
		snprintf(name, sizeof(name), "%s%u", prefix, i);
		dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
		if (!dev) {
			misses++;
			continue;
		}
		misses = 0;
		if (!strcmp(name, skip)) {
			ib_device_put(dev);
			continue;
		}
		storm.hosts[storm.nhosts].dev = dev;
		storm.nhosts++;
		ret = ib_query_port(dev, 1, &attr);
		if (ret)
			return ret;
		if (attr.state != IB_PORT_ACTIVE || !attr.lid ||
		    !rdma_cap_ib_sa(dev, 1)) {
			pr_err("sa_storm: %s port 1 is not an ACTIVE IB port with a LID\n",
			       name);
			return -ENETDOWN;
		}
		storm.hosts[storm.nhosts - 1].lid = attr.lid;
		ret = rdma_query_gid(dev, 1, 0,
				     &storm.hosts[storm.nhosts - 1].gid);
		if (ret)
			return ret;
	}
	return storm.nhosts >= 2 ? 0 : -ENODEV;
}

static int storm_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* Log the run's line; -EIO if an answer was wrong. */
static int storm_report(ktime_t start)
{
	unsigned long total = (unsigned long)storm.nhosts * queries;
	unsigned int i, starved = 0, min_answered = queries;
	long answered = atomic_long_read(&storm.answered);
	u64 elapsed_us, goodput = 0;
	u32 *lat, n = 0;

	lat = kvcalloc(max_t(unsigned long, answered, 1), sizeof(*lat),
		       GFP_KERNEL);
	if (!lat)
		return -ENOMEM;
	for (i = 0; i < total; i++)
		if (!storm.q[i].status && n < answered)
			lat[n++] = storm.q[i].us;
	sort(lat, n, sizeof(*lat), storm_cmp_u32, NULL);
	for (i = 0; i < storm.nhosts; i++) {
		unsigned int a = atomic_read(&storm.hosts[i].answered);

		if (a < queries)
			starved++;
		min_answered = min(min_answered, a);
	}
	elapsed_us = div_u64(atomic64_read(&storm.last_ns) - ktime_to_ns(start),
			     NSEC_PER_USEC);
	if (elapsed_us)
		goodput = div64_u64((u64)answered * USEC_PER_SEC, elapsed_us);
	pr_info("sa_storm hosts=%u queries=%u window=%u timeout_ms=%u answered=%ld timeouts=%ld errors=%ld wrong=%ld elapsed_ms=%llu goodput=%llu p50_us=%u p99_us=%u max_us=%u starved_hosts=%u min_host_answered=%u\n",
		storm.nhosts, queries, window, timeout_ms, answered,
		atomic_long_read(&storm.timeouts),
		atomic_long_read(&storm.errors), atomic_long_read(&storm.wrong),
		div_u64(elapsed_us, USEC_PER_MSEC), goodput,
		n ? lat[n / 2] : 0, n ? lat[(u64)n * 99 / 100] : 0,
		n ? lat[n - 1] : 0, starved, min_answered);
	kvfree(lat);
	if (atomic_long_read(&storm.wrong) || !answered)
		return -EIO;
	return 0;
}

/* Cancel what is still out after far more than its deadline. */
static void storm_cancel_all(void)
{
	unsigned long i, total = (unsigned long)storm.nhosts * queries;

	for (i = 0; i < total; i++)
		if (storm.q[i].host && !READ_ONCE(storm.q[i].finished))
			ib_sa_cancel_query(storm.q[i].id, storm.q[i].sa);
}

static int storm_run(void)
{
	unsigned int i, w;
	ktime_t start;

	for (i = 0; i < storm.nhosts; i++)
		storm.hosts[i].first = &storm.q[(unsigned long)i * queries];
	atomic_set(&storm.pending, storm.nhosts * queries + 1);
	start = ktime_get();
	atomic64_set(&storm.last_ns, ktime_to_ns(start));
	/* Round by round, so that every host has its first query out soon. */
	for (w = 0; w < window; w++)
		for (i = 0; i < storm.nhosts; i++)
			storm_post(&storm.hosts[i], GFP_KERNEL);
	if (atomic_dec_and_test(&storm.pending))
		complete(&storm.all_done);
	if (!wait_for_completion_timeout(&storm.all_done,
					 msecs_to_jiffies(timeout_ms * 4 +
							  120 * MSEC_PER_SEC))) {
		pr_err("sa_storm: queries still out long after their deadline; cancelling\n");
		storm_cancel_all();
		wait_for_completion(&storm.all_done);
		storm_report(start);
		return -ETIMEDOUT;
	}
	return storm_report(start);
}

static int __init sa_storm_init(void)
{
	unsigned int i;
	int ret;

	if (!queries || !window || !timeout_ms || !max_hosts ||
	    (u64)max_hosts * queries > INT_MAX)
		return -EINVAL;
	init_completion(&storm.all_done);
	storm.hosts = kvcalloc(max_hosts, sizeof(*storm.hosts), GFP_KERNEL);
	if (!storm.hosts)
		return -ENOMEM;
	ib_sa_register_client(&storm_client);
	ret = storm_find_hosts();
	if (ret)
		goto out;
	storm.q = kvcalloc((unsigned long)storm.nhosts * queries,
			   sizeof(*storm.q), GFP_KERNEL);
	if (!storm.q) {
		ret = -ENOMEM;
		goto out;
	}
	ret = storm_run();
out:
	/* Waits for every query of ours to be freed by ib_sa. */
	ib_sa_unregister_client(&storm_client);
	for (i = 0; i < storm.nhosts; i++)
		ib_device_put(storm.hosts[i].dev);
	kvfree(storm.q);
	kvfree(storm.hosts);
	return ret;
}

static void __exit sa_storm_exit(void)
{
}

module_init(sa_storm_init);
module_exit(sa_storm_exit);

MODULE_DESCRIPTION("SA query storm: PathRecord queries from every host at once");
MODULE_LICENSE("GPL");

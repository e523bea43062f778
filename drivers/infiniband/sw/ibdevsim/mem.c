// SPDX-License-Identifier: GPL-2.0
/*
 * ibdevsim: memory regions, and the copies between the memory that work
 * requests name.
 *
 * Kernel users post kernel virtual addresses under the DMA key
 * (IBDEVSIM_DMA_LKEY; the device has virtual DMA).  A user process
 * registers memory with reg_user_mr(): its pages are pinned, listed in
 * the MR, and the MR is entered in the HCA's table under a key of its
 * own.  Every SGE, and the remote address of an RDMA request, is checked
 * against the MR its key names (PD, bounds, access rights) when the data
 * moves, and turned into a struct ibdevsim_seg; ibdevsim_seg_copy() then
 * copies between two lists of them, page by page on the user side.
 * The DMA key is refused to user PDs: it reaches all kernel memory.
 */

#include <kunit/visibility.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "ibdevsim.h"

/* Key indexes start above the DMA key's (0x1000 >> 8), so keys differ. */
#define IBDEVSIM_MR_INDEX_MIN	0x100
#define IBDEVSIM_MR_INDEX_MAX	0xffffff

/**
 * ibdevsim_reg_user_mr() - register user memory
 * @pd: the PD
 * @start: the user address of the memory
 * @length: its length in bytes
 * @virt: the address work requests will use for @start
 * @access: IB_ACCESS_* rights
 * @udata: the provider's data (none is expected)
 *
 * Context: process context of the registering process.
 * Return: the MR, with its lkey and rkey set, or an ERR_PTR().
 */
struct ib_mr *ibdevsim_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				   u64 virt, int access,
				   struct ib_udata *udata)
{
	struct ibdevsim_hca *hca = to_hca(pd->device);
	struct sg_page_iter iter;
	struct ibdevsim_mr *mr;
	u32 index, i = 0;
	int ret;

	if (!length || length > U32_MAX || virt + length < virt)
		return ERR_PTR(-EINVAL);
	if (access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		       IB_ACCESS_REMOTE_READ))
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->umem = ib_umem_get(pd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		ret = PTR_ERR(mr->umem);
		goto err_free;
	}
	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		ret = -ENOMEM;
		goto err_release;
	}
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &iter, 0) {
		if (i == mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&iter);
	}
	if (i != mr->npages) {
		ret = -EFAULT;
		goto err_pages;
	}
	mr->page_off = ib_umem_offset(mr->umem);
	mr->pd = pd;
	mr->iova = virt;
	mr->length = length;
	mr->access = access;

	/* Visible before its key is set, but no key matches a zero lkey. */
	xa_lock_irq(&hca->mrs);
	ret = __xa_alloc_cyclic(&hca->mrs, &index, mr,
				XA_LIMIT(IBDEVSIM_MR_INDEX_MIN,
					 IBDEVSIM_MR_INDEX_MAX),
				&hca->mr_next, GFP_KERNEL);
	if (ret >= 0) {
		WRITE_ONCE(mr->ibmr.lkey, index << 8 | hca->mr_gen++);
		mr->ibmr.rkey = mr->ibmr.lkey;
	}
	xa_unlock_irq(&hca->mrs);
	if (ret < 0)
		goto err_pages;
	return &mr->ibmr;

err_pages:
	kvfree(mr->pages);
err_release:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(ret);
}

/**
 * ibdevsim_dereg_user_mr() - take a user MR out of its table and free it
 * @mr: the MR
 *
 * Copies that resolved the MR hold the RCU read lock; the pages are
 * unpinned only after every one of them has finished.
 *
 * Context: process context.
 * Return: 0.
 */
int ibdevsim_dereg_user_mr(struct ibdevsim_mr *mr)
{
	struct ibdevsim_hca *hca = to_hca(mr->ibmr.device);

	xa_erase_irq(&hca->mrs, mr->ibmr.lkey >> 8);
	synchronize_rcu();
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}

/**
 * ibdevsim_mem_resolve() - check memory a work request names
 * @hca: the HCA whose keys @key is one of
 * @pd: the PD of the QP that uses the memory
 * @key: the L_Key or R_Key
 * @addr: the first byte
 * @len: the length in bytes (0 touches nothing and is always valid)
 * @access: the rights needed besides local read: IB_ACCESS_LOCAL_WRITE
 *	    for memory written locally, IB_ACCESS_REMOTE_READ or _WRITE for
 *	    the target of an RDMA request
 * @seg: set to the checked memory
 *
 * The DMA key covers all kernel memory and only kernel PDs may use it.
 * Any other key must name a registered MR of @pd, with @access among its
 * rights and @addr..@addr+@len inside it.
 *
 * Context: RCU read lock held, until the last use of @seg.
 * Return: true if the memory may be used.
 */
bool ibdevsim_mem_resolve(struct ibdevsim_hca *hca, const struct ib_pd *pd,
			  u32 key, u64 addr, u32 len, int access,
			  struct ibdevsim_seg *seg)
{
	const struct ibdevsim_mr *mr;

	*seg = (struct ibdevsim_seg){ .addr = addr, .len = len };
	if (!len)
		return true;
	if (key == IBDEVSIM_DMA_LKEY)
		return !pd->uobject;
	mr = xa_load(&hca->mrs, key >> 8);
	if (!mr || READ_ONCE(mr->ibmr.lkey) != key || mr->pd != pd ||
	    (access & ~mr->access) || addr < mr->iova || len > mr->length ||
	    addr - mr->iova > mr->length - len)
		return false;
	seg->mr = mr;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_mem_resolve);

/**
 * ibdevsim_sges_resolve() - check the SGEs of a work request
 * @qp: the QP it was posted to
 * @sge: the SGEs
 * @n: how many (at most the QP's SGE limit)
 * @access: the rights needed besides local read (see
 *	    ibdevsim_mem_resolve())
 * @segs: set to the checked memory, @n entries
 *
 * Context: RCU read lock held, until the last use of @segs.
 * Return: true if every SGE may be used.
 */
bool ibdevsim_sges_resolve(struct ibdevsim_qp *qp, const struct ib_sge *sge,
			   u32 n, int access, struct ibdevsim_seg *segs)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (!ibdevsim_mem_resolve(qp->hca, qp->ibqp.pd, sge[i].lkey,
					  sge[i].addr, sge[i].length, access,
					  &segs[i]))
			return false;
	return true;
}

/**
 * ibdevsim_segs_skip() - leave out the first bytes of a list of segments
 * @segs: the list, changed in place
 * @n: its entries
 * @off: the bytes to leave out
 *
 * The segments @off covers end up empty; ibdevsim_seg_copy() passes over
 * them.
 */
void ibdevsim_segs_skip(struct ibdevsim_seg *segs, u32 n, u32 off)
{
	u32 i;

	for (i = 0; i < n && off; i++) {
		u32 k = min(off, segs[i].len);

		segs[i].addr += k;
		segs[i].len -= k;
		off -= k;
	}
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_segs_skip);

/*
 * Map byte @off of @seg; *@room is set to the bytes that follow it
 * contiguously (to the end of the page for user memory).
 */
static void *ibdevsim_seg_map(const struct ibdevsim_seg *seg, u32 off,
			      u32 *room)
{
	const struct ibdevsim_mr *mr = seg->mr;
	u64 pos;

	if (!mr) {
		*room = seg->len - off;
		return (void *)(uintptr_t)(seg->addr + off);
	}
	pos = seg->addr - mr->iova + off + mr->page_off;
	*room = min_t(u64, seg->len - off, PAGE_SIZE - offset_in_page(pos));
	return kmap_local_page(mr->pages[pos >> PAGE_SHIFT]) +
	       offset_in_page(pos);
}

static void ibdevsim_seg_unmap(const struct ibdevsim_seg *seg, void *p)
{
	if (seg->mr)
		kunmap_local(p);
}

/**
 * ibdevsim_seg_copy() - copy between two lists of checked memory
 * @dst: where the bytes go
 * @ndst: entries in @dst
 * @src: where they come from
 * @nsrc: entries in @src
 * @len: the most to copy
 *
 * Context: any; the RCU read lock taken to resolve user segments held.
 * Return: the bytes copied, less than @len when either list is shorter.
 */
u32 ibdevsim_seg_copy(const struct ibdevsim_seg *dst, u32 ndst,
		      const struct ibdevsim_seg *src, u32 nsrc, u32 len)
{
	u32 di = 0, si = 0, doff = 0, soff = 0, done = 0;

	while (done < len && di < ndst && si < nsrc) {
		u32 droom, sroom, n;
		void *d, *s;

		if (doff == dst[di].len) {
			di++;
			doff = 0;
			continue;
		}
		if (soff == src[si].len) {
			si++;
			soff = 0;
			continue;
		}
		s = ibdevsim_seg_map(&src[si], soff, &sroom);
		d = ibdevsim_seg_map(&dst[di], doff, &droom);
		n = min3(droom, sroom, len - done);
		memcpy(d, s, n);
		/* kmap_local mappings are dropped in reverse order. */
		ibdevsim_seg_unmap(&dst[di], d);
		ibdevsim_seg_unmap(&src[si], s);
		done += n;
		doff += n;
		soff += n;
	}
	return done;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_seg_copy);

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
 *
 * Kernel ULPs may also register memory fast (FRWR): ib_alloc_mr() gives
 * an MR with a page list and a key index, ib_map_mr_sg() fills the list,
 * an IB_WR_REG_MR work request makes it valid under the key the request
 * names, with the request's rights, and IB_WR_LOCAL_INV or a SEND with
 * invalidate from the peer makes it invalid again.  Until registered, and
 * once invalidated, its key resolves nothing.
 */

#include <kunit/visibility.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "ibdevsim.h"

/* Key indexes start above the DMA key's (0x1000 >> 8), so keys differ. */
#define IBDEVSIM_MR_INDEX_MIN	0x100
#define IBDEVSIM_MR_INDEX_MAX	0xffffff

/* Enter @mr in @hca's table; sets its key.  Returns 0 or -errno. */
static int ibdevsim_mr_insert(struct ibdevsim_hca *hca, struct ibdevsim_mr *mr)
{
	u32 index;
	int ret;

	/* Visible before its key is set, but no key matches a zero lkey. */
	xa_lock_irq(&hca->mrs);
	ret = __xa_alloc_cyclic(&hca->mrs, &index, mr,
				XA_LIMIT(IBDEVSIM_MR_INDEX_MIN,
					 IBDEVSIM_MR_INDEX_MAX),
				&hca->mr_next, GFP_KERNEL);
	if (ret >= 0) {
		WRITE_ONCE(mr->ibmr.lkey, index << 8 | hca->mr_gen++);
		mr->ibmr.rkey = mr->ibmr.lkey;
		mr->fr_key = mr->ibmr.lkey;
	}
	xa_unlock_irq(&hca->mrs);
	return ret < 0 ? ret : 0;
}

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
				   u64 virt, int access, IBDEVSIM_DMAH_ARG
				   struct ib_udata *udata)
{
	struct ibdevsim_hca *hca = to_hca(pd->device);
	struct sg_page_iter iter;
	struct ibdevsim_mr *mr;
	u32 i = 0;
	int ret;

	if (!length || length > U32_MAX || virt + length < virt)
		return ERR_PTR(-EINVAL);
	if (IBDEVSIM_DMAH)
		return ERR_PTR(-EOPNOTSUPP);	/* it has no alloc_dmah */
	if (access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		       IB_ACCESS_REMOTE_READ))
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->umem = ib_umem_get_va(pd->device, start, length, access);
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

	ret = ibdevsim_mr_insert(hca, mr);
	if (ret)
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
 * ibdevsim_alloc_mr() - allocate a fast-registration MR
 * @pd: the PD
 * @type: IB_MR_TYPE_MEM_REG only
 * @max_num_sg: the most pages ib_map_mr_sg() may give it
 *
 * Context: process.
 * Return: the MR, not yet valid, or an ERR_PTR().
 */
struct ib_mr *ibdevsim_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
				u32 max_num_sg)
{
	struct ibdevsim_mr *mr;
	int ret;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > IBDEVSIM_FR_MAX_PAGES)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->fr_pages = kvcalloc(max_num_sg, sizeof(*mr->fr_pages), GFP_KERNEL);
	if (!mr->fr_pages) {
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->fr_max = max_num_sg;
	mr->pd = pd;
	ret = ibdevsim_mr_insert(to_hca(pd->device), mr);
	if (ret) {
		kvfree(mr->fr_pages);
		kfree(mr);
		return ERR_PTR(ret);
	}
	return &mr->ibmr;
}

static int ibdevsim_fr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct ibdevsim_mr *mr = container_of(ibmr, struct ibdevsim_mr, ibmr);

	if (mr->fr_npages == mr->fr_max)
		return -ENOMEM;
	mr->fr_pages[mr->fr_npages++] = addr;
	return 0;
}

/**
 * ibdevsim_map_mr_sg() - fill a fast-registration MR's page list
 * @ibmr: the MR
 * @sg: the scatterlist, DMA mapped (kernel virtual addresses here)
 * @sg_nents: its entries
 * @sg_offset: where in the first entry to start; updated as
 *	       ib_sg_to_pages() says
 *
 * The list is used by the next IB_WR_REG_MR of the MR, not before.
 *
 * Return: the entries mapped.
 */
int ibdevsim_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		       int sg_nents, unsigned int *sg_offset)
{
	struct ibdevsim_mr *mr = container_of(ibmr, struct ibdevsim_mr, ibmr);

	mr->fr_npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
			      ibdevsim_fr_set_page);
}

/**
 * ibdevsim_dereg_fr_mr() - free a fast-registration MR
 * @mr: the MR
 *
 * Context: process; copies that resolved it finish first (RCU).
 */
void ibdevsim_dereg_fr_mr(struct ibdevsim_mr *mr)
{
	struct ibdevsim_hca *hca = to_hca(mr->ibmr.device);

	xa_erase_irq(&hca->mrs, mr->fr_key >> 8);
	synchronize_rcu();
	kvfree(mr->fr_pages);
	kfree(mr);
}

/**
 * ibdevsim_fr_reg() - carry out an IB_WR_REG_MR work request
 * @qp: the QP it was posted to
 * @ibmr: the MR, a fast-registration MR of @qp's PD
 * @key: the key it is valid under from now on (same index, any low byte)
 * @access: the rights it gets
 *
 * Context: the QP's send work, its send-queue lock held.
 * Return: IB_WC_SUCCESS, or IB_WC_MW_BIND_ERR for an MR that is not one
 * of @qp's PD's fast-registration MRs or a key of another index.
 */
enum ib_wc_status ibdevsim_fr_reg(struct ibdevsim_qp *qp, struct ib_mr *ibmr,
				  u32 key, int access)
{
	struct ibdevsim_mr *mr = container_of(ibmr, struct ibdevsim_mr, ibmr);

	if (ibmr->device != qp->ibqp.device || !mr->fr_pages ||
	    mr->pd != qp->ibqp.pd || (key >> 8) != (mr->fr_key >> 8) ||
	    (access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			IB_ACCESS_REMOTE_READ)))
		return IB_WC_MW_BIND_ERR;
	/*
	 * Readers (ibdevsim_mem_resolve()) check validity and the key, then
	 * read the rest: invalid while it changes, and the new bounds and
	 * rights visible before the new key.  Pairs with the smp_rmb() there.
	 */
	WRITE_ONCE(mr->fr_valid, false);
	/* Invalid before the bounds change. */
	smp_wmb();
	mr->iova = ibmr->iova;
	mr->length = ibmr->length;
	mr->access = access;
	/* The bounds before the key that makes them usable. */
	smp_wmb();
	WRITE_ONCE(mr->fr_key, key);
	WRITE_ONCE(mr->fr_valid, true);
	return IB_WC_SUCCESS;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_fr_reg);

/**
 * ibdevsim_fr_inv() - invalidate a fast-registration MR by key
 * @qp: the QP whose PD the MR must belong to
 * @key: its current key
 *
 * For IB_WR_LOCAL_INV and for a SEND with invalidate that @qp receives.
 *
 * Context: RCU read lock held.
 * Return: false if @key names no valid fast-registration MR of @qp's PD.
 */
bool ibdevsim_fr_inv(struct ibdevsim_qp *qp, u32 key)
{
	struct ibdevsim_mr *mr = xa_load(&qp->hca->mrs, key >> 8);

	if (!mr || !mr->fr_pages || mr->pd != qp->ibqp.pd ||
	    !READ_ONCE(mr->fr_valid) || READ_ONCE(mr->fr_key) != key)
		return false;
	WRITE_ONCE(mr->fr_valid, false);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(ibdevsim_fr_inv);

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
	if (!mr || mr->pd != pd)
		return false;
	if (mr->fr_pages) {
		if (!READ_ONCE(mr->fr_valid) || READ_ONCE(mr->fr_key) != key)
			return false;
		/* The registration's bounds after its key: see fr_reg. */
		smp_rmb();
	} else if (READ_ONCE(mr->ibmr.lkey) != key) {
		return false;
	}
	if ((access & ~mr->access) || addr < mr->iova || len > mr->length ||
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
	if (mr->fr_pages) {
		u64 ps = mr->ibmr.page_size, in;

		/* From the start of the first page, which holds the iova. */
		pos = seg->addr - mr->iova + off + (mr->iova & (ps - 1));
		in = pos & (ps - 1);
		*room = min_t(u64, seg->len - off, ps - in);
		return (void *)(uintptr_t)(mr->fr_pages[pos >> ilog2(ps)] + in);
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

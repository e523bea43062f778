// SPDX-License-Identifier: GPL-2.0-only
/*
 * ib_srpt: the I/O path - receiving information units, parsing SRP_CMD
 * data descriptors, moving data with rdma_rw, building and sending SRP_RSP,
 * and task management.
 *
 * Everything here that runs on a completion runs in the channel's CQ
 * context (IB_POLL_WORKQUEUE), one completion at a time per CQ, which is
 * what serialises the wait list and the command state changes made from
 * completions. LIO's callbacks (write_pending, queue_*) run in LIO's
 * context or, with direct submission, in the CQ context.
 *
 * Data of a write command arrives either as immediate data inside the
 * SRP_CMD or by RDMA READ into pages allocated here; data of a read command
 * leaves by RDMA WRITE work requests chained in front of the SRP_RSP send
 * (see srpt_rsp.c), so that a single post delivers both in order.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/unaligned.h>
#include <scsi/scsi_common.h>
#include <scsi/scsi_proto.h>
#include <scsi/scsi_tcq.h>
#include <target/target_core_base.h>
#include <target/target_core_fabric.h>
#include <kunit/visibility.h>

#include "srpt_priv.h"

/**
 * srpt_set_cmd_state - change the state of a command unless it is done
 * @ioctx: the command.
 * @new: its new state.
 *
 * A command in %SRPT_STATE_DONE stays there.
 *
 * Context: the command's CQ context or a LIO callback for the command;
 * those never run concurrently for one command.
 * Return: the previous state.
 */
enum srpt_command_state srpt_set_cmd_state(struct srpt_send_ioctx *ioctx,
					   enum srpt_command_state new)
{
	enum srpt_command_state prev = ioctx->state;

	if (prev != SRPT_STATE_DONE)
		ioctx->state = new;
	return prev;
}

/**
 * srpt_test_and_set_cmd_state - change a command's state if it is @old
 * @ioctx: the command.
 * @old: the state the command must be in.
 * @new: its new state.
 *
 * Context: as for srpt_set_cmd_state().
 * Return: true if the command was in @old and is now in @new.
 */
bool srpt_test_and_set_cmd_state(struct srpt_send_ioctx *ioctx,
				 enum srpt_command_state old,
				 enum srpt_command_state new)
{
	WARN_ON_ONCE(old == SRPT_STATE_DONE || new == SRPT_STATE_NEW);
	if (ioctx->state != old)
		return false;
	ioctx->state = new;
	return true;
}

/*
 * A command context is free from target_free_tag() to the next claim; a
 * claim starts its per-command part from zero, which is SRPT_STATE_NEW.
 */
static_assert(SRPT_STATE_NEW == 0);

/**
 * srpt_get_send_ioctx - claim a free command context of a channel
 * @ch: the channel.
 *
 * The LIO session's tag pool hands out the contexts: tag n is
 * @ch->ioctx_ring[n], and there are as many as the initiator has credits.
 *
 * Context: process context.
 * Return: the context, its per-command fields zeroed (LIO does not reset
 * every field of a reused se_cmd either) and its tag set, or NULL if every
 * context is in use.
 */
VISIBLE_IF_KUNIT struct srpt_send_ioctx *
srpt_get_send_ioctx(struct srpt_rdma_ch *ch)
{
	struct srpt_send_ioctx *ioctx;
	int cpu, tag = sbitmap_queue_get(&ch->sess->sess_tag_pool, &cpu);

	if (unlikely(tag < 0))
		return NULL;
	ioctx = ch->ioctx_ring[tag];
	WARN_ON_ONCE(ioctx->ch != ch || ioctx->recv_ioctx);
	memset_startat(ioctx, 0, state);
	ioctx->rw_dir = DMA_NONE;
	ioctx->cmd.map_tag = tag;
	ioctx->cmd.map_cpu = cpu;
	return ioctx;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_get_send_ioctx);

static int srpt_parse_indirect(const struct srp_cmd *cmd, u32 iu_len,
			       u32 off, u8 in_iu, struct srpt_desc_info *info)
{
	const struct srp_indirect_buf *idb = (const void *)cmd + off;
	u32 table_len, n, i;
	u64 total = 0;

	if ((u64)off + sizeof(*idb) > iu_len)
		return -EINVAL;
	table_len = be32_to_cpu(idb->table_desc.len);
	if (!table_len || table_len % sizeof(struct srp_direct_buf))
		return -EINVAL;
	n = table_len / sizeof(struct srp_direct_buf);
	/* Tables that do not fit in the IU would need an RDMA READ first. */
	if (n > in_iu)
		return -EOPNOTSUPP;
	if ((u64)off + sizeof(*idb) + table_len > iu_len)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		u32 len = be32_to_cpu(idb->desc_list[i].len);

		if (!len)
			return -EINVAL;
		total += len;
	}
	if (total != be32_to_cpu(idb->len))
		return -EINVAL;
	if (total > SRPT_MAX_DATA_LEN)
		return -EMSGSIZE;
	info->descs = idb->desc_list;
	info->n_desc = n;
	info->data_len = total;
	return 0;
}

static int srpt_parse_imm(const struct srp_cmd *cmd, u32 iu_len, u32 off,
			  u16 imm_data_offset, struct srpt_desc_info *info)
{
	const struct srp_imm_buf *imm = (const void *)cmd + off;
	u32 len;

	/* Immediate data was not negotiated at login. */
	if (!imm_data_offset)
		return -EINVAL;
	if ((u64)off + sizeof(*imm) > imm_data_offset)
		return -EINVAL;
	len = be32_to_cpu(imm->len);
	if (!len || (u64)imm_data_offset + len > iu_len)
		return -EINVAL;
	info->imm_offset = imm_data_offset;
	info->data_len = len;
	return 0;
}

/**
 * srpt_parse_desc_tbl - parse and validate the data descriptors of SRP_CMD
 * @cmd: the request; @iu_len bytes of it are valid.
 * @iu_len: number of bytes received.
 * @imm_data_offset: offset of immediate data agreed at login, 0 if none.
 * @info: the result.
 *
 * The descriptor follows the CDB and the additional CDB (whose length is
 * the ADDITIONAL CDB LENGTH field with its two reserved bits masked); a
 * variable-length CDB must fit in the two. Direct descriptors, indirect
 * tables held completely in the IU and immediate data are supported; every
 * offset, count and length is checked against the IU. Bidirectional
 * commands, zero-length descriptors and indirect tables whose total does
 * not match the sum of their entries are rejected, and so are transfers
 * over %SRPT_MAX_DATA_LEN bytes, before anything is allocated for them.
 *
 * Context: any context.
 * Return: 0, -EINVAL for a malformed IU, -EMSGSIZE for a transfer over
 * %SRPT_MAX_DATA_LEN or -EOPNOTSUPP for an indirect table that is not part
 * of the IU.
 */
VISIBLE_IF_KUNIT int srpt_parse_desc_tbl(const struct srp_cmd *cmd,
					 u32 iu_len, u16 imm_data_offset,
					 struct srpt_desc_info *info)
{
	u8 out_fmt, in_fmt, fmt, in_iu;
	u32 off;

	memset(info, 0, sizeof(*info));
	info->dir = DMA_NONE;
	if (iu_len < sizeof(*cmd))
		return -EINVAL;
	off = sizeof(*cmd) + (cmd->add_cdb_len & ~3);
	if (off > iu_len)
		return -EINVAL;
	/* LIO reads a variable-length CDB as long as its own header says. */
	if (scsi_command_size(cmd->cdb) > off - offsetof(struct srp_cmd, cdb))
		return -EINVAL;

	out_fmt = cmd->buf_fmt >> 4;
	in_fmt = cmd->buf_fmt & 0xf;
	if (out_fmt && in_fmt)
		return -EINVAL;
	if (out_fmt) {
		fmt = out_fmt;
		in_iu = cmd->data_out_desc_cnt;
		info->dir = DMA_TO_DEVICE;
	} else {
		fmt = in_fmt;
		in_iu = cmd->data_in_desc_cnt;
		info->dir = in_fmt ? DMA_FROM_DEVICE : DMA_NONE;
	}
	info->fmt = fmt;

	switch (fmt) {
	case SRP_NO_DATA_DESC:
		return 0;
	case SRP_DATA_DESC_DIRECT: {
		const struct srp_direct_buf *db = (const void *)cmd + off;

		if ((u64)off + sizeof(*db) > iu_len || !be32_to_cpu(db->len))
			return -EINVAL;
		if (be32_to_cpu(db->len) > SRPT_MAX_DATA_LEN)
			return -EMSGSIZE;
		info->descs = db;
		info->n_desc = 1;
		info->data_len = be32_to_cpu(db->len);
		return 0;
	}
	case SRP_DATA_DESC_INDIRECT:
		return srpt_parse_indirect(cmd, iu_len, off, in_iu, info);
	case SRP_DATA_DESC_IMM:
		if (fmt != out_fmt)
			return -EINVAL;
		return srpt_parse_imm(cmd, iu_len, off, imm_data_offset, info);
	default:
		return -EINVAL;
	}
}
EXPORT_SYMBOL_IF_KUNIT(srpt_parse_desc_tbl);

/*
 * Remote buffers and their rdma_rw contexts.
 *
 * A command's transfer is an array of struct srpt_rw_ctx, one per remote
 * buffer its data reaches, each with its own page list; the lists are then
 * linked into the one LIO sees. srpt_rw_ctx_map() and srpt_rw_ctx_unmap()
 * set an rdma_rw context up and tear it down, for building, for trimming a
 * read to the data its backend produced and for freeing; srpt_rw_wrs()
 * strings the work requests of all contexts together for posting.
 */

/* Let @ctx's rdma_rw context move the first @n entries of its pages. */
static int srpt_rw_ctx_map(struct srpt_send_ioctx *ioctx,
			   struct srpt_rw_ctx *ctx, unsigned int n)
{
	struct srpt_rdma_ch *ch = ioctx->ch;
	int wrs = rdma_rw_ctx_init(&ctx->rw, ch->qp, ch->sport->port, ctx->sg,
				   n, 0, ctx->raddr, ctx->rkey, ioctx->rw_dir);

	if (wrs < 0)
		return wrs;
	ctx->mapped = n;
	ctx->n_wrs = wrs;
	return 0;
}

static void srpt_rw_ctx_unmap(struct srpt_send_ioctx *ioctx,
			      struct srpt_rw_ctx *ctx)
{
	struct srpt_rdma_ch *ch = ioctx->ch;

	if (ctx->mapped)
		rdma_rw_ctx_destroy(&ctx->rw, ch->qp, ch->sport->port, ctx->sg,
				    ctx->mapped, ioctx->rw_dir);
	ctx->mapped = 0;
	ctx->n_wrs = 0;
}

/**
 * srpt_free_rw_ctxs - release the remote buffer contexts of a command
 * @ch: the command's channel.
 * @ioctx: the command.
 *
 * Also for a command whose contexts were only partly set up; gives the
 * bytes charged to the channel's data budget back.
 *
 * Context: process context.
 */
void srpt_free_rw_ctxs(struct srpt_rdma_ch *ch, struct srpt_send_ioctx *ioctx)
{
	struct srpt_rw_ctx *ctx = ioctx->rw_ctxs;
	struct srpt_rw_ctx *end = ctx + ioctx->n_rw_ctx;

	for (; ctx < end; ctx++) {
		srpt_rw_ctx_unmap(ioctx, ctx);
		target_free_sgl(ctx->sg, ctx->nents);
	}
	if (ioctx->rw_ctxs != &ioctx->s_rw_ctx)
		kfree(ioctx->rw_ctxs);
	atomic_sub(ioctx->charged, &ch->data_bytes);
	ioctx->rw_ctxs = NULL;
	ioctx->n_rw_ctx = 0;
	ioctx->n_rdma = 0;
	ioctx->rw_len = 0;
	ioctx->charged = 0;
}

/**
 * srpt_ch_charge_data - take data buffer bytes from a channel's budget
 * @ch: the channel.
 * @len: bytes a command's data buffers pin (srpt_data_cost()).
 *
 * Without a budget, an initiator's credits times the largest transfer
 * (128 times 16 MiB, even for control CDBs whose buffers are zeroed
 * pages) would be held by one channel.
 *
 * Context: any context.
 * Return: true if @len fits in %SRPT_CH_DATA_BUDGET with what the channel's
 * commands hold already (then charged), false if not.
 */
VISIBLE_IF_KUNIT bool srpt_ch_charge_data(struct srpt_rdma_ch *ch, u64 len)
{
	if (len > SRPT_CH_DATA_BUDGET)
		return false;
	if (atomic_add_return(len, &ch->data_bytes) <= SRPT_CH_DATA_BUDGET)
		return true;
	atomic_sub(len, &ch->data_bytes);
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_ch_charge_data);

/*
 * Set @ctx up again to move only the first @len bytes of its buffer, which
 * it held in full. The entry where the data ends is shortened; the pages
 * past it stay in @ctx->sg, to be freed with the command. On failure @ctx
 * moves nothing and keeps its length, which a second call sees.
 */
static int srpt_rw_ctx_cut(struct srpt_send_ioctx *ioctx,
			   struct srpt_rw_ctx *ctx, u32 len)
{
	struct scatterlist *s;
	unsigned int i;
	u32 left = len;
	int ret;

	srpt_rw_ctx_unmap(ioctx, ctx);
	for_each_sg(ctx->sg, s, ctx->nents, i) {
		if (s->length >= left)
			break;
		left -= s->length;
	}
	if (WARN_ON_ONCE(i == ctx->nents))
		return -EINVAL;
	s->length = left;
	ret = srpt_rw_ctx_map(ioctx, ctx, i + 1);
	if (!ret)
		ctx->len = len;
	return ret;
}

/**
 * srpt_trim_rw_ctxs - make the RDMA WRITEs of a read carry only its data
 * @ioctx: a read whose contexts move @ioctx->rw_len bytes.
 * @len: the bytes the command produced (cmd->data_length when LIO asks for
 *	the response), less than @ioctx->rw_len.
 *
 * The contexts were set up for the length LIO expected before the command
 * ran; a backend may produce less (target_complete_cmd_with_length()), and
 * the initiator's memory past that must not be written. The context where
 * the data ends is set up again for the bytes up to there, those after it
 * are left out of the transfer (&srpt_rw_ctx.n_wrs 0) and @ioctx->n_rdma
 * counts what is left. Calling it again after a failure is safe.
 *
 * Context: process context; may sleep.
 * Return: 0, or a negative errno when a context could not be set up again
 * (the transfer is then not to be posted).
 */
int srpt_trim_rw_ctxs(struct srpt_send_ioctx *ioctx, u32 len)
{
	struct srpt_rw_ctx *ctx = ioctx->rw_ctxs;
	struct srpt_rw_ctx *end = ctx + ioctx->n_rw_ctx;
	u32 kept = 0, n_rdma = 0;
	int ret;

	for (; ctx < end; ctx++) {
		if (kept == len) {
			/* Past the data: the pages stay, the WRs go. */
			ctx->n_wrs = 0;
			ctx->len = 0;
			continue;
		}
		if (len - kept < ctx->len) {
			ret = srpt_rw_ctx_cut(ioctx, ctx, len - kept);
			if (ret)
				return ret;
		}
		kept += ctx->len;
		n_rdma += ctx->n_wrs;
	}
	ioctx->n_rdma = n_rdma;
	ioctx->rw_len = len;
	return 0;
}

/**
 * srpt_rw_wrs - the work requests of a command's transfer, as one chain
 * @ioctx: the command.
 * @cqe: completion entry of the chain's last work request, NULL for an
 *	unsignaled chain.
 * @next: what is to follow the chain (the response), or NULL.
 *
 * rdma_rw puts a context's work requests in front of a given chain, so the
 * chain grows from its end: the last buffer's requests first. Buffers left
 * out of the transfer (&srpt_rw_ctx.n_wrs 0) add nothing.
 *
 * Context: any context.
 * Return: the first work request, @next if the transfer has none.
 */
struct ib_send_wr *srpt_rw_wrs(struct srpt_send_ioctx *ioctx,
			       struct ib_cqe *cqe, struct ib_send_wr *next)
{
	struct srpt_rdma_ch *ch = ioctx->ch;
	u32 i = ioctx->n_rw_ctx;

	while (i--) {
		struct srpt_rw_ctx *ctx = &ioctx->rw_ctxs[i];

		if (!ctx->n_wrs)
			continue;
		next = rdma_rw_ctx_wrs(&ctx->rw, ch->qp, ch->sport->port, cqe,
				       next);
		cqe = NULL;
	}
	return next;
}

/* How many remote buffers the first @len bytes of @info reach; 0 if none. */
static u32 srpt_bufs_for(const struct srpt_desc_info *info, u32 len)
{
	u32 n = 0;

	while (len && n < info->n_desc)
		len -= min(len, be32_to_cpu(info->descs[n++].len));
	return len ? 0 : n;
}

/**
 * srpt_data_cost - what a command's local buffers for its data pin
 * @info: the parsed data descriptors of its SRP_CMD.
 * @len: the bytes it moves (the first @len of the descriptors').
 *
 * Each remote buffer the transfer reaches gets whole pages of its own, and
 * a command reaching more than one an array of rdma_rw contexts (one is
 * part of the command's context): a one-block READ spread over 255
 * two-byte descriptors pins 255 pages and 255 contexts, not 512 bytes.
 *
 * Context: any context.
 * Return: the bytes to charge to the channel's data budget.
 */
VISIBLE_IF_KUNIT u64 srpt_data_cost(const struct srpt_desc_info *info, u32 len)
{
	u64 cost = 0;
	u32 n, part;

	for (n = 0; len && n < info->n_desc; n++) {
		part = min(len, be32_to_cpu(info->descs[n].len));
		cost += PAGE_ALIGN((u64)part);
		len -= part;
	}
	if (n > 1)
		cost += (u64)n * sizeof(struct srpt_rw_ctx);
	return cost;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_data_cost);

/*
 * Give @ctx pages for @len bytes of remote buffer @db and an rdma_rw
 * context moving them; @spare asks for the entry that links the list to
 * the next buffer's.
 */
static int srpt_rw_ctx_setup(struct srpt_send_ioctx *ioctx,
			     struct srpt_rw_ctx *ctx,
			     const struct srp_direct_buf *db, u32 len,
			     bool zero, bool spare)
{
	int ret;

	ctx->raddr = be64_to_cpu(db->va);
	ctx->rkey = be32_to_cpu(db->key);
	ctx->len = len;
	ret = target_alloc_sgl(&ctx->sg, &ctx->nents, len, zero, spare);
	if (ret)
		return ret;
	ret = srpt_rw_ctx_map(ioctx, ctx, ctx->nents);
	if (ret)
		target_free_sgl(ctx->sg, ctx->nents);
	return ret;
}

/*
 * Contexts for the first @len bytes of the remote buffers of @info: remote
 * memory past @len gets neither pages nor work requests. All or nothing.
 */
static int srpt_setup_rw(struct srpt_send_ioctx *ioctx,
			 const struct srpt_desc_info *info, u32 len, bool zero)
{
	u32 n = srpt_bufs_for(info, len), left = len;
	int ret;

	if (WARN_ON_ONCE(!n))
		return -EINVAL;
	/* The local side moves the data the other way round. */
	ioctx->rw_dir = info->dir == DMA_TO_DEVICE ? DMA_FROM_DEVICE :
						     DMA_TO_DEVICE;
	ioctx->rw_ctxs = n == 1 ? &ioctx->s_rw_ctx :
		kmalloc_array(n, sizeof(*ioctx->rw_ctxs), GFP_KERNEL);
	if (!ioctx->rw_ctxs)
		return -ENOMEM;
	while (ioctx->n_rw_ctx < n) {
		const struct srp_direct_buf *db = &info->descs[ioctx->n_rw_ctx];
		struct srpt_rw_ctx *ctx = &ioctx->rw_ctxs[ioctx->n_rw_ctx];

		ret = srpt_rw_ctx_setup(ioctx, ctx, db,
					min(left, be32_to_cpu(db->len)), zero,
					ioctx->n_rw_ctx + 1 < n);
		if (ret) {
			srpt_free_rw_ctxs(ioctx->ch, ioctx);
			return ret;
		}
		ioctx->n_rw_ctx++;
		ioctx->n_rdma += ctx->n_wrs;
		left -= ctx->len;
	}
	return 0;
}

/*
 * Link the page lists of @ioctx's buffers, in order, through the spare
 * entries into the one list LIO gets; @nents counts its pages.
 */
static struct scatterlist *srpt_join_sgls(struct srpt_send_ioctx *ioctx,
					  unsigned int *nents)
{
	struct srpt_rw_ctx *ctx = ioctx->rw_ctxs;
	struct srpt_rw_ctx *last = ctx + ioctx->n_rw_ctx - 1;

	*nents = last->nents;
	for (; ctx < last; ctx++) {
		*nents += ctx->nents;
		sg_unmark_end(&ctx->sg[ctx->nents - 1]);
		sg_chain(ctx->sg, ctx->nents + 1, ctx[1].sg);
	}
	return ioctx->rw_ctxs->sg;
}

/**
 * srpt_map_data - give a command local buffers for its RDMA transfer
 * @ioctx: the command, its CDB parsed by LIO.
 * @info: the parsed data descriptors of its SRP_CMD.
 *
 * Runs after target_submit_prep(), when cmd->data_length holds what the
 * command really moves: for a read whose CDB asks for less than the
 * descriptors describe, LIO has cut it to the CDB's length and counts the
 * rest as residual. Pages and RDMA work requests cover only that length,
 * so the initiator's buffer past the data is never written. Pages of
 * commands that are not READ or WRITE of the medium are zeroed, as LIO
 * does for the buffers it allocates, so that a response shorter than
 * data_length sends zeroes rather than old memory. A command whose buffers
 * would take the channel past its budget (srpt_ch_charge_data(), what they
 * pin: srpt_data_cost()) is
 * answered BUSY, as one that gets no memory. A transfer needing more
 * work requests than the channel's send queue holds is refused. The list
 * is then handed to LIO the way target_submit_prep() records a fabric's
 * list.
 *
 * Context: process context; may sleep.
 * Return: TCM_NO_SENSE, or the sense with which LIO must fail the command.
 */
static sense_reason_t srpt_map_data(struct srpt_send_ioctx *ioctx,
				    const struct srpt_desc_info *info)
{
	struct se_cmd *cmd = &ioctx->cmd;
	u64 cost;
	int ret;

	if (info->fmt != SRP_DATA_DESC_DIRECT &&
	    info->fmt != SRP_DATA_DESC_INDIRECT)
		return TCM_NO_SENSE;
	if (!cmd->data_length)
		return TCM_NO_SENSE;
	/* LIO refuses an overflow into a list a fabric allocated too. */
	if (cmd->se_cmd_flags & SCF_OVERFLOW_BIT)
		return TCM_INVALID_CDB_FIELD;
	if (WARN_ON_ONCE(cmd->data_length > info->data_len))
		return TCM_INVALID_FIELD_IN_COMMAND_IU;

	cost = srpt_data_cost(info, cmd->data_length);
	if (!srpt_ch_charge_data(ioctx->ch, cost)) {
		pr_debug("%s: tag %#llx: %u bytes in buffers of %llu would exceed the channel's budget\n",
			 ioctx->ch->sess_name, cmd->tag, cmd->data_length, cost);
		return TCM_LUN_BUSY;
	}
	ret = srpt_setup_rw(ioctx, info, cmd->data_length,
			    !(cmd->se_cmd_flags & SCF_SCSI_DATA_CDB));
	if (ret) {
		pr_debug("%s: tag %#llx: no buffers for %u bytes (%d)\n",
			 ioctx->ch->sess_name, cmd->tag, cmd->data_length, ret);
		atomic_sub(cost, &ioctx->ch->data_bytes);
		return TCM_LUN_BUSY;
	}
	/* Given back by srpt_free_rw_ctxs(). */
	ioctx->charged = cost;
	/*
	 * Its work requests and the response must fit in the send queue at
	 * once, or posting them would fail on every retry.
	 */
	if (ioctx->n_rdma + 1 > ioctx->ch->sq_wr_max) {
		pr_debug("%s: tag %#llx: %u work requests, the send queue holds %u\n",
			 ioctx->ch->sess_name, cmd->tag, ioctx->n_rdma + 1,
			 ioctx->ch->sq_wr_max);
		srpt_free_rw_ctxs(ioctx->ch, ioctx);
		return TCM_INVALID_FIELD_IN_COMMAND_IU;
	}
	ioctx->rw_len = cmd->data_length;
	cmd->t_data_sg = srpt_join_sgls(ioctx, &cmd->t_data_nents);
	cmd->se_cmd_flags |= SCF_PASSTHROUGH_SG_TO_MEM_NOALLOC;
	return TCM_NO_SENSE;
}

/* The direction of a 32-byte CDB's data, by its service action. */
static enum dma_data_direction srpt_cdb32_dir(const u8 *cdb)
{
	switch (get_unaligned_be16(&cdb[8])) {
	case READ_32:
		return DMA_FROM_DEVICE;
	case WRITE_32:
	case WRITE_VERIFY_32:
	case WRITE_SAME_32:
	case VERIFY_32:
		return DMA_TO_DEVICE;
	default:
		return DMA_BIDIRECTIONAL;
	}
}

/*
 * The direction SBC and SPC give the data of the commands LIO implements:
 * DMA_TO_DEVICE or DMA_FROM_DEVICE, DMA_BIDIRECTIONAL when it is not ours
 * to check (unknown opcodes, which LIO rejects on its own). A command with
 * no data in one direction (VERIFY without BYTCHK, WRITE SAME with NDOB)
 * still has none in the other.
 */
static enum dma_data_direction srpt_cdb_dir(const u8 *cdb)
{
	switch (cdb[0]) {
	case READ_6:
	case READ_10:
	case READ_12:
	case READ_16:
	case INQUIRY:
	case REQUEST_SENSE:
	case MODE_SENSE:
	case MODE_SENSE_10:
	case LOG_SENSE:
	case READ_CAPACITY:
	case SERVICE_ACTION_IN_16:
	case REPORT_LUNS:
	case PERSISTENT_RESERVE_IN:
	case RECEIVE_DIAGNOSTIC:
	case READ_BUFFER:
	case RECEIVE_COPY_RESULTS:
	case MAINTENANCE_IN:
		return DMA_FROM_DEVICE;
	case WRITE_6:
	case WRITE_10:
	case WRITE_12:
	case WRITE_16:
	case WRITE_VERIFY:
	case WRITE_VERIFY_12:
	case WRITE_VERIFY_16:
	case COMPARE_AND_WRITE:
	case WRITE_SAME:
	case WRITE_SAME_16:
	case UNMAP:
	case VERIFY:
	case VERIFY_12:
	case VERIFY_16:
	case MODE_SELECT:
	case MODE_SELECT_10:
	case PERSISTENT_RESERVE_OUT:
	case SEND_DIAGNOSTIC:
	case WRITE_BUFFER:
	case EXTENDED_COPY:
	case MAINTENANCE_OUT:
		return DMA_TO_DEVICE;
	case VARIABLE_LENGTH_CMD:
		return srpt_cdb32_dir(cdb);
	default:
		return DMA_BIDIRECTIONAL;
	}
}

/**
 * srpt_dir_fits_cdb - whether an SRP_CMD's descriptors fit its CDB
 * @cdb: the CDB (the first 16 bytes are enough).
 * @dir: the direction of the SRP_CMD's data descriptors.
 *
 * LIO moves the data in the direction the fabric gives, whatever the CDB
 * says: a READ whose SRP_CMD carries a data-out buffer would write that
 * buffer to the medium, a COMPARE AND WRITE with a data-in buffer would
 * compare stale memory, a WRITE SAME with one would write zeroes. Such
 * descriptors contradict the CDB and are refused.
 *
 * Context: any context.
 * Return: false if @dir is the opposite of the CDB's data direction.
 */
VISIBLE_IF_KUNIT bool srpt_dir_fits_cdb(const u8 *cdb,
					enum dma_data_direction dir)
{
	switch (srpt_cdb_dir(cdb)) {
	case DMA_FROM_DEVICE:
		return dir != DMA_TO_DEVICE;
	case DMA_TO_DEVICE:
		return dir != DMA_FROM_DEVICE;
	default:
		return true;
	}
}
EXPORT_SYMBOL_IF_KUNIT(srpt_dir_fits_cdb);

/**
 * srpt_get_desc_tbl - parse an SRP_CMD's descriptors, take its immediate data
 * @recv_ioctx: receive context holding the SRP_CMD.
 * @ioctx: the command's context.
 * @srp_cmd: the request.
 * @info: the parsed descriptors.
 * @sg: the immediate data as a scatterlist, or NULL if there is none.
 * @sg_cnt: number of entries in @sg.
 *
 * Immediate data is used where it lies, and the receive buffer then stays
 * with the command until it is released. Buffers for direct and indirect
 * descriptors are only allocated once LIO knows what the CDB moves, by
 * srpt_map_data().
 *
 * Context: any context.
 * Return: 0, the error of srpt_parse_desc_tbl(), or -EINVAL for a READ
 * with data-out or a WRITE with data-in descriptors.
 */
static int srpt_get_desc_tbl(struct srpt_recv_ioctx *recv_ioctx,
			     struct srpt_send_ioctx *ioctx,
			     const struct srp_cmd *srp_cmd,
			     struct srpt_desc_info *info,
			     struct scatterlist **sg, unsigned int *sg_cnt)
{
	int ret;

	*sg = NULL;
	*sg_cnt = 0;
	ret = srpt_parse_desc_tbl(srp_cmd, recv_ioctx->byte_len,
				  ioctx->ch->imm_data_offset, info);
	if (!ret && !srpt_dir_fits_cdb(srp_cmd->cdb, info->dir))
		ret = -EINVAL;
	if (ret || info->fmt != SRP_DATA_DESC_IMM)
		return ret;
	sg_init_one(&ioctx->imm_sg, (void *)srp_cmd + info->imm_offset,
		    info->data_len);
	ioctx->recv_ioctx = recv_ioctx;
	*sg = &ioctx->imm_sg;
	*sg_cnt = 1;
	return 0;
}

static int srpt_task_attr(u8 srp_attr)
{
	switch (srp_attr) {
	case SRPT_TASK_SIMPLE:
		return TCM_SIMPLE_TAG;
	case SRPT_TASK_HEAD_OF_QUEUE:
		return TCM_HEAD_TAG;
	case SRPT_TASK_ACA:
		return TCM_ACA_TAG;
	default:
		return TCM_ORDERED_TAG;
	}
}

/**
 * srpt_handle_cmd - process an SRP_CMD
 * @ch: the channel.
 * @recv_ioctx: receive context holding the request.
 * @send_ioctx: command context for it.
 *
 * Hands the command to LIO. A request with malformed descriptors is
 * answered with CHECK CONDITION, ILLEGAL REQUEST / INVALID FIELD IN COMMAND
 * INFORMATION UNIT; one that cannot get memory for its data with BUSY.
 * Immediate data is handed to LIO with the CDB (srpt_get_desc_tbl());
 * buffers for RDMA are only allocated once LIO has parsed the CDB
 * (srpt_map_data()).
 *
 * Context: CQ context; may sleep.
 * Return: true if the command keeps @recv_ioctx for its immediate data
 * (decided before LIO can complete the command), false if the caller must
 * repost it.
 */
static bool srpt_handle_cmd(struct srpt_rdma_ch *ch,
			    struct srpt_recv_ioctx *recv_ioctx,
			    struct srpt_send_ioctx *send_ioctx)
{
	struct srp_cmd *srp_cmd = recv_ioctx->ioctx.buf +
				  recv_ioctx->ioctx.offset;
	struct se_cmd *cmd = &send_ioctx->cmd;
	struct srpt_desc_info info;
	struct scatterlist *sg;
	unsigned int sg_cnt;
	sense_reason_t sense;
	bool keep_recv;
	int attr, ret;

	cmd->tag = srp_cmd->tag;
	attr = srpt_task_attr(srp_cmd->task_attr);
	ret = srpt_get_desc_tbl(recv_ioctx, send_ioctx, srp_cmd, &info, &sg,
				&sg_cnt);
	if (ret) {
		pr_debug("%s: tag %#llx: descriptors rejected (%d)\n",
			 ch->sess_name, srp_cmd->tag, ret);
		info.data_len = 0;
		info.dir = DMA_NONE;
	} else if (info.fmt < ARRAY_SIZE(ch->cmds_by_fmt)) {
		WRITE_ONCE(ch->cmds_by_fmt[info.fmt],
			   ch->cmds_by_fmt[info.fmt] + 1);
	}
	keep_recv = send_ioctx->recv_ioctx == recv_ioctx;

	if (target_init_cmd(cmd, ch->sess, send_ioctx->sense_data,
			    scsilun_to_int(&srp_cmd->lun), info.data_len, attr,
			    info.dir, TARGET_SCF_ACK_KREF)) {
		/* The session is shutting down. */
		target_send_busy(cmd);
		return keep_recv;
	}
	if (ret) {
		transport_send_check_condition_and_sense
			(cmd, TCM_INVALID_FIELD_IN_COMMAND_IU, 0);
		target_put_sess_cmd(cmd);
		return false;
	}

	/* On failure LIO has answered the command and owns it. */
	if (target_submit_prep(cmd, srp_cmd->cdb, sg, sg_cnt, NULL, 0, NULL,
			       0, GFP_KERNEL))
		return keep_recv;
	sense = srpt_map_data(send_ioctx, &info);
	if (sense) {
		transport_generic_request_failure(cmd, sense);
		return keep_recv;
	}
	target_submit(cmd);
	return keep_recv;
}

/* The SRP_TSK_MGMT functions that LIO carries out, by their LIO names. */
static const struct {
	u8	srp;
	u8	tcm;
} srpt_tmfs[] = {
	{ SRP_TSK_ABORT_TASK,		TMR_ABORT_TASK },
	{ SRP_TSK_ABORT_TASK_SET,	TMR_ABORT_TASK_SET },
	{ SRP_TSK_CLEAR_TASK_SET,	TMR_CLEAR_TASK_SET },
	{ SRP_TSK_LUN_RESET,		TMR_LUN_RESET },
	{ SRP_TSK_CLEAR_ACA,		TMR_CLEAR_ACA },
};

/* LIO's name for an SRP function; LIO answers TMR_UNKNOWN as unsupported. */
static int srpt_tmf_to_tcm(u8 fn)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(srpt_tmfs); i++)
		if (srpt_tmfs[i].srp == fn)
			return srpt_tmfs[i].tcm;
	return TMR_UNKNOWN;
}

/**
 * srpt_handle_tsk_mgmt - process an SRP_TSK_MGMT
 * @ch: the channel.
 * @recv_ioctx: receive context holding the request.
 * @send_ioctx: context for the response.
 *
 * Passes the function to LIO's TMR path; LIO answers unknown functions as
 * not supported. A request that LIO cannot accept is answered here with
 * FUNCTION FAILED. srpt_iu_opcode() has checked the length.
 *
 * Context: CQ context; may sleep.
 */
static void srpt_handle_tsk_mgmt(struct srpt_rdma_ch *ch,
				 struct srpt_recv_ioctx *recv_ioctx,
				 struct srpt_send_ioctx *send_ioctx)
{
	struct srp_tsk_mgmt *tsk = recv_ioctx->ioctx.buf +
				   recv_ioctx->ioctx.offset;
	int ret;

	srpt_set_cmd_state(send_ioctx, SRPT_STATE_MGMT);
	send_ioctx->cmd.tag = tsk->tag;
	ret = target_submit_tmr(&send_ioctx->cmd, ch->sess, NULL,
				scsilun_to_int(&tsk->lun), tsk,
				srpt_tmf_to_tcm(tsk->tsk_mgmt_func), GFP_KERNEL,
				tsk->task_tag, TARGET_SCF_ACK_KREF);
	if (ret) {
		pr_debug("%s: TMF %#x not accepted by LIO (%d)\n",
			 ch->sess_name, tsk->tsk_mgmt_func, ret);
		srpt_send_local_tmf_rsp(ch, send_ioctx, SRPT_TMF_FAILED,
					tsk->tag);
	}
}

/* SRP_I_LOGOUT: the initiator ends the channel; answer with a disconnect. */
static void srpt_handle_i_logout(struct srpt_rdma_ch *ch)
{
	pr_info("%s: initiator logout\n", ch->sess_name);
	srpt_end_ch(ch);
}

/*
 * An IU the target never expects, or one too short for its type: the
 * initiator broke the protocol.
 */
static void srpt_handle_bad_iu(struct srpt_rdma_ch *ch, const u8 *iu,
			       u32 len)
{
	if (len)
		pr_warn_ratelimited("%s: unexpected IU (opcode %#x, %u bytes), disconnecting\n",
				    ch->sess_name, iu[0], len);
	else
		pr_warn_ratelimited("%s: empty IU, disconnecting\n",
				    ch->sess_name);
	srpt_handle_i_logout(ch);
}

/**
 * srpt_iu_opcode - the opcode of a received IU that is long enough
 * @iu: the received bytes.
 * @len: how many were received.
 *
 * Nothing of an IU is read before its length is known to cover it: the
 * opcode needs one byte, and each IU the target handles needs its fixed
 * part (a receive buffer keeps the bytes of the IU before it, so reading
 * past @len would act on old data).
 *
 * Context: any context.
 * Return: the opcode, also for IUs of types the target does not handle,
 * or -EINVAL if @len is 0 or shorter than the fixed part of the IU's type.
 */
VISIBLE_IF_KUNIT int srpt_iu_opcode(const void *iu, u32 len)
{
	u8 opcode;
	u32 need;

	if (!len)
		return -EINVAL;
	opcode = *(const u8 *)iu;
	switch (opcode) {
	case SRP_CMD:
		need = sizeof(struct srp_cmd);
		break;
	case SRP_TSK_MGMT:
		need = sizeof(struct srp_tsk_mgmt);
		break;
	case SRP_I_LOGOUT:
		need = sizeof(struct srp_i_logout);
		break;
	case SRP_CRED_RSP:
		need = sizeof(struct srp_cred_rsp);
		break;
	case SRP_AER_RSP:
		need = sizeof(struct srp_aer_rsp);
		break;
	default:
		need = 1;
		break;
	}
	return len < need ? -EINVAL : opcode;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_iu_opcode);

/**
 * srpt_repost_recv - give a receive buffer back to the HCA
 * @ch: channel the buffer belongs to (or whose SRQ it came from).
 * @recv: the receive context.
 *
 * SRQ buffers always go back to the SRQ, which other channels share. A
 * channel's own buffers are not posted any more once it disconnects: they
 * would only be flushed, possibly after the receive queue was drained,
 * and they are freed with the channel.
 *
 * Context: any context.
 */
void srpt_repost_recv(struct srpt_rdma_ch *ch, struct srpt_recv_ioctx *recv)
{
	struct srpt_device *sdev = ch->sport->sdev;
	int ret;

	if (!ch->use_srq && READ_ONCE(ch->state) >= CH_DISCONNECTING)
		return;
	ib_dma_sync_single_for_device(sdev->device, recv->ioctx.dma,
				      recv->ioctx.offset + srp_max_req_size,
				      DMA_FROM_DEVICE);
	ret = srpt_post_recv(sdev, ch, recv);
	if (ret)
		pr_debug("%s: reposting receive failed (%d)\n", ch->sess_name,
			 ret);
}

static bool srpt_defer_iu(struct srpt_rdma_ch *ch, struct srpt_recv_ioctx *recv)
{
	if (list_empty(&recv->wait_list))
		list_add_tail(&recv->wait_list, &ch->cmd_wait_list);
	return false;
}

/**
 * srpt_handle_new_iu - process one received information unit
 * @ch: the channel.
 * @recv_ioctx: its receive context.
 *
 * IUs that arrive before the channel is live, that would overtake IUs
 * already waiting, or that need a command context while none is free are
 * queued on the wait list and processed later, in order. Once the channel
 * disconnects, IUs are dropped: their commands could reach LIO after the
 * release stopped the session.
 *
 * Context: CQ context; may sleep.
 * Return: true if the IU was processed or dropped, false if it waits.
 */
static bool srpt_handle_new_iu(struct srpt_rdma_ch *ch,
			       struct srpt_recv_ioctx *recv_ioctx)
{
	struct srpt_send_ioctx *send_ioctx = NULL;
	const u8 *iu = recv_ioctx->ioctx.buf + recv_ioctx->ioctx.offset;
	enum srpt_ch_state state = READ_ONCE(ch->state);
	bool keep_recv = false;
	int opcode;

	if (unlikely(state >= CH_DISCONNECTING)) {
		list_del_init(&recv_ioctx->wait_list);
		srpt_repost_recv(ch, recv_ioctx);
		return true;
	}
	if (unlikely(state == CH_CONNECTING))
		return srpt_defer_iu(ch, recv_ioctx);
	if (!ch->processing_wait_list && !list_empty(&ch->cmd_wait_list))
		return srpt_defer_iu(ch, recv_ioctx);

	opcode = recv_ioctx->opcode;
	if (opcode == SRP_CMD || opcode == SRP_TSK_MGMT) {
		send_ioctx = srpt_get_send_ioctx(ch);
		if (unlikely(!send_ioctx))
			return srpt_defer_iu(ch, recv_ioctx);
	}
	list_del_init(&recv_ioctx->wait_list);

	switch (opcode) {
	case SRP_CMD:
		keep_recv = srpt_handle_cmd(ch, recv_ioctx, send_ioctx);
		break;
	case SRP_TSK_MGMT:
		srpt_handle_tsk_mgmt(ch, recv_ioctx, send_ioctx);
		break;
	case SRP_I_LOGOUT:
		srpt_handle_i_logout(ch);
		break;
	case SRP_CRED_RSP:
	case SRP_AER_RSP:
		/* Answers to requests this target never sends. */
		pr_debug("%s: ignoring IU %#x\n", ch->sess_name, opcode);
		break;
	default:
		srpt_handle_bad_iu(ch, iu, recv_ioctx->byte_len);
		break;
	}

	/* Immediate data keeps its buffer until the command is released. */
	if (!keep_recv)
		srpt_repost_recv(ch, recv_ioctx);
	return true;
}

/**
 * srpt_charge_credit - take the credit a received IU costs
 * @ch: the channel.
 * @opcode: srpt_iu_opcode() of the IU.
 *
 * SRP_CMD and SRP_TSK_MGMT each consume one of the credits (request limit)
 * granted at login and returned with every response; other IUs are free.
 * The target adds credits when it posts a response, before the initiator
 * can count them, so an initiator that keeps to its limit never drives
 * the count below zero.
 *
 * Context: any context.
 * Return: false if the initiator sent a request with no credit left.
 */
VISIBLE_IF_KUNIT bool srpt_charge_credit(struct srpt_rdma_ch *ch, int opcode)
{
	if (opcode != SRP_CMD && opcode != SRP_TSK_MGMT)
		return true;
	return atomic_dec_return(&ch->req_lim) >= 0;
}
EXPORT_SYMBOL_IF_KUNIT(srpt_charge_credit);

/*
 * A request beyond the credits breaks SRP: drop it and end the channel.
 * The requests still arriving meanwhile are dropped without a word.
 */
static void srpt_handle_over_limit(struct srpt_rdma_ch *ch,
				   struct srpt_recv_ioctx *recv)
{
	srpt_repost_recv(ch, recv);
	if (srpt_end_ch(ch))
		pr_warn_ratelimited("%s: request sent with no credit left (limit %u), disconnected\n",
				    ch->sess_name, ch->rq_size);
}

/**
 * srpt_recv_done - receive completion callback
 * @cq: completion queue.
 * @wc: the completion.
 *
 * A failed receive still used up its buffer: an SRQ buffer goes back to
 * the SRQ (or every channel on it would run out), and an error other than
 * a flush means the QP is broken, so the channel is closed.
 *
 * Context: CQ context.
 */
void srpt_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct srpt_rdma_ch *ch = wc->qp->qp_context;
	struct srpt_recv_ioctx *ioctx =
		container_of(wc->wr_cqe, struct srpt_recv_ioctx, ioctx.cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (ch->use_srq)
			srpt_repost_recv(ch, ioctx);
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			pr_info_ratelimited("%s: receive failed with status %s\n",
					    ch->sess_name,
					    ib_wc_status_msg(wc->status));
			srpt_ch_fatal(ch);
		}
		return;
	}
	ioctx->byte_len = wc->byte_len;
	ib_dma_sync_single_for_cpu(ch->sport->sdev->device, ioctx->ioctx.dma,
				   ioctx->ioctx.offset + srp_max_req_size,
				   DMA_FROM_DEVICE);
	ioctx->opcode = srpt_iu_opcode(ioctx->ioctx.buf + ioctx->ioctx.offset,
				       wc->byte_len);
	if (unlikely(!srpt_charge_credit(ch, ioctx->opcode))) {
		srpt_handle_over_limit(ch, ioctx);
		return;
	}
	srpt_handle_new_iu(ch, ioctx);
	if (!list_empty(&ch->cmd_wait_list))
		srpt_process_wait_list(ch);
}
EXPORT_SYMBOL_IF_KUNIT(srpt_recv_done);

/**
 * srpt_process_wait_list - process waiting IUs in arrival order
 * @ch: the channel.
 *
 * Stops at the first IU that still cannot be processed.
 *
 * Context: CQ context of @ch.
 */
void srpt_process_wait_list(struct srpt_rdma_ch *ch)
{
	struct srpt_recv_ioctx *recv, *tmp;

	if (list_empty(&ch->cmd_wait_list) || ch->processing_wait_list ||
	    READ_ONCE(ch->state) == CH_CONNECTING)
		return;
	ch->processing_wait_list = true;
	list_for_each_entry_safe(recv, tmp, &ch->cmd_wait_list, wait_list) {
		if (!srpt_handle_new_iu(ch, recv))
			break;
	}
	ch->processing_wait_list = false;
}

/**
 * srpt_zerolength_write_done - completion of the "channel is live" write
 * @cq: completion queue.
 * @wc: the completion.
 *
 * Runs in the CQ context, the only place the wait list may be walked, so it
 * processes the IUs that arrived before the RTU. A failed write closes the
 * channel, unless it is a flush of a channel already closing.
 *
 * Context: CQ context.
 */
void srpt_zerolength_write_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct srpt_rdma_ch *ch = wc->qp->qp_context;

	if (wc->status == IB_WC_SUCCESS)
		srpt_process_wait_list(ch);
	else
		srpt_ch_send_failed(ch, wc, "the channel's first RDMA WRITE");
}

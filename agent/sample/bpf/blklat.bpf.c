// SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0
/* Per-cgroup block I/O latency: each request's issue-to-completion time,
 * in a log2 histogram with 4 sub-buckets per octave, plus bytes and
 * requests by direction, keyed by the cgroup id of the request's blkcg
 * (rq->bio->bi_blkg->blkcg->css.cgroup->kn->id, the cgroup directory's
 * inode), for the cgroups the agent made an entry for.  Read by
 * agent/sample/latency.c once per sample period, the whole map at once.  And the
 * removal of the cgroup directories the agent watches (cgroup_rmdir).
 *
 * CO-RE without a generated vmlinux.h: the few kernel structs it reads
 * are declared here with only the fields it uses, and
 * preserve_access_index makes clang emit relocations that libbpf resolves
 * against the running kernel's BTF (/sys/kernel/btf/vmlinux) at load, so
 * the build does not depend on the build machine's kernel. */
#include "agent/sample/bpf/blklat.h"

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef int __s32;
typedef __u32 __be32;
typedef __u64 __be64;
typedef __u32 __wsum;
typedef __u16 __sum16;
typedef __u16 __le16;
typedef __u32 __le32;
typedef __u64 __le64;
typedef __u16 __be16;
#include <linux/bpf.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct kernfs_node {
  __u64 id;
} __attribute__((preserve_access_index));

struct cgroup {
  struct kernfs_node *kn;
} __attribute__((preserve_access_index));

struct cgroup_subsys_state {
  struct cgroup *cgroup;
} __attribute__((preserve_access_index));

struct blkcg {
  struct cgroup_subsys_state css;
} __attribute__((preserve_access_index));

struct blkcg_gq {
  struct blkcg *blkcg;
} __attribute__((preserve_access_index));

struct bio {
  struct blkcg_gq *bi_blkg;
} __attribute__((preserve_access_index));

struct request {
  unsigned int cmd_flags;
  unsigned int __data_len;
  struct bio *bio;
} __attribute__((preserve_access_index));

/* The writer of a dirtied page cache folio (writeback_dirty_folio). */
struct css_set {
  struct cgroup_subsys_state *subsys[1];
} __attribute__((preserve_access_index));

struct task_struct {
  struct css_set *cgroups;
} __attribute__((preserve_access_index));

struct backing_dev_info {
  unsigned int capabilities;
} __attribute__((preserve_access_index));

struct super_block {
  unsigned long s_magic;
  struct backing_dev_info *s_bdi;
} __attribute__((preserve_access_index));

struct inode {
  struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct address_space {
  struct inode *host;
} __attribute__((preserve_access_index));

/* struct folio's flags are memdesc_flags_t since Linux 6.18, an unsigned
 * long before; its page count is _nr_pages (6.10 on, 64-bit) or
 * _folio_nr_pages (before).  One flavour each; bpf_core_type_exists and
 * bpf_core_field_exists pick at load. */
typedef struct {
  unsigned long f;
} memdesc_flags_t;

struct folio {
  unsigned long index;
} __attribute__((preserve_access_index));

struct folio___memdesc {
  memdesc_flags_t flags;
  unsigned int _nr_pages;
} __attribute__((preserve_access_index));

struct folio___ulong {
  unsigned long flags;
  unsigned int _folio_nr_pages;
} __attribute__((preserve_access_index));

enum pageflags { PG_head = 6 };
enum cgroup_subsys_id { io_cgrp_id = 3 };

/* include/linux/backing-dev-defs.h: a bdi whose pages are written back
 * (mapping_can_writeback); include/uapi/linux/magic.h: the block device
 * pseudo-filesystem, whose inodes' bdi is their disk's, not s_bdi. */
#define BDI_CAP_WRITEBACK 0x1u
#define BDEVFS_MAGIC 0x62646576ul

/* The page size, set by the agent before load (sysconf). */
const volatile __u64 page_size = 4096;

/* include/linux/blk_types.h: the op is the low 8 bits of cmd_flags
 * (REQ_OP_BITS), REQ_OP_READ 0, REQ_OP_WRITE 1. */
#define OP_MASK 0xffu
#define OP_READ 0u
#define OP_WRITE 1u

struct start {
  __u64 ts;
  __u64 cgid;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, BLKLAT_MAX_INFLIGHT);
  __type(key, __u64);
  __type(value, struct start);
} inflight SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, BLKLAT_MAX_CGROUPS);
  __type(key, __u64);
  __type(value, struct blklat_val);
} lat SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, BLKLAT_MAX_WATCH);
  __type(key, __u64);
  __type(value, __u8);
} watch SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, BLKLAT_MAX_GONE);
  __type(key, __u64);
  __type(value, __u8);
} gone SEC(".maps");

static __always_inline __u32 fls64(__u64 v) {
  __u32 n = 0;
  if (v >> 32) {
    n += 32;
    v >>= 32;
  }
  if (v >> 16) {
    n += 16;
    v >>= 16;
  }
  if (v >> 8) {
    n += 8;
    v >>= 8;
  }
  if (v >> 4) {
    n += 4;
    v >>= 4;
  }
  if (v >> 2) {
    n += 2;
    v >>= 2;
  }
  if (v >> 1)
    n += 1;
  return n; /* floor(log2(v)) for v > 0 */
}

/* The same rule as agent_lathist_bucket (agent/sample/lathist.c). */
static __always_inline __u32 bucket(__u64 us) {
  if (us < (1u << BLKLAT_SUB_BITS))
    return (__u32)us;
  __u32 p = fls64(us);
  __u32 sub = (__u32)(us >> (p - BLKLAT_SUB_BITS)) & ((1u << BLKLAT_SUB_BITS) - 1);
  __u32 b = (1u << BLKLAT_SUB_BITS) + ((p - BLKLAT_SUB_BITS) << BLKLAT_SUB_BITS) + sub;
  return b < BLKLAT_BUCKETS - 1 ? b : BLKLAT_BUCKETS - 1;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(blklat_issue, struct request *rq) {
  __u64 key = (__u64)rq;
  struct bio *bio = BPF_CORE_READ(rq, bio);
  if (!bio)
    return 0; /* a flush or a request without data: nobody's I/O */
  __u64 cgid = BPF_CORE_READ(bio, bi_blkg, blkcg, css.cgroup, kn, id);
  if (!bpf_map_lookup_elem(&lat, &cgid))
    return 0; /* not a container the agent samples */
  struct start s = {.ts = bpf_ktime_get_ns(), .cgid = cgid};
  bpf_map_update_elem(&inflight, &key, &s, BPF_ANY);
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(blklat_complete, struct request *rq, int error, unsigned int nr_bytes) {
  __u64 key = (__u64)rq;
  struct start *s = bpf_map_lookup_elem(&inflight, &key);
  if (!s)
    return 0;
  __u64 now = bpf_ktime_get_ns();
  __u64 ts = s->ts, cgid = s->cgid;
  bpf_map_delete_elem(&inflight, &key);
  if (cgid == 0 || now < ts)
    return 0;
  struct blklat_val *v = bpf_map_lookup_elem(&lat, &cgid);
  if (!v)
    return 0; /* its container left while the request was in flight */
  __u32 b = bucket((now - ts) / 1000);
  /* bucket() is bounded, but clang drops the check below as redundant
   * and the verifier wants to see one: hide b's value from clang. */
  asm volatile("" : "+r"(b));
  if (b < BLKLAT_BUCKETS)
    __sync_fetch_and_add(&v->hist[b], 1);
  __u32 op = BPF_CORE_READ(rq, cmd_flags) & OP_MASK;
  if (op == OP_READ) {
    __sync_fetch_and_add(&v->rios, 1);
    __sync_fetch_and_add(&v->rbytes, nr_bytes);
  } else if (op == OP_WRITE) {
    __sync_fetch_and_add(&v->wios, 1);
    __sync_fetch_and_add(&v->wbytes, nr_bytes);
  }
  return 0;
}

/* include/trace/events/writeback.h: writeback_dirty_folio(struct folio *,
 * struct address_space *), in folio_account_dirtied (mm/page-writeback.c)
 * in the dirtying task's context, before its check that the mapping is
 * written back at all (so the same check here), where the kernel adds
 * the folio to the task's write_bytes.  Charged to the task's io (blkio)
 * cgroup, which on a v1 hierarchy is the v1 blkio cgroup the block
 * layer's counts above are keyed by.  Loaded only where the agent asks
 * (writeback not charged to the writer). */
SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(blklat_dirty, struct folio *folio, struct address_space *mapping) {
  /* Called for every folio any task dirties: the writer's cgroup first,
   * so that a task the agent does not sample costs one map lookup.  Loads
   * through the BTF pointers (the arguments, the current task) are plain
   * loads the verifier guards, not helper calls. */
  if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, io_cgrp_id) || !mapping)
    return 0;
  struct task_struct *task = bpf_get_current_task_btf();
  int io = bpf_core_enum_value(enum cgroup_subsys_id, io_cgrp_id);
  struct cgroup_subsys_state *css = task->cgroups->subsys[io];
  if (!css)
    return 0;
  __u64 cgid = css->cgroup->kn->id;
  struct blklat_val *v = bpf_map_lookup_elem(&lat, &cgid);
  if (!v)
    return 0;
  struct super_block *sb = mapping->host->i_sb;
  if (!sb || (sb->s_magic != BDEVFS_MAGIC && !(sb->s_bdi->capabilities & BDI_CAP_WRITEBACK)))
    return 0; /* tmpfs, ramfs, ...: never written to a disk */
  unsigned long flags;
  __u64 nr = 1;
  if (bpf_core_type_exists(memdesc_flags_t))
    flags = ((struct folio___memdesc *)folio)->flags.f;
  else
    flags = ((struct folio___ulong *)folio)->flags;
  if (flags & (1ul << bpf_core_enum_value(enum pageflags, PG_head))) {
    if (bpf_core_field_exists(struct folio___memdesc, _nr_pages))
      nr = ((struct folio___memdesc *)folio)->_nr_pages;
    else if (bpf_core_field_exists(struct folio___ulong, _folio_nr_pages))
      nr = ((struct folio___ulong *)folio)->_folio_nr_pages;
  }
  __u64 index = folio->index;
  __sync_fetch_and_add(&v->dirtied, nr * page_size);
  /* Racing writers of one cgroup may count a run twice: an estimate. */
  if (v->dirty_mapping != (__u64)mapping || v->dirty_next != index)
    __sync_fetch_and_add(&v->druns, 1);
  v->dirty_mapping = (__u64)mapping;
  v->dirty_next = index + nr;
  return 0;
}

/* include/trace/events/cgroup.h: cgroup_rmdir(struct cgroup *cgrp, const
 * char *path), for every hierarchy (v2 and each v1 one). */
SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(blklat_rmdir, struct cgroup *cgrp, const char *path) {
  __u64 id = BPF_CORE_READ(cgrp, kn, id);
  if (!bpf_map_lookup_elem(&watch, &id))
    return 0;
  __u8 one = 1;
  bpf_map_update_elem(&gone, &id, &one, BPF_ANY);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";

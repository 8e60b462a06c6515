// SPDX-License-Identifier: GPL-2.0
/*
 * BPF kfuncs: XDP and tc (sched_cls) programs test, add and remove keys
 * in kbloom's filters, the same filters bloomctl fills and iptables rules
 * check; syscall programs may only look filters up and test keys.
 * tools/bpf/kbloom.bpf.h declares them for programs.
 *
 * Two ways to reach a filter:
 *
 * - By reference: bpf_kbloom_get() looks the filter up by name and takes a
 *   reference (KF_ACQUIRE), bpf_kbloom_put() drops it (KF_RELEASE). The
 *   verifier rejects a program that can exit still holding one. Costs a
 *   name lookup and two atomic operations per use.
 * - By id: bpf_kbloom_id() (or sysfs "id") gives a filter's number once;
 *   the *_id calls find the filter by it on every call, with no reference
 *   and no atomic operation, in one RCU-sched section with the operation
 *   inlined (kbloom_filter_do_id()): on a blocked filter no call at all
 *   until new bits are written. Ids are not reused until they wrap at
 *   2^31, so a destroyed filter's id fails with -ENOENT instead of
 *   reaching a newer filter.
 *
 * Either way, destroying a filter is not refused because a program uses
 * it (programs do not pin filters the way iptables rules do): from then
 * on the calls answer -ENOENT. A loaded program that calls any of these
 * holds kbloom.ko (the verifier takes a module reference for a module's
 * kfuncs), so rmmod is refused until the program is unloaded.
 *
 * A program may also keep a reference in a map (a struct kbloom_bpf_filter
 * __kptr_ref * field, bpf_kptr_xchg()); the map drops it with
 * bpf_kbloom_put() when it is freed, and holds kbloom.ko meanwhile.
 *
 * What a program holds is a struct kbloom_bpf_filter *, a type with no
 * members (kbloom_filter.h): the verifier refuses any load through it, so
 * a program cannot read the seed, the storage or a kernel address.
 *
 * Which programs reach which filter is the filter's choice, made at its
 * creation (KBLOOM_CREATE_BPF_READ, KBLOOM_CREATE_BPF_WRITE; none by
 * default): bpf_kbloom_get() and bpf_kbloom_id() refuse a filter closed to
 * BPF, the calls that change a filter refuse one that is only readable,
 * and the *_id calls check on every call, since an id can be known
 * without asking for it (sysfs).
 *
 * The kfuncs exist only if kbloom.ko carries BTF (make BTF=1 on
 * distribution kernels, whose headers lack vmlinux) and the kernel accepts
 * it; sysfs "kfuncs" says whether they are available, and why not.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/irq_work.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/string.h>

#include "kbloom.h"
#include "kbloom_bpf.h"
#include "kbloom_filter.h"

static const char *kbloom_bpf_why = "not registered yet";

/**
 * kbloom_bpf_status() - are the kfuncs available, and if not, why
 *
 * Return: "available", or "unavailable: " and the reason, for sysfs.
 */
const char *kbloom_bpf_status(void)
{
	return kbloom_bpf_why;
}

#if IS_ENABLED(CONFIG_BPF_SYSCALL) && IS_ENABLED(CONFIG_DEBUG_INFO_BTF_MODULES)

/* What sysfs "kfuncs" and the log say when there are none. */
static const char kbloom_bpf_no_btf[] =
	"unavailable: kbloom.ko has no BTF (build it with make BTF=1)";
static const char kbloom_bpf_refused[] =
	"unavailable: the kernel did not accept kbloom.ko's BTF (built for another kernel?)";
static const char kbloom_bpf_failed[] =
	"unavailable: registering the kfuncs failed";
static const char kbloom_bpf_partial[] =
	"unavailable: registering the kfuncs failed for some program types";

/*
 * The kfunc definition API changed after 6.1; these follow it back. Before
 * 6.4 there is no __bpf_kfunc: a global function stays out of line and in
 * the object without it there.
 */
#ifndef __bpf_kfunc
#define __bpf_kfunc
#endif
#ifndef BTF_KFUNCS_START
#define BTF_KFUNCS_START(name) BTF_SET8_START(name)
#define BTF_KFUNCS_END(name) BTF_SET8_END(name)
#endif

/* Last references dropped in NMI context, put from an irq_work. */
static LLIST_HEAD(kbloom_bpf_nmi_puts);

static void kbloom_bpf_nmi_put_fn(struct irq_work *work)
{
	struct llist_node *list = llist_del_all(&kbloom_bpf_nmi_puts);
	struct kbloom_filter *filter, *next;

	llist_for_each_entry_safe(filter, next, list, nmi_put)
		kbloom_filter_put(filter);
}

static struct kbloom_filter *kbloom_bpf_filter_of(struct kbloom_bpf_filter *f)
{
	return container_of(f, struct kbloom_filter, bpf);
}

/*
 * The in-kernel call of @op on a held filter, if the filter allows BPF
 * programs @op.
 */
static int kbloom_bpf_do(struct kbloom_bpf_filter *f, enum kbloom_op op,
			 const void *key, u32 len)
{
	struct kbloom_filter *filter = kbloom_bpf_filter_of(f);

	if (unlikely(!(filter->bpf_ops & BIT(op))))
		return -EACCES;
	switch (op) {
	case KBLOOM_OP_ADD:
		return kbloom_add(filter, key, len);
	case KBLOOM_OP_QUERY:
		return kbloom_query(filter, key, len);
	case KBLOOM_OP_TEST_AND_ADD:
		return kbloom_test_and_add(filter, key, len);
	case KBLOOM_OP_REMOVE:
		return kbloom_remove(filter, key, len);
	}
	return -EINVAL;
}

static DEFINE_IRQ_WORK(kbloom_bpf_nmi_work, kbloom_bpf_nmi_put_fn);

/*
 * A name from a program: its bytes up to the first NUL, or all @sz of
 * them; into @buf, NUL-terminated. False if empty or too long.
 */
static bool kbloom_bpf_name(char *buf, const char *name, u32 sz)
{
	size_t len = strnlen(name, sz);

	if (!len || len >= KBLOOM_NAME_MAX)
		return false;
	memcpy(buf, name, len);
	buf[len] = '\0';
	return true;
}

/* Newer kernels' marker around kfunc definitions (from 6.7). */
#ifdef __bpf_kfunc_start_defs
__bpf_kfunc_start_defs();
#endif

/**
 * bpf_kbloom_get() - look a filter up by name and take a reference
 * @name: the name: its bytes up to the first NUL, or all @name__sz.
 * @name__sz: size of the memory at @name.
 *
 * Return: the filter, to be released with bpf_kbloom_put(), or NULL if
 * there is none or it is closed to BPF programs.
 */
__bpf_kfunc struct kbloom_bpf_filter *bpf_kbloom_get(const char *name,
						     u32 name__sz)
{
	struct kbloom_filter *filter;
	char buf[KBLOOM_NAME_MAX];

	if (!kbloom_bpf_name(buf, name, name__sz))
		return NULL;
	filter = kbloom_filter_get(buf);
	if (!filter)
		return NULL;
	if (!filter->bpf_ops) {
		kbloom_filter_put(filter);
		return NULL;
	}
	return &filter->bpf;
}

/**
 * bpf_kbloom_put() - drop a reference taken by bpf_kbloom_get()
 * @f: the filter.
 *
 * Also the destructor of a filter kept in a map as a kptr, which runs
 * wherever the map's element is replaced or deleted: in NMI context too,
 * from a tracing program. The last put frees the filter through
 * queue_rcu_work(), which NMI must not call: there, it is handed to an
 * irq_work instead.
 */
__bpf_kfunc void bpf_kbloom_put(struct kbloom_bpf_filter *f)
{
	struct kbloom_filter *filter = kbloom_bpf_filter_of(f);

	if (likely(!in_nmi())) {
		kbloom_filter_put(filter);
		return;
	}
	/* Not the last reference: dropping it frees nothing. */
	if (refcount_dec_not_one(&filter->ref))
		return;
	/*
	 * The last one, which the list now owns: nobody else can drop it,
	 * so a filter is never on the list twice.
	 */
	llist_add(&filter->nmi_put, &kbloom_bpf_nmi_puts);
	irq_work_queue(&kbloom_bpf_nmi_work);
}

/**
 * bpf_kbloom_query() - may the key be present?
 * @f: a filter held with bpf_kbloom_get().
 * @key: the key bytes.
 * @key__sz: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Return: 1 maybe present, 0 absent, -EINVAL, -ENOENT (destroyed).
 * (Every filter bpf_kbloom_get() gives may be queried.)
 */
__bpf_kfunc int bpf_kbloom_query(struct kbloom_bpf_filter *f,
				 const void *key, u32 key__sz)
{
	return kbloom_bpf_do(f, KBLOOM_OP_QUERY, key, key__sz);
}

/**
 * bpf_kbloom_add() - insert a key
 * @f: a filter held with bpf_kbloom_get().
 * @key: the key bytes.
 * @key__sz: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Return: 0, -EINVAL, -ENOENT (destroyed), -EACCES (the filter is not
 * writable by BPF programs).
 */
__bpf_kfunc int bpf_kbloom_add(struct kbloom_bpf_filter *f, const void *key,
			       u32 key__sz)
{
	return kbloom_bpf_do(f, KBLOOM_OP_ADD, key, key__sz);
}

/**
 * bpf_kbloom_test_and_add() - insert a key, telling whether it was there
 * @f: a filter held with bpf_kbloom_get().
 * @key: the key bytes.
 * @key__sz: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Return: 1 seen before (or a false positive), 0 new, -EINVAL, -ENOENT,
 * -EACCES (not writable by BPF programs).
 */
__bpf_kfunc int bpf_kbloom_test_and_add(struct kbloom_bpf_filter *f,
					const void *key, u32 key__sz)
{
	return kbloom_bpf_do(f, KBLOOM_OP_TEST_AND_ADD, key, key__sz);
}

/**
 * bpf_kbloom_remove() - remove a key from a counting filter
 * @f: a filter held with bpf_kbloom_get().
 * @key: the key bytes.
 * @key__sz: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Return: 0 removed, -ENOENT absent or destroyed, -EOPNOTSUPP not a
 * counting filter, -EINVAL, -EACCES (not writable by BPF programs).
 */
__bpf_kfunc int bpf_kbloom_remove(struct kbloom_bpf_filter *f,
				  const void *key, u32 key__sz)
{
	return kbloom_bpf_do(f, KBLOOM_OP_REMOVE, key, key__sz);
}

/**
 * bpf_kbloom_id() - a filter's id, for the *_id calls
 * @name: the name: its bytes up to the first NUL, or all @name__sz.
 * @name__sz: size of the memory at @name.
 *
 * Return: the id (positive), -EINVAL for a bad name, -ENOENT, -EACCES
 * (the filter is closed to BPF programs).
 */
__bpf_kfunc int bpf_kbloom_id(const char *name, u32 name__sz)
{
	char buf[KBLOOM_NAME_MAX];

	if (!kbloom_bpf_name(buf, name, name__sz))
		return -EINVAL;
	return kbloom_filter_id(buf);
}

/**
 * bpf_kbloom_query_id() - bpf_kbloom_query() on the filter of this id
 * @id: from bpf_kbloom_id() or sysfs.
 * @key: the key bytes.
 * @key__sz: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Return: as bpf_kbloom_query(); -ENOENT if no filter has this id.
 */
__bpf_kfunc int bpf_kbloom_query_id(u32 id, const void *key, u32 key__sz)
{
	return kbloom_filter_do_id(id, KBLOOM_OP_QUERY, key, key__sz);
}

/**
 * bpf_kbloom_add_id() - bpf_kbloom_add() on the filter of this id
 * @id: from bpf_kbloom_id() or sysfs.
 * @key: the key bytes.
 * @key__sz: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Return: as bpf_kbloom_add(); -ENOENT if no filter has this id.
 */
__bpf_kfunc int bpf_kbloom_add_id(u32 id, const void *key, u32 key__sz)
{
	return kbloom_filter_do_id(id, KBLOOM_OP_ADD, key, key__sz);
}

/**
 * bpf_kbloom_test_and_add_id() - bpf_kbloom_test_and_add() by id
 * @id: from bpf_kbloom_id() or sysfs.
 * @key: the key bytes.
 * @key__sz: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Return: as bpf_kbloom_test_and_add(); -ENOENT if no filter has this id.
 */
__bpf_kfunc int bpf_kbloom_test_and_add_id(u32 id, const void *key,
					   u32 key__sz)
{
	return kbloom_filter_do_id(id, KBLOOM_OP_TEST_AND_ADD, key, key__sz);
}

/**
 * bpf_kbloom_remove_id() - bpf_kbloom_remove() by id
 * @id: from bpf_kbloom_id() or sysfs.
 * @key: the key bytes.
 * @key__sz: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Return: as bpf_kbloom_remove(); -ENOENT also if no filter has this id.
 */
__bpf_kfunc int bpf_kbloom_remove_id(u32 id, const void *key, u32 key__sz)
{
	return kbloom_filter_do_id(id, KBLOOM_OP_REMOVE, key, key__sz);
}

#ifdef __bpf_kfunc_end_defs
__bpf_kfunc_end_defs();
#endif

/*
 * The calls on a held filter take only a referenced pointer
 * (KF_TRUSTED_ARGS): not one a program found some other way.
 */
BTF_KFUNCS_START(kbloom_kfunc_ids)
BTF_ID_FLAGS(func, bpf_kbloom_get, KF_ACQUIRE | KF_RET_NULL)
BTF_ID_FLAGS(func, bpf_kbloom_put, KF_RELEASE)
BTF_ID_FLAGS(func, bpf_kbloom_query, KF_TRUSTED_ARGS)
BTF_ID_FLAGS(func, bpf_kbloom_add, KF_TRUSTED_ARGS)
BTF_ID_FLAGS(func, bpf_kbloom_test_and_add, KF_TRUSTED_ARGS)
BTF_ID_FLAGS(func, bpf_kbloom_remove, KF_TRUSTED_ARGS)
BTF_ID_FLAGS(func, bpf_kbloom_id)
BTF_ID_FLAGS(func, bpf_kbloom_query_id)
BTF_ID_FLAGS(func, bpf_kbloom_add_id)
BTF_ID_FLAGS(func, bpf_kbloom_test_and_add_id)
BTF_ID_FLAGS(func, bpf_kbloom_remove_id)
BTF_KFUNCS_END(kbloom_kfunc_ids)

/*
 * Syscall programs read only: loading one takes CAP_BPF alone, while
 * changing a filter through /dev/bloom takes root, and an XDP or tc
 * program CAP_NET_ADMIN as well.
 */
BTF_KFUNCS_START(kbloom_kfunc_ro_ids)
BTF_ID_FLAGS(func, bpf_kbloom_get, KF_ACQUIRE | KF_RET_NULL)
BTF_ID_FLAGS(func, bpf_kbloom_put, KF_RELEASE)
BTF_ID_FLAGS(func, bpf_kbloom_query, KF_TRUSTED_ARGS)
BTF_ID_FLAGS(func, bpf_kbloom_id)
BTF_ID_FLAGS(func, bpf_kbloom_query_id)
BTF_KFUNCS_END(kbloom_kfunc_ro_ids)

static const struct btf_kfunc_id_set kbloom_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &kbloom_kfunc_ids,
};

static const struct btf_kfunc_id_set kbloom_kfunc_ro_set = {
	.owner = THIS_MODULE,
	.set = &kbloom_kfunc_ro_ids,
};

/*
 * bpf_kbloom_put() also destroys a referenced kptr to a filter that a map
 * still holds when it is freed (struct kbloom_bpf_filter __kptr_ref * in a
 * map value, stored with bpf_kptr_xchg()).
 */
BTF_ID_LIST(kbloom_dtor_ids)
BTF_ID(struct, kbloom_bpf_filter)
BTF_ID(func, bpf_kbloom_put)

/*
 * Program types that may call them, and which. Not tracing: a tracing
 * program can run in NMI context, where the statistics' per-CPU update
 * is not safe.
 */
static const struct {
	enum bpf_prog_type type;
	const struct btf_kfunc_id_set *set;
} kbloom_bpf_types[] = {
	{ BPF_PROG_TYPE_XDP, &kbloom_kfunc_set },
	{ BPF_PROG_TYPE_SCHED_CLS, &kbloom_kfunc_set },
	{ BPF_PROG_TYPE_SYSCALL, &kbloom_kfunc_ro_set },
};

/**
 * kbloom_bpf_init() - register the kfuncs, if this module can
 *
 * Never fails the module's load: without kfuncs the rest of kbloom works,
 * and sysfs "kfuncs" and the kernel log say why they are missing.
 */
void kbloom_bpf_init(void)
{
	const struct btf_id_dtor_kfunc dtors[] = {
		{
			.btf_id = kbloom_dtor_ids[0],
			.kfunc_btf_id = kbloom_dtor_ids[1],
		},
	};
	unsigned int i;
	int ret;

	/*
	 * Without module BTF, registration would fail with only "missing
	 * module BTF" in the log; say what to do instead.
	 */
	if (!THIS_MODULE->btf_data_size) {
		kbloom_bpf_why = kbloom_bpf_no_btf;
		pr_info("kfuncs: %s\n", kbloom_bpf_why);
		return;
	}
	/*
	 * First: unlike the kfunc sets' registration, which returns 0 and
	 * only logs a warning, this one fails with -ENOENT when the kernel
	 * has dropped a module BTF that does not match its own (the module
	 * loads anyway with CONFIG_MODULE_ALLOW_BTF_MISMATCH).
	 */
	ret = register_btf_id_dtor_kfuncs(dtors, ARRAY_SIZE(dtors),
					  THIS_MODULE);
	if (ret) {
		kbloom_bpf_why = ret == -ENOENT ? kbloom_bpf_refused :
						  kbloom_bpf_failed;
		pr_warn("kfuncs: %s (error %d)\n", kbloom_bpf_why, ret);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(kbloom_bpf_types); i++) {
		ret = register_btf_kfunc_id_set(kbloom_bpf_types[i].type,
						kbloom_bpf_types[i].set);
		if (ret) {
			/* Sets cannot be unregistered: say so. */
			kbloom_bpf_why = i ? kbloom_bpf_partial :
					     kbloom_bpf_failed;
			pr_warn("kfuncs: %s (error %d)\n", kbloom_bpf_why, ret);
			return;
		}
	}
	kbloom_bpf_why = "available";
}

/**
 * kbloom_bpf_uninit() - wait for the last puts handed over from NMI
 *
 * A map that held a filter as a kptr holds kbloom.ko too, but may have
 * let it go (and the module be unloading) before the irq_work has run.
 */
void kbloom_bpf_uninit(void)
{
	irq_work_sync(&kbloom_bpf_nmi_work);
}

#else /* !(CONFIG_BPF_SYSCALL && CONFIG_DEBUG_INFO_BTF_MODULES) */

static const char kbloom_bpf_no_mod_btf[] =
	"unavailable: the kernel has no module BTF (CONFIG_DEBUG_INFO_BTF_MODULES)";
static const char kbloom_bpf_no_bpf[] =
	"unavailable: the kernel has no BPF (CONFIG_BPF_SYSCALL)";

void kbloom_bpf_init(void)
{
	kbloom_bpf_why = IS_ENABLED(CONFIG_BPF_SYSCALL) ?
			 kbloom_bpf_no_mod_btf : kbloom_bpf_no_bpf;
	pr_info("kfuncs: %s\n", kbloom_bpf_why);
}

void kbloom_bpf_uninit(void)
{
}

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs for kbloom.
 *
 * A filter's kobject stays until its last reference (filter->ref, see
 * kbloom_filter.h) is dropped.
 * A show() in progress holds a kernfs active reference to its file, and
 * kobject_del() on destroy waits for those to drain before the directory
 * goes, so show() always finds its filter alive.
 *
 * Every file costs O(1) to read, whatever the filter's size: "bits_set"
 * and "saturated" are counters kept as bits change, not scans.
 *
 * Who may read what, one rule: what was chosen when the filter was made
 * or is changed only by its administrator (its shape: bits, hashes,
 * window...; its id, its BPF access, the rules that use it) is
 * world-readable (0444), for monitoring; whatever changes as keys arrive
 * (bits_set, saturated, adds, queries, hits, and rotations, which a
 * rotate-at-fill filter makes as it fills) is root's (0400), like the
 * device: it tells what the filter is used for, how often, and even
 * whether a given key was in it. (KBLOOM_FILTER_ATTR is the first kind,
 * KBLOOM_TRAFFIC_ATTR the second.)
 *
 * The filters live in a kset, "filters", so that creating and destroying
 * one sends a uevent (SUBSYSTEM=bloom, ACTION=add/remove, DEVPATH
 * /kernel/bloom/filters/<name>) that udev rules can act on.
 */

#include <linux/kobject.h>
#include <linux/sysfs.h>

#include "kbloom_bpf.h"
#include "kbloom_filter.h"
#include "kbloom_gen.h"
#include "kbloom_storage.h"
#include "kbloom_sysfs.h"

static struct kobject *kbloom_root_kobj;
static struct kset *kbloom_filters_kset;

#define to_filter(k) container_of(k, struct kbloom_filter, kobj)

static u64 kbloom_gen_rotations(struct kbloom_gen *gen)
{
	u64 rotations = 0, age;

	if (gen->win)
		kbloom_window_info(gen->win, &rotations, &age);
	return rotations;
}

/*
 * Values come from a pinned generation, so that all of one value (a
 * popcount of up to 8 GiB, say) is read from one set of contents, and no
 * lock is held meanwhile: these files are world-readable.
 */
#define KBLOOM_GEN_ATTR(_name, _mode, _fmt, _expr)			\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	struct kbloom_gen *gen = kbloom_gen_get(to_filter(kobj));	\
	ssize_t ret;							\
									\
	ret = sysfs_emit(buf, _fmt "\n", _expr);			\
	kbloom_gen_put(gen);						\
	return ret;							\
}									\
static struct kobj_attribute kbloom_attr_##_name =			\
	__ATTR_RO_MODE(_name, _mode)

/* A value of the filter's shape: everyone's. */
#define KBLOOM_FILTER_ATTR(_name, _fmt, _expr)				\
	KBLOOM_GEN_ATTR(_name, 0444, _fmt, _expr)

/* A value that traffic moves: root's. */
#define KBLOOM_TRAFFIC_ATTR(_name, _fmt, _expr)				\
	KBLOOM_GEN_ATTR(_name, 0400, _fmt, _expr)

/*
 * One of the occupancy counters of the current generation. Root's: an
 * exact fill that changes as keys arrive tells whoever can send keys
 * (through an iptables rule, say) whether a key of theirs was already in.
 */
#define KBLOOM_OCCUPANCY_ATTR(_name, _which)				\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	struct kbloom_gen *gen = kbloom_gen_get(to_filter(kobj));	\
	u64 occupied, stuck;						\
									\
	kbloom_gen_occupancy(gen, &occupied, &stuck);			\
	kbloom_gen_put(gen);						\
	return sysfs_emit(buf, "%llu\n", _which);			\
}									\
static struct kobj_attribute kbloom_attr_##_name = __ATTR_RO_MODE(_name, 0400)

/* The sum over CPUs of one counter; @member names the counter. Root's. */
#define KBLOOM_TOTAL_ATTR(_name, _member)				\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	struct kbloom_totals t;						\
									\
	kbloom_filter_totals(to_filter(kobj), &t);			\
	return sysfs_emit(buf, "%llu\n", t._member);			\
}									\
static struct kobj_attribute kbloom_attr_##_name = __ATTR_RO_MODE(_name, 0400)

KBLOOM_FILTER_ATTR(bits, "%llu", gen->core.nbits);
KBLOOM_FILTER_ATTR(hashes, "%u", gen->core.nhashes);
KBLOOM_FILTER_ATTR(counting, "%d",
		   !!(gen->core.flags & KBLOOM_CORE_COUNTING));
KBLOOM_FILTER_ATTR(layout, "%s",
		   gen->core.flags & KBLOOM_CORE_BLOCKED ? "blocked" : "plain");
KBLOOM_FILTER_ATTR(hash_scheme, "%u",
		   gen->core.flags & KBLOOM_CORE_SIPHASH ?
		   KBLOOM_HASH_SIPHASH : KBLOOM_HASH_JHASH);
KBLOOM_FILTER_ATTR(capacity, "%llu", gen->capacity);
KBLOOM_FILTER_ATTR(fpr_ppb, "%u", gen->fpr_ppb);
KBLOOM_FILTER_ATTR(memory_bytes, "%zu", gen->bytes);
KBLOOM_FILTER_ATTR(memory_charged, "%zu",
		   gen->charge + to_filter(kobj)->charge);
KBLOOM_FILTER_ATTR(window_ms, "%u", gen->win ? gen->win->window_ms : 0);
KBLOOM_FILTER_ATTR(generations, "%u", gen->win ? gen->win->generations : 0);
KBLOOM_TRAFFIC_ATTR(rotations, "%llu", kbloom_gen_rotations(gen));
KBLOOM_OCCUPANCY_ATTR(bits_set, occupied);
KBLOOM_OCCUPANCY_ATTR(saturated, stuck);
KBLOOM_TOTAL_ATTR(adds, adds);
KBLOOM_TOTAL_ATTR(queries, queries);
KBLOOM_TOTAL_ATTR(hits, hits);

static ssize_t rules_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%u\n", kbloom_filter_pins(to_filter(kobj)));
}

static struct kobj_attribute kbloom_attr_rules = __ATTR_RO(rules);

static ssize_t id_show(struct kobject *kobj, struct kobj_attribute *attr,
		       char *buf)
{
	return sysfs_emit(buf, "%u\n", to_filter(kobj)->id);
}

static struct kobj_attribute kbloom_attr_id = __ATTR_RO(id);

/* What BPF programs may do with it: KBLOOM_CREATE_BPF_READ, _WRITE. */
static ssize_t bpf_show(struct kobject *kobj, struct kobj_attribute *attr,
			char *buf)
{
	u8 ops = to_filter(kobj)->bpf_ops;

	return sysfs_emit(buf, "%s\n", ops & BIT(KBLOOM_OP_ADD) ? "write" :
					ops ? "read" : "none");
}

static struct kobj_attribute kbloom_attr_bpf = __ATTR_RO(bpf);

static struct attribute *kbloom_filter_attrs[] = {
	&kbloom_attr_bits.attr,
	&kbloom_attr_hashes.attr,
	&kbloom_attr_counting.attr,
	&kbloom_attr_layout.attr,
	&kbloom_attr_hash_scheme.attr,
	&kbloom_attr_capacity.attr,
	&kbloom_attr_fpr_ppb.attr,
	&kbloom_attr_memory_bytes.attr,
	&kbloom_attr_memory_charged.attr,
	&kbloom_attr_bits_set.attr,
	&kbloom_attr_saturated.attr,
	&kbloom_attr_rules.attr,
	&kbloom_attr_id.attr,
	&kbloom_attr_bpf.attr,
	&kbloom_attr_window_ms.attr,
	&kbloom_attr_generations.attr,
	&kbloom_attr_rotations.attr,
	&kbloom_attr_adds.attr,
	&kbloom_attr_queries.attr,
	&kbloom_attr_hits.attr,
	NULL
};
ATTRIBUTE_GROUPS(kbloom_filter);

static const struct kobj_type kbloom_filter_ktype = {
	.sysfs_ops = &kobj_sysfs_ops,
	.release = kbloom_filter_release,
	.default_groups = kbloom_filter_groups,
};

static ssize_t filter_count_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", kbloom_filter_count());
}

static ssize_t memory_used_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", kbloom_memory_used());
}

static ssize_t memory_budget_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", kbloom_memory_budget());
}

static ssize_t kfuncs_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", kbloom_bpf_status());
}

static struct kobj_attribute kbloom_attr_filter_count = __ATTR_RO(filter_count);
static struct kobj_attribute kbloom_attr_kfuncs = __ATTR_RO(kfuncs);
static struct kobj_attribute kbloom_attr_memory_used = __ATTR_RO(memory_used);
static struct kobj_attribute kbloom_attr_memory_budget =
	__ATTR_RO(memory_budget);

static struct attribute *kbloom_global_attrs[] = {
	&kbloom_attr_filter_count.attr,
	&kbloom_attr_memory_used.attr,
	&kbloom_attr_memory_budget.attr,
	&kbloom_attr_kfuncs.attr,
	NULL
};

static const struct attribute_group kbloom_global_group = {
	.attrs = kbloom_global_attrs,
};

/**
 * kbloom_sysfs_add() - give a new filter its directory
 * @filter: the filter; its kobject is initialised here.
 *
 * Return: 0, or an error after which the kobject owns the filter and
 * its last put (kbloom_filter_put()) frees it.
 */
static int kbloom_sysfs_add(struct kbloom_filter *filter)
{
	filter->kobj.kset = kbloom_filters_kset;
	return kobject_init_and_add(&filter->kobj, &kbloom_filter_ktype, NULL,
				    "%s", filter->name);
}

static void kbloom_sysfs_del(struct kbloom_filter *filter)
{
	kobject_del(&filter->kobj);
}

static const struct kbloom_filter_dir_ops kbloom_sysfs_dir_ops = {
	.add = kbloom_sysfs_add,
	.del = kbloom_sysfs_del,
};

/* Filters' uevents say SUBSYSTEM=bloom, whatever the kset is called. */
static const char *kbloom_uevent_name(struct kobject *kobj)
{
	return "bloom";
}

static const struct kset_uevent_ops kbloom_uevent_ops = {
	.name = kbloom_uevent_name,
};

/*
 * kobject_del() first: the last kobject_put() may run its cleanup late
 * (CONFIG_DEBUG_KOBJECT_RELEASE does it on purpose), and the directories
 * must be gone when rmmod returns, or an immediate insmod finds them.
 */
static void kbloom_sysfs_remove(struct kobject *kobj)
{
	kobject_del(kobj);
	kobject_put(kobj);
}

int kbloom_sysfs_init(void)
{
	int ret;

	kbloom_root_kobj = kobject_create_and_add("bloom", kernel_kobj);
	if (!kbloom_root_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(kbloom_root_kobj, &kbloom_global_group);
	if (ret)
		goto err_remove_root;
	kbloom_filters_kset = kset_create_and_add("filters",
						  &kbloom_uevent_ops,
						  kbloom_root_kobj);
	if (!kbloom_filters_kset) {
		ret = -ENOMEM;
		goto err_remove_group;
	}
	kbloom_filter_set_dir_ops(&kbloom_sysfs_dir_ops);
	return 0;

err_remove_group:
	sysfs_remove_group(kbloom_root_kobj, &kbloom_global_group);
err_remove_root:
	kbloom_sysfs_remove(kbloom_root_kobj);
	return ret;
}

void kbloom_sysfs_uninit(void)
{
	kset_unregister(kbloom_filters_kset);
	sysfs_remove_group(kbloom_root_kobj, &kbloom_global_group);
	kbloom_sysfs_remove(kbloom_root_kobj);
}

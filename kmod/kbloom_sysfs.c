// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs for kbloom.
 *
 * Each filter's kobject is also its reference count (see kbloom_filter.c).
 * A show() in progress holds a kernfs active reference to its file, and
 * kobject_del() on destroy waits for those to drain before the directory
 * goes, so show() always finds its filter alive.
 */

#include <linux/kobject.h>
#include <linux/sysfs.h>

#include "kbloom_filter.h"
#include "kbloom_sysfs.h"

static struct kobject *kbloom_root_kobj;
static struct kobject *kbloom_filters_kobj;

#define to_filter(k) container_of(k, struct kbloom_filter, kobj)

/*
 * Values come from a pinned generation, so that all of one value (a
 * popcount of up to 8 GiB, say) is read from one set of contents, and no
 * lock is held meanwhile: these files are world-readable.
 */
#define KBLOOM_FILTER_ATTR(_name, _fmt, _expr)				\
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
static struct kobj_attribute kbloom_attr_##_name = __ATTR_RO(_name)

/* The sum over CPUs of one counter; @member names the counter. */
#define KBLOOM_TOTAL_ATTR(_name, _member)				\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	struct kbloom_totals t;						\
									\
	kbloom_filter_totals(to_filter(kobj), &t);			\
	return sysfs_emit(buf, "%llu\n", t._member);			\
}									\
static struct kobj_attribute kbloom_attr_##_name = __ATTR_RO(_name)

KBLOOM_FILTER_ATTR(bits, "%llu", gen->core.nbits);
KBLOOM_FILTER_ATTR(hashes, "%u", gen->core.nhashes);
KBLOOM_FILTER_ATTR(counting, "%d",
		   !!(gen->core.flags & KBLOOM_CORE_COUNTING));
KBLOOM_FILTER_ATTR(capacity, "%llu", gen->capacity);
KBLOOM_FILTER_ATTR(fpr_ppb, "%u", gen->fpr_ppb);
KBLOOM_FILTER_ATTR(memory_bytes, "%zu", gen->bytes);
/* Popcounts of the whole storage on each read: exact, never stale. */
KBLOOM_FILTER_ATTR(bits_set, "%llu", kbloom_core_weight(&gen->core));
KBLOOM_FILTER_ATTR(saturated, "%llu", kbloom_core_saturated(&gen->core));
KBLOOM_TOTAL_ATTR(adds, adds);
KBLOOM_TOTAL_ATTR(queries, queries);
KBLOOM_TOTAL_ATTR(hits, hits);

static struct attribute *kbloom_filter_attrs[] = {
	&kbloom_attr_bits.attr,
	&kbloom_attr_hashes.attr,
	&kbloom_attr_counting.attr,
	&kbloom_attr_capacity.attr,
	&kbloom_attr_fpr_ppb.attr,
	&kbloom_attr_memory_bytes.attr,
	&kbloom_attr_bits_set.attr,
	&kbloom_attr_saturated.attr,
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

static struct kobj_attribute kbloom_attr_filter_count = __ATTR_RO(filter_count);
static struct kobj_attribute kbloom_attr_memory_used = __ATTR_RO(memory_used);
static struct kobj_attribute kbloom_attr_memory_budget =
	__ATTR_RO(memory_budget);

static struct attribute *kbloom_global_attrs[] = {
	&kbloom_attr_filter_count.attr,
	&kbloom_attr_memory_used.attr,
	&kbloom_attr_memory_budget.attr,
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
 * kobject_put() frees it.
 */
int kbloom_sysfs_add(struct kbloom_filter *filter)
{
	return kobject_init_and_add(&filter->kobj, &kbloom_filter_ktype,
				    kbloom_filters_kobj, "%s", filter->name);
}

void kbloom_sysfs_del(struct kbloom_filter *filter)
{
	kobject_del(&filter->kobj);
}

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
	kbloom_filters_kobj = kobject_create_and_add("filters",
						     kbloom_root_kobj);
	if (!kbloom_filters_kobj) {
		ret = -ENOMEM;
		goto err_remove_group;
	}
	return 0;

err_remove_group:
	sysfs_remove_group(kbloom_root_kobj, &kbloom_global_group);
err_remove_root:
	kbloom_sysfs_remove(kbloom_root_kobj);
	return ret;
}

void kbloom_sysfs_uninit(void)
{
	kbloom_sysfs_remove(kbloom_filters_kobj);
	sysfs_remove_group(kbloom_root_kobj, &kbloom_global_group);
	kbloom_sysfs_remove(kbloom_root_kobj);
}

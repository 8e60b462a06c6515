// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom: named Bloom filters in the kernel.
 */

#include <linux/module.h>
#include <linux/moduleparam.h>

#include "kbloom_bpf.h"
#include "kbloom_dev.h"
#include "kbloom_filter.h"
#include "kbloom_kunit.h"
#include "kbloom_storage.h"
#include "kbloom_sysfs.h"

module_param_named(max_memory, kbloom_max_memory, ulong, 0644);
MODULE_PARM_DESC(max_memory,
		 "Bytes all filters together may use (0: half of RAM)");
module_param_named(max_filter_bytes, kbloom_max_filter_bytes, ulong, 0644);
MODULE_PARM_DESC(max_filter_bytes,
		 "Bytes one filter may use (default 8 GiB, 2^36 bits)");
module_param_named(max_filters, kbloom_max_filters, uint, 0644);
MODULE_PARM_DESC(max_filters, "Most filters at once (default 4096)");
module_param_named(huge_pages, kbloom_huge_pages, bool, 0644);
MODULE_PARM_DESC(huge_pages,
		 "Map filters of 2 MiB or more with huge pages (default: where the architecture can)");

#if IS_ENABLED(CONFIG_KUNIT)
static bool kbloom_kunit;
module_param_named(kunit, kbloom_kunit, bool, 0444);
MODULE_PARM_DESC(kunit, "Run the KUnit suites at load (KUnit kernels only)");
#else
#define kbloom_kunit false
#endif

static int __init kbloom_init(void)
{
	int ret;

	ret = kbloom_filter_init();
	if (ret)
		return ret;
	ret = kbloom_sysfs_init();
	if (ret)
		goto err_filter;
	/* Cannot fail: without kfuncs, the rest works (sysfs "kfuncs"). */
	kbloom_bpf_init();
	/* Last: once the device exists, ioctls can arrive. */
	ret = kbloom_dev_init();
	if (ret)
		goto err_sysfs;
	pr_info("kbloom: loaded, /dev/bloom ready\n");
	/* Last: the suites use the module as userspace would. */
	if (kbloom_kunit)
		kbloom_kunit_run();
	return 0;

err_sysfs:
	kbloom_sysfs_uninit();
err_filter:
	kbloom_filter_uninit();
	return ret;
}

static void __exit kbloom_exit(void)
{
	kbloom_kunit_exit();
	/* No fd is open (they pin the module), so no ioctl is running. */
	kbloom_dev_uninit();
	/* Puts handed over from NMI (kbloom_bpf.c) reach the filters. */
	kbloom_bpf_uninit();
	/* Filters' directories live under the sysfs root: them first. */
	kbloom_filter_uninit();
	kbloom_sysfs_uninit();
}

module_init(kbloom_init);
module_exit(kbloom_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Named Bloom filters, driven through /dev/bloom");
MODULE_AUTHOR("The kbloom developers");

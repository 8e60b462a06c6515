// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_bpf_access - what BPF programs can read and reach of kbloom's
 * filters, on the kernel's kselftest harness. Run as root in the test VM
 * with kbloom.ko loaded with its kfuncs (sysfs "kfuncs" says available).
 *
 *  - Nothing to read: bpf_kbloom_get() hands out a struct
 *    kbloom_bpf_filter *, a type with no members, so the verifier must
 *    refuse a load through it at any offset, as root and for every smaller
 *    set of capabilities that may load a program calling the kfuncs:
 *    CAP_BPF alone (syscall programs), CAP_BPF and CAP_NET_ADMIN (also
 *    XDP and tc). The same program without the load
 *    loads, so the refusal is the load's. The programs keep the pointer in
 *    registers and store only scalars.
 *  - Each filter's BPF access (KBLOOM_CREATE_BPF_READ, _WRITE; none by
 *    default): what get, id, and each call by reference and by id answer,
 *    from XDP programs run with BPF_PROG_TEST_RUN; a refused call leaves
 *    the filter as it was.
 *
 * The programs are raw instructions, loaded with bpf() directly: libbpf
 * would look the module's BTF up by id, which takes CAP_SYS_ADMIN, so it
 * is found here as root first and the capabilities dropped after, in a
 * child process per load.
 *
 * Filter names all start with "ba_". Output is TAP; exit status 0 only if
 * every case passed.
 */
#define _GNU_SOURCE
#include <linux/bpf.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "kbloom_test.h"

/* The filters, one per BPF access, and how each is created. */
enum { BA_NONE, BA_READ, BA_WRITE, BA_NR };
static const char *const ba_names[BA_NR] = { "ba_none", "ba_read", "ba_write" };
static const __u32 ba_flags[BA_NR] = {
	0, KBLOOM_CREATE_BPF_READ,
	KBLOOM_CREATE_BPF_WRITE | KBLOOM_CREATE_COUNTING,
};

/* What a program returns when bpf_kbloom_get() gave NULL. */
#define BA_NULL		1000

/* ---- the kfuncs in kbloom.ko's BTF ---- */

enum ba_kfunc {
	KF_GET, KF_PUT, KF_ID,
	KF_QUERY, KF_ADD, KF_TEST_AND_ADD, KF_REMOVE,
	KF_QUERY_ID, KF_ADD_ID, KF_TEST_AND_ADD_ID, KF_REMOVE_ID,
	KF_NR
};

static const char *const ba_kfunc_names[KF_NR] = {
	"bpf_kbloom_get", "bpf_kbloom_put", "bpf_kbloom_id",
	"bpf_kbloom_query", "bpf_kbloom_add", "bpf_kbloom_test_and_add",
	"bpf_kbloom_remove", "bpf_kbloom_query_id", "bpf_kbloom_add_id",
	"bpf_kbloom_test_and_add_id", "bpf_kbloom_remove_id",
};

struct ba_btf {
	int fd_array[2];	/* [1]: kbloom.ko's BTF object */
	__s32 id[KF_NR];
};

/* The fd of the BTF object of module @name: BPF_BTF_GET_NEXT_ID, as root. */
static int ba_module_btf_fd(const char *name)
{
	__u32 id = 0;

	while (!bpf_btf_get_next_id(id, &id)) {
		struct bpf_btf_info info;
		__u32 len = sizeof(info);
		char buf[64] = "";
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		info.name = PTR(buf);
		info.name_len = sizeof(buf);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.kernel_btf && !strcmp(buf, name))
			return fd;
		close(fd);
	}
	return -1;
}

static int ba_btf_load(struct ba_btf *b)
{
	struct btf *vmlinux, *mod;
	int i, err = 0;

	vmlinux = btf__parse("/sys/kernel/btf/vmlinux", NULL);
	if (!vmlinux)
		return -1;
	mod = btf__parse_split("/sys/kernel/btf/kbloom", vmlinux);
	if (!mod) {
		btf__free(vmlinux);
		return -1;
	}
	for (i = 0; i < KF_NR; i++) {
		b->id[i] = btf__find_by_name_kind(mod, ba_kfunc_names[i],
						  BTF_KIND_FUNC);
		if (b->id[i] <= 0)
			err = -1;
	}
	btf__free(mod);
	btf__free(vmlinux);
	b->fd_array[0] = -1;
	b->fd_array[1] = ba_module_btf_fd("kbloom");
	return err || b->fd_array[1] < 0 ? -1 : 0;
}

/* ---- programs, as raw instructions ---- */

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), \
	.src_reg = (s), .off = (o), .imm = (i) })
#define MOV_IMM(d, i)	INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_REG(d, s)	INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_IMM(d, i)	INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define AND_IMM(d, i)	INSN(BPF_ALU64 | BPF_AND | BPF_K, d, 0, 0, i)
#define STX_DW(d, s, o)	INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define LD_IMM64(d, lo)	INSN(BPF_LD | BPF_DW | BPF_IMM, d, 0, 0, lo)
#define LD_IMM64_HI(hi)	INSN(0, 0, 0, 0, hi)
#define LDX_DW(d, s, o)	INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define JNE_IMM(d, i, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define EXIT()		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

#define R0 BPF_REG_0
#define R1 BPF_REG_1
#define R2 BPF_REG_2
#define R3 BPF_REG_3
#define R6 BPF_REG_6
#define R7 BPF_REG_7
#define FP BPF_REG_10

#define NAME_OFF	(-32)	/* the name on the stack: 32 bytes */
#define KEY_OFF		(-40)	/* the key: 8 bytes */
#define KEY		"ba:key:1"

/* Set btf once; each prog_*() below starts the program over. */
struct prog {
	struct bpf_insn in[96];
	int n;
	const struct ba_btf *btf;
};

static void emit(struct prog *p, struct bpf_insn i)
{
	p->in[p->n++] = i;
}

static void emit_call(struct prog *p, enum ba_kfunc kf)
{
	/* off 1: the BTF at fd_array[1], kbloom.ko's. */
	emit(p, INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 1,
		     p->btf->id[kf]));
}

/*
 * @len bytes of @src to the stack at @off, 8 at a time through r0 (a
 * 4-byte store into a spilled slot is refused without CAP_PERFMON).
 */
static void emit_stack(struct prog *p, int off, const void *src, int len)
{
	int32_t w[2];
	int i;

	for (i = 0; i < len; i += 8) {
		memcpy(w, (const char *)src + i, 8);
		emit(p, LD_IMM64(R0, w[0]));
		emit(p, LD_IMM64_HI(w[1]));
		emit(p, STX_DW(FP, R0, off + i));
	}
}

/* r1, r2: @name on the stack and its size. */
static void emit_name(struct prog *p, const char *name)
{
	char buf[32] = "";

	strncpy(buf, name, sizeof(buf) - 1);
	emit_stack(p, NAME_OFF, buf, sizeof(buf));
	emit(p, MOV_REG(R1, FP));
	emit(p, ADD_IMM(R1, NAME_OFF));
	emit(p, MOV_IMM(R2, sizeof(buf)));
}

/* r2, r3: the key on the stack and its length. */
static void emit_key(struct prog *p)
{
	emit_stack(p, KEY_OFF, KEY, 8);
	emit(p, MOV_REG(R2, FP));
	emit(p, ADD_IMM(R2, KEY_OFF));
	emit(p, MOV_IMM(R3, 8));
}

/* r6 = bpf_kbloom_get(@name), or return BA_NULL. */
static void emit_get(struct prog *p, const char *name)
{
	emit_name(p, name);
	emit_call(p, KF_GET);
	emit(p, JNE_IMM(R0, 0, 2));
	emit(p, MOV_IMM(R0, BA_NULL));
	emit(p, EXIT());
	emit(p, MOV_REG(R6, R0));
}

/* put r6, return r7. */
static void emit_put_exit(struct prog *p)
{
	emit(p, MOV_REG(R1, R6));
	emit_call(p, KF_PUT);
	emit(p, MOV_REG(R0, R7));
	emit(p, EXIT());
}

/*
 * get @name, then (with @load) an 8-byte load at @off through the pointer
 * into r7, a scalar; put; return r7's low bit. Without @load, r7 = 0: the
 * program returns 0, or BA_NULL if get gave NULL.
 */
static void prog_read(struct prog *p, const char *name, bool load, int off)
{
	p->n = 0;
	emit_get(p, name);
	emit(p, load ? LDX_DW(R7, R6, off) : MOV_IMM(R7, 0));
	emit(p, AND_IMM(R7, 1));
	emit_put_exit(p);
}

/*
 * @kf(r1, KEY) with r1 a pointer no bpf_kbloom_get() gave: NULL (@stack
 * false) or the program's stack. The verifier must refuse it.
 */
static void prog_forged(struct prog *p, bool stack, enum ba_kfunc kf)
{
	p->n = 0;
	emit_stack(p, NAME_OFF, "forged filter, stack memory...", 32);
	if (stack) {
		emit(p, MOV_REG(R1, FP));
		emit(p, ADD_IMM(R1, NAME_OFF));
	} else {
		emit(p, MOV_IMM(R1, 0));
	}
	emit_key(p);
	emit_call(p, kf);
	emit(p, EXIT());
}

/* return bpf_kbloom_id(@name). */
static void prog_id(struct prog *p, const char *name)
{
	p->n = 0;
	emit_name(p, name);
	emit_call(p, KF_ID);
	emit(p, EXIT());
}

/* get; return @kf(filter, KEY); put. */
static void prog_held(struct prog *p, const char *name, enum ba_kfunc kf)
{
	p->n = 0;
	emit_get(p, name);
	emit(p, MOV_REG(R1, R6));
	emit_key(p);
	emit_call(p, kf);
	emit(p, MOV_REG(R7, R0));
	emit_put_exit(p);
}

/* return @kf(@id, KEY). */
static void prog_by_id(struct prog *p, __u32 id, enum ba_kfunc kf)
{
	p->n = 0;
	emit(p, MOV_IMM(R1, id));
	emit_key(p);
	emit_call(p, kf);
	emit(p, EXIT());
}

static char ba_log[1 << 16];

static int prog_load(const struct prog *p, enum bpf_prog_type type,
		     __u32 flags)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = PTR(p->in);
	a.insn_cnt = p->n;
	a.license = PTR("GPL");
	a.log_buf = PTR(ba_log);
	a.log_size = sizeof(ba_log);
	a.log_level = 1;
	a.prog_flags = flags;
	a.fd_array = PTR(p->btf->fd_array);
	ba_log[0] = '\0';
	return syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
}

/* Run an XDP program once on a small packet: its return value. */
static int prog_run(const struct prog *p, __u32 *retval)
{
	unsigned char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt,
		    .data_size_in = sizeof(pkt), .repeat = 1);
	int fd = prog_load(p, BPF_PROG_TYPE_XDP, 0), err;

	if (fd < 0)
		return errno;
	err = bpf_prog_test_run_opts(fd, &o) ? errno : 0;
	close(fd);
	*retval = o.retval;
	return err;
}

/* ---- capabilities ---- */

#define CAP(c)		(1ULL << (c))
#define CAPS_ALL	(~0ULL)

/* Keep only @caps, effective and permitted, in this process. */
static int keep_caps(__u64 caps)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	d[0].effective = d[0].permitted = (__u32)caps;
	d[1].effective = d[1].permitted = (__u32)(caps >> 32);
	return syscall(SYS_capset, &h, d);
}

struct load_result {
	int err;		/* 0: loaded; else errno */
	bool beyond;		/* the log refuses an access beyond the struct */
	char line[160];		/* the log's last line */
};

/* Load @p as @type with only @caps, in a child: how it went. */
static void load_as(__u64 caps, const struct prog *p, enum bpf_prog_type type,
		    __u32 flags, struct load_result *r)
{
	int pfd[2], status;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->err = -1;
	if (pipe(pfd))
		return;
	pid = fork();
	if (pid == 0) {
		struct load_result c;
		char *last;
		int fd;

		memset(&c, 0, sizeof(c));
		if (caps != CAPS_ALL && keep_caps(caps)) {
			c.err = -2;
		} else {
			fd = prog_load(p, type, flags);
			c.err = fd < 0 ? errno : 0;
			c.beyond = strstr(ba_log, "access beyond struct kbloom_bpf_filter");
			/* The verdict: the line before "processed N insns". */
			last = strstr(ba_log, "\nprocessed ");
			if (last)
				*last = '\0';
			last = strrchr(ba_log, '\n');
			last = last ? last + 1 : ba_log;
			memcpy(c.line, last, strnlen(last, sizeof(c.line) - 1));
		}
		if (write(pfd[1], &c, sizeof(c)) != sizeof(c))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (pid > 0 && read(pfd[0], r, sizeof(*r)) != sizeof(*r))
		r->err = -1;
	close(pfd[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
}

/* ---- the cases ---- */

FIXTURE(access) {
	int fd;
	struct ba_btf btf;
	__u32 id[BA_NR];
};

static __u32 ba_id(const char *name)
{
	u64 id = 0;

	filter_attr(name, "id", &id);
	return (__u32)id;
}

FIXTURE_SETUP(access)
{
	char kfuncs[64] = "";
	FILE *f = fopen(SYSFS "/kfuncs", "r");
	int i;

	if (!f || !fgets(kfuncs, sizeof(kfuncs), f) ||
	    strncmp(kfuncs, "available", 9))
		SKIP(return, "kbloom's kfuncs: %s", f ? kfuncs : "no kbloom.ko");
	fclose(f);
	ASSERT_EQ(0, ba_btf_load(&self->btf)) {
		TH_LOG("the kfuncs' BTF ids or kbloom.ko's BTF object: missing");
	}
	self->fd = open(DEV, O_RDWR);
	ASSERT_LE(0, self->fd);
	for (i = 0; i < BA_NR; i++) {
		destroy_quiet(self->fd, ba_names[i]);
		ASSERT_EQ(0, kb_create_ex(self->fd, ba_names[i], 4096, 3,
					  ba_flags[i], NULL, NULL));
		self->id[i] = ba_id(ba_names[i]);
	}
}

FIXTURE_TEARDOWN(access)
{
	int i;

	if (self->fd <= 0)
		return;
	for (i = 0; i < BA_NR; i++)
		destroy_quiet(self->fd, ba_names[i]);
	close(self->fd);
	if (self->btf.fd_array[1] > 0)
		close(self->btf.fd_array[1]);
}

/* Who may load programs that call the kfuncs, from the least. */
static const struct {
	const char *who;
	__u64 caps;
	bool net;		/* may load XDP and tc programs */
} ba_callers[] = {
	{ "CAP_BPF", CAP(CAP_BPF), false },
	{ "CAP_BPF+CAP_NET_ADMIN", CAP(CAP_BPF) | CAP(CAP_NET_ADMIN), true },
	{ "root", CAPS_ALL, true },
};

static const struct {
	const char *name;
	enum bpf_prog_type type;
	__u32 flags;
	bool net;
} ba_types[] = {
	/* 6.1 takes only sleepable syscall programs. */
	{ "syscall", BPF_PROG_TYPE_SYSCALL, BPF_F_SLEEPABLE, false },
	{ "xdp", BPF_PROG_TYPE_XDP, 0, true },
	{ "tc", BPF_PROG_TYPE_SCHED_CLS, 0, true },
};

/*
 * Offsets to load at: the start, and where the seed and the storage
 * pointer lay in the struct a program used to see.
 */
static const int ba_offsets[] = { 0, 8, 16, 24, 48 };

TEST_F(access, no_member_is_readable)
{
	struct prog p = { .btf = &self->btf };
	struct load_result r;
	size_t c, t, o;

	for (c = 0; c < ARRAY_SIZE(ba_callers); c++) {
		for (t = 0; t < ARRAY_SIZE(ba_types); t++) {
			if (ba_types[t].net && !ba_callers[c].net)
				continue;
			/* The program without the load is accepted... */
			prog_read(&p, ba_names[BA_WRITE], false, 0);
			load_as(ba_callers[c].caps, &p, ba_types[t].type,
				ba_types[t].flags, &r);
			EXPECT_EQ(0, r.err) {
				TH_LOG("%s, %s program without a load: refused (%s): %s",
				       ba_callers[c].who, ba_types[t].name,
				       errname(r.err), r.line);
			}
			/* ...and with it, refused at the load itself. */
			for (o = 0; o < ARRAY_SIZE(ba_offsets); o++) {
				prog_read(&p, ba_names[BA_WRITE], true,
					  ba_offsets[o]);
				load_as(ba_callers[c].caps, &p,
					ba_types[t].type, ba_types[t].flags,
					&r);
				EXPECT_EQ(EACCES, r.err) {
					TH_LOG("%s, %s program loading 8 bytes at offset %d of the filter: %s, want EACCES; %s",
					       ba_callers[c].who,
					       ba_types[t].name,
					       ba_offsets[o], errname(r.err),
					       r.line);
				}
				EXPECT_TRUE(r.beyond) {
					TH_LOG("%s, %s, offset %d: the verifier's log does not refuse an access beyond struct kbloom_bpf_filter: %s",
					       ba_callers[c].who,
					       ba_types[t].name,
					       ba_offsets[o], r.line);
				}
			}
		}
	}
}

/*
 * The calls on a held filter take only what bpf_kbloom_get() gave: not
 * NULL, not the stack (6.1 would take any memory for a struct of scalars).
 */
TEST_F(access, forged_pointers_refused)
{
	static const enum ba_kfunc calls[] = {
		KF_QUERY, KF_ADD, KF_TEST_AND_ADD, KF_REMOVE,
	};
	struct prog p = { .btf = &self->btf };
	struct load_result r;
	size_t i, stack;

	for (stack = 0; stack < 2; stack++) {
		for (i = 0; i < ARRAY_SIZE(calls); i++) {
			prog_forged(&p, stack, calls[i]);
			load_as(CAPS_ALL, &p, BPF_PROG_TYPE_XDP, 0, &r);
			EXPECT_NE(0, r.err) {
				TH_LOG("%s on a %s pointer: loaded", ba_kfunc_names[calls[i]],
				       stack ? "stack" : "NULL");
			}
		}
	}
}

/* get and id, by the filter's access. */
TEST_F(access, obtaining)
{
	/* What get (BA_NULL: NULL, 0: a filter) and id answer. */
	__u32 got[] = { BA_NULL, 0, 0 };
	__u32 ids[] = { -EACCES, self->id[BA_READ], self->id[BA_WRITE] };
	struct prog p = { .btf = &self->btf };
	__u32 ret;
	int f;

	for (f = 0; f < BA_NR; f++) {
		prog_read(&p, ba_names[f], false, 0);
		ASSERT_EQ(0, prog_run(&p, &ret));
		EXPECT_EQ(got[f], ret) TH_LOG("get of %s", ba_names[f]);
		prog_id(&p, ba_names[f]);
		ASSERT_EQ(0, prog_run(&p, &ret));
		EXPECT_EQ(ids[f], ret) TH_LOG("id of %s", ba_names[f]);
	}
}

/*
 * Each call by reference and by id: what it answers for each access, and
 * that a refused one left the filter as it was.
 */
TEST_F(access, calls)
{
	static const struct {
		enum ba_kfunc held, by_id;
		const char *name;
		int want[BA_NR];	/* the answers: none, read, write */
	} calls[] = {
		{ KF_QUERY, KF_QUERY_ID, "query", { -EACCES, 0, 0 } },
		{ KF_ADD, KF_ADD_ID, "add", { -EACCES, -EACCES, 0 } },
		{ KF_QUERY, KF_QUERY_ID, "query after add", { -EACCES, 0, 1 } },
		{ KF_TEST_AND_ADD, KF_TEST_AND_ADD_ID, "test-and-add",
		  { -EACCES, -EACCES, 1 } },
		{ KF_REMOVE, KF_REMOVE_ID, "remove", { -EACCES, -EACCES, 0 } },
		{ KF_ADD, KF_ADD_ID, "add again", { -EACCES, -EACCES, 0 } },
	};
	struct prog p = { .btf = &self->btf };
	struct kbloom_info info;
	size_t i, f, way;
	__u32 ret;
	int want;

	for (way = 0; way < 2; way++) {
		for (i = 0; i < ARRAY_SIZE(calls); i++) {
			for (f = 0; f < BA_NR; f++) {
				want = calls[i].want[f];
				if (way == 0) {
					prog_held(&p, ba_names[f],
						  calls[i].held);
					/* A closed filter is not even got. */
					if (f == 0)
						want = BA_NULL;
				} else {
					prog_by_id(&p, self->id[f],
						   calls[i].by_id);
				}
				ASSERT_EQ(0, prog_run(&p, &ret));
				EXPECT_EQ((__u32)want, ret) {
					TH_LOG("%s %s on %s: %d, want %d",
					       way ? "by id" : "held",
					       calls[i].name, ba_names[f],
					       (int)ret, want);
				}
			}
		}
		/*
		 * The counting filter holds the key twice (three adds, one
		 * remove): empty it for the other way.
		 */
		for (f = 0; f < 2; f++)
			ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_REMOVE,
					     ba_names[BA_WRITE], KEY, NULL));
	}
	/* Refused calls changed nothing: no bit, no count. */
	for (f = 0; f < 2; f++) {
		ASSERT_EQ(0, kb_info(self->fd, ba_names[f], &info));
		EXPECT_EQ(0ULL, info.bits_set) TH_LOG("%s: bits set", ba_names[f]);
		EXPECT_EQ(0ULL, info.adds) TH_LOG("%s: adds", ba_names[f]);
	}
}

TEST_HARNESS_MAIN

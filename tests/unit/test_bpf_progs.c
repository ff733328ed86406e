// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of common/bpf_progs: two programs of ours, loaded for real (two
 * instructions each, JIT-compiled by the kernel), read into a set, one of
 * them unloaded, then counted and forgotten as the agent does. Needs root
 * and the BPF JIT: skipped without them.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "common/bpf_progs.h"
#include "test.h"

/* A socket filter that returns 0, named @name; its fd, or -errno. */
static int load_program(const char *name)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, name, "GPL", insns, 2, NULL);

	return fd < 0 ? -errno : fd;
}

/* The id of program @fd, and the address of its code; 0 when unknown. */
static uint32_t program_id(int fd, uint64_t *code)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);
	uint64_t ksym = 0;

	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (uintptr_t)&ksym;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	*code = ksym;
	return info.id;
}

TEST(bpf_progs_unloaded_programs_forgotten)
{
	struct bpf_code_line where;
	struct bpf_progs *progs;
	uint64_t code_a = 0, code_b = 0;
	uint32_t id_a, id_b;
	size_t nr;
	int a = load_program("test_keep"), b = load_program("test_drop");

	if (a < 0 || b < 0) {
		if (a >= 0)
			close(a);
		if (b >= 0)
			close(b);
		SKIP("cannot load a BPF program here: %s", strerror(-(a < 0 ? a : b)));
		return;
	}
	id_a = program_id(a, &code_a);
	id_b = program_id(b, &code_b);
	/* Every program loaded, ours among them. */
	progs = bpf_progs__read();
	CHECK(progs);
	if (!progs || !id_a || !id_b || !code_a || !code_b ||
	    bpf_progs__lookup(progs, code_a, &where)) {
		bpf_progs__free(progs);
		close(a);
		close(b);
		SKIP("no JIT-compiled code to name (net.core.bpf_jit_enable=0), or programs "
		     "cannot be listed (CAP_SYS_ADMIN)");
		return;
	}
	nr = bpf_progs__nr(progs);
	CHECK(nr >= 2);
	CHECK(!bpf_progs__lookup(progs, code_a, &where) && !strcmp(where.func, "test_keep"));
	CHECK(!bpf_progs__lookup(progs, code_b, &where) && !strcmp(where.func, "test_drop"));

	/* A round that counts only test_keep: the others are unloaded since 100. */
	bpf_progs__count_begin(progs);
	bpf_progs__count(progs, id_a, a);
	bpf_progs__count_end(progs, 100);
	/* Not before a window that began at 50 ends: its samples may be in test_drop. */
	CHECK_U64(bpf_progs__forget(progs, 50), 0);
	CHECK(!bpf_progs__lookup(progs, code_b, &where));
	/* A later round does not move when it was found unloaded. */
	bpf_progs__count_begin(progs);
	bpf_progs__count(progs, id_a, a);
	bpf_progs__count_end(progs, 200);
	CHECK_U64(bpf_progs__forget(progs, 150), nr - 1);
	CHECK_U64(bpf_progs__nr(progs), 1);
	CHECK(bpf_progs__lookup(progs, code_b, &where) == -ENOENT);
	CHECK(!bpf_progs__lookup(progs, code_a, &where) && !strcmp(where.func, "test_keep"));
	CHECK_U64(bpf_progs__forget(progs, 1000), 0);
	bpf_progs__free(progs);
	close(a);
	close(b);
}

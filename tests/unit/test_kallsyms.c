// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "symbolize/kallsyms.h"
#include "test.h"

/* Out of order, with data symbols, aliases, modules and lines that do not parse. */
static const char synthetic[] = "ffffffff81000000 T _stext\n"
				"ffffffff81000000 t _text_local_alias\n"
				"ffffffff81000000 T _text\n"
				"ffffffff81001000 T do_syscall_64\n"
				"ffffffff81002000 W weak_fn\n"
				"ffffffff81002000 t a_local\n"
				"ffffffff81003000 D some_data\n"
				"ffffffff81000800 t entry_helper\n"
				"ffffffff81004000 T _etext\n"
				"ffffffff82000000 r some_rodata\n"
				"ffffffffc0a01000 t mod_fn_b\t[mymod]\n"
				"ffffffffc0a00000 t mod_fn_a\t[mymod]\n"
				"ffffffffc0a00010 T mod_export\t[mymod]\n"
				"ffffffffc0b00000 t bpf_prog_0123456789abcdef_handler\t[bpf]\n"
				"not a line\n"
				"ffffffff81005000 T\n"
				"ffffffffc0c00000 t broken_module\t[unterminated\n"
				"ffffffff81006000 T no_newline_at_end";

static void check_synthetic(const struct kallsyms *ks)
{
	const struct kallsym *s, *syms;
	uint64_t start, end;
	size_t nr;

	syms = kallsyms__syms(ks, &nr);
	CHECK_U64(nr, 10);
	for (size_t i = 1; i < nr; i++)
		CHECK(syms[i - 1].addr < syms[i].addr);
	CHECK(!kallsyms__addresses_hidden(ks));

	/* Aliases: T before t, then the shortest name. */
	s = kallsyms__lookup(ks, 0xffffffff81000000);
	CHECK(s);
	CHECK_STR(s->name, "_text");
	CHECK(!s->module);
	s = kallsyms__lookup(ks, 0xffffffff810007ff);
	CHECK(s);
	CHECK_STR(s->name, "_text");
	s = kallsyms__lookup(ks, 0xffffffff81000800);
	CHECK(s);
	CHECK_STR(s->name, "entry_helper");
	s = kallsyms__lookup(ks, 0xffffffff81001234);
	CHECK(s);
	CHECK_STR(s->name, "do_syscall_64");
	/* W before t; a data symbol bounds nothing. */
	s = kallsyms__lookup(ks, 0xffffffff81003004);
	CHECK(s);
	CHECK_STR(s->name, "weak_fn");
	s = kallsyms__lookup(ks, 0xffffffff81006010);
	CHECK(s);
	CHECK_STR(s->name, "no_newline_at_end");

	/* Module symbols: the name, and the module without brackets. */
	s = kallsyms__lookup(ks, 0xffffffffc0a00008);
	CHECK(s);
	CHECK_STR(s->name, "mod_fn_a");
	CHECK_STR(s->module, "mymod");
	s = kallsyms__lookup(ks, 0xffffffffc0a00010);
	CHECK(s);
	CHECK_STR(s->name, "mod_export");
	s = kallsyms__lookup(ks, 0xffffffffc0a01fff);
	CHECK(s);
	CHECK_STR(s->name, "mod_fn_b");

	/* The last symbol reaches the end of its page, and nothing is before the first. */
	s = kallsyms__lookup(ks, 0xffffffffc0b00fff);
	CHECK(s);
	CHECK_STR(s->name, "bpf_prog_0123456789abcdef_handler");
	CHECK_STR(s->module, "bpf");
	CHECK(!kallsyms__lookup(ks, 0xffffffffc0b01000));
	CHECK(!kallsyms__lookup(ks, 0xffffffff80ffffff));
	CHECK(!kallsyms__lookup(ks, 0));
	kallsyms__range(ks, &start, &end);
	CHECK_U64(start, 0xffffffff81000000);
	CHECK_U64(end, 0xffffffffc0b01000);
}

TEST(kallsyms_parse)
{
	struct kallsyms *ks = kallsyms__parse(synthetic);

	CHECK(ks);
	check_synthetic(ks);
	kallsyms__free(ks);
}

TEST(kallsyms_load_file)
{
	char path[] = "/tmp/profiler-test-XXXXXX";
	struct kallsyms *ks;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write(fd, synthetic, sizeof(synthetic) - 1) == sizeof(synthetic) - 1);
	close(fd);
	ks = kallsyms__load(path);
	unlink(path);
	CHECK(ks);
	check_synthetic(ks);
	kallsyms__free(ks);
}

TEST(kallsyms_hidden_addresses)
{
	static const char hidden[] = "0000000000000000 T _stext\n"
				     "0000000000000000 t foo\n"
				     "0000000000000000 t bar\t[mod]\n"
				     "0000000000000000 D data\n";
	struct kallsyms *ks = kallsyms__parse(hidden);
	uint64_t start, end;
	size_t nr;

	CHECK(ks);
	CHECK(kallsyms__addresses_hidden(ks));
	kallsyms__syms(ks, &nr);
	CHECK_U64(nr, 0);
	CHECK(!kallsyms__lookup(ks, 0));
	CHECK(!kallsyms__lookup(ks, 0xffffffff81000000));
	kallsyms__range(ks, &start, &end);
	CHECK_U64(start, 0);
	CHECK_U64(end, 0);
	kallsyms__free(ks);
}

TEST(kallsyms_empty)
{
	struct kallsyms *ks = kallsyms__parse("");
	size_t nr;

	CHECK(ks);
	CHECK(!kallsyms__addresses_hidden(ks));
	kallsyms__syms(ks, &nr);
	CHECK_U64(nr, 0);
	CHECK(!kallsyms__lookup(ks, 1));
	kallsyms__free(ks);
	kallsyms__free(NULL);
}

TEST(kallsyms_load_errors)
{
	errno = 0;
	CHECK(!kallsyms__load("/nonexistent/kallsyms"));
	CHECK(errno == ENOENT);
}

/* Whatever our privileges, the real file loads: with symbols, or flagged hidden. */
TEST(kallsyms_proc)
{
	struct kallsyms *ks = kallsyms__load(NULL);
	size_t nr;

	if (!ks && errno == ENOENT)
		SKIP("no /proc/kallsyms (CONFIG_KALLSYMS=n)");
	CHECK(ks);
	kallsyms__syms(ks, &nr);
	CHECK(nr > 0 || kallsyms__addresses_hidden(ks));
	kallsyms__free(ks);
}

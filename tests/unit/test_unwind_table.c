// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwind table builder against a reference: libdw's reading of the same
 * CFI, one row at a time (dwarf_cfi_addrframe() at every row's address, as
 * the builder read it before it interpreted the instructions itself), on
 * the fixtures and on the larger libraries and programs of this machine:
 * the same rows, rules, counts. And on hostile CFI (the hostile-cfi
 * fixture), that it gives up within its bounds and says so.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "collector/unwind_table.h"
#include "common/log.h"
#include "elf/elf_file.h"
#include "elf/fde_table.h"
#include "elf/gopclntab.h"
#include "test.h"

/* The rule of one row that libdw read, through the same mapping as the builder's. */
static struct unwind_rule reference_rule(Dwarf_Frame *frame, bool signal)
{
	Dwarf_Op ra_mem[3], bp_mem[3], *ops;
	struct unwind_ops cfa, ra, bp;
	size_t nops;

	ra.err = dwarf_frame_register(frame, 16, ra_mem, &ops, &nops) != 0;
	ra.ops = ops, ra.nr = nops;
	bp.err = dwarf_frame_register(frame, 6, bp_mem, &ops, &nops) != 0;
	bp.ops = ops, bp.nr = nops;
	cfa.err = dwarf_frame_cfa(frame, &ops, &nops) != 0;
	cfa.ops = ops, cfa.nr = nops;
	return unwind_rule__of(&cfa, &ra, &bp, signal);
}

/*
 * The rows of the FDE table's range [@lo, @hi) as libdw reads them, address
 * after address, from .eh_frame or, where that has no row at @lo, from
 * .debug_frame; then a row that ends it.
 */
static int reference_range(struct unwind_table *t, struct elf_file *f, Dwarf_CFI *eh_cfi,
			   uint64_t lo, uint64_t hi)
{
	static const struct unwind_rule none = { .cfa = UNWIND_CFA_NONE };
	Dwarf_CFI *cfi = eh_cfi;
	Dwarf_Frame *frame;
	uint64_t addr = lo;
	int err;

	if (!cfi || dwarf_cfi_addrframe(cfi, lo, &frame))
		cfi = elf_file__debug_cfi(f);
	else
		free(frame);
	while (cfi && addr < hi) {
		Dwarf_Addr start, end;
		struct unwind_rule rule;
		bool signal = false;

		if (dwarf_cfi_addrframe(cfi, addr, &frame))
			break;
		dwarf_frame_info(frame, &start, &end, &signal);
		rule = reference_rule(frame, signal);
		free(frame);
		t->nr_unsupported += rule.cfa == UNWIND_CFA_UNSUPPORTED;
		err = unwind_table__push(t, addr, &rule);
		if (err)
			return err;
		if (end <= addr)
			break;
		addr = end;
	}
	return unwind_table__push(t, hi, &none);
}

/* The reference table of @f, built row by row through libdw. */
static int reference_build(struct unwind_table *t, struct elf_file *f)
{
	Dwarf_CFI *eh_cfi = elf_file__eh_cfi(f);
	const struct fde_table *fdes = elf_file__fdes(f);
	int err = 0;

	if (!eh_cfi && !elf_file__debug_cfi(f))
		return -ENOENT;
	if (!fdes)
		return -ENOMEM;
	t->nr_fdes = fde_table__nr(fdes);
	for (size_t i = 0; i < t->nr_fdes && !err; i++) {
		uint64_t lo, hi;

		fde_table__range(fdes, i, &lo, &hi);
		err = reference_range(t, f, eh_cfi, lo, hi);
	}
	if (err)
		return err;
	unwind_table__compact(t);
	return t->nr ? 0 : -EINVAL;
}

static bool rule_eq(const struct unwind_rule *a, const struct unwind_rule *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->bp == b->bp &&
	       a->bp_off == b->bp_off;
}

/*
 * Build @path's table both ways and require the same; false when it is
 * absent. In a file with V8 in it, libdw's gaps between FDEs are frame
 * pointers in ours (v8_overlay()), and the interpreter's entry is one.
 */
static bool compare_with_reference(const char *path)
{
	struct unwind_table got = { 0 }, want = { 0 };
	struct elf_file *f;
	size_t nr_diff = 0, nr_v8_fp = 0;
	bool v8;

	if (access(path, R_OK))
		return false;
	f = elf_file__open(path);
	if (!f) {
		test__fail(__FILE__, __LINE__, "cannot open '%s'", path);
		return true;
	}
	v8 = elf_file__is_v8(f);
	if (reference_build(&want, f) || !want.nr) {
		test__fail(__FILE__, __LINE__, "'%s': libdw read no table", path);
		goto out_put;
	}
	/* A file of its own: nothing libdw cached for the reference helps. */
	elf_file__put(f);
	f = elf_file__open(path);
	if (!f || unwind_table__build(&got, f)) {
		test__fail(__FILE__, __LINE__, "'%s': no table", path);
		goto out_put;
	}
	if (got.nr != want.nr || got.nr_fdes != want.nr_fdes ||
	    got.nr_unsupported != want.nr_unsupported)
		test__fail(__FILE__, __LINE__,
			   "'%s': %zu rows, %zu FDEs, %zu unsupported; libdw: %zu, %zu, %zu", path,
			   got.nr, got.nr_fdes, got.nr_unsupported, want.nr, want.nr_fdes,
			   want.nr_unsupported);
	for (size_t i = 0; i < got.nr && i < want.nr && nr_diff < 5; i++) {
		const struct unwind_rule *g = &got.rows[i].rule, *w = &want.rows[i].rule;

		if (got.rows[i].pc == want.rows[i].pc && rule_eq(g, w))
			continue;
		if (v8 && got.rows[i].pc == want.rows[i].pc && g->cfa == UNWIND_CFA_FP &&
		    w->cfa == UNWIND_CFA_NONE) {
			nr_v8_fp++;
			continue;
		}
		nr_diff++;
		test__fail(__FILE__, __LINE__,
			   "'%s': row %zu: 0x%x cfa %u%+d bp %u%+d; libdw: 0x%x cfa %u%+d bp %u%+d",
			   path, i, got.rows[i].pc, g->cfa, g->cfa_off, g->bp, g->bp_off,
			   want.rows[i].pc, w->cfa, w->cfa_off, w->bp, w->bp_off);
	}
	if (v8) {
		uint64_t entry, size;
		const struct unwind_table_row *row;

		if (elf__find_symbol(elf_file__elf(f), "Builtins_InterpreterEntryTrampoline",
				     &entry, &size))
			test__fail(__FILE__, __LINE__, "'%s': no interpreter entry symbol", path);
		else if (!(row = unwind_table__find(&got, entry)) || row->rule.cfa != UNWIND_CFA_FP)
			test__fail(__FILE__, __LINE__,
				   "'%s': the interpreter's entry has no frame-pointer row", path);
		printf("# %s: V8: %zu gaps walked by frame pointers\n", path, nr_v8_fp);
	}
	printf("# %s: %zu FDEs, %zu rows, %zu unsupported\n", path, got.nr_fdes, got.nr,
	       got.nr_unsupported);
out_put:
	unwind_table__release(&got);
	unwind_table__release(&want);
	elf_file__put(f);
	return true;
}

TEST(unwind_table_fixtures_match_libdw)
{
	static const char *const names[] = { "symbols-pie",	"symbols-nopie",
					     "libsymbols.so",	"symbols-stripped",
					     "libversioned.so", "symbols-debug-frame",
					     "cfi-rules.so" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!compare_with_reference(test__fixture(names[i])))
			test__fail(__FILE__, __LINE__, "no fixture '%s'", names[i]);
}

/* The system's libraries and programs, each as libdw reads it; the large ones take seconds. */
TEST(unwind_table_system_files_match_libdw)
{
	static const char *const paths[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/lib64/ld-linux-x86-64.so.2",
		"/usr/bin/python3.11",
		"/usr/bin/node",
		"/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
		"/usr/lib/x86_64-linux-gnu/libclang-cpp.so.14",
	};
	size_t found = 0;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (compare_with_reference(paths[i]))
			found++;
		else
			printf("# SKIP %s: absent\n", paths[i]);
		if (test__failed())
			return;
	}
	if (!found)
		SKIP("none of the system files compared is here");
}

static char last_warning[256];
static size_t nr_warnings;

static void capture_warnings(enum log_level level, const char *fmt, va_list args)
{
	if (level != LOG_WARN)
		return;
	nr_warnings++;
	vsnprintf(last_warning, sizeof(last_warning), fmt, args);
}

/* The peak resident set so far, in bytes. */
static uint64_t peak_rss(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)ru.ru_maxrss << 10;
}

/* Build the table of fixture @name, the log captured: what unwind_table__build() returned. */
static int build_hostile(const char *name, struct unwind_table *t, struct elf_file **f,
			 uint64_t *rss_growth)
{
	uint64_t rss = peak_rss();
	log_print_fn old;
	int err;

	*f = elf_file__open(test__fixture(name));
	if (!*f)
		return -errno;
	last_warning[0] = '\0';
	nr_warnings = 0;
	old = log_set_print(capture_warnings);
	err = unwind_table__build(t, *f);
	log_set_print(old);
	*rss_growth = peak_rss() - rss;
	printf("# %s: %d, %zu rows, %" PRIu64 " KiB more resident; '%s'\n", name, err, t->nr,
	       *rss_growth >> 10, last_warning);
	return err;
}

/* The rule that holds @delta bytes into symbol @name of @f (none before any row), or NULL. */
static const struct unwind_rule *rule_at(const struct unwind_table *t, struct elf_file *f,
					 const char *name, uint64_t delta)
{
	static const struct unwind_rule none = { .cfa = UNWIND_CFA_NONE };
	const struct unwind_table_row *row;
	uint64_t addr, size;

	if (elf__find_symbol(elf_file__elf(f), name, &addr, &size))
		return NULL;
	row = unwind_table__find(t, addr + delta);
	return row ? &row->rule : &none;
}

/*
 * CFI that would cost a row-by-row reading 1e10 instructions, and a few
 * FDEs libdw could not read either: the rows are those its instructions
 * give, not those its range claims, what cannot be read is left out (the
 * FDE nesting remember_state too deep with one warning), and memory stays
 * within bounds.
 */
TEST(unwind_table_hostile_cfi_bounded)
{
	struct unwind_table t = { 0 };
	const struct unwind_rule *r;
	struct elf_file *f;
	uint64_t rss;

	CHECK(build_hostile("hostile-cfi-linear.so", &t, &f, &rss) == 0);
	/* 100,001 rows from the 10,000,000-byte FDE, a few from the others. */
	CHECK(t.nr >= 100001 && t.nr <= 100001 + 16);
	CHECK(t.alloc * sizeof(*t.rows) < (64 << 20));
	CHECK(rss < (64 << 20));
	CHECK(nr_warnings == 1 && strstr(last_warning, "remember_state"));
	CHECK((r = rule_at(&t, f, "hostile_code", 0)) && r->cfa == UNWIND_CFA_SP &&
	      r->cfa_off == 8);
	CHECK((r = rule_at(&t, f, "hostile_code", 12345)) && r->cfa == UNWIND_CFA_SP &&
	      r->cfa_off == 16);
	/* Its last rules hold to its end, 10,000,000 bytes on. */
	CHECK((r = rule_at(&t, f, "hostile_code", 9999999)) && r->cfa == UNWIND_CFA_SP &&
	      r->cfa_off == 8);
	CHECK((r = rule_at(&t, f, "hostile_code", 10000000)) && r->cfa == UNWIND_CFA_NONE);
	CHECK((r = rule_at(&t, f, "code_deep", 0)) && r->cfa == UNWIND_CFA_NONE);
	CHECK((r = rule_at(&t, f, "code_far", 0)) && r->cfa == UNWIND_CFA_SP);
	CHECK((r = rule_at(&t, f, "code_cie_advancing", 0)) && r->cfa == UNWIND_CFA_NONE);
	CHECK((r = rule_at(&t, f, "code_unremembered", 0)) && r->cfa == UNWIND_CFA_SP);
	CHECK((r = rule_at(&t, f, "code_alternating", 0)) && r->cfa == UNWIND_CFA_SP &&
	      r->cfa_off == 8);
	unwind_table__release(&t);
	elf_file__put(f);
}

/*
 * CFI whose reading, FDE by FDE, replays one FDE's instructions 30,000
 * times: the builder gives up on the file, says so once, and within bounds.
 */
TEST(unwind_table_hostile_cfi_gives_up)
{
	struct unwind_table t = { 0 };
	struct elf_file *f;
	uint64_t rss;

	CHECK(build_hostile("hostile-cfi.so", &t, &f, &rss) == -E2BIG);
	/* The FDEs that make it quadratic are there to be read. */
	CHECK(fde_table__nr(elf_file__fdes(f)) > 30000);
	CHECK(nr_warnings == 1 && strstr(last_warning, "giving up"));
	CHECK(t.nr <= UNWIND_TABLE_MAX_ROWS);
	CHECK(t.alloc * sizeof(*t.rows) < (64 << 20));
	CHECK(rss < (64 << 20));
	unwind_table__release(&t);
	elf_file__put(f);
}

/* The fixture of every kind of row has them, so that its comparison with libdw covers them. */
TEST(unwind_table_cfi_rules_has_every_kind)
{
	static const uint8_t cfas[] = { UNWIND_CFA_NONE, UNWIND_CFA_SP,		UNWIND_CFA_BP,
					UNWIND_CFA_PLT,	 UNWIND_CFA_DEREF_BP,	UNWIND_CFA_SIGNAL,
					UNWIND_CFA_END,	 UNWIND_CFA_UNSUPPORTED };
	static const uint8_t bps[] = { UNWIND_BP_SAME, UNWIND_BP_AT_CFA, UNWIND_BP_LOST };
	struct unwind_table t = { 0 };
	struct elf_file *f = elf_file__open(test__fixture("cfi-rules.so"));
	unsigned int seen_cfa = 0, seen_bp = 0;

	CHECK(f);
	CHECK(unwind_table__build(&t, f) == 0);
	for (size_t i = 0; i < t.nr; i++) {
		seen_cfa |= 1u << t.rows[i].rule.cfa;
		if (t.rows[i].rule.cfa == UNWIND_CFA_SP || t.rows[i].rule.cfa == UNWIND_CFA_BP)
			seen_bp |= 1u << t.rows[i].rule.bp;
	}
	unwind_table__release(&t);
	elf_file__put(f);
	for (size_t i = 0; i < sizeof(cfas); i++)
		if (!(seen_cfa & (1u << cfas[i])))
			test__fail(__FILE__, __LINE__, "no row with CFA rule %u", cfas[i]);
	for (size_t i = 0; i < sizeof(bps); i++)
		if (!(seen_bp & (1u << bps[i])))
			test__fail(__FILE__, __LINE__, "no row with rbp rule %u", bps[i]);
}

/* The rule the table of Go binary @f has in function @name, found by Go's own table. */
static const struct unwind_rule *go_rule_at(const struct unwind_table *t, struct elf_file *f,
					    const char *name)
{
	const struct unwind_table_row *row;
	struct gopclntab go;
	uint64_t lo, hi;

	if (gopclntab__open(&go, elf_file__elf(f)) || gopclntab__find_name(&go, name, &lo, &hi))
		return NULL;
	row = unwind_table__find(t, lo + (hi - lo) / 2);
	return row ? &row->rule : NULL;
}

/*
 * A stripped Go program has no CFI at all: its functions' rows come from
 * their pcsp tables (the CFA above the stack pointer by the depth Go
 * says), stacks end whole in goexit and mstart, and systemstack may lead
 * to another stack.
 */
TEST(unwind_table_go_rows)
{
	struct unwind_table t = { 0 };
	const struct unwind_rule *r;
	struct elf_file *f;

	f = elf_file__open(test__fixture("gosym-stripped"));
	CHECK(f);
	CHECK(unwind_table__build(&t, f) == 0);
	CHECK((r = go_rule_at(&t, f, "main.(*machine).add")) && r->cfa == UNWIND_CFA_SP &&
	      r->cfa_off > 8 && r->bp == UNWIND_BP_AT_CFA && r->bp_off == -16);
	CHECK((r = go_rule_at(&t, f, "runtime.main")) && r->cfa == UNWIND_CFA_SP && r->cfa_off > 8);
	CHECK((r = go_rule_at(&t, f, "runtime.goexit")) && r->cfa == UNWIND_CFA_END);
	CHECK((r = go_rule_at(&t, f, "runtime.mstart")) && r->cfa == UNWIND_CFA_END);
	CHECK((r = go_rule_at(&t, f, "runtime.systemstack")) && r->cfa == UNWIND_CFA_FP_SWITCH);
	/* Past Go's code: nothing. */
	CHECK(t.rows[t.nr - 1].rule.cfa == UNWIND_CFA_NONE);
	unwind_table__release(&t);
	elf_file__put(f);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of symbolize/line_table: DWARF 4 line programs written byte by
 * byte here, so that each case says exactly what the compiler would have
 * emitted. (Real DWARF 2-5 from gcc, clang and rustc is checked against
 * llvm-addr2line by tests/e2e/symbolize_oracle.sh.)
 */
#include <dwarf.h>
#include <errno.h>
#include <string.h>

#include "symbolize/line_table.h"
#include "test.h"

/* A line program being written: header fields fixed, opcodes appended. */
struct prog {
	uint8_t buf[512];
	size_t len, body; /* bytes so far; where the opcodes start */
};

static void emit(struct prog *p, const void *bytes, size_t n)
{
	memcpy(p->buf + p->len, bytes, n);
	p->len += n;
}

static void emit_u8(struct prog *p, uint8_t v)
{
	emit(p, &v, 1);
}

/*
 * The header of a DWARF 4 program for x86-64 (little-endian): include
 * directory "inc", files "a.c" (in the compilation directory) and "b.h"
 * (in "inc"); line_base -5, line_range 14, opcode_base 13.
 */
static void header(struct prog *p, uint16_t version)
{
	static const uint8_t lengths[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	static const char names[] = "inc\0\0a.c\0\0\0\0b.h\0\1\0\0\0";

	memset(p, 0, sizeof(*p));
	p->len = 4; /* unit_length, filled by finish() */
	emit(p, &version, 2);
	p->len += 4;	  /* header_length, likewise */
	emit_u8(p, 1);	  /* minimum_instruction_length */
	emit_u8(p, 1);	  /* maximum_operations_per_instruction */
	emit_u8(p, 1);	  /* default_is_stmt */
	emit_u8(p, 0xfb); /* line_base -5 */
	emit_u8(p, 14);	  /* line_range */
	emit_u8(p, 13);	  /* opcode_base */
	emit(p, lengths, sizeof(lengths));
	emit(p, names, sizeof(names) - 1);
	p->body = p->len;
}

static void finish(struct prog *p)
{
	uint32_t unit = p->len - 4, header_length = p->body - 10;

	memcpy(p->buf, &unit, 4);
	memcpy(p->buf + 6, &header_length, 4);
}

static void set_address(struct prog *p, uint64_t addr)
{
	emit_u8(p, 0);
	emit_u8(p, 9);
	emit_u8(p, DW_LNE_set_address);
	emit(p, &addr, 8);
}

/* End the sequence @addr_delta (< 128) bytes after the last row. */
static void end_sequence(struct prog *p, uint8_t addr_delta)
{
	emit_u8(p, DW_LNS_advance_pc);
	emit_u8(p, addr_delta);
	emit_u8(p, 0);
	emit_u8(p, 1);
	emit_u8(p, DW_LNE_end_sequence);
}

/* Advance by @addr_delta (< 16) and @line_delta (-5..8), then add a row: one special opcode. */
static void special(struct prog *p, unsigned int addr_delta, int line_delta)
{
	emit_u8(p, 13 + (line_delta + 5) + 14 * addr_delta);
}

static int decode(struct prog *p, struct line_table *t)
{
	struct line_sections s = { .line = p->buf, .line_size = p->len };

	finish(p);
	return line_table__read(t, &s, 0, "/src");
}

#define CHECK_ROW(t, i, a, f, l)                                                                   \
	do {                                                                                       \
		CHECK((i) < (t)->nr_rows);                                                         \
		CHECK_U64((t)->rows[i].addr, a);                                                   \
		CHECK_STR((t)->rows[i].file, f);                                                   \
		CHECK_U64((t)->rows[i].line, l);                                                   \
	} while (0)

TEST(line_table_rows_and_files)
{
	struct line_table t;
	struct prog p;

	header(&p, 4);
	set_address(&p, 0x1000);
	special(&p, 0, 0); /* 0x1000 a.c:1 */
	special(&p, 4, 2); /* 0x1004 a.c:3 */
	emit_u8(&p, DW_LNS_set_file);
	emit_u8(&p, 2);
	special(&p, 2, 5);    /* 0x1006 inc/b.h:8 */
	end_sequence(&p, 10); /* at 0x1010 */
	CHECK(!decode(&p, &t));
	/* Files by DWARF 4 number: 0 names none; paths made absolute. */
	CHECK_U64(t.nr_files, 3);
	CHECK(!t.files[0]);
	CHECK_STR(t.files[1], "/src/a.c");
	CHECK_STR(t.files[2], "/src/inc/b.h");
	CHECK_U64(t.nr_rows, 4);
	CHECK_ROW(&t, 0, 0x1000, "/src/a.c", 1);
	CHECK_ROW(&t, 1, 0x1004, "/src/a.c", 3);
	CHECK_ROW(&t, 2, 0x1006, "/src/inc/b.h", 8);
	CHECK_U64(t.rows[3].addr, 0x1010);
	CHECK(!t.rows[3].file); /* the end of the sequence */
	line_table__release(&t);
}

TEST(line_table_leaves_out_rows_that_change_nothing)
{
	struct line_table t;
	struct prog p;

	header(&p, 4);
	set_address(&p, 0x2000);
	special(&p, 0, 4); /* 0x2000 line 5, hidden by the next row at the same address */
	special(&p, 0, 1); /* 0x2000 line 6 */
	special(&p, 3, 0); /* 0x2003 line 6 again (another column): adds nothing */
	emit_u8(&p, 0);	   /* 0x2005 line 6, discriminator 2: kept */
	emit_u8(&p, 2);
	emit_u8(&p, DW_LNE_set_discriminator);
	emit_u8(&p, 2);
	special(&p, 2, 0);
	special(&p, 3, 1); /* 0x2008 line 7 */
	end_sequence(&p, 4);
	CHECK(!decode(&p, &t));
	CHECK_U64(t.nr_rows, 4);
	CHECK_ROW(&t, 0, 0x2000, "/src/a.c", 6);
	CHECK_ROW(&t, 1, 0x2005, "/src/a.c", 6);
	CHECK_U64(t.rows[1].discriminator, 2);
	CHECK_ROW(&t, 2, 0x2008, "/src/a.c", 7);
	CHECK(!t.rows[3].file);
	line_table__release(&t);
}

TEST(line_table_sorts_sequences_and_drops_discarded_code)
{
	struct line_table t;
	struct prog p;

	header(&p, 4);
	set_address(&p, 0x5000); /* emitted first, placed second */
	special(&p, 0, 0);
	special(&p, 8, 1);
	end_sequence(&p, 4);
	set_address(&p, 0); /* code the linker dropped: gone */
	special(&p, 0, 3);
	end_sequence(&p, 4);
	set_address(&p, 0x3000);
	special(&p, 0, 5);
	end_sequence(&p, 4);
	set_address(&p, 0x7000); /* never ended: not a sequence */
	special(&p, 0, 0);
	CHECK(!decode(&p, &t));
	CHECK_U64(t.nr_rows, 5);
	CHECK_ROW(&t, 0, 0x3000, "/src/a.c", 6);
	CHECK(!t.rows[1].file);
	CHECK_U64(t.rows[1].addr, 0x3004);
	CHECK_ROW(&t, 2, 0x5000, "/src/a.c", 1);
	CHECK_ROW(&t, 3, 0x5008, "/src/a.c", 2);
	CHECK(!t.rows[4].file);
	line_table__release(&t);
}

TEST(line_table_bad_programs)
{
	struct line_sections s = { 0 };
	struct line_table t;
	struct prog p;

	/* A version it does not read: libdw's to try. */
	header(&p, 7);
	CHECK_U64(decode(&p, &t), (uint64_t)-ENOTSUP);
	/* No program at the offset, or a length past the section. */
	CHECK_U64(line_table__read(&t, &s, 0, NULL), (uint64_t)-EINVAL);
	header(&p, 4);
	finish(&p);
	s.line = p.buf;
	s.line_size = p.len - 1;
	CHECK_U64(line_table__read(&t, &s, 0, NULL), (uint64_t)-EINVAL);
	/* A row the end of its sequence meets at once covers nothing: it goes, and so does the end. */
	header(&p, 4);
	set_address(&p, 0x4000);
	special(&p, 0, 0);
	end_sequence(&p, 0);
	CHECK(!decode(&p, &t));
	CHECK_U64(t.nr_rows, 0);
	line_table__release(&t);
	/*
	 * An empty sequence at a function's start, and one starting inside
	 * another: the addresses still only go up, so every address of the
	 * first sequence keeps its line.
	 */
	header(&p, 4);
	set_address(&p, 0x8000);
	special(&p, 0, 0);   /* 0x8000 line 1 */
	special(&p, 8, 1);   /* 0x8008 line 2 */
	end_sequence(&p, 8); /* 0x8010 */
	set_address(&p, 0x8000);
	end_sequence(&p, 0);
	set_address(&p, 0x8004);
	special(&p, 0, 6);   /* 0x8004 line 7: inside the first */
	special(&p, 12, 1);  /* 0x8010 line 8 */
	end_sequence(&p, 4); /* 0x8014 */
	CHECK(!decode(&p, &t));
	for (size_t i = 1; i < t.nr_rows; i++)
		CHECK(t.rows[i].addr >= t.rows[i - 1].addr);
	CHECK_U64(t.nr_rows, 5);
	CHECK_ROW(&t, 0, 0x8000, "/src/a.c", 1);
	CHECK_ROW(&t, 1, 0x8008, "/src/a.c", 2);
	CHECK(!t.rows[2].file);
	CHECK_ROW(&t, 3, 0x8010, "/src/a.c", 8);
	CHECK(!t.rows[4].file);
	line_table__release(&t);
	/* A program cut in the middle of an opcode keeps its finished sequences. */
	header(&p, 4);
	set_address(&p, 0x4000);
	special(&p, 0, 0);
	end_sequence(&p, 4);
	set_address(&p, 0x4100);
	p.len -= 3;
	CHECK(!decode(&p, &t));
	CHECK_U64(t.nr_rows, 2);
	CHECK_ROW(&t, 0, 0x4000, "/src/a.c", 1);
	line_table__release(&t);
	/* A file number no file has: the row names none ("??"). */
	header(&p, 4);
	set_address(&p, 0x6000);
	emit_u8(&p, DW_LNS_set_file);
	emit_u8(&p, 9);
	special(&p, 0, 0);
	end_sequence(&p, 4);
	CHECK(!decode(&p, &t));
	CHECK_ROW(&t, 0, 0x6000, "??", 1);
	line_table__release(&t);
}

// SPDX-License-Identifier: GPL-2.0-only
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "die_reader.h"
#include "elf/dwarf_cursor.h"

/* GNU forms of split DWARF and dwz, as libdw knows them. */
#ifndef DW_FORM_GNU_addr_index
#define DW_FORM_GNU_addr_index 0x1f01
#define DW_FORM_GNU_str_index 0x1f02
#define DW_FORM_GNU_ref_alt 0x1f20
#define DW_FORM_GNU_strp_alt 0x1f21
#endif

struct attr_spec {
	uint32_t name, form;
	int64_t implicit_const;
};

struct abbrev {
	uint64_t code;
	uint32_t tag;
	bool has_children;
	uint32_t first_spec, nr_specs;
};

static int abbrev_cmp(const void *a, const void *b)
{
	const struct abbrev *x = a, *y = b;

	return x->code < y->code ? -1 : x->code > y->code;
}

/* Parse the abbreviation table at @offset, sorted by code for the lookups. */
static int read_abbrevs(struct die_reader *r, uint64_t offset)
{
	const struct die_sections *s = r->s;
	struct cursor c = { .big_endian = s->big_endian };
	size_t alloc_abbrevs = 0, alloc_specs = 0;
	bool sorted = true;
	uint64_t code;

	if (offset >= s->abbrev_size)
		return -EINVAL;
	c.p = s->abbrev + offset;
	c.end = s->abbrev + s->abbrev_size;
	while ((code = cursor__uleb(&c)) && !c.bad) {
		struct abbrev *a;

		if (array__reserve(&r->abbrevs, &alloc_abbrevs, r->nr_abbrevs + 1,
				   sizeof(*r->abbrevs)))
			return -ENOMEM;
		a = &r->abbrevs[r->nr_abbrevs];
		a->code = code;
		a->tag = cursor__uleb(&c);
		a->has_children = cursor__u(&c, 1) == DW_CHILDREN_yes;
		a->first_spec = r->nr_specs;
		for (;;) {
			uint64_t name = cursor__uleb(&c), form = cursor__uleb(&c);
			struct attr_spec *spec;

			if (c.bad)
				return -EINVAL;
			if (!name && !form)
				break;
			if (array__reserve(&r->specs, &alloc_specs, r->nr_specs + 1,
					   sizeof(*r->specs)))
				return -ENOMEM;
			spec = &r->specs[r->nr_specs++];
			spec->name = name <= UINT32_MAX ? name : 0;
			spec->form = form <= UINT32_MAX ? form : 0;
			spec->implicit_const = form == DW_FORM_implicit_const ? cursor__sleb(&c) :
										0;
		}
		a->nr_specs = r->nr_specs - a->first_spec;
		if (r->nr_abbrevs && r->abbrevs[r->nr_abbrevs - 1].code >= code)
			sorted = false;
		r->nr_abbrevs++;
	}
	if (c.bad)
		return -EINVAL;
	if (!sorted)
		qsort(r->abbrevs, r->nr_abbrevs, sizeof(*r->abbrevs), abbrev_cmp);
	return 0;
}

/* Codes usually run 1, 2, 3...: try the direct index before searching. */
static const struct abbrev *find_abbrev(const struct die_reader *r, uint64_t code)
{
	size_t lo = 0, hi = r->nr_abbrevs;

	if (code - 1 < r->nr_abbrevs && r->abbrevs[code - 1].code == code)
		return &r->abbrevs[code - 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->abbrevs[mid].code < code)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nr_abbrevs && r->abbrevs[lo].code == code ? &r->abbrevs[lo] : NULL;
}

int die_reader__init(struct die_reader *r, const struct die_sections *s, uint64_t offset)
{
	struct cursor c = { .big_endian = s->big_endian };
	uint64_t abbrev_offset, version;
	int err;

	memset(r, 0, sizeof(*r));
	r->s = s;
	r->unit_offset = offset;
	if (!s->info || offset >= s->info_size)
		return -EINVAL;
	c.p = s->info + offset;
	c.end = s->info + s->info_size;
	if (cursor__unit(&c, &r->offset_size))
		return -EINVAL;
	version = cursor__u(&c, 2);
	if (version < 2 || version > 5)
		return -ENOTSUP;
	r->version = version;
	if (r->version >= 5) {
		uint8_t type = cursor__u(&c, 1);

		if (type != DW_UT_compile && type != DW_UT_partial)
			return -ENOTSUP;
		r->addr_size = cursor__u(&c, 1);
		abbrev_offset = cursor__u(&c, r->offset_size);
	} else {
		abbrev_offset = cursor__u(&c, r->offset_size);
		r->addr_size = cursor__u(&c, 1);
	}
	if (c.bad || (r->addr_size != 4 && r->addr_size != 8))
		return -EINVAL;
	r->p = c.p;
	r->end = c.end;
	err = read_abbrevs(r, abbrev_offset);
	if (err)
		die_reader__release(r);
	return err;
}

void die_reader__release(struct die_reader *r)
{
	free(r->abbrevs);
	free(r->specs);
	r->abbrevs = NULL;
	r->specs = NULL;
	r->nr_abbrevs = r->nr_specs = 0;
}

/*
 * Read (or skip) one attribute value of @form. Numbers, addresses and
 * offsets go to @value; *@index is set for an index into .debug_addr.
 * Returns -ENOTSUP for a form we do not know the size of.
 */
static int read_value(struct die_reader *r, struct cursor *c, uint64_t form, int64_t implicit,
		      uint64_t *value, bool *index)
{
	*index = false;
	switch (form) {
	case DW_FORM_addr:
		*value = cursor__u(c, r->addr_size);
		return 0;
	case DW_FORM_flag_present:
		*value = 1;
		return 0;
	case DW_FORM_implicit_const:
		*value = implicit;
		return 0;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
		*value = cursor__u(c, 1);
		return 0;
	case DW_FORM_addrx1:
		*value = cursor__u(c, 1);
		*index = true;
		return 0;
	case DW_FORM_data2:
	case DW_FORM_ref2:
	case DW_FORM_strx2:
		*value = cursor__u(c, 2);
		return 0;
	case DW_FORM_addrx2:
		*value = cursor__u(c, 2);
		*index = true;
		return 0;
	case DW_FORM_strx3:
		*value = cursor__u(c, 3);
		return 0;
	case DW_FORM_addrx3:
		*value = cursor__u(c, 3);
		*index = true;
		return 0;
	case DW_FORM_data4:
	case DW_FORM_ref4:
	case DW_FORM_strx4:
	case DW_FORM_ref_sup4:
		*value = cursor__u(c, 4);
		return 0;
	case DW_FORM_addrx4:
		*value = cursor__u(c, 4);
		*index = true;
		return 0;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8:
		*value = cursor__u(c, 8);
		return 0;
	case DW_FORM_data16:
		cursor__skip(c, 16);
		return 0;
	case DW_FORM_sdata:
		*value = cursor__sleb(c);
		return 0;
	case DW_FORM_udata:
	case DW_FORM_ref_udata:
	case DW_FORM_strx:
	case DW_FORM_rnglistx:
	case DW_FORM_loclistx:
	case DW_FORM_GNU_str_index:
		*value = cursor__uleb(c);
		return 0;
	case DW_FORM_addrx:
	case DW_FORM_GNU_addr_index:
		*value = cursor__uleb(c);
		*index = true;
		return 0;
	case DW_FORM_string:
		cursor__str(c);
		return 0;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		*value = cursor__u(c, r->offset_size);
		return 0;
	case DW_FORM_ref_addr:
		*value = cursor__u(c, r->version == 2 ? r->addr_size : r->offset_size);
		return 0;
	case DW_FORM_block1:
		cursor__skip(c, cursor__u(c, 1));
		return 0;
	case DW_FORM_block2:
		cursor__skip(c, cursor__u(c, 2));
		return 0;
	case DW_FORM_block4:
		cursor__skip(c, cursor__u(c, 4));
		return 0;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		cursor__skip(c, cursor__uleb(c));
		return 0;
	default:
		return -ENOTSUP;
	}
}

/* The address at @index of the unit's .debug_addr table, or 0. */
static uint64_t indexed_address(const struct die_reader *r, uint64_t index)
{
	const struct die_sections *s = r->s;
	struct cursor c = { .big_endian = s->big_endian };
	uint64_t off;

	if (!s->addr || r->addr_base > s->addr_size ||
	    index >= (s->addr_size - r->addr_base) / r->addr_size)
		return 0;
	off = r->addr_base + index * r->addr_size;
	c.p = s->addr + off;
	c.end = s->addr + s->addr_size;
	return cursor__u(&c, r->addr_size);
}

/* The .debug_info offset a reference of @form with @value names; 0 if another file's. */
static uint64_t reference(const struct die_reader *r, uint64_t form, uint64_t value)
{
	switch (form) {
	case DW_FORM_ref1:
	case DW_FORM_ref2:
	case DW_FORM_ref4:
	case DW_FORM_ref8:
	case DW_FORM_ref_udata:
		return r->unit_offset + value;
	case DW_FORM_ref_addr:
		return value;
	default:
		return 0;
	}
}

int die_reader__next(struct die_reader *r, struct die *die)
{
	struct cursor c = { .p = r->p, .end = r->end, .big_endian = r->s->big_endian };
	bool low_index = false, high_index = false;
	const struct abbrev *a;
	bool unit_die;
	uint64_t code;

	if (r->p >= r->end)
		return 0;
	/* The unit's own DIE comes first: only it says where the unit's tables are. */
	unit_die = !r->read_unit_die;
	r->read_unit_die = true;
	memset(die, 0, sizeof(*die));
	die->offset = r->p - r->s->info;
	code = cursor__uleb(&c);
	if (c.bad)
		return -EINVAL;
	if (!code) {
		r->p = c.p;
		return 1;
	}
	a = find_abbrev(r, code);
	if (!a)
		return -EINVAL;
	die->tag = a->tag;
	die->has_children = a->has_children;
	for (uint32_t i = 0; i < a->nr_specs; i++) {
		const struct attr_spec *spec = &r->specs[a->first_spec + i];
		uint64_t form = spec->form, value = 0;
		bool index;
		int err;

		/* DW_FORM_indirect: the form comes with the value (a few times over at worst). */
		for (int n = 0; form == DW_FORM_indirect && n < 4; n++)
			form = cursor__uleb(&c);
		err = read_value(r, &c, form, spec->implicit_const, &value, &index);
		if (err)
			return err;
		if (c.bad)
			return -EINVAL;
		switch (spec->name) {
		case DW_AT_low_pc:
			die->has_low_pc = true;
			die->low_pc = value;
			low_index = index;
			break;
		case DW_AT_high_pc:
			die->has_high_pc = true;
			die->high_pc = value;
			high_index = index;
			die->high_pc_is_offset = form != DW_FORM_addr && !index;
			break;
		case DW_AT_ranges:
			die->has_ranges = true;
			die->ranges = value;
			die->ranges_index = form == DW_FORM_rnglistx;
			break;
		case DW_AT_rnglists_base:
			if (unit_die)
				r->rnglists_base = value;
			break;
		case DW_AT_call_file:
			die->has_call_file = true;
			die->call_file = value;
			break;
		case DW_AT_call_line:
			die->call_line = value;
			break;
		case DW_AT_addr_base:
			if (unit_die)
				r->addr_base = value;
			break;
		case DW_AT_abstract_origin:
		case DW_AT_specification:
			die->origin = reference(r, form, value);
			break;
		default:
			break;
		}
	}
	/* After the loop: a unit's DW_AT_addr_base may follow its DW_AT_low_pc. */
	if (low_index)
		die->low_pc = indexed_address(r, die->low_pc);
	if (high_index)
		die->high_pc = indexed_address(r, die->high_pc);
	if (die->tag == DW_TAG_compile_unit || die->tag == DW_TAG_partial_unit)
		r->base = die->low_pc;
	r->p = c.p;
	return 1;
}

/* Before DWARF 5: pairs of addresses from the base, a pair of (-1, base) moving the base. */
static int ranges_v4(const struct die_reader *r, uint64_t offset,
		     int (*fn)(void *ctx, uint64_t lo, uint64_t hi), void *ctx)
{
	const struct die_sections *s = r->s;
	struct cursor c = { .big_endian = s->big_endian };
	uint64_t base = r->base, all_ones = r->addr_size == 8 ? UINT64_MAX : UINT32_MAX;
	int n = 0, err;

	if (!s->ranges || offset >= s->ranges_size)
		return -ENOTSUP;
	c.p = s->ranges + offset;
	c.end = s->ranges + s->ranges_size;
	while (!c.bad) {
		uint64_t begin = cursor__u(&c, r->addr_size), end = cursor__u(&c, r->addr_size);

		if (c.bad || (!begin && !end))
			break;
		if (begin == all_ones) {
			base = end;
			continue;
		}
		if (base + begin && base + begin < base + end) {
			err = fn(ctx, base + begin, base + end);
			if (err)
				return err;
			n++;
		}
	}
	return c.bad ? -ENOTSUP : n;
}

/* DWARF 5: typed entries, addresses inline or through .debug_addr. */
static int ranges_v5(const struct die_reader *r, const struct die *die,
		     int (*fn)(void *ctx, uint64_t lo, uint64_t hi), void *ctx)
{
	const struct die_sections *s = r->s;
	struct cursor c = { .big_endian = s->big_endian };
	uint64_t offset = die->ranges, base = r->base;
	int n = 0, err;

	if (!s->rnglists)
		return -ENOTSUP;
	c.end = s->rnglists + s->rnglists_size;
	if (die->ranges_index) {
		/* An index into the offsets table at the unit's rnglists_base. */
		uint64_t at = r->rnglists_base + die->ranges * r->offset_size;

		if (r->rnglists_base > s->rnglists_size || at >= s->rnglists_size)
			return -ENOTSUP;
		c.p = s->rnglists + at;
		offset = r->rnglists_base + cursor__u(&c, r->offset_size);
	}
	if (offset >= s->rnglists_size)
		return -ENOTSUP;
	c.p = s->rnglists + offset;
	while (!c.bad) {
		uint64_t lo = 0, hi = 0;

		switch (cursor__u(&c, 1)) {
		case DW_RLE_end_of_list:
			return c.bad ? -ENOTSUP : n;
		case DW_RLE_base_addressx:
			base = indexed_address(r, cursor__uleb(&c));
			continue;
		case DW_RLE_base_address:
			base = cursor__u(&c, r->addr_size);
			continue;
		case DW_RLE_startx_endx:
			lo = indexed_address(r, cursor__uleb(&c));
			hi = indexed_address(r, cursor__uleb(&c));
			break;
		case DW_RLE_startx_length:
			lo = indexed_address(r, cursor__uleb(&c));
			hi = lo + cursor__uleb(&c);
			break;
		case DW_RLE_offset_pair:
			lo = base + cursor__uleb(&c);
			hi = base + cursor__uleb(&c);
			break;
		case DW_RLE_start_end:
			lo = cursor__u(&c, r->addr_size);
			hi = cursor__u(&c, r->addr_size);
			break;
		case DW_RLE_start_length:
			lo = cursor__u(&c, r->addr_size);
			hi = lo + cursor__uleb(&c);
			break;
		default:
			return -ENOTSUP;
		}
		if (lo && lo < hi && !c.bad) {
			err = fn(ctx, lo, hi);
			if (err)
				return err;
			n++;
		}
	}
	return -ENOTSUP;
}

int die_reader__ranges(const struct die_reader *r, const struct die *die,
		       int (*fn)(void *ctx, uint64_t lo, uint64_t hi), void *ctx)
{
	if (!die->has_ranges)
		return 0;
	if (r->version >= 5)
		return ranges_v5(r, die, fn, ctx);
	return die->ranges_index ? -ENOTSUP : ranges_v4(r, die->ranges, fn, ctx);
}

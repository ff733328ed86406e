/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * loaded_object.h - what the dynamic loader knows of an object loaded in
 * this process: its load bias, program headers and GNU build-id, read from
 * memory with dl_iterate_phdr(). Tests compare the symbolizer's answers with
 * these, found without libelf. Header-only, so the fixtures include it too.
 */
#ifndef PROFILER_TESTS_LOADED_OBJECT_H
#define PROFILER_TESTS_LOADED_OBJECT_H

#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct loaded_object {
	uintptr_t bias;
	const ElfW(Phdr) * phdr;
	int phnum;
	char build_id[2 * 64 + 1]; /* lowercase hex, "" if none */
};

/* The NT_GNU_BUILD_ID note among the @len bytes of notes at @p, in hex into @out. */
static inline void loaded_object__notes_build_id(const unsigned char *p, size_t len, char *out)
{
	size_t off = 0;

	while (len - off >= sizeof(ElfW(Nhdr))) {
		ElfW(Nhdr) n;
		size_t name, desc;

		memcpy(&n, p + off, sizeof(n));
		name = off + sizeof(n);
		desc = name + ((n.n_namesz + 3) & ~3U);
		off = desc + ((n.n_descsz + 3) & ~3U);
		if (off > len)
			return;
		if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && !memcmp(p + name, "GNU", 4) &&
		    n.n_descsz <= 64) {
			for (size_t i = 0; i < n.n_descsz; i++)
				sprintf(out + 2 * i, "%02x", p[desc + i]);
			return;
		}
	}
}

struct loaded_object_query {
	struct loaded_object *o;
	bool first; /* the first object, the executable, whatever its bias */
	bool found;
};

static inline int loaded_object__visit(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loaded_object_query *q = data;
	struct loaded_object *o = q->o;

	(void)size;
	if (!q->first && info->dlpi_addr != o->bias)
		return 0;
	o->bias = info->dlpi_addr;
	o->phdr = info->dlpi_phdr;
	o->phnum = info->dlpi_phnum;
	o->build_id[0] = '\0';
	for (int i = 0; i < info->dlpi_phnum && !o->build_id[0]; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE)
			loaded_object__notes_build_id((const unsigned char *)info->dlpi_addr +
							      info->dlpi_phdr[i].p_vaddr,
						      info->dlpi_phdr[i].p_memsz, o->build_id);
	q->found = true;
	return 1;
}

/*
 * Fill @o for the object loaded at bias o->bias, or for the executable if
 * @executable. Returns whether it was found.
 */
static inline bool loaded_object__find(struct loaded_object *o, bool executable)
{
	struct loaded_object_query q = { .o = o, .first = executable };

	dl_iterate_phdr(loaded_object__visit, &q);
	return q.found;
}

#endif

// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/array.h"
#include "common/hex.h"
#include "common/log.h"
#include "common/procfs.h"
#include "kallsyms.h"
#include "symbolize/addr_table.h"

#define PAGE_SIZE_GUESS 4096ULL

struct kallsyms {
	char *text;		/* the file; names and module names are cut out of it in place */
	struct addr_table syms; /* of struct kallsym */
	uint64_t end;		/* end of the last symbol */
	bool hidden;
};

struct cand {
	struct kallsym sym;
	unsigned int rank; /* 0: T, 1: W or w, 2: t */
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	size_t lx, ly;

	if (x->sym.addr != y->sym.addr)
		return x->sym.addr < y->sym.addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	lx = strlen(x->sym.name);
	ly = strlen(y->sym.name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->sym.name, y->sym.name);
}

/*
 * Parse one NUL-terminated line "ADDR TYPE NAME[\t[MODULE]]", cutting NAME
 * and MODULE out of it in place. Returns 0, or -EINVAL if it is no text
 * symbol's line.
 */
static int parse_line(char *line, struct cand *out, bool *zero)
{
	uint64_t addr = 0;
	char *p = line, *name, *module = NULL;
	int digits = 0, v;
	char type;

	for (; (v = hex__digit(*p)) >= 0; p++, digits++)
		addr = addr << 4 | v;
	if (!digits || digits > 16 || *p != ' ')
		return -EINVAL;
	type = p[1];
	if (!type || p[2] != ' ')
		return -EINVAL;
	switch (type) {
	case 'T':
		out->rank = 0;
		break;
	case 'W':
	case 'w':
		out->rank = 1;
		break;
	case 't':
		out->rank = 2;
		break;
	default:
		return -EINVAL;
	}
	name = p + 3;
	p = name + strcspn(name, " \t");
	if (p == name)
		return -EINVAL;
	if (*p == '\t' && p[1] == '[') {
		char *close;

		module = p + 2;
		close = strchr(module, ']');
		if (!close || close == module)
			return -EINVAL;
		*close = '\0';
	}
	*p = '\0';
	*zero = !addr;
	out->sym = (struct kallsym){ addr, name, module };
	return 0;
}

/* Index @text, which the new object takes over. */
static struct kallsyms *kallsyms__from_text(char *text)
{
	size_t nr = 0, alloc = 0, nr_zero = 0;
	struct cand *cands = NULL;
	struct kallsyms *ks;
	char *line, *eol;

	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		free(text);
		return NULL;
	}
	ks->text = text;
	addr_table__init(&ks->syms, sizeof(struct kallsym));
	for (line = text; *line; line = eol) {
		struct cand c;
		bool zero;

		eol = line + strcspn(line, "\n");
		if (*eol)
			*eol++ = '\0';
		if (parse_line(line, &c, &zero))
			continue;
		if (zero) {
			nr_zero++;
			continue;
		}
		if (array__reserve(&cands, &alloc, nr + 1, sizeof(*cands)))
			goto out_free_cands;
		cands[nr++] = c;
	}
	ks->hidden = nr_zero && !nr;
	if (!nr) {
		free(cands);
		return ks;
	}
	qsort(cands, nr, sizeof(*cands), cand_cmp);
	if (addr_table__alloc(&ks->syms, nr))
		goto out_free_cands;
	/* The first of each run of equal addresses is the one to keep. */
	for (size_t i = 0; i < nr; i++) {
		if (ks->syms.nr && ks->syms.addrs[ks->syms.nr - 1] == cands[i].sym.addr)
			continue;
		addr_table__push(&ks->syms, cands[i].sym.addr, &cands[i].sym);
	}
	ks->end = (ks->syms.addrs[ks->syms.nr - 1] | (PAGE_SIZE_GUESS - 1)) + 1;
	/* The last page of the address space: the end wraps to 0. */
	if (!ks->end)
		ks->end = UINT64_MAX;
	free(cands);
	return ks;

out_free_cands:
	free(cands);
	kallsyms__free(ks);
	errno = ENOMEM;
	return NULL;
}

struct kallsyms *kallsyms__load(const char *path)
{
	char *text;

	if (!path)
		path = "/proc/kallsyms";
	text = procfs__read_file(path, NULL);
	if (!text) {
		pr_debug("kallsyms: cannot read '%s': %s", path, strerror(errno));
		return NULL;
	}
	return kallsyms__from_text(text);
}

struct kallsyms *kallsyms__parse(const char *text)
{
	char *copy = strdup(text);

	if (!copy)
		return NULL;
	return kallsyms__from_text(copy);
}

void kallsyms__free(struct kallsyms *ks)
{
	if (!ks)
		return;
	addr_table__release(&ks->syms);
	free(ks->text);
	free(ks);
}

const struct kallsym *kallsyms__lookup(const struct kallsyms *ks, uint64_t addr)
{
	/* A symbol reaches up to the next one, and the last one up to ks->end. */
	return addr < ks->end ? addr_table__find(&ks->syms, addr) : NULL;
}

const struct kallsym *kallsyms__syms(const struct kallsyms *ks, size_t *nr)
{
	*nr = ks->syms.nr;
	return ks->syms.syms;
}

void kallsyms__range(const struct kallsyms *ks, uint64_t *start, uint64_t *end)
{
	*start = ks->syms.nr ? ks->syms.addrs[0] : 0;
	*end = ks->syms.nr ? ks->end : 0;
}

bool kallsyms__addresses_hidden(const struct kallsyms *ks)
{
	return ks->hidden;
}

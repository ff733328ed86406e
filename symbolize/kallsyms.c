// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/search.h"
#include "common/procfs.h"
#include "kallsyms.h"

#define PAGE_SIZE_GUESS 4096ULL

struct kallsyms {
	char *text;	 /* the file; names and module names are cut out of it in place */
	uint64_t *addrs; /* the search keys, apart from the symbols for cache density */
	struct kallsym *syms;
	size_t nr;
	uint64_t end; /* end of the last symbol */
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

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
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

	for (; (v = hex_value(*p)) >= 0; p++, digits++)
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
	size_t nr = 0, alloc = 0, n = 0, nr_zero = 0;
	struct cand *cands = NULL, *tmp;
	struct kallsyms *ks;
	char *line, *eol;

	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		free(text);
		return NULL;
	}
	ks->text = text;
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
		if (nr == alloc) {
			alloc = alloc ? 2 * alloc : 4096;
			if (alloc > SIZE_MAX / sizeof(*cands))
				goto out_free_cands;
			tmp = realloc(cands, alloc * sizeof(*cands));
			if (!tmp)
				goto out_free_cands;
			cands = tmp;
		}
		cands[nr++] = c;
	}
	ks->hidden = nr_zero && !nr;
	if (!nr) {
		free(cands);
		return ks;
	}
	qsort(cands, nr, sizeof(*cands), cand_cmp);
	ks->addrs = malloc(nr * sizeof(*ks->addrs));
	ks->syms = malloc(nr * sizeof(*ks->syms));
	if (!ks->addrs || !ks->syms)
		goto out_free_cands;
	/* The first of each run of equal addresses is the one to keep. */
	for (size_t i = 0; i < nr; i++) {
		if (n && ks->addrs[n - 1] == cands[i].sym.addr)
			continue;
		ks->addrs[n] = cands[i].sym.addr;
		ks->syms[n] = cands[i].sym;
		n++;
	}
	ks->nr = n;
	ks->end = (ks->addrs[n - 1] | (PAGE_SIZE_GUESS - 1)) + 1;
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
	free(ks->addrs);
	free(ks->syms);
	free(ks->text);
	free(ks);
}

const struct kallsym *kallsyms__lookup(const struct kallsyms *ks, uint64_t addr)
{
	if (!ks->nr || addr < ks->addrs[0] || addr >= ks->end)
		return NULL;
	/* A symbol reaches up to the next one, and the last one up to ks->end. */
	return &ks->syms[search__last_le(ks->addrs, ks->nr, addr)];
}

const struct kallsym *kallsyms__syms(const struct kallsyms *ks, size_t *nr)
{
	*nr = ks->nr;
	return ks->syms;
}

void kallsyms__range(const struct kallsyms *ks, uint64_t *start, uint64_t *end)
{
	*start = ks->nr ? ks->addrs[0] : 0;
	*end = ks->nr ? ks->end : 0;
}

bool kallsyms__addresses_hidden(const struct kallsyms *ks)
{
	return ks->hidden;
}

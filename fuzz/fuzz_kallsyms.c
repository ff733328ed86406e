// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/kallsyms text (or a file in its format, which a user may name)
 * through kallsyms__parse(). The symbols must be sorted with unique
 * addresses, text symbols only, each found by kallsyms__lookup() and within
 * kallsyms__range().
 */
#include "fuzz.h"
#include "symbolize/kallsyms.h"

static int fuzz_kallsyms(const uint8_t *data, size_t size)
{
	const struct kallsym *syms;
	struct kallsyms *ks;
	uint64_t start, end;
	size_t nr;
	char *text;

	fuzz_log_init();
	text = malloc(size + 1);
	FUZZ_CHECK(text);
	memcpy(text, data, size);
	text[size] = '\0';
	ks = kallsyms__parse(text);
	free(text);
	if (!ks)
		return 0;
	syms = kallsyms__syms(ks, &nr);
	kallsyms__range(ks, &start, &end);
	for (size_t i = 0; i < nr; i++) {
		FUZZ_CHECK(!i || syms[i - 1].addr < syms[i].addr);
		FUZZ_CHECK(syms[i].name && strlen(syms[i].name) < size);
		FUZZ_CHECK(!syms[i].module || strlen(syms[i].module) < size);
		/* [start, end) cannot hold the last address there is: a symbol at it is unreachable. */
		if (syms[i].addr == UINT64_MAX)
			continue;
		FUZZ_CHECK(start <= syms[i].addr && syms[i].addr < end);
		FUZZ_CHECK(kallsyms__lookup(ks, syms[i].addr) == &syms[i]);
	}
	FUZZ_CHECK(!nr || !kallsyms__addresses_hidden(ks));
	kallsyms__free(ks);
	return 0;
}

FUZZ_TARGET(fuzz_kallsyms)

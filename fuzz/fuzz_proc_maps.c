// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/PID/maps text: each line through proc_maps__parse_line(), then the
 * whole text through proc_maps__parse(), whose snapshot must be sorted,
 * disjoint and found by proc_maps__find(). The pid is one that cannot exist,
 * so opening the mapped files fails without touching any file of ours.
 */
#include <stdbool.h>

#include "common/proc_maps.h"
#include "common/strset.h"
#include "fuzz.h"

/* Pids are positive: /proc/0/ does not exist, so no mapped file is opened. */
#define PROC_MAPS_FUZZ_PID 0

static void proc_maps_fuzz_lines(const char *text)
{
	const char *line, *next;

	for (line = text; *line; line = next) {
		struct proc_maps_line l;
		size_t len;

		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		if (proc_maps__parse_line(line, &l))
			continue;
		len = strcspn(line, "\n");
		FUZZ_CHECK(l.start < l.end);
		FUZZ_CHECK(strlen(l.perms) == 4);
		FUZZ_CHECK(l.path >= line && l.path + l.path_len <= line + len);
	}
}

static int fuzz_proc_maps(const uint8_t *data, size_t size)
{
	struct file_table *files;
	struct proc_maps *maps;
	struct strset *strings;
	char *text;

	fuzz_log_init();
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	proc_maps_fuzz_lines(text);

	strings = strset__new();
	files = strings ? file_table__new(strings) : NULL;
	maps = files ? proc_maps__parse(text, PROC_MAPS_FUZZ_PID, files) : NULL;
	for (size_t i = 0; maps && i < maps->nr; i++) {
		const struct proc_map *m = &maps->maps[i];

		FUZZ_CHECK(m->start < m->end);
		FUZZ_CHECK(!i || maps->maps[i - 1].end <= m->start);
		FUZZ_CHECK(m->name && strlen(m->name) <= size + sizeof("[anon]"));
		FUZZ_CHECK(!m->file || (m->file->path == m->name && m->file->fd < 0));
		FUZZ_CHECK(proc_maps__find(maps, m->start) == m);
		FUZZ_CHECK(proc_maps__find(maps, m->end - 1) == m);
	}
	proc_maps__free(maps);
	file_table__free(files);
	strset__free(strings);
	free(text);
	return 0;
}

FUZZ_TARGET(fuzz_proc_maps)

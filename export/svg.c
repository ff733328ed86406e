// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/hashtab.h"
#include "common/profile.h"
#include "common/utf8.h"
#include "export/stack_walk.h"
#include "export/svg.h"
/* flamegraph_js[] and flamegraph_css[], from export/flamegraph.{js,css} (see the Makefile) */
#include "export/flamegraph_assets.h"

/*
 * Geometry in px. Positions are computed in hundredths of a px with integer
 * arithmetic and printed as fixed point, so that the output cannot depend on
 * the locale or on floating-point rounding.
 */
#define IMAGE_W 1200
#define MARGIN_X 10
#define GRAPH_W (IMAGE_W - 2 * MARGIN_X)
#define FRAME_H 16
/* Above the frames: title, buttons, the graph's total, the profile's summary, the legend. */
#define TOP_H 76     /* all but the summary */
#define SUMMARY_Y 62 /* the summary's first line, the baseline */
#define SUMMARY_H 15 /* ... and the lines after it */
#define BOTTOM_H 30  /* the details line below */
/* Frames narrower than 0.1 px are not drawn, flamegraph.pl's default minimum: 1 / 10 px. */
#define MIN_WIDTH_DIV 10
/* A label's room: 3 px either side, 7.2 px per character of 12 px monospace. */
#define LABEL_PAD100 300
#define CHAR_W100 720

enum frame_kind {
	KIND_ROOT,
	KIND_PROCESS,
	KIND_USER,
	KIND_KERNEL,
	KIND_INLINED,
	KIND_JIT,
	KIND_PYTHON,
	KIND_JS,
	NR_KINDS,
};

/*
 * One hue family per kind, so that kinds stay apart at a glance; each
 * channel is base + range * (a byte of the name's hash) / 255, so that a
 * function keeps its shade from one graph to the next. User code is red to
 * orange, never yellow: Python's frames, which the interpreter's user code
 * calls and is called by, are violet, far from every other kind.
 */
static const struct kind_style {
	const char *class;
	const char *label; /* in the legend and the tooltip; NULL: not named */
	unsigned int base[3], range[3];
} kind_styles[NR_KINDS] = {
	[KIND_ROOT] = { "root", NULL, { 190, 190, 190 }, { 0, 0, 0 } },
	[KIND_PROCESS] = { "process", "process", { 150, 155, 170 }, { 25, 25, 25 } },
	[KIND_USER] = { "user", "user", { 215, 50, 20 }, { 40, 110, 40 } },
	[KIND_KERNEL] = { "kernel", "kernel", { 70, 110, 200 }, { 50, 60, 55 } },
	[KIND_INLINED] = { "inlined", "inlined", { 40, 185, 175 }, { 50, 45, 50 } },
	[KIND_JIT] = { "jit", "JIT", { 60, 170, 40 }, { 70, 60, 50 } },
	[KIND_PYTHON] = { "python", "Python", { 150, 90, 205 }, { 45, 40, 45 } },
	[KIND_JS] = { "js", "JavaScript", { 205, 175, 20 }, { 40, 50, 30 } },
};

/* The order of the legend. */
static const enum frame_kind legend_kinds[] = {
	KIND_USER, KIND_KERNEL, KIND_INLINED, KIND_JIT, KIND_PYTHON, KIND_JS, KIND_PROCESS,
};

/* A frame of the graph: one function, in one process, under one path of callers. */
struct flame_node {
	const char *name; /* the profile's string, or a literal */
	size_t len;
	uint32_t parent;
	uint32_t first, nr_children; /* its children are order[first .. first + nr_children) */
	uint32_t nr_nodes;	     /* in its subtree, itself included */
	uint64_t count;		     /* its own count, then its subtree's */
	enum frame_kind kind;
};

struct flame {
	struct flame_node *nodes; /* nodes[0] is "all"; a parent comes before its children */
	size_t nr_nodes, alloc_nodes;
	/*
	 * (parent, kind, name) -> node. Entries are node indices + 1, not
	 * pointers, because nodes[] moves as it grows (and entries are not NULL).
	 */
	struct hashtab index;
	uint32_t *order; /* nodes but the root, by parent, then name, then kind */
	/* The sample last added: walk.path[level] is the node its stack is at on that level. */
	struct stack_walk walk;
	/* Set by the first walk over the tree. */
	uint32_t max_depth;
	uint64_t elided_frames, elided_count;
	enum profile_root root; /* what is above each stack's frames */
};

struct node_key {
	const struct flame *fl;
	uint32_t parent;
	enum frame_kind kind;
	const char *name;
	size_t len;
};

static bool node_eq(const void *entry, const void *key)
{
	const struct node_key *k = key;
	const struct flame_node *n = &k->fl->nodes[(uintptr_t)entry - 1];

	return n->parent == k->parent && n->kind == k->kind && n->len == k->len &&
	       !memcmp(n->name, k->name, k->len);
}

/* Find or add the child of @parent called @name, of @kind, in *@child. */
static int flame__child(struct flame *fl, uint32_t parent, enum frame_kind kind, const char *name,
			uint32_t *child)
{
	struct node_key key = { fl, parent, kind, name, 0 };
	struct flame_node *n;
	uint64_t hash;
	void *entry;
	int err;

	if (!name || !*name)
		key.name = "[unknown]";
	key.len = strlen(key.name);
	hash = hash_mix(hash_mix(hash_bytes(key.name, key.len), parent), kind);
	entry = hashtab__find(&fl->index, hash, node_eq, &key);
	if (entry) {
		*child = (uintptr_t)entry - 1;
		return 0;
	}
	/* Indices are uint32_t, and index + 1 must fit too. */
	if (fl->nr_nodes >= UINT32_MAX)
		return -ENOMEM;
	err = array__reserve(&fl->nodes, &fl->alloc_nodes, fl->nr_nodes + 1, sizeof(*fl->nodes));
	if (err)
		return err;
	err = hashtab__insert(&fl->index, hash, (void *)(uintptr_t)(fl->nr_nodes + 1));
	if (err)
		return err;
	n = &fl->nodes[fl->nr_nodes];
	memset(n, 0, sizeof(*n));
	n->name = key.name;
	n->len = key.len;
	n->parent = parent;
	n->kind = kind;
	n->nr_nodes = 1;
	*child = fl->nr_nodes++;
	return 0;
}

/*
 * Add @count to the stack of @s, made of folded's frames: its root (the
 * process name, its command line, or none), then each frame's function and
 * the functions inlined into it, outer first.
 * Sorted samples share their outer frames with their predecessor, so the
 * path of the previous stack is kept as far as it matches.
 */
static int flame__add(struct flame *fl, const struct profile_sample *s, uint64_t count)
{
	const char *root = profile_sample__root(s, fl->root);
	uint32_t n = s->nr_frames, level, node;
	int err;

	err = stack_walk__begin(&fl->walk, s, (uintptr_t)root, &level);
	if (err)
		return err;
	if (!level) {
		node = 0;
		if (fl->root != PROFILE_ROOT_NONE)
			err = flame__child(fl, 0, KIND_PROCESS, root, &node);
		if (err)
			return err;
		fl->walk.path[0] = node;
		level = 1;
	}
	node = fl->walk.path[level - 1];
	for (; level <= n; level++) {
		const struct profile_frame *frame = stack_walk__frame(s, level);

		/* lines[] runs innermost first; the last is the frame's own function. */
		for (uint32_t i = frame->nr_lines; i-- > 0;) {
			enum frame_kind kind = i < frame->nr_lines - 1	     ? KIND_INLINED :
					       frame->kernel		     ? KIND_KERNEL :
					       frame->source == FRAME_JIT    ? KIND_JIT :
					       frame->source == FRAME_PYTHON ? KIND_PYTHON :
					       frame->source == FRAME_JS     ? KIND_JS :
									       KIND_USER;
			const char *name = i == frame->nr_lines - 1 ? profile_frame__label(frame) :
								      frame->lines[i].name;

			err = flame__child(fl, node, kind, name, &node);
			if (err)
				return err;
		}
		fl->walk.path[level] = node;
	}
	if (!n) {
		err = flame__child(fl, node, KIND_USER, "[unknown]", &node);
		if (err)
			return err;
	}
	fl->nodes[node].count += count;
	stack_walk__end(&fl->walk, s);
	return 0;
}

static int cmp_sibling(const void *pa, const void *pb, void *arg)
{
	const struct flame_node *nodes = arg;
	const struct flame_node *a = &nodes[*(const uint32_t *)pa];
	const struct flame_node *b = &nodes[*(const uint32_t *)pb];
	int c;

	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	c = memcmp(a->name, b->name, a->len < b->len ? a->len : b->len);
	if (c)
		return c;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return (a->kind > b->kind) - (a->kind < b->kind);
}

/*
 * Sum counts and subtree sizes up the tree, and sort each node's children
 * by name, as flamegraph.pl orders them: then the graph does not depend on
 * the order of the samples.
 */
static int flame__finish(struct flame *fl)
{
	struct flame_node *nodes = fl->nodes;

	for (size_t i = fl->nr_nodes - 1; i > 0; i--) {
		nodes[nodes[i].parent].count += nodes[i].count;
		nodes[nodes[i].parent].nr_nodes += nodes[i].nr_nodes;
	}
	fl->order = malloc(fl->nr_nodes * sizeof(*fl->order));
	if (!fl->order)
		return -ENOMEM;
	for (size_t i = 1; i < fl->nr_nodes; i++)
		fl->order[i - 1] = i;
	qsort_r(fl->order, fl->nr_nodes - 1, sizeof(*fl->order), cmp_sibling, nodes);
	for (size_t k = 0; k < fl->nr_nodes - 1; k++) {
		struct flame_node *parent = &nodes[nodes[fl->order[k]].parent];

		if (!parent->nr_children++)
			parent->first = k;
	}
	return 0;
}

struct svg_writer {
	FILE *out;
	int err; /* the first error */
	const struct profile *p;
	uint64_t total;
	unsigned int height;
	/* "samples" and "sample"; "µs" for both; "bytes" and "byte" (PROFILE_ALLOC) */
	const char *unit, *unit_one;
	bool mmap; /* PROFILE_ALLOC: the graph counts bytes of anonymous mmap too */
	struct profile_summary sum;
	unsigned int nr_summary; /* lines of text the summary takes: one per group */
	char *name;		 /* a name made valid XML */
	size_t alloc_name;
};

static void svg__bytes(struct svg_writer *w, const char *s, size_t len)
{
	if (w->err || !len)
		return;
	errno = 0;
	if (fwrite(s, 1, len, w->out) != len)
		w->err = errno ? -errno : -EIO;
}

static void svg__puts(struct svg_writer *w, const char *s)
{
	svg__bytes(w, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void svg__printf(struct svg_writer *w, const char *fmt,
							      ...)
{
	va_list ap;

	if (w->err)
		return;
	errno = 0;
	va_start(ap, fmt);
	if (vfprintf(w->out, fmt, ap) < 0)
		w->err = errno ? -errno : -EIO;
	va_end(ap);
}

/* Write @s[0..@len), valid UTF-8, with the characters XML gives meaning escaped. */
static void svg__escaped(struct svg_writer *w, const char *s, size_t len)
{
	size_t done = 0;

	for (size_t i = 0; i < len; i++) {
		const char *entity;

		switch (s[i]) {
		case '&':
			entity = "&amp;";
			break;
		case '<':
			entity = "&lt;";
			break;
		case '>':
			entity = "&gt;";
			break;
		case '"':
			entity = "&quot;";
			break;
		case '\'':
			entity = "&apos;";
			break;
		default:
			continue;
		}
		svg__bytes(w, s + done, i - done);
		svg__puts(w, entity);
		done = i + 1;
	}
	svg__bytes(w, s + done, len - done);
}

/*
 * Is the well-formed UTF-8 sequence at @s, @n bytes long, a character XML
 * 1.0 allows and a reader can show: not a C0 or C1 control, DEL, U+FFFE or
 * U+FFFF?
 */
static bool xml_char_ok(const unsigned char *s, size_t n)
{
	if (n == 1)
		return s[0] >= 0x20 && s[0] != 0x7f;
	return !(s[0] == 0xc2 && s[1] < 0xa0) && !(s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe);
}

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/*
 * Put @n's name in w->name with U+FFFD for each character xml_char_ok()
 * does not accept, and for each byte of what is not UTF-8: names come
 * from binaries and perf maps, and one stray byte must not make the whole
 * file unreadable. Returns the length; *@chars is the number of characters.
 */
static size_t svg__clean_name(struct svg_writer *w, const struct flame_node *n, size_t *chars)
{
	const unsigned char *s = (const unsigned char *)n->name;
	size_t len = 0;

	*chars = 0;
	if (n->len > SIZE_MAX / 3 || array__reserve(&w->name, &w->alloc_name, n->len * 3, 1)) {
		w->err = w->err ? w->err : -ENOMEM;
		return 0;
	}
	for (size_t i = 0; i < n->len; (*chars)++) {
		size_t c = utf8__char_len(s + i, n->len - i);
		bool ok = c && xml_char_ok(s + i, c);

		if (ok)
			memcpy(w->name + len, s + i, c);
		else
			memcpy(w->name + len, REPLACEMENT, 3);
		len += ok ? c : 3;
		i += c ? c : 1;
	}
	return len;
}

/* @v with thousands separators, in @buf. */
static const char *thousands(char buf[32], uint64_t v)
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v), j = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = digits[i];
	}
	buf[j] = '\0';
	return buf;
}

/*
 * @v bytes, at least 1 KiB, in the largest binary unit it reaches once
 * rounded to one decimal: "70.0 MiB", and 1048575 "1.0 MiB". Integer
 * arithmetic: no locale, no float.
 */
static const char *binary_size(char buf[32], uint64_t v)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned __int128 tenths;
	int k = 0;

	for (;;) {
		unsigned int shift = 10 * (k + 1);

		tenths = ((unsigned __int128)v * 10 + ((uint64_t)1 << shift) / 2) >> shift;
		if (tenths < 10240 || k == 5)
			break;
		k++;
	}
	snprintf(buf, 32, "%" PRIu64 ".%u %s", (uint64_t)(tenths / 10), (unsigned int)(tenths % 10),
		 units[k]);
	return buf;
}

/* Hundredths of a percent of the total, rounded. */
static unsigned int svg__pct100(const struct svg_writer *w, uint64_t count)
{
	return ((unsigned __int128)count * 10000 + w->total / 2) / w->total;
}

/* Where @offset (in counts from the left) lies, in hundredths of a px. */
static uint64_t svg__x100(const struct svg_writer *w, uint64_t offset)
{
	return MARGIN_X * 100 +
	       ((unsigned __int128)offset * GRAPH_W * 100 + w->total / 2) / w->total;
}

static bool too_narrow(uint64_t count, uint64_t total)
{
	return (unsigned __int128)count * GRAPH_W * MIN_WIDTH_DIV < total;
}

/* The label of a @width100 wide frame: as much of the name as fits, cut with "..". */
static void svg__label(struct svg_writer *w, size_t len, size_t chars, uint64_t width100)
{
	uint64_t fit = width100 > 2 * LABEL_PAD100 ? (width100 - 2 * LABEL_PAD100) / CHAR_W100 : 0;
	size_t cut = 0;

	if (fit < 3)
		return;
	if (chars <= fit) {
		svg__escaped(w, w->name, len);
		return;
	}
	/* The first fit - 2 characters: count the bytes that start one. */
	for (uint64_t kept = 0; cut < len; cut++) {
		if (((unsigned char)w->name[cut] & 0xc0) != 0x80 && kept++ == fit - 2)
			break;
	}
	svg__escaped(w, w->name, cut);
	svg__puts(w, "..");
}

static void svg__frame(struct svg_writer *w, const struct flame_node *n, uint32_t depth,
		       uint64_t start)
{
	const struct kind_style *style = &kind_styles[n->kind];
	uint64_t x = svg__x100(w, start), width = svg__x100(w, start + n->count) - x;
	unsigned int y = w->height - BOTTOM_H - (depth + 1) * FRAME_H;
	unsigned int pct = svg__pct100(w, n->count), rgb[3];
	uint64_t hash = hash_bytes(n->name, n->len);
	size_t len, chars;
	char count[32];

	for (int i = 0; i < 3; i++, hash >>= 8)
		rgb[i] = style->base[i] + style->range[i] * (hash & 0xff) / 255;
	len = svg__clean_name(w, n, &chars);
	svg__printf(w, "<g class=\"%s\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\"><title>",
		    style->class, start, n->count);
	svg__escaped(w, w->name, len);
	svg__printf(w, " (%s%s%s %s, %u.%02u%%)</title>", style->label ? style->label : "",
		    style->label ? ", " : "", thousands(count, n->count),
		    n->count == 1 ? w->unit_one : w->unit, pct / 100, pct % 100);
	svg__printf(w,
		    "<rect x=\"%" PRIu64 ".%02u\" y=\"%u\" width=\"%" PRIu64
		    ".%02u\" height=\"%u\" fill=\"rgb(%u,%u,%u)\"/>",
		    x / 100, (unsigned int)(x % 100), y, width / 100, (unsigned int)(width % 100),
		    FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
	x += LABEL_PAD100;
	svg__printf(w, "<text x=\"%" PRIu64 ".%02u\" y=\"%u\">", x / 100, (unsigned int)(x % 100),
		    y + 11);
	svg__label(w, len, chars, width);
	svg__puts(w, "</text></g>\n");
}

struct walk_item {
	uint32_t node, depth;
	uint64_t start; /* in counts from the left edge */
};

/*
 * Visit the frames wide enough to draw, depth first, children left to right:
 * with @w, write them; without, find the depth of the graph and what is not
 * drawn. Children of a frame start at its left edge; the gap on the right
 * is its own count.
 */
static int flame__walk(struct flame *fl, struct svg_writer *w, uint64_t total)
{
	struct walk_item *stack = NULL;
	size_t nr = 0, alloc = 0;
	int err;

	err = array__reserve(&stack, &alloc, 1, sizeof(*stack));
	if (err)
		return err;
	stack[nr++] = (struct walk_item){ 0, 0, 0 };
	while (nr) {
		struct walk_item it = stack[--nr];
		const struct flame_node *n = &fl->nodes[it.node];
		uint64_t start = it.start;
		size_t pos;

		if (too_narrow(n->count, total)) {
			if (!w) {
				fl->elided_frames += n->nr_nodes;
				fl->elided_count += n->count;
			}
			continue;
		}
		if (w && w->err)
			break;
		if (w)
			svg__frame(w, n, it.depth, it.start);
		else if (it.depth > fl->max_depth)
			fl->max_depth = it.depth;
		err = array__reserve(&stack, &alloc, nr + n->nr_children, sizeof(*stack));
		if (err)
			break;
		/* The leftmost child on top, to be visited next. */
		pos = nr + n->nr_children;
		for (uint32_t i = 0; i < n->nr_children; i++) {
			uint32_t child = fl->order[n->first + i];

			stack[--pos] = (struct walk_item){ child, it.depth + 1, start };
			start += fl->nodes[child].count;
		}
		nr += n->nr_children;
	}
	free(stack);
	return err;
}

/*
 * The title; the graph's total (with what was not drawn); the profile's
 * summary, a group of profile__summary()'s lines on each line of text, in
 * the same words as stderr; the buttons and the legend.
 */
static void svg__header(struct svg_writer *w, const struct flame *fl)
{
	const struct profile *p = w->p;
	static const char *const titles[] = {
		[PROFILE_CPU] = "CPU flame graph",
		[PROFILE_OFFCPU] = "Off-CPU flame graph",
		[PROFILE_WALL] = "Wall-clock flame graph",
		[PROFILE_ALLOC] = "Allocation flame graph",
	};
	static const char *const shares[] = {
		[PROFILE_CPU] = "samples",
		[PROFILE_OFFCPU] = "the time",
		[PROFILE_WALL] = "the time",
		[PROFILE_ALLOC] = "the bytes",
	};
	char total[32], elided[32], size[32];
	unsigned int x = MARGIN_X, y = SUMMARY_Y;
	unsigned int legend_y = SUMMARY_Y - 8 + w->nr_summary * SUMMARY_H;

	svg__printf(w,
		    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" "
		    "height=\"%u\" viewBox=\"0 0 %u %u\">\n",
		    IMAGE_W, w->height, IMAGE_W, w->height);
	svg__puts(w, "<style>\n");
	svg__bytes(w, flamegraph_css, sizeof(flamegraph_css) - 1);
	svg__puts(w, "</style>\n");
	svg__printf(w, "<rect width=\"%u\" height=\"%u\" fill=\"#f7f7f4\"/>\n", IMAGE_W, w->height);
	svg__printf(w, "<text id=\"title\" x=\"%u\" y=\"24\" text-anchor=\"middle\">%s</text>\n",
		    IMAGE_W / 2, titles[p->mode]);
	svg__printf(w, "<text id=\"summary\" x=\"%u\" y=\"44\" text-anchor=\"middle\">",
		    IMAGE_W / 2);
	if (!w->total)
		svg__puts(w, "no samples");
	else if (p->mode == PROFILE_CPU && p->freq_hz)
		svg__printf(w, "%s samples at %u Hz", thousands(total, w->total), p->freq_hz);
	else if (p->mode == PROFILE_CPU)
		svg__printf(w, "%s samples", thousands(total, w->total));
	else if (p->mode == PROFILE_ALLOC && w->total < 1024)
		svg__printf(w, "%s bytes allocated", thousands(total, w->total));
	else if (p->mode == PROFILE_ALLOC)
		svg__printf(w, "%s bytes allocated (%s)", thousands(total, w->total),
			    binary_size(size, w->total));
	else
		svg__printf(w, "%s %s %s", thousands(total, w->total), w->unit,
			    p->mode == PROFILE_OFFCPU ? "off CPU" : "of wall-clock time");
	if (w->mmap)
		svg__puts(w, ", anonymous mmap included");
	if (fl->elided_frames) {
		unsigned int pct = svg__pct100(w, fl->elided_count);

		svg__printf(
			w,
			"; %s frames narrower than 0.1 px not drawn, on the stacks of %u.%02u%% of %s",
			thousands(elided, fl->elided_frames), pct / 100, pct % 100,
			shares[p->mode]);
	}
	svg__puts(w, "</text>\n");
	for (size_t i = 0; i < w->sum.nr; y += SUMMARY_H) {
		enum profile_summary_group group = w->sum.lines[i].group;
		const char *sep = "";

		svg__printf(w, "<text class=\"stats\" x=\"%u\" y=\"%u\" text-anchor=\"middle\">",
			    IMAGE_W / 2, y);
		for (; i < w->sum.nr && w->sum.lines[i].group == group; i++, sep = "; ") {
			svg__puts(w, sep);
			svg__escaped(w, w->sum.lines[i].text, strlen(w->sum.lines[i].text));
		}
		svg__puts(w, "</text>\n");
	}
	svg__printf(w,
		    "<text id=\"unzoom\" class=\"btn hide\" x=\"%u\" y=\"24\">Reset zoom</text>\n",
		    MARGIN_X);
	svg__printf(w,
		    "<text id=\"search\" class=\"btn\" x=\"%u\" y=\"24\" "
		    "text-anchor=\"end\">Search</text>\n",
		    IMAGE_W - MARGIN_X);
	svg__puts(w, "<g id=\"legend\">");
	for (size_t i = 0; i < sizeof(legend_kinds) / sizeof(legend_kinds[0]); i++) {
		const struct kind_style *s = &kind_styles[legend_kinds[i]];

		svg__printf(w,
			    "<rect x=\"%u\" y=\"%u\" width=\"12\" height=\"12\" "
			    "fill=\"rgb(%u,%u,%u)\"/><text x=\"%u\" y=\"%u\">%s</text>",
			    x, legend_y, s->base[0] + s->range[0] / 2, s->base[1] + s->range[1] / 2,
			    s->base[2] + s->range[2] / 2, x + 16, legend_y + 10, s->label);
		x += 16 + strlen(s->label) * CHAR_W100 / 100 + 18;
	}
	svg__printf(w,
		    "<text x=\"%u\" y=\"%u\" text-anchor=\"end\">color: kind; shade: hashed "
		    "name. Click: zoom, Esc: reset, Ctrl-F or /: search</text></g>\n",
		    IMAGE_W - MARGIN_X, legend_y + 10);
}

/* The script last, once the frames it reads are in the document. */
static void svg__footer(struct svg_writer *w)
{
	/* flamegraph.js is one function expression and a newline: call it on its last line. */
	size_t len = sizeof(flamegraph_js) - 1;

	while (len && flamegraph_js[len - 1] == '\n')
		len--;
	svg__printf(w, "<text id=\"details\" x=\"%u\" y=\"%u\"> </text>\n", MARGIN_X,
		    w->height - 10);
	svg__printf(w, "<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"> </text>\n",
		    IMAGE_W - MARGIN_X, w->height - 10);
	svg__puts(w, "<script type=\"text/ecmascript\"><![CDATA[\n");
	svg__bytes(w, flamegraph_js, len);
	svg__printf(w, "(%" PRIu64 ", \"%s\", %u, %u);\n]]></script>\n</svg>\n", w->total, w->unit,
		    MARGIN_X, GRAPH_W);
}

int svg__write(const struct profile *p, FILE *out)
{
	return svg__write_root(p, out, PROFILE_ROOT_COMM);
}

int svg__write_root(const struct profile *p, FILE *out, enum profile_root root)
{
	struct svg_writer w = { .out = out, .p = p };
	struct flame fl;
	int err;

	memset(&fl, 0, sizeof(fl));
	fl.root = root;
	stack_walk__init(&fl.walk);
	err = array__reserve(&fl.nodes, &fl.alloc_nodes, 1, sizeof(*fl.nodes));
	if (err)
		return err;
	fl.nodes[0] =
		(struct flame_node){ .name = "all", .len = 3, .kind = KIND_ROOT, .nr_nodes = 1 };
	fl.nr_nodes = 1;
	for (size_t i = 0; i < p->nr_samples; i++) {
		uint64_t count = profile_sample__folded_count(p, &p->samples[i]);

		if (!count)
			continue;
		err = flame__add(&fl, &p->samples[i], count);
		if (err)
			goto out_free;
		w.mmap = w.mmap ||
			 (p->mode == PROFILE_ALLOC && p->samples[i].alloc.kind == ALLOC_MMAP);
	}
	err = flame__finish(&fl);
	if (err)
		goto out_free;
	w.total = fl.nodes[0].count;
	w.unit = p->mode == PROFILE_CPU	  ? "samples" :
		 p->mode == PROFILE_ALLOC ? "bytes" :
					    "\xc2\xb5s";
	w.unit_one = p->mode == PROFILE_CPU ? "sample" : p->mode == PROFILE_ALLOC ? "byte" : w.unit;
	if (w.total) {
		err = flame__walk(&fl, NULL, w.total);
		if (err)
			goto out_free;
	}
	profile__summary(p, &w.sum);
	for (size_t i = 0; i < w.sum.nr; i++)
		w.nr_summary += !i || w.sum.lines[i].group != w.sum.lines[i - 1].group;
	w.height = TOP_H + w.nr_summary * SUMMARY_H + (fl.max_depth + 1) * FRAME_H + BOTTOM_H;
	svg__header(&w, &fl);
	svg__puts(&w, "<g id=\"frames\">\n");
	if (w.total) {
		err = flame__walk(&fl, &w, w.total);
		if (err)
			goto out_free;
	}
	svg__puts(&w, "</g>\n");
	svg__footer(&w);
	err = w.err;

out_free:
	free(w.name);
	free(fl.order);
	stack_walk__release(&fl.walk);
	free(fl.nodes);
	hashtab__release(&fl.index);
	return err;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * v8.c - the Node.js plug-in (runtime.h): JavaScript functions named in
 * the stacks of processes running V8, with no flag given to node.
 *
 * Unwinding a node process needs nothing here: V8's builtins and the
 * code it generates keep frame pointers (collector/unwind_table.c walks
 * them where no FDE covers code). Names are data. For each process with
 * V8 in one of its files (node, libnode.so: they export V8's
 * introspection constants, v8dbg_*), the BPF program is told where a
 * JavaScript frame keeps its function (v8.bpf.h), and records, for each
 * such frame, the function's SharedFunctionInfo in place of its address
 * (V8_FRAME_TAG). Here that object is read
 * from the process: its name (from its ScopeInfo, or the string itself),
 * its script's name, and its line, counted in the script's source from the
 * function's start; then the frame's native address (an address in code
 * V8 generated, or a builtin such as the interpreter's entry) gives way
 * to the function, as `name` (script:LINE) in common/py_frames.h's table.
 *
 * A SharedFunctionInfo is read once per process and address, a script's
 * lines once per process and script. Both live in V8's old space, which a
 * full garbage collection may compact: a function moved and another put
 * at its address would be misnamed until the process exits. Every object
 * read is checked to be of the type expected (its map's instance type), so
 * memory that is no longer one gives an unnamed frame, counted, never a
 * wrong type read on.
 *
 * What is read of a ScopeInfo is laid out as in V8 10 to 12 (node 18, 20
 * and 22, each checked here beside its own profiler); other releases are
 * unwound but not named, said in one line. Pointer compression (never on
 * in node's builds) is not supported.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <gelf.h>

#include "bpf/profile.h"
#include "collector/collector.h"
#include "collector/event.h"
#include "collector/unwind.h"
#include "common/array.h"
#include "common/clock.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "common/proc_maps.h"
#include "common/py_frames.h"
#include "common/remote_mem.h"
#include "elf/elf_cache.h"
#include "elf/elf_file.h"
#include "profile.skel.h"
#include "v8.h"

#define UNNAMED_FRAME "[unknown JavaScript]"
#define ANONYMOUS "(anonymous)"
/* The longest name or script name kept, in bytes. */
#define V8_MAX_NAME 256
/* The largest script whose lines are counted: a bundle is a few MiB. */
#define V8_MAX_SOURCE (64u << 20)
/* The most memory the lines of all scripts take: past it, scripts get no lines. */
#define V8_MAX_LINE_BYTES (64u << 20)
/* Reads of a script's source before its functions are named for good without lines. */
#define V8_SOURCE_TRIES 8
#define V8_SOURCE_AGAIN_NS 100000000ULL
/* Functions named, and scripts whose lines are counted, kept per process. */
#define V8_MAX_FUNCTIONS 65536
#define V8_MAX_SCRIPTS 4096
/* ScopeInfo: local names are a hash table of one slot from this many on. */
#define V8_MAX_INLINED_LOCAL_NAMES 75

/* V8's introspection constants that are used, as the file exports them (v8dbg_NAME). */
struct v8_layout {
	int32_t fp_context, fp_function;
	int32_t function_shared, shared_data, shared_name, shared_script;
	int32_t heap_map, map_type, script_name, script_source, string_length;
	int32_t one_byte_chars, two_byte_chars, cons_first, cons_second, thin_actual;
	int32_t external_resource, external_tag;
	int32_t uncompiled_start;
	int32_t type_shared, type_script, type_scope_info, first_nonstring;
	int32_t encoding_mask, representation_mask, one_byte_tag, seq_tag, cons_tag, thin_tag;
	int32_t tagged_size, smi_shift_size, heap_object_tag, smi_tag_mask;
	int32_t scope_first_vars, scope_context_locals;
	int32_t uncompiled_lo, uncompiled_hi; /* the UncompiledData types' range */
};

/*
 * Where each is found: v8dbg_ and a name, whole, or, for a field of a class
 * (a name ending in "__"), with any type after it (V8 12 says
 * "Tagged_Object_" where V8 11 says "Object"). Several names may give one
 * field (renamed between releases); all are needed but the optional ones.
 */
static const struct v8_constant {
	const char *name;
	size_t field;
	bool optional;
} v8_constants[] = {
#define C(name, field)                                                                             \
	{                                                                                          \
		"v8dbg_" name, offsetof(struct v8_layout, field), false                            \
	}
#define OPTIONAL(name, field)                                                                      \
	{                                                                                          \
		"v8dbg_" name, offsetof(struct v8_layout, field), true                             \
	}
	C("off_fp_context", fp_context),
	C("off_fp_function", fp_function),
	C("class_JSFunction__shared__", function_shared),
	OPTIONAL("class_SharedFunctionInfo__function_data__", shared_data),
	C("class_SharedFunctionInfo__name_or_scope_info__", shared_name),
	C("class_SharedFunctionInfo__script_or_debug_info__", shared_script),
	C("class_SharedFunctionInfo__script__", shared_script),
	C("class_HeapObject__map__", heap_map),
	C("class_Map__instance_type__", map_type),
	C("class_Script__name__", script_name),
	C("class_Script__source__", script_source),
	C("class_String__length__", string_length),
	C("class_SeqOneByteString__chars__", one_byte_chars),
	C("class_SeqTwoByteString__chars__", two_byte_chars),
	C("class_ConsString__first__", cons_first),
	C("class_ConsString__second__", cons_second),
	C("class_ThinString__actual__", thin_actual),
	C("class_ExternalString__resource__", external_resource),
	C("ExternalStringTag", external_tag),
	C("class_UncompiledData__start_position__", uncompiled_start),
	C("type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", type_shared),
	C("type_Script__SCRIPT_TYPE", type_script),
	C("type_ScopeInfo__SCOPE_INFO_TYPE", type_scope_info),
	C("FirstNonstringType", first_nonstring),
	C("StringEncodingMask", encoding_mask),
	C("StringRepresentationMask", representation_mask),
	C("OneByteStringTag", one_byte_tag),
	C("SeqStringTag", seq_tag),
	C("ConsStringTag", cons_tag),
	C("ThinStringTag", thin_tag),
	C("TaggedSize", tagged_size),
	C("SmiShiftSize", smi_shift_size),
	C("HeapObjectTag", heap_object_tag),
	C("SmiTagMask", smi_tag_mask),
	C("scopeinfo_idx_first_vars", scope_first_vars),
	C("scopeinfo_idx_ncontextlocals", scope_context_locals),
#undef OPTIONAL
#undef C
};

#define NR_CONSTANTS (sizeof(v8_constants) / sizeof(*v8_constants))

/* A function named in a process: its SharedFunctionInfo, and its frame's address. */
struct v8_function {
	uint64_t shared;
	uint64_t addr; /* in py_frames */
};

/* A script of a process: its name, and where its lines start. */
struct v8_script {
	uint64_t script;
	char *name;	   /* NULL: none that can be read */
	uint32_t *lines;   /* offsets of the lines after the first; NULL: not counted */
	uint32_t nr_lines; /* in @lines */
	/*
	 * Reads of its source that failed (a string the garbage collector was
	 * moving, or not one yet), and when the last was: read again after
	 * V8_SOURCE_AGAIN_NS, up to V8_SOURCE_TRIES, before its functions are
	 * named for good without lines.
	 */
	uint32_t tries;
	uint64_t tried_ns;
};

struct v8_process {
	struct runtime_proc proc; /* loaded: in v8_procs, named with @layout */
	struct v8_layout layout;
	struct hashtab functions; /* of struct v8_function, by shared */
	struct hashtab scripts;	  /* of struct v8_script, by script */
};

struct v8_stats {
	uint64_t processes, unsupported, samples, functions, unnamed;
	uint64_t no_lines; /* scripts whose lines were not kept: over V8_MAX_LINE_BYTES */
};

struct v8_runtime {
	struct profile_bpf *skel;
	struct elf_cache *elves;
	struct py_frames *frames;
	struct runtime_procs procs; /* of struct v8_process */
	struct v8_stats stats;
	size_t line_bytes; /* what the scripts' lines take, all processes together */
	bool said;	   /* an unsupported release was said */
};

static bool function_eq(const void *entry, const void *key)
{
	return ((const struct v8_function *)entry)->shared == *(const uint64_t *)key;
}

static bool script_eq(const void *entry, const void *key)
{
	return ((const struct v8_script *)entry)->script == *(const uint64_t *)key;
}

/*
 * Read @elf's V8 constants into @l and its release into *@major, *@minor
 * (0 when it does not say): 0, or -ENOENT when one is missing.
 */
static int v8_read_layout(Elf *elf, struct v8_layout *l, int *major, int *minor)
{
	bool found[sizeof(*l) / sizeof(int32_t)] = { false };
	Elf_Scn *scn = NULL;

	*major = *minor = 0;
	l->uncompiled_lo = INT32_MAX;
	l->uncompiled_hi = -1;
	l->shared_data = -1;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const unsigned char *bytes;
			const char *s;
			GElf_Sym sym;
			int32_t value = 0;
			int *version = NULL;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !(s = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			if (!strcmp(s, "_ZN2v88internal7Version6major_E"))
				version = major;
			else if (!strcmp(s, "_ZN2v88internal7Version6minor_E"))
				version = minor;
			else if (strncmp(s, "v8dbg_", 6))
				continue;
			/* Constants of zero are in .bss, which has no bytes in the file. */
			bytes = elf__bytes_at(elf, sym.st_value, sizeof(value), false);
			if (bytes)
				memcpy(&value, bytes, sizeof(value));
			if (version) {
				*version = value;
				continue;
			}
			if (!strncmp(s, "v8dbg_type_UncompiledData", 25)) {
				l->uncompiled_lo = value < l->uncompiled_lo ? value :
									      l->uncompiled_lo;
				l->uncompiled_hi = value > l->uncompiled_hi ? value :
									      l->uncompiled_hi;
				continue;
			}
			for (size_t c = 0; c < NR_CONSTANTS; c++) {
				const char *want = v8_constants[c].name;
				size_t len = strlen(want);
				bool field = len > 2 && !strcmp(want + len - 2, "__");

				if (field ? strncmp(s, want, len) : strcmp(s, want))
					continue;
				memcpy((char *)l + v8_constants[c].field, &value, sizeof(value));
				found[v8_constants[c].field / sizeof(int32_t)] = true;
			}
		}
	}
	for (size_t c = 0; c < NR_CONSTANTS; c++)
		if (!found[v8_constants[c].field / sizeof(int32_t)] && !v8_constants[c].optional) {
			pr_debug("v8: no %s", v8_constants[c].name);
			return -ENOENT;
		}
	return 0;
}

/* Can the frames of a V8 with layout @l be read here (v8.bpf.h's tagging, ScopeInfo's)? */
static bool v8_layout_ok(const struct v8_layout *l, int major)
{
	return major >= 10 && major <= 12 && l->tagged_size == 8 && l->smi_shift_size == 31 &&
	       l->heap_object_tag == 1 && l->smi_tag_mask == 1 && l->scope_first_vars == 3 &&
	       l->scope_context_locals == 2 && l->uncompiled_lo <= l->uncompiled_hi &&
	       l->fp_context >= -128 && l->fp_context < 0 && l->fp_function >= -128 &&
	       l->fp_function < 0 && l->function_shared > 0 && l->function_shared < 4096;
}

/* Look at @p's files: one with V8 in it, of a release whose frames are named here? */
static void v8_runtime__check(struct v8_runtime *rt, struct v8_process *p,
			      const struct proc_maps *maps)
{
	struct elf_file *elf = NULL;
	struct mapped_file *last = NULL;
	struct v8_proc value;
	int major, minor;

	p->proc.checked = true;
	for (size_t i = 0; i < maps->nr && !elf; i++) {
		struct elf_file *f;

		if (!maps->maps[i].file || maps->maps[i].file == last)
			continue;
		last = maps->maps[i].file;
		f = elf_cache__file(rt->elves, last);
		if (f && elf_file__is_v8(f))
			elf = f;
	}
	if (!elf)
		return;
	if (v8_read_layout(elf_file__elf(elf), &p->layout, &major, &minor) ||
	    !v8_layout_ok(&p->layout, major)) {
		rt->stats.unsupported++;
		if (!rt->said)
			pr_warn("node: pid %d runs V8 %d.%d, whose JavaScript functions are not named "
				"(V8 10 to 12, node 18 to 22, are); its stacks are still whole",
				p->proc.pid, major, minor);
		rt->said = true;
		return;
	}
	value = (struct v8_proc){
		.fp_context = (__s16)p->layout.fp_context,
		.fp_function = (__s16)p->layout.fp_function,
		.function_shared = (__u16)p->layout.function_shared,
	};
	if (bpf_map_update_elem(rt->procs.map_fd, &p->proc.pid, &value, BPF_ANY)) {
		pr_debug("v8: pid %d: cannot load it: %s", p->proc.pid, strerror(errno));
		return;
	}
	p->proc.loaded = true;
	rt->skel->bss->v8_loaded = true;
	rt->stats.processes++;
	pr_debug("v8: pid %d runs V8 %d.%d from '%s': its JavaScript frames are named", p->proc.pid,
		 major, minor, elf_file__name(elf));
}

/* The tagged pointer at @obj + @off of @pid: 0 or -errno. */
static int read_field(pid_t pid, uint64_t obj, int32_t off, uint64_t *val)
{
	return remote_read_u64(pid, obj - 1 + (int64_t)off, val);
}

static bool is_heap_object(uint64_t v)
{
	return (v & 3) == 1;
}

static bool is_smi(uint64_t v)
{
	return (v & 1) == 0;
}

static int64_t smi_value(uint64_t v)
{
	return (int64_t)v >> 32;
}

/* The instance type of heap object @obj, or -1. */
static int instance_type(pid_t pid, const struct v8_layout *l, uint64_t obj)
{
	uint64_t map;
	uint16_t type;

	if (!is_heap_object(obj) || read_field(pid, obj, l->heap_map, &map) ||
	    !is_heap_object(map) || remote_read(pid, map - 1 + l->map_type, &type, sizeof(type)))
		return -1;
	return type;
}

/*
 * The characters of string @s of @pid into @out (UTF-16 ones as UTF-8,
 * those out of one byte's range as '?' when @units: one byte each, so that
 * offsets stay V8's), at most @max bytes at @out + *@len, through at most
 * @depth more concatenations: 0 or -errno (-ENOTSUP: a kind not read).
 */
static int read_string(pid_t pid, const struct v8_layout *l, uint64_t s, char *out, size_t max,
		       size_t *len, bool units, int depth)
{
	int type = instance_type(pid, l, s);
	int32_t length;
	uint64_t first, second, chars = 0;
	int err = 0;

	if (type < 0 || type >= l->first_nonstring || depth < 0)
		return -EINVAL;
	if ((type & l->representation_mask) == l->thin_tag)
		return read_field(pid, s, l->thin_actual, &first) ?:
			       read_string(pid, l, first, out, max, len, units, depth - 1);
	if ((type & l->representation_mask) == l->cons_tag)
		return read_field(pid, s, l->cons_first, &first)			   ?:
			       read_field(pid, s, l->cons_second, &second)		   ?:
			       read_string(pid, l, first, out, max, len, units, depth - 1) ?:
			       read_string(pid, l, second, out, max, len, units, depth - 1);
	if (remote_read(pid, s - 1 + l->string_length, &length, sizeof(length)) || length < 0)
		return -EINVAL;
	if ((size_t)length > max - *len)
		length = (int32_t)(max - *len);
	/* Characters outside the heap (node's own scripts): V8 keeps where after the resource. */
	if ((type & l->representation_mask) == l->external_tag)
		err = read_field(pid, s, l->external_resource + 8, &chars);
	else if ((type & l->representation_mask) == l->seq_tag)
		chars = s - 1 +
			((type & l->encoding_mask) == l->one_byte_tag ? l->one_byte_chars :
									l->two_byte_chars);
	else
		return -ENOTSUP;
	if (err || !chars)
		return -ENOTSUP;
	if ((type & l->encoding_mask) == l->one_byte_tag) {
		err = remote_read(pid, chars, out + *len, (size_t)length);
		if (err)
			return err;
		/* Latin-1: its upper half as '?' unless @units, where only offsets matter. */
		for (int32_t i = 0; i < length && !units; i++)
			if ((unsigned char)out[*len + i] >= 0x80)
				out[*len + i] = '?';
		*len += (size_t)length;
		return 0;
	}
	for (int32_t i = 0; i < length && *len < max; i++) {
		uint16_t units_read[2048], c;

		/* Read a chunk at a time: a script's source is megabytes. */
		if (i % 2048 == 0) {
			size_t n = (size_t)(length - i) < 2048 ? (size_t)(length - i) : 2048;

			err = remote_read(pid, chars + 2 * (uint64_t)i, units_read, n * sizeof(c));
			if (err)
				return err;
		}
		c = units_read[i % 2048];
		if (c < 0x80 || units) {
			out[(*len)++] = c < 0x80 ? (char)c : '?';
		} else if (c < 0x800 && max - *len >= 2) {
			out[(*len)++] = (char)(0xc0 | (c >> 6));
			out[(*len)++] = (char)(0x80 | (c & 0x3f));
		} else if (c >= 0x800 && (c < 0xd800 || c > 0xdfff) && max - *len >= 3) {
			out[(*len)++] = (char)(0xe0 | (c >> 12));
			out[(*len)++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[(*len)++] = (char)(0x80 | (c & 0x3f));
		} else {
			out[(*len)++] = '?';
		}
	}
	return 0;
}

/* A name of @pid's string @s, at most V8_MAX_NAME bytes, into @out: 0 or -errno. */
static int read_name(pid_t pid, const struct v8_layout *l, uint64_t s, char *out)
{
	size_t len = 0;
	int err = read_string(pid, l, s, out, V8_MAX_NAME, &len, false, 8);

	out[err ? 0 : len] = '\0';
	/* One line per frame in every format: no control byte. */
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
	return err;
}

/*
 * What a ScopeInfo says of its function (V8 10 to 12's layout): its name into
 * @name ("" when it has none) and where it starts in its script into
 * *@start (-1: not said). 0 or -EINVAL where a slot is not of the kind
 * the layout puts there.
 */
static int read_scope_info(pid_t pid, const struct v8_layout *l, uint64_t scope, char *name,
			   int64_t *start)
{
	uint64_t flags, nr_locals, v, end;
	int64_t idx, n;
	unsigned int function_variable;

	name[0] = '\0';
	*start = -1;
	/* The slots after the map, by index: flags, parameters, context locals, the rest. */
#define SLOT(i) ((int32_t)(8 + 8 * (i)))
	if (read_field(pid, scope, SLOT(0), &flags) || !is_smi(flags) ||
	    read_field(pid, scope, SLOT(l->scope_context_locals), &nr_locals) ||
	    !is_smi(nr_locals) || smi_value(nr_locals) < 0 || smi_value(nr_locals) > 1 << 20)
		return -EINVAL;
	flags = (uint64_t)smi_value(flags);
	n = smi_value(nr_locals);
	/* Local names inline, or a table of them; then their infos. */
	idx = l->scope_first_vars + (n < V8_MAX_INLINED_LOCAL_NAMES ? 2 * n : 1 + n);
	if (flags & (1u << 10)) /* has_saved_class_variable */
		idx++;
	function_variable = (flags >> 12) & 3;
	if (function_variable) {
		if (read_field(pid, scope, SLOT(idx), &v))
			return -EINVAL;
		if (v && read_name(pid, l, v, name))
			return -EINVAL;
		idx += 2;
	}
	if (flags & (1u << 14)) { /* has_inferred_function_name: a string or undefined */
		int type;

		if (!name[0] && !read_field(pid, scope, SLOT(idx), &v) &&
		    (type = instance_type(pid, l, v)) >= 0 && type < l->first_nonstring)
			read_name(pid, l, v, name);
		idx++;
	}
	/* Functions' scopes (the scope type, the low 4 bits, 2 in V8 10 to 12) say where they start. */
	if ((flags & 15) == 2 && !read_field(pid, scope, SLOT(idx), &v) &&
	    !read_field(pid, scope, SLOT(idx + 1), &end) && is_smi(v) && is_smi(end) &&
	    smi_value(v) >= 0 && smi_value(v) <= smi_value(end))
		*start = smi_value(v);
#undef SLOT
	return 0;
}

/* Free @s, giving the room its lines took back to @rt's budget. */
static void v8_script__free(struct v8_script *s, struct v8_runtime *rt)
{
	if (s->lines)
		rt->line_bytes -= s->nr_lines * sizeof(*s->lines);
	free(s->name);
	free(s->lines);
	free(s);
}

/* The line (from 1) at offset @pos of script @s, or 0 when not known. */
static uint32_t script_line(const struct v8_script *s, int64_t pos)
{
	uint32_t lo = 0, hi = s->nr_lines;

	if (!s->lines || pos < 0)
		return 0;
	/* Lines starting at or before @pos. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->lines[mid] <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo + 1;
}

/*
 * Where @s's lines start, from its source (string @source), within
 * @rt's budget: left NULL when over it (0) or unreadable (-EAGAIN: to be
 * read again). 0, -EAGAIN or -ENOMEM.
 */
static int v8_script__lines(struct v8_runtime *rt, struct v8_process *p, struct v8_script *s,
			    uint64_t source)
{
	const struct v8_layout *l = &p->layout;
	size_t len = 0, alloc = 0;
	int32_t length;
	char *chars;
	int err;

	/* A string's length is its whole length, concatenations too. */
	if (remote_read(p->proc.pid, source - 1 + l->string_length, &length, sizeof(length)) ||
	    length < 0)
		return -EAGAIN;
	if ((size_t)length > V8_MAX_SOURCE)
		length = V8_MAX_SOURCE;
	chars = malloc((size_t)length + 1);
	if (!chars)
		return -ENOMEM;
	/* One byte a character, so that V8's offsets index it. */
	err = read_string(p->proc.pid, l, source, chars, (size_t)length, &len, true, 32);
	if (err)
		pr_debug("v8: pid %d: the source of script '%s' cannot be read: %s", p->proc.pid,
			 s->name ? s->name : "?", strerror(-err));
	for (size_t i = 0; i < len && !err; i++) {
		if (chars[i] != '\n')
			continue;
		if (rt->line_bytes + (s->nr_lines + 1) * sizeof(*s->lines) > V8_MAX_LINE_BYTES) {
			rt->stats.no_lines++;
			err = -E2BIG;
		} else if (array__reserve(&s->lines, &alloc, s->nr_lines + 1, sizeof(*s->lines))) {
			free(chars);
			return -ENOMEM;
		} else {
			s->lines[s->nr_lines++] = (uint32_t)(i + 1);
		}
	}
	free(chars);
	if (err) {
		free(s->lines);
		s->lines = NULL;
		s->nr_lines = 0;
		return err == -E2BIG ? 0 : -EAGAIN;
	}
	/* A script of one line: none after the first, but counted. */
	if (!s->lines && !(s->lines = malloc(sizeof(*s->lines))))
		return -ENOMEM;
	rt->line_bytes += s->nr_lines * sizeof(*s->lines);
	return 0;
}

/*
 * Where script @s's lines start, read again if its source could not be
 * read before: 0 when that is final (lines or none), -EAGAIN when its
 * functions are to be named again later, or -ENOMEM.
 */
static int v8_script__read_lines(struct v8_runtime *rt, struct v8_process *p, struct v8_script *s)
{
	uint64_t source, now = clock_ns(CLOCK_MONOTONIC);
	int err = -EAGAIN;

	if (s->lines || s->tries >= V8_SOURCE_TRIES)
		return 0;
	if (s->tries && now - s->tried_ns < V8_SOURCE_AGAIN_NS)
		return -EAGAIN;
	s->tried_ns = now;
	if (!read_field(p->proc.pid, s->script, p->layout.script_source, &source))
		err = v8_script__lines(rt, p, s, source);
	/* Over the budget, or given up: final, without lines. */
	if ((!err && !s->lines) || (err == -EAGAIN && ++s->tries >= V8_SOURCE_TRIES)) {
		s->tries = V8_SOURCE_TRIES;
		return 0;
	}
	return err;
}

/*
 * Script @script of @p, its name and lines read the first time and kept
 * (V8_MAX_SCRIPTS a process; past them, read each time): its name into
 * @name ("" when none can be read) and the line at offset @start into
 * *@line (0: not known). 0, -EAGAIN when the line may be known later
 * (v8_script__read_lines()), or -ENOMEM.
 */
static int v8_runtime__script(struct v8_runtime *rt, struct v8_process *p, uint64_t script,
			      int64_t start, char *name, uint32_t *line)
{
	const struct v8_layout *l = &p->layout;
	uint64_t hash = hash_mix(0, script), v;
	struct v8_script *s = hashtab__find(&p->scripts, hash, script_eq, &script);
	int err;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->script = script;
		if (!read_field(p->proc.pid, script, l->script_name, &v) &&
		    !read_name(p->proc.pid, l, v, name) && name[0] && !(s->name = strdup(name))) {
			v8_script__free(s, rt);
			return -ENOMEM;
		}
		if (p->scripts.nr >= V8_MAX_SCRIPTS) {
			err = v8_script__read_lines(rt, p, s);
			*line = script_line(s, start);
			v8_script__free(s, rt);
			return err;
		}
		if (hashtab__insert(&p->scripts, hash, s)) {
			v8_script__free(s, rt);
			return -ENOMEM;
		}
	}
	err = v8_script__read_lines(rt, p, s);
	snprintf(name, V8_MAX_NAME + 1, "%s", s->name ? s->name : "");
	*line = script_line(s, start);
	return err;
}

/* The address of a JavaScript frame not named into *@addr: 0 or -ENOMEM. */
static int v8_runtime__unnamed(struct v8_runtime *rt, uint64_t *addr)
{
	rt->stats.unnamed++;
	return py_frames__add(rt->frames,
			      &(struct py_frame_name){ .name = UNNAMED_FRAME, .js = true }, addr);
}

/*
 * Name SharedFunctionInfo @shared of @p: its frame's address into *@addr.
 * 0, -EAGAIN when named without the line its script may give later, or
 * -ENOMEM.
 */
static int v8_runtime__name(struct v8_runtime *rt, struct v8_process *p, uint64_t shared,
			    uint64_t *addr)
{
	const struct v8_layout *l = &p->layout;
	char name[V8_MAX_NAME + 1] = "";
	char file[V8_MAX_NAME + 1] = "";
	uint32_t line = 0;
	int64_t start = -1;
	uint64_t v, data;
	int32_t pos;
	int type, err = 0;

	if (instance_type(p->proc.pid, l, shared) != l->type_shared ||
	    read_field(p->proc.pid, shared, l->shared_name, &v))
		goto unnamed;
	type = instance_type(p->proc.pid, l, v);
	if (type == l->type_scope_info) {
		if (read_scope_info(p->proc.pid, l, v, name, &start))
			goto unnamed;
	} else if (type >= 0 && type < l->first_nonstring) {
		if (read_name(p->proc.pid, l, v, name))
			goto unnamed;
		/* Not compiled yet: its start is with its uncompiled data. */
		if (l->shared_data >= 0 &&
		    !read_field(p->proc.pid, shared, l->shared_data, &data) &&
		    (type = instance_type(p->proc.pid, l, data)) >= l->uncompiled_lo &&
		    type <= l->uncompiled_hi &&
		    !remote_read(p->proc.pid, data - 1 + l->uncompiled_start, &pos, sizeof(pos)))
			start = pos;
	} else if (!is_smi(v)) {
		goto unnamed;
	}
	if (!read_field(p->proc.pid, shared, l->shared_script, &v) &&
	    instance_type(p->proc.pid, l, v) == l->type_script &&
	    (err = v8_runtime__script(rt, p, v, start, file, &line)) == -ENOMEM)
		return err;
	/* V8 knows where the function starts, not which of its lines runs. */
	return py_frames__add(rt->frames, &(struct py_frame_name){ .name = name[0] ? name : ANONYMOUS, .filename = file[0] ? file : NULL, .line = line, .start_line = line, .js = true }, addr) ?:
		       err;
unnamed:
	return v8_runtime__unnamed(rt, addr);
}

/* The frame address of @p's function @shared, named once (for good): 0 or -ENOMEM. */
static int v8_runtime__function(struct v8_runtime *rt, struct v8_process *p, uint64_t shared,
				uint64_t *addr)
{
	uint64_t hash = hash_mix(0, shared);
	struct v8_function *f = hashtab__find(&p->functions, hash, function_eq, &shared);
	int err;

	if (f) {
		*addr = f->addr;
		return 0;
	}
	rt->stats.functions++;
	err = v8_runtime__name(rt, p, shared, addr);
	/* Named without the line its script may give later: named again next time. */
	if (err == -EAGAIN)
		return 0;
	if (err || p->functions.nr >= V8_MAX_FUNCTIONS)
		return err;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	*f = (struct v8_function){ shared, *addr };
	if (hashtab__insert(&p->functions, hash, f)) {
		free(f);
		return -ENOMEM;
	}
	return 0;
}

static bool v8_runtime__wanted(const struct collector_opts *opts)
{
	return !opts->no_node;
}

static void v8_runtime__configure(struct profile_bpf *skel, bool on)
{
	skel->rodata->v8_stacks = on;
}

/* Forget what was read of @p's heap: its process ran another program, or exited. */
static void v8_process__clear(struct runtime_proc *proc, void *arg)
{
	struct v8_process *p = (struct v8_process *)proc;
	struct v8_function *f;
	struct v8_script *s;
	size_t i;

	hashtab__for_each_entry(&p->functions, i, f)
		free(f);
	hashtab__release(&p->functions);
	hashtab__for_each_entry(&p->scripts, i, s)
		v8_script__free(s, arg);
	hashtab__release(&p->scripts);
}

static void *v8_runtime__new(const struct runtime_env *env)
{
	struct v8_runtime *rt = calloc(1, sizeof(*rt));

	if (!rt)
		return NULL;
	rt->skel = env->skel;
	rt->elves = env->elves;
	rt->frames = env->frames;
	rt->procs = (struct runtime_procs){ .entry_size = sizeof(struct v8_process),
					    .map_fd = bpf_map__fd(env->skel->maps.v8_procs),
					    .clear = v8_process__clear,
					    .arg = rt };
	return rt;
}

static void v8_runtime__free(void *ctx)
{
	struct v8_runtime *rt = ctx;

	runtime_procs__release(&rt->procs);
	free(rt);
}

static void v8_runtime__snapshot(void *ctx, const struct proc_maps *maps)
{
	struct v8_runtime *rt = ctx;
	struct v8_process *p = (struct v8_process *)runtime_procs__get(&rt->procs, maps->pid, true);

	if (p && !p->proc.checked)
		v8_runtime__check(rt, p, maps);
}

/* Another program: looked at again at its next snapshot. */
static void v8_runtime__exec(void *ctx, pid_t pid, uint64_t time_ns)
{
	(void)time_ns;
	runtime_procs__exec(&((struct v8_runtime *)ctx)->procs, pid);
}

static void v8_runtime__forget(void *ctx, bool (*known)(pid_t pid, void *arg), void *arg)
{
	runtime_procs__forget(&((struct v8_runtime *)ctx)->procs, known, arg);
}

/*
 * A frame of @pid left by its frame pointer @bp, in a stack unwound from a
 * copy (one taken before the BPF program had the process's tables): a
 * JavaScript function's, tagged as v8_frame() in bpf/v8.bpf.h tags it, or
 * @ip. One read of the process's heap a frame, with no cache: the
 * JSFunction may have moved since the last sample, and only the few
 * samples before the tables come this way (all of them with --call-graph dwarf).
 */
static uint64_t v8_runtime__frame(void *ctx, pid_t pid, const struct unwind_input *in, uint64_t bp,
				  uint64_t ip, uint32_t *flags)
{
	struct v8_runtime *rt = ctx;
	struct v8_process *p = (struct v8_process *)runtime_procs__get(&rt->procs, pid, false);
	uint64_t context, function, shared;

	if (!p || !p->proc.loaded ||
	    !unwind_input__read(in, bp + (int64_t)p->layout.fp_context, &context) ||
	    !is_heap_object(context) ||
	    !unwind_input__read(in, bp + (int64_t)p->layout.fp_function, &function) ||
	    !is_heap_object(function) ||
	    read_field(pid, function, p->layout.function_shared, &shared) ||
	    !is_heap_object(shared) || shared >> V8_FRAME_SHIFT)
		return ip;
	*flags |= SAMPLE_V8_FRAMES;
	return V8_FRAME_TAG | shared;
}

/* Name @e's JavaScript frames (V8_FRAME_TAG), in its user stack. */
static int v8_runtime__merge(void *ctx, struct sample_event *e)
{
	struct v8_runtime *rt = ctx;
	struct thread_stacks *s = &e->stack;
	struct v8_process *p;
	int err;

	if (!(s->flags & SAMPLE_V8_FRAMES))
		return 0;
	s->flags &= ~SAMPLE_V8_FRAMES;
	p = (struct v8_process *)runtime_procs__get(&rt->procs, e->pid, false);
	rt->stats.samples++;
	for (size_t i = 0; i < s->nr_user; i++) {
		uint64_t addr;

		if (!V8_FRAME_IS(s->user[i]))
			continue;
		/* A process forgotten (exited) before its last records: not named. */
		if (p && p->proc.loaded)
			err = v8_runtime__function(rt, p, V8_FRAME_SHARED(s->user[i]), &addr);
		else
			err = v8_runtime__unnamed(rt, &addr);
		if (err)
			return err;
		s->user[i] = addr;
	}
	return 0;
}

static void v8_runtime__report(void *ctx, const struct runtime_env *env)
{
	struct v8_runtime *rt = ctx;
	const struct v8_stats *st = &rt->stats;

	(void)env;
	if (!st->processes && !st->unsupported)
		return;
	pr_info("node: %llu processes whose JavaScript frames are named (%llu of V8 releases not "
		"named), %llu records with JavaScript frames, %llu functions read, %llu frames not "
		"named, %llu scripts whose lines were not kept (over %u MiB of them)",
		(unsigned long long)st->processes, (unsigned long long)st->unsupported,
		(unsigned long long)st->samples, (unsigned long long)st->functions,
		(unsigned long long)st->unnamed, (unsigned long long)st->no_lines,
		V8_MAX_LINE_BYTES >> 20);
}

const struct runtime_ops v8_runtime = {
	.name = "node",
	.optional = true,
	.wanted = v8_runtime__wanted,
	.configure = v8_runtime__configure,
	.new = v8_runtime__new,
	.free = v8_runtime__free,
	.snapshot = v8_runtime__snapshot,
	.exec = v8_runtime__exec,
	.forget = v8_runtime__forget,
	.frame = v8_runtime__frame,
	.merge = v8_runtime__merge,
	.report = v8_runtime__report,
};

// SPDX-License-Identifier: GPL-2.0-only
/*
 * fake_node SECONDS: a program that poses as node, for tests/e2e/node.sh.
 * It exports V8's introspection constants (node 20's values, V8 11.3), is
 * built without CFI (so its frames are walked by their frame pointers, as
 * V8's are), and spends SECONDS in frames laid out as JavaScript frames
 * are: a context and a JSFunction below the frame pointer. Behind each
 * function is memory of its own making: one SharedFunctionInfo laid out
 * right, named honest in fake.js at line 3 (and again in big.js, whose
 * source says it is 2 GiB: at no line; and in late.js, whose source is a
 * string only after 0.3 s: at line 3 then), and the others garbage of every
 * kind (a string that is its own first half, lengths of 2 GiB, the wrong
 * types, addresses nothing maps). A profiler must name the honest ones and
 * no other, and go on.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "work.h"

/* V8's constants, as node 20 exports them. */
#define V8(name, value) __attribute__((used, visibility("default"))) int v8dbg_##name = value
V8(off_fp_context, -8);
V8(off_fp_function, -16);
V8(class_JSFunction__shared__SharedFunctionInfo, 24);
V8(class_SharedFunctionInfo__function_data__Object, 8);
V8(class_SharedFunctionInfo__name_or_scope_info__Object, 16);
V8(class_SharedFunctionInfo__script_or_debug_info__HeapObject, 32);
V8(class_HeapObject__map__Map, 0);
V8(class_Map__instance_type__uint16_t, 12);
V8(class_Script__name__Object, 16);
V8(class_Script__source__Object, 8);
V8(class_String__length__int32_t, 12);
V8(class_SeqOneByteString__chars__char, 16);
V8(class_SeqTwoByteString__chars__char, 16);
V8(class_ConsString__first__String, 16);
V8(class_ConsString__second__String, 24);
V8(class_ThinString__actual__String, 16);
V8(class_ExternalString__resource__Object, 16);
V8(class_UncompiledData__start_position__int32_t, 16);
V8(type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE, 262);
V8(type_Script__SCRIPT_TYPE, 167);
V8(type_ScopeInfo__SCOPE_INFO_TYPE, 261);
V8(type_UncompiledDataWithoutPreparseData__UNCOMPILED_DATA_WITHOUT_PREPARSE_DATA_TYPE, 222);
V8(FirstNonstringType, 128);
V8(StringEncodingMask, 8);
V8(StringRepresentationMask, 7);
V8(OneByteStringTag, 8);
V8(SeqStringTag, 0);
V8(ConsStringTag, 1);
V8(ExternalStringTag, 2);
V8(ThinStringTag, 5);
V8(TaggedSize, 8);
V8(SmiShiftSize, 31);
V8(HeapObjectTag, 1);
V8(SmiTagMask, 1);
V8(scopeinfo_idx_first_vars, 3);
V8(scopeinfo_idx_ncontextlocals, 2);
/* Built again as fake_node-v9 with FAKE_V8_MAJOR 9: a release not read. */
#ifndef FAKE_V8_MAJOR
#define FAKE_V8_MAJOR 11
#endif
#define VERSION(part, value)                                                                       \
	__attribute__((used, visibility("default"))) int v8_##part __asm__(                        \
		"_ZN2v88internal7Version6" #part "_E") = value
VERSION(major, FAKE_V8_MAJOR);
VERSION(minor, 3);

/* V8's instance types used here. */
#define SEQ_ONE_BYTE 8
#define CONS_ONE_BYTE 9
#define SCOPE_INFO 261
#define SHARED 262
#define SCRIPT 167

/* A heap object: tagged words; word 0 is its map. Maps keep their instance type at byte 12. */
typedef uint64_t object[16];

static uint64_t tag(const void *p)
{
	return (uint64_t)(uintptr_t)p + 1;
}

static uint64_t smi(int64_t v)
{
	return (uint64_t)v << 32;
}

static object maps[6];
static object context, name, script_name, source, scope, script, shared, function;
static object cycle, cycle_shared, cycle_function;
static object huge, huge_scope, huge_shared, huge_function;
static object typed_shared, typed_function;
static object big_name, big_script, big_shared, big_function;
static object late_name, late_source, late_script, late_shared, late_function;

static void make_map(object map, uint16_t type)
{
	memcpy((char *)map + 12, &type, sizeof(type));
}

/* A one-byte string @s, in @o (its characters from word 2 on). */
static void make_string(object o, object map, const char *s)
{
	int32_t len = (int32_t)strlen(s);

	o[0] = tag(map);
	memcpy((char *)o + 12, &len, sizeof(len));
	memcpy(&o[2], s, (size_t)len);
}

static void make_objects(void)
{
	make_map(maps[0], SEQ_ONE_BYTE);
	make_map(maps[1], SCOPE_INFO);
	make_map(maps[2], SCRIPT);
	make_map(maps[3], SHARED);
	make_map(maps[4], CONS_ONE_BYTE);
	make_map(maps[5], 999); /* no type V8 has */
	context[0] = tag(maps[5]);

	/* honest, at offset 12 of fake.js: line 3. */
	make_string(name, maps[0], "honest");
	make_string(script_name, maps[0], "/x/fake.js");
	make_string(source, maps[0], "// a\n\nfunction honest() {}\n");
	scope[0] = tag(maps[1]);
	scope[1] = smi(2 | 3 << 12); /* a function's scope, with its name */
	scope[2] = smi(0);	     /* parameters */
	scope[3] = smi(0);	     /* context locals */
	scope[4] = tag(name);	     /* the function variable: its name, */
	scope[5] = smi(-1);	     /* and its slot */
	scope[6] = smi(14);	     /* where it starts, */
	scope[7] = smi(25);	     /* and ends */
	script[0] = tag(maps[2]);
	script[1] = tag(source);
	script[2] = tag(script_name);
	shared[0] = tag(maps[3]);
	shared[1] = smi(0);
	shared[2] = tag(scope);
	shared[4] = tag(script);
	function[3] = tag(shared);

	/* A name that is its own first half, and a script whose source is 2 GiB. */
	cycle[0] = tag(maps[4]);
	cycle[2] = tag(cycle);
	cycle[3] = tag(cycle);
	make_string(huge, maps[0], "x");
	memcpy((char *)huge + 12, &(int32_t){ INT32_MAX }, sizeof(int32_t));
	cycle_shared[0] = tag(maps[3]);
	cycle_shared[2] = tag(cycle);
	cycle_shared[4] = tag(huge_scope); /* a script that is not one */
	cycle_function[3] = tag(cycle_shared);

	/* A ScopeInfo of a billion locals. */
	huge_scope[0] = tag(maps[1]);
	huge_scope[1] = smi(2 | 3 << 12);
	huge_scope[3] = smi(1 << 30);
	huge_shared[0] = tag(maps[3]);
	huge_shared[2] = tag(huge_scope);
	huge_function[3] = tag(huge_shared);

	/* honest again, in a script whose source says it is 2 GiB: named, at no line. */
	make_string(big_name, maps[0], "/x/big.js");
	big_script[0] = tag(maps[2]);
	big_script[1] = tag(huge);
	big_script[2] = tag(big_name);
	memcpy(big_shared, shared, sizeof(big_shared));
	big_shared[4] = tag(big_script);
	big_function[3] = tag(big_shared);

	/*
	 * honest again, in a script whose source is not a string for its first
	 * 0.3 s (main() sets it), as one the garbage collector is moving: named
	 * at line 3 once it can be read.
	 */
	make_string(late_name, maps[0], "/x/late.js");
	make_string(late_source, maps[0], "// b\n\nfunction honest() {}\n");
	late_script[0] = tag(maps[2]);
	late_script[1] = tag(context);
	late_script[2] = tag(late_name);
	memcpy(late_shared, shared, sizeof(late_shared));
	late_shared[4] = tag(late_script);
	late_function[3] = tag(late_shared);

	/* A "SharedFunctionInfo" of another type, and one nothing maps. */
	typed_shared[0] = tag(maps[5]);
	typed_shared[2] = tag(name);
	typed_function[3] = tag(typed_shared);
}

/*
 * js_frame(context, function, work, units): call work(units) from a frame
 * laid out as V8's JavaScript frames are: the frame pointer, then below it
 * the context, the function, and three slots of 0 (an argument count, and
 * an interpreted frame's bytecode and offset).
 */
void js_frame(uint64_t ctx, uint64_t fn, unsigned long (*work)(unsigned long), unsigned long units);
__asm__(".text\n"
	".globl js_frame\n"
	".type js_frame, @function\n"
	"js_frame:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	push %rdi\n"
	"	push %rsi\n"
	"	push $0\n"
	"	push $0\n"
	"	push $0\n"
	"	sub $8, %rsp\n"
	"	mov %rcx, %rdi\n"
	"	call *%rdx\n"
	"	leave\n"
	"	ret\n"
	".size js_frame, .-js_frame\n");

static unsigned long sink;

/*
 * js_frame() from another caller: late.js's function once its source can be
 * read, in stacks of its own, as a real program's keep changing (samples of
 * stacks already seen are counted in the kernel, under their first's names).
 */
static __attribute__((noinline)) void
later(uint64_t ctx, uint64_t fn, unsigned long (*work)(unsigned long), unsigned long units)
{
	js_frame(ctx, fn, work, units);
	__asm__ volatile("");
}

static unsigned long work(unsigned long units)
{
	return sink += burn(units);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0, end;
	const uint64_t functions[] = { tag(function),
				       tag(cycle_function),
				       tag(huge_function),
				       tag(typed_function),
				       tag(big_function),
				       tag(late_function),
				       0x1001 };
	double start;

	if (seconds <= 0) {
		fprintf(stderr, "usage: fake_node SECONDS\n");
		return 2;
	}
	make_objects();
	start = now_seconds();
	end = start + seconds;
	while (now_seconds() < end) {
		bool late = now_seconds() > start + 0.3;

		if (late)
			late_script[1] = tag(late_source);
		for (size_t i = 0; i < sizeof(functions) / sizeof(*functions); i++)
			(late && functions[i] == tag(late_function) ? later : js_frame)(
				tag(context), functions[i], work, 20);
	}
	printf("fake_node: %lu\n", sink);
	return 0;
}

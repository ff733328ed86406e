// SPDX-License-Identifier: GPL-2.0-only
/*
 * python_offsets.c - the offsets of python_offsets.h, one entry per
 * supported release, as tools/python-offsets.c printed them from the
 * headers of 3.10.13, 3.11.7 (and Debian's 3.11.2: the same), 3.12.1 and
 * 3.13.0. Micro releases do not change these layouts.
 */
#include "python_offsets.h"

#include <stdio.h>
#include <string.h>

static const struct python_offsets offsets[] = {
	{
		.version = 0x030a,
		.runtime_interpreters_head = 32,
		.interp_next = 0,
		.interp_threads_head = 8, /* tstate_head */
		.tstate_next = 8,
		.tstate_thread_id = 176,
		.tstate_frame = 24,
		.cframe_current_frame = PY_NO_FIELD,
		.frame_code = 32,
		.frame_previous = 24,
		.frame_instr = 96,
		.frame_owner = PY_NO_FIELD,
		.frame_is_entry = PY_NO_FIELD,
		.frame_size = 100,
		.code_firstlineno = 40,
		.code_filename = 104,
		.code_name = 112,
		.code_qualname = PY_NO_FIELD,
		.code_linetable = 120,
		.code_adaptive = PY_NO_FIELD,
		.unicode_state = 32,
		.unicode_ascii = 48,
		.unicode_compact = 72,
		.bytes_size = 16,
		.bytes_data = 32,
		.cstack_owner = 0xff,
	},
	{
		.version = 0x030b,
		.runtime_interpreters_head = 40,
		.interp_next = 0,
		.interp_threads_head = 16,
		.tstate_next = 8,
		.tstate_thread_id = 152,
		.tstate_frame = 56,
		.cframe_current_frame = 8,
		.frame_code = 32,
		.frame_previous = 48,
		.frame_instr = 56,
		.frame_owner = 69,
		.frame_is_entry = 68,
		.frame_size = 70,
		.code_firstlineno = 72,
		.code_filename = 112,
		.code_name = 120,
		.code_qualname = 128,
		.code_linetable = 136,
		.code_adaptive = 184,
		.unicode_state = 32,
		.unicode_ascii = 48,
		.unicode_compact = 72,
		.bytes_size = 16,
		.bytes_data = 32,
		.cstack_owner = 0xff,
	},
	{
		.version = 0x030c,
		.runtime_interpreters_head = 40,
		.interp_next = 0,
		.interp_threads_head = 72,
		.tstate_next = 8,
		.tstate_thread_id = 136,
		.tstate_frame = 56,
		.cframe_current_frame = 0,
		.frame_code = 0,
		.frame_previous = 8,
		.frame_instr = 56,
		.frame_owner = 70,
		.frame_is_entry = PY_NO_FIELD,
		.frame_size = 71,
		.code_firstlineno = 68,
		.code_filename = 112,
		.code_name = 120,
		.code_qualname = 128,
		.code_linetable = 136,
		.code_adaptive = 192,
		.unicode_state = 32,
		.unicode_ascii = 40,
		.unicode_compact = 56,
		.bytes_size = 16,
		.bytes_data = 32,
		.cstack_owner = 3, /* FRAME_OWNED_BY_CSTACK */
	},
	{
		.version = 0x030d,
		.runtime_interpreters_head = 632,
		.interp_next = 7264,
		.interp_threads_head = 7344,
		.tstate_next = 8,
		.tstate_thread_id = 152,
		.tstate_frame = 72, /* current_frame */
		.cframe_current_frame = PY_NO_FIELD,
		.frame_code = 0, /* f_executable */
		.frame_previous = 8,
		.frame_instr = 56, /* instr_ptr */
		.frame_owner = 70,
		.frame_is_entry = PY_NO_FIELD,
		.frame_size = 71,
		.code_firstlineno = 68,
		.code_filename = 112,
		.code_name = 120,
		.code_qualname = 128,
		.code_linetable = 136,
		.code_adaptive = 200,
		.unicode_state = 32,
		.unicode_ascii = 40,
		.unicode_compact = 56,
		.bytes_size = 16,
		.bytes_data = 32,
		.cstack_owner = 3, /* FRAME_OWNED_BY_CSTACK */
	},
};

const struct python_offsets *python_offsets__find(unsigned int major, unsigned int minor)
{
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++)
		if (offsets[i].version == (major << 8 | minor))
			return &offsets[i];
	return NULL;
}

bool python_version_from_path(const char *path, unsigned int *major, unsigned int *minor)
{
	const char *base = strrchr(path, '/');
	unsigned int a, b;
	int end = 0;

	base = base ? base + 1 : path;
	if (!strncmp(base, "lib", 3))
		base += 3;
	if (sscanf(base, "python%u.%u%n", &a, &b, &end) != 2 || !end)
		return false;
	/*
	 * "python3.11", or "libpython3.11.so...", or up to 3.7 with the ABI's
	 * "m" ("libpython3.6m.so"); not "python3.11d", "python3.11-config".
	 */
	if (base[end] == 'm')
		end++;
	if (base[end] && strncmp(base + end, ".so", 3))
		return false;
	*major = a;
	*minor = b;
	return true;
}

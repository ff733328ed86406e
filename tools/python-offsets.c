// SPDX-License-Identifier: GPL-2.0-only
/*
 * python-offsets.c - print the offsets of collector/python_offsets.c for
 * the CPython whose headers it is compiled against, as that file's entries
 * are written. Not part of the build: run by hand for a new release, e.g.
 *
 *   gcc -I$PREFIX/include/python3.12 tools/python-offsets.c -o /tmp/off && /tmp/off
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#if PY_VERSION_HEX >= 0x030b0000
#include "internal/pycore_frame.h"
#endif
#include "internal/pycore_pystate.h"
#if PY_VERSION_HEX < 0x030b0000
#include <frameobject.h>
#endif
#include <stdio.h>
#define P(name, expr) printf("\t\t.%s = %zu,\n", name, (size_t)(expr))
#define N(name) printf("\t\t.%s = PY_NO_FIELD,\n", name)
/* The end of @member of @type, for frame_size: the bytes up to the last field read. */
#define END(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
int main(void)
{
	printf("\t\t.version = 0x%04x,\n", PY_VERSION_HEX >> 16);
	P("runtime_interpreters_head", offsetof(_PyRuntimeState, interpreters.head));
	P("interp_next", offsetof(PyInterpreterState, next));
	#if PY_VERSION_HEX >= 0x030b0000
	P("interp_threads_head", offsetof(PyInterpreterState, threads.head));
#else
	P("interp_threads_head", offsetof(PyInterpreterState, tstate_head));
#endif
	P("tstate_next", offsetof(PyThreadState, next));
	P("tstate_thread_id", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX >= 0x030d0000
	P("tstate_frame", offsetof(PyThreadState, current_frame));
	N("cframe_current_frame");
	P("frame_code", offsetof(_PyInterpreterFrame, f_executable));
	P("frame_previous", offsetof(_PyInterpreterFrame, previous));
	P("frame_instr", offsetof(_PyInterpreterFrame, instr_ptr));
	P("frame_owner", offsetof(_PyInterpreterFrame, owner));
	N("frame_is_entry");
	P("frame_size", MAX(MAX(END(_PyInterpreterFrame, f_executable),
				END(_PyInterpreterFrame, previous)),
			    MAX(END(_PyInterpreterFrame, instr_ptr), END(_PyInterpreterFrame, owner))));
#elif PY_VERSION_HEX >= 0x030b0000
	P("tstate_frame", offsetof(PyThreadState, cframe));
	P("cframe_current_frame", offsetof(_PyCFrame, current_frame));
	P("frame_code", offsetof(_PyInterpreterFrame, f_code));
	P("frame_previous", offsetof(_PyInterpreterFrame, previous));
	P("frame_instr", offsetof(_PyInterpreterFrame, prev_instr));
	P("frame_owner", offsetof(_PyInterpreterFrame, owner));
#if PY_VERSION_HEX >= 0x030c0000
	N("frame_is_entry");
	P("frame_size", MAX(MAX(END(_PyInterpreterFrame, f_code), END(_PyInterpreterFrame, previous)),
			    MAX(END(_PyInterpreterFrame, prev_instr), END(_PyInterpreterFrame, owner))));
#else
	P("frame_is_entry", offsetof(_PyInterpreterFrame, is_entry));
	P("frame_size", MAX(MAX(MAX(END(_PyInterpreterFrame, f_code), END(_PyInterpreterFrame, previous)),
				MAX(END(_PyInterpreterFrame, prev_instr), END(_PyInterpreterFrame, owner))),
			    END(_PyInterpreterFrame, is_entry)));
#endif
#else
	P("tstate_frame", offsetof(PyThreadState, frame));
	N("cframe_current_frame");
	P("frame_code", offsetof(PyFrameObject, f_code));
	P("frame_previous", offsetof(PyFrameObject, f_back));
	P("frame_instr", offsetof(PyFrameObject, f_lasti));
	N("frame_owner");
	N("frame_is_entry");
	P("frame_size", MAX(MAX(END(PyFrameObject, f_code), END(PyFrameObject, f_back)),
			    END(PyFrameObject, f_lasti)));
#endif
	P("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("code_filename", offsetof(PyCodeObject, co_filename));
	P("code_name", offsetof(PyCodeObject, co_name));
#if PY_VERSION_HEX >= 0x030b0000
	P("code_qualname", offsetof(PyCodeObject, co_qualname));
	P("code_linetable", offsetof(PyCodeObject, co_linetable));
	P("code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
#else
	N("code_qualname");
	P("code_linetable", offsetof(PyCodeObject, co_linetable));
	N("code_adaptive");
#endif
	P("unicode_state", offsetof(PyASCIIObject, state));
	P("unicode_ascii", sizeof(PyASCIIObject));
	P("unicode_compact", sizeof(PyCompactUnicodeObject));
	P("bytes_size", offsetof(PyVarObject, ob_size));
	P("bytes_data", offsetof(PyBytesObject, ob_sval));
#if PY_VERSION_HEX >= 0x030c0000
	printf("\t\t.cstack_owner = %d,\n", FRAME_OWNED_BY_CSTACK);
#else
	printf("\t\t.cstack_owner = 0xff,\n");
#endif
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
#include <libiberty/demangle.h>

#include "demangle.h"

char *demangle(const char *name)
{
	if (!name)
		return NULL;
	/*
	 * DMGL_AUTO tries Rust first, then C++: legacy Rust names are valid
	 * C++ names too. Without DMGL_VERBOSE the legacy Rust hash is dropped.
	 */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}

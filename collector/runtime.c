// SPDX-License-Identifier: GPL-2.0-only
#include <stddef.h>

#include "jvm.h"
#include "python.h"
#include "runtime.h"

/* A new runtime is one line here (runtime.h). */
const struct runtime_ops *const runtimes[] = {
	&python_runtime,
	&jvm_runtime,
	NULL,
};

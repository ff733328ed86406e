/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cache_dir.h - where the profiler keeps what it can reuse between runs
 * (the answers of symbolize/symcache.h).
 *
 * $XDG_CACHE_HOME/profiler when XDG_CACHE_HOME is set to an absolute path
 * (for root, only when that directory is root's and no one else may write
 * it), else /var/cache/profiler for root, else ~/.cache/profiler. The
 * files there are trusted only when they are our effective user's, in a
 * directory of ours (symcache.h).
 */
#ifndef PROFILER_CACHE_DIR_H
#define PROFILER_CACHE_DIR_H

/* The directory, malloc()ed; NULL when there is none (no usable $HOME) or on ENOMEM. */
char *cache_dir__default(void);

#endif

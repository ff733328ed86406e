# SPDX-License-Identifier: GPL-2.0-only
#
# fuzz/fuzz.mk: the fuzz targets' rules, included by the top-level Makefile
# (make fuzz). See fuzz/README.md.

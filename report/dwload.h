/* SPDX-License-Identifier: MIT */
/* elfutils (libdw, libelf) loaded when the first module is symbolized. */
#ifndef CACHESHIM_REPORT_DWLOAD_H
#define CACHESHIM_REPORT_DWLOAD_H

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <libelf.h>

/* Every libdw and libelf function the report calls. */
#define CS_DW_FUNCS(X)                                                                       \
	X(dwfl_begin)                                                                        \
	X(dwfl_end)                                                                          \
	X(dwfl_report_begin)                                                                 \
	X(dwfl_report_elf)                                                                   \
	X(dwfl_report_end)                                                                   \
	X(dwfl_module_build_id)                                                              \
	X(dwfl_module_addrinfo)                                                              \
	X(dwfl_module_getsymtab)                                                             \
	X(dwfl_module_getsym_info)                                                           \
	X(dwfl_module_getsrc)                                                                \
	X(dwfl_lineinfo)                                                                     \
	X(dwfl_line_comp_dir)                                                                \
	X(dwfl_standard_find_debuginfo)                                                      \
	X(dwfl_build_id_find_debuginfo)                                                      \
	X(dwfl_build_id_find_elf)                                                            \
	X(dwfl_offline_section_address)                                                      \
	X(dwelf_elf_gnu_build_id)                                                            \
	X(elf_version)                                                                       \
	X(elf_begin)                                                                         \
	X(elf_end)

#define CS_DW_POINTER(f) __typeof__(f) *f;
struct cs_dw {
	CS_DW_FUNCS(CS_DW_POINTER)
};
#undef CS_DW_POINTER

/* The functions, once cs_dw_load returned 0. */
extern struct cs_dw cs_dw;

/* Loads libdw.so.1 (and libelf through it) the first time.  Returns 0,
 * or -1 after saying once why (modules are then shown as module+offset). */
int cs_dw_load(void);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The CPUID words the x86-64 psABI levels are decided from, and XCR0 (the
 * register states the OS enabled, read with XGETBV). A pure input so that
 * tests can feed one CPUID table per level boundary.
 */
typedef struct {
	guint32 leaf1_ecx, leaf1_edx; /* leaf 1 */
	guint32 leaf7_ebx;            /* leaf 7 subleaf 0 (0 above the maximum leaf) */
	guint32 ext1_ecx;             /* leaf 0x80000001 (0 above the maximum) */
	guint64 xcr0;                 /* 0 when OSXSAVE is clear */
} GbIsaInput;

#define GB_ISA_LEVEL_MAX 4

/*
 * The highest level (1..4) whose every feature is usable, as glibc's loader
 * decides (sysdeps/x86/get-isa-level.h: AVX, AVX2, FMA and F16C need the YMM
 * state enabled in XCR0, AVX-512 the opmask and ZMM states too); 0 when even
 * the baseline (cmov cx8 fpu fxsr mmx sse sse2) is missing. *missing gets the
 * features (lowercase, as in /proc/cpuinfo where it has a name) that the next
 * level up lacks: empty at level 4.
 */
guint gb_isa_level(const GbIsaInput *in, GPtrArray **missing);

/* Reads CPUID leaf/subleaf into regs (eax, ebx, ecx, edx); FALSE when there is no CPUID. */
typedef gboolean (*GbCpuidFunc)(guint32 leaf, guint32 subleaf, guint32 regs[4], gpointer user_data);

/* The CPUID instruction of this machine (FALSE off x86). */
gboolean gb_isa_cpuid_live(guint32 leaf, guint32 subleaf, guint32 regs[4], gpointer user_data);

/*
 * Fills in from cpuid: leaves 1, 7.0 and 0x80000001 when the maximum leaves
 * have them. XCR0 comes from XGETBV when live (cpuid is this machine's own),
 * else from leaf 0xD subleaf 0 (the states the CPU has, which Linux enables
 * for user space), so an injected CPUID table stands alone. FALSE without
 * CPUID or without leaf 1.
 */
gboolean gb_isa_input_read(GbCpuidFunc cpuid, gpointer user_data, gboolean live, GbIsaInput *in);

/* "x86-64-v3" for 3; NULL for 0. */
char *gb_isa_level_name(guint level);

G_END_DECLS

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
} AgentIsaInput;

/*
 * The highest level (1..4) whose every feature is usable, as glibc's loader
 * decides (sysdeps/x86/get-isa-level.h: AVX, AVX2, FMA and F16C need the YMM
 * state enabled in XCR0, AVX-512 the opmask and ZMM states too); 0 when even
 * the baseline (cmov cx8 fpu fxsr mmx sse sse2) is missing. *missing gets the
 * features (lowercase, as in /proc/cpuinfo where it has a name) that the next
 * level up lacks: empty at level 4.
 */
guint agent_isa_level(const AgentIsaInput *in, GPtrArray **missing);

G_END_DECLS

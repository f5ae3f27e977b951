/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The libFuzzer entry point; replay.c calls it for builds without libFuzzer. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "gb-bench-limits.h"
#include "gb-error.h"
#include "gb-framer.h"
#include "gb-isa.h"
#include "gb-json.h"
#include "gb-message.h"
#include "gb-netbench-stream.h"
#include "gb-netbench.h"

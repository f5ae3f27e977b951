#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Fails when a C source of the tree is not as .clang-format says (HACKING.md).
# Skips (exit 77) where clang-format is not installed, e.g. in a package build.
set -eu
src=$1
if ! command -v clang-format >/dev/null 2>&1; then
	echo "clang-format not installed: skipped"
	exit 77
fi
cd "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files -- '*.c' '*.h')
else
	dirs=""
	for d in agent protocol host-cli tests bench; do
		[ -d "$d" ] && dirs="$dirs $d"
	done
	# shellcheck disable=SC2086 # the list of directories above
	files=$(find $dirs -name '*.c' -o -name '*.h' | sort)
fi
if [ -z "$files" ]; then
	echo "no C sources found under $src" >&2
	exit 1
fi
# shellcheck disable=SC2086 # one word per path: the tree has no spaces in names
if ! clang-format --dry-run --Werror $files; then
	echo "run: clang-format -i \$(git ls-files '*.c' '*.h')" >&2
	exit 1
fi
echo "$(echo "$files" | wc -l) files formatted as .clang-format says"

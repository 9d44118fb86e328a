#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The VM suite's first boot (see run-part.sh).
exec "$(dirname "$0")/run-part.sh" first

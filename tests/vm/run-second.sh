#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The VM suite's second boot (see run-part.sh).
exec "$(dirname "$0")/run-part.sh" second

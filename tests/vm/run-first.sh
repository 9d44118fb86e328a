#!/bin/sh
# The VM suite's first boot (see run-part.sh).
exec "$(dirname "$0")/run-part.sh" first

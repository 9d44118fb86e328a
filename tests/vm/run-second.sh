#!/bin/sh
# The VM suite's second boot (see run-part.sh).
exec "$(dirname "$0")/run-part.sh" second

#!/usr/bin/env bash
# The main job: until the agent lands this runs the test suite of what
# exists, so the README's first command stays true.
set -eu
cd "$(dirname "$0")/.."
echo "iobatch demo: the admission demo is not built yet; running the current suite instead."
exec make check

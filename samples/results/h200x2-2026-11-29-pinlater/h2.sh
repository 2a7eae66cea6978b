#!/bin/bash
# h1.sh again (the same commands, into $OUT/h2.txt) after the admission stopped making a queue
# and scratch frame that host page sets do not use.
exec bash "$(dirname "$0")/h1.sh" h2

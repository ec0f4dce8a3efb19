#!/bin/sh
# tests/hil/client/check_no_dependencies.sh NM LIBRARY: fails if the client library needs any
# symbol beyond memcpy/memset (no malloc, no stdio, nothing else of the project). Symbols
# starting with __ belong to the compiler and sanitizer runtimes and are ignored, and so are the
# library's own (its files call each other: the encoders and the decoder use the CRC).
nm_tool=$1
lib=$2
own=$("$nm_tool" --defined-only "$lib" | awk 'NF == 3 {print $3}' | sort -u)
extra=$("$nm_tool" -u "$lib" | awk '{print $NF}' | sort -u |
        grep -v -e '^__' -e '^memcpy$' -e '^memset$' -e ':$' -e '^$' |
        grep -v -x -F "$own")
if [ -n "$extra" ]; then
  echo "$lib needs symbols beyond memcpy/memset:"
  echo "$extra"
  exit 1
fi
echo "$lib: no dependencies beyond memcpy/memset"
